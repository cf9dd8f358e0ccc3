package props

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/cdcd/cdcd/schema/configdef"
)

// No key is silently ignored: every key of Debezium's connectors is either read by the connector's parse
// (and so honoured) or refused here unless it is at its default, so that a connector never starts with a
// behaviour its author asked for and did not get. Keys is a connector's statement of which are which; each
// connector's tests hold it against what its parse actually reads.

// NotImplementedError refuses a Debezium key cdcd does not implement, set to a value other than its default.
type NotImplementedError struct {
	Key     string
	Default *string // nil: the key has no default
}

func (e *NotImplementedError) Error() string {
	if e.Default == nil {
		return fmt.Sprintf("cdcd does not implement %s yet; remove it (it has no default)", e.Key)
	}
	return fmt.Sprintf("cdcd does not implement %s yet; remove it (the default is %s)", e.Key, DefaultText(*e.Default))
}

// ConfigKey names the key the error concerns.
func (e *NotImplementedError) ConfigKey() string { return e.Key }

// Fatal tells the worker that restarting the task cannot help: the config must change.
func (e *NotImplementedError) Fatal() bool { return true }

// DefaultText is a default as a refusal names it: an empty default reads "empty".
func DefaultText(def string) string {
	if def == "" {
		return "empty"
	}
	return def
}

// Keys is a connector's accounting of Debezium's keys.
type Keys struct {
	// Declared are Debezium's keys (the connector's ConfigKeys), with their defaults.
	Declared []configdef.Key
	// Refused names the declared keys cdcd does not implement: set to anything but the default, each is
	// refused with a NotImplementedError.
	Refused []string
	// Families are prefixes under which Debezium reads keys it does not declare one by one (database.* and
	// driver.* go to the JDBC driver, signal.kafka.* to the signal channel, …). A set key under a family
	// that is neither declared nor claimed by Honoured is refused by name.
	Families []string
	// Honoured claims undeclared keys under Families that the parse reads (a JDBC option cdcd maps, a
	// column mapper's key). nil claims none.
	Honoured func(key string) bool
	// Instances are declared keys whose value names instances with settings of their own:
	// converters=isbn makes isbn.* the converter's settings, which are refused with it.
	Instances []string
}

// IsRefused reports whether key is one of k.Refused.
func (k Keys) IsRefused(key string) bool { return slices.Contains(k.Refused, key) }

// RefusedKeys are the definitions of k.Refused, in Declared's order.
func (k Keys) RefusedKeys() []configdef.Key {
	var out []configdef.Key
	for _, d := range k.Declared {
		if k.IsRefused(d.Name) {
			out = append(out, d)
		}
	}
	return out
}

// Refusals checks settings: each refused key set to a value other than its default, each undeclared key
// under a family the connector does not read, and each setting of a refused instance. The errors are
// NotImplementedErrors, in key order.
func (k Keys) Refusals(settings map[string]string) []error {
	declared := make(map[string]configdef.Key, len(k.Declared))
	for _, d := range k.Declared {
		declared[d.Name] = d
	}
	var instances []string
	for _, key := range k.Instances {
		for _, name := range strings.Split(settings[key], ",") {
			if name = strings.TrimSpace(name); name != "" {
				instances = append(instances, name+".")
			}
		}
	}
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(settings)) {
		value := settings[key]
		if d, ok := declared[key]; ok {
			if k.IsRefused(key) && !AtDefault(d, value) {
				errs = append(errs, &NotImplementedError{Key: key, Default: d.Default})
			}
			continue
		}
		if k.Honoured != nil && k.Honoured(key) {
			continue
		}
		if hasAnyPrefix(key, k.Families) || hasAnyPrefix(key, instances) {
			errs = append(errs, &NotImplementedError{Key: key})
		}
	}
	return errs
}

func hasAnyPrefix(key string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// AtDefault reports whether value means k's default: empty (unset, as the parsers read it), or equal to
// the default as k's type compares values (numbers by value, booleans and enumerated strings ignoring
// case, lists item by item).
func AtDefault(k configdef.Key, value string) bool {
	value = strings.TrimSpace(value)
	if value == "" {
		return true
	}
	if k.Default == nil {
		return false
	}
	def := strings.TrimSpace(*k.Default)
	switch k.Type {
	case configdef.Int, configdef.Long, configdef.Short:
		a, errA := strconv.ParseInt(value, 10, 64)
		b, errB := strconv.ParseInt(def, 10, 64)
		return errA == nil && errB == nil && a == b
	case configdef.Double:
		a, errA := strconv.ParseFloat(value, 64)
		b, errB := strconv.ParseFloat(def, 64)
		return errA == nil && errB == nil && a == b
	case configdef.Boolean, configdef.String:
		return strings.EqualFold(value, def)
	case configdef.List:
		return slices.Equal(listItems(value), listItems(def))
	}
	return value == def
}

func listItems(s string) []string {
	var out []string
	for _, it := range strings.Split(s, ",") {
		if it = strings.TrimSpace(it); it != "" {
			out = append(out, it)
		}
	}
	return out
}

package props

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/cdcd/cdcd/schema/configdef"
)

// Configs written for Debezium 0.x, 1.x and 2.x still circulate. Debezium 3.6.1 itself ignores most old
// names silently, which starts a connector with defaults its author never chose (a table.whitelist that
// filters nothing, a database.server.name that leaves topic.prefix missing). cdcd maps each old name to
// today's with advice on what to write, and refuses the few whose meaning changed. The mapping is the
// same at validation and at every task start (each connector's ParseConfig and ValidateConfig run it), so
// what validate accepts is what POST /connectors accepts and runs.

// LegacyRenamed are the keys both connectors renamed without a change of meaning (Debezium 1.x → 2.0).
var LegacyRenamed = map[string]string{
	"database.server.name":      "topic.prefix",
	"table.whitelist":           "table.include.list",
	"table.blacklist":           "table.exclude.list",
	"column.whitelist":          "column.include.list",
	"column.blacklist":          "column.exclude.list",
	"toasted.value.placeholder": "unavailable.value.placeholder",
}

// RenamedWith is LegacyRenamed with a connector's own renamed keys.
func RenamedWith(own map[string]string) map[string]string {
	m := maps.Clone(LegacyRenamed)
	maps.Copy(m, own)
	return m
}

// LegacyHistoryPrefix is where Debezium 1.x kept the schema history's settings, HistoryPrefix where 2.0
// moved them.
const (
	LegacyHistoryPrefix = "database.history."
	HistoryPrefix       = "schema.history.internal."
)

// LegacyRule handles one old key the common rules do not: it reports whether it did.
type LegacyRule func(m *LegacyMapper, key, value string) bool

// MapLegacyKeys rewrites old Debezium property names and values into today's: renamed maps old name to
// new, and rule, when not nil, handles a connector's own old keys and values first. Each rewrite comes
// with a warning telling the user what to write instead; a setting whose meaning changed is refused (err
// is an errors.Join of *ConfigError, one per refused key) with the same advice. mapped is a new map,
// usable even when err is not nil: refused keys are left out of it, so a validator can still check the
// rest.
func MapLegacyKeys(props map[string]string, renamed map[string]string, rule LegacyRule) (mapped map[string]string, warnings []string, err error) {
	m := LegacyMapper{in: props, out: maps.Clone(props)}
	if m.out == nil {
		m.out = map[string]string{}
	}
	for _, key := range slices.Sorted(maps.Keys(props)) {
		value := props[key]
		switch {
		case rule != nil && rule(&m, key, value):
		case renamed[key] != "":
			m.Move(key, renamed[key], value)
		case key == "truncate.handling.mode":
			m.truncateHandling(value)
		case key == "sanitize.field.names":
			m.sanitizeFieldNames(value)
		}
	}
	return m.out, m.warnings, errors.Join(m.errs...)
}

// LegacyMapper is one run of MapLegacyKeys: the config as given, the config as rewritten, the advice
// given and the refusals.
type LegacyMapper struct {
	in, out  map[string]string
	warnings []string
	errs     []error
}

// Given returns the value of key in the config as written.
func (m *LegacyMapper) Given(key string) (string, bool) {
	v, ok := m.in[key]
	return v, ok
}

// Keys are the config's keys as written, sorted.
func (m *LegacyMapper) Keys() []string { return slices.Sorted(maps.Keys(m.in)) }

// Set writes key=value into the rewritten config.
func (m *LegacyMapper) Set(key, value string) { m.out[key] = value }

// Drop leaves key out of the rewritten config.
func (m *LegacyMapper) Drop(key string) { delete(m.out, key) }

// Warn records advice for the user.
func (m *LegacyMapper) Warn(format string, args ...any) {
	m.warnings = append(m.warnings, fmt.Sprintf(format, args...))
}

// Refuse leaves key out and records its refusal, with the reason and what to write instead.
func (m *LegacyMapper) Refuse(key, value, reason string) {
	delete(m.out, key)
	m.errs = append(m.errs, &ConfigError{Key: key, Value: value, Reason: reason})
}

// Move renames old to current, telling the user what to write. When both are set, current decides, as in
// Debezium 2.0 and later, which no longer read the old name: configs migrated by adding the new name often
// keep the old line.
func (m *LegacyMapper) Move(old, current, value string) {
	m.move(old, current, value, fmt.Sprintf("write %s=%s instead", current, value))
}

// MoveQuietly is Move for a value that may be a credential (a client's sasl.jaas.config): the advice
// names the key to write, not the value.
func (m *LegacyMapper) MoveQuietly(old, current, value string) {
	m.move(old, current, value, fmt.Sprintf("write %s instead, with the same value", current))
}

func (m *LegacyMapper) move(old, current, value, advice string) {
	delete(m.out, old)
	if existing, set := m.in[current]; set {
		if strings.TrimSpace(existing) != strings.TrimSpace(value) {
			m.Warn("%s is the old name of %s, which is also set, to another value: %s decides (Debezium 2.0 and later no longer read %s); delete %s", old, current, current, old, old)
			return
		}
		m.Warn("%s is the old name of %s, which is also set to the same value; delete %s", old, current, old)
		return
	}
	m.out[current] = value
	m.Warn("%s is the Debezium 1.x name of %s: %s", old, current, advice)
}

// truncateHandling translates Debezium 1.x's truncate.handling.mode, which skipped.operations replaced in
// 2.0 (truncates skipped unless the list leaves "t" out).
func (m *LegacyMapper) truncateHandling(value string) {
	m.Drop("truncate.handling.mode")
	mode := strings.ToLower(strings.TrimSpace(value))
	ops, opsSet := m.in["skipped.operations"]
	switch {
	case mode == "skip" && !opsSet:
		m.Warn("truncate.handling.mode was removed in Debezium 2.0; truncates are skipped by default (skipped.operations=t), so delete the line")
	case mode == "include" && !opsSet:
		m.out["skipped.operations"] = "none"
		m.Warn("truncate.handling.mode was removed in Debezium 2.0: write skipped.operations=none instead to emit truncate events")
	case mode == "skip" || mode == "include":
		m.Refuse("truncate.handling.mode", value, fmt.Sprintf("truncate.handling.mode was removed in Debezium 2.0 and skipped.operations (%s) now decides; delete truncate.handling.mode and list t in skipped.operations to skip truncates", ops))
	default:
		m.Refuse("truncate.handling.mode", value, "truncate.handling.mode was removed in Debezium 2.0; use skipped.operations (t skips truncates, none emits them)")
	}
}

// sanitizeFieldNames: Debezium 2.2 replaced sanitize.field.names by schema.name.adjustment.mode and
// field.name.adjustment.mode, whose avro mode maps names differently (unique escapes, not a plain
// underscore), so an old "true" cannot be translated without changing subject and field names.
func (m *LegacyMapper) sanitizeFieldNames(value string) {
	m.Drop("sanitize.field.names")
	if strings.EqualFold(strings.TrimSpace(value), "false") {
		m.Warn("sanitize.field.names was removed in Debezium 2.2 and false is today's default (schema.name.adjustment.mode=none); delete the line")
		return
	}
	m.Refuse("sanitize.field.names", value, "sanitize.field.names was removed in Debezium 2.2; its replacements schema.name.adjustment.mode and field.name.adjustment.mode (avro, avro_unicode or none) rename differently, so choose one and check the resulting topic and field names")
}

// logged remembers the advice already given, per connector: ParseConfig runs at every validation and every
// task (re)start, and the same line repeated at each restart would bury the log.
var logged sync.Map // connector name + "\x00" + message → struct{}

// LogOnce logs each message at level once per connector name (the legacy names' warnings, the driver
// options' notes). A logger that drops the level (the callers that only validate pass a discard logger,
// or none) marks nothing, so the connector's own start still logs them.
func LogOnce(connector string, level slog.Level, messages []string, log *slog.Logger) {
	if log == nil || !log.Enabled(context.Background(), level) {
		return
	}
	for _, m := range messages {
		if _, seen := logged.LoadOrStore(connector+"\x00"+m, struct{}{}); !seen {
			log.Log(context.Background(), level, m)
		}
	}
}

// LegacyErrorValues turns MapLegacyKeys's refusals into validate-response values on the refused keys.
func LegacyErrorValues(err error) []configdef.Value {
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) {
		return nil
	}
	var values []configdef.Value
	for _, e := range joined.Unwrap() {
		var ce *ConfigError
		if errors.As(e, &ce) {
			values = append(values, configdef.Value{Name: ce.Key, Set: true, Errors: []string{ce.Error()}})
		}
	}
	return values
}

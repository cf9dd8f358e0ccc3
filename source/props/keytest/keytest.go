// Package keytest holds a connector's key accounting (props.Keys) against its parse: the checks each
// connector's tests run so that no key of Debezium's is silently ignored.
package keytest

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/schema/configdef"
	"github.com/cdcd/cdcd/source/props"
)

// Connector is what the checks need of a connector.
type Connector struct {
	Name string
	Keys props.Keys
	// Base is a config the parse accepts.
	Base map[string]string
	// Parse runs the connector's parse and returns the parser that read cfg (nil when it never ran) and
	// the refusals.
	Parse func(cfg map[string]string) (*props.Parser, error)
	// Validate is the connector's ValidateConfig.
	Validate func(cfg map[string]string) configdef.Result
}

// Accounted fails for each declared key that the parse does not read on a config that sets it and that is
// not refused, and for each refused key the parse reads (implemented keys leave the refusal list). It
// returns the number of honoured keys.
func Accounted(t *testing.T, c Connector) int {
	t.Helper()
	declared := map[string]bool{}
	honoured := 0
	for _, k := range c.Keys.Declared {
		declared[k.Name] = true
		key := SampleKey(k.Name)
		cfg := maps.Clone(c.Base)
		cfg[key] = NonDefault(k)
		if k.Default != nil && *k.Default != "" {
			cfg[key] = *k.Default
		}
		p, _ := c.Parse(cfg)
		if p == nil {
			t.Fatalf("%s=%s: the parse did not run", key, cfg[key])
		}
		switch refused := c.Keys.IsRefused(k.Name); {
		case refused && p.Read(key):
			t.Errorf("%s is read by ParseConfig and refused: take it out of the refused keys", k.Name)
		case !refused && !p.Read(key):
			t.Errorf("%s is neither read by ParseConfig nor refused: honour it or refuse it", k.Name)
		case !refused:
			honoured++
		}
	}
	for _, r := range c.Keys.Refused {
		if !declared[r] {
			t.Errorf("%s is listed, but is not a key of Debezium's connector", r)
		}
	}
	t.Logf("%s: honoured %d, refused %d, ignored 0", c.Name, honoured, len(c.Keys.Refused))
	return honoured
}

// Refused fails unless each refused key set to another value than its default is refused by the parse and
// by the validation with the refusal naming it, and passes the parse at its default.
func Refused(t *testing.T, c Connector) {
	t.Helper()
	for _, k := range c.Keys.RefusedKeys() {
		want := (&props.NotImplementedError{Key: k.Name, Default: k.Default}).Error()
		cfg := maps.Clone(c.Base)
		cfg[k.Name] = NonDefault(k)
		if _, err := c.Parse(cfg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s=%s: ParseConfig: %v, want %q", k.Name, cfg[k.Name], err, want)
		}
		if v, _ := c.Validate(cfg).Value(k.Name); !slices.Contains(v.Errors, want) {
			t.Errorf("%s=%s: ValidateConfig errors %q, want %q", k.Name, cfg[k.Name], v.Errors, want)
		}
		if k.Default != nil {
			cfg[k.Name] = *k.Default
			if _, err := c.Parse(cfg); err != nil {
				t.Errorf("%s at its default %q: %v", k.Name, *k.Default, err)
			}
		}
	}
}

// FamilyCase is a config's extra settings and the keys the parse must refuse by name, in key order.
type FamilyCase struct {
	Set     map[string]string
	Refused []string
}

// Families runs the parse on c.Base with each case's settings and fails when it refuses other keys than
// the case says.
func Families(t *testing.T, c Connector, cases []FamilyCase) {
	t.Helper()
	for _, tc := range cases {
		cfg := maps.Clone(c.Base)
		maps.Copy(cfg, tc.Set)
		_, err := c.Parse(cfg)
		if got := RefusedNames(t, err); !slices.Equal(got, tc.Refused) {
			t.Errorf("%v: refused %v, want %v", tc.Set, got, tc.Refused)
		}
	}
}

// RefusedNames are the keys of the NotImplementedErrors in err; any other error fails t.
func RefusedNames(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	errs := []error{err}
	var j interface{ Unwrap() []error }
	if errors.As(err, &j) {
		errs = j.Unwrap()
	}
	var out []string
	for _, e := range errs {
		var ni *props.NotImplementedError
		if errors.As(e, &ni) {
			out = append(out, ni.Key)
		} else {
			t.Errorf("unexpected refusal: %v", e)
		}
	}
	return out
}

// SampleKey is a concrete key for a declared one: Debezium declares the column mappers by pattern
// ("column.mask.with.(d+).chars"), which a config sets as column.mask.with.3.chars.
func SampleKey(name string) string {
	switch name {
	case "column.mask.hash.([^.]+).with.salt.(.+)":
		return "column.mask.hash.SHA-256.with.salt.pepper"
	case "column.mask.with.(d+).chars":
		return "column.mask.with.3.chars"
	case "column.truncate.to.(d+).chars":
		return "column.truncate.to.3.chars"
	}
	return name
}

// NonDefault is a value of k's type other than its default.
func NonDefault(k configdef.Key) string {
	def := ""
	if k.Default != nil {
		def = strings.TrimSpace(*k.Default)
	}
	switch k.Type {
	case configdef.Boolean:
		if strings.EqualFold(def, "true") {
			return "false"
		}
		return "true"
	case configdef.Int, configdef.Long, configdef.Short:
		n, _ := strconv.Atoi(def)
		return strconv.Itoa(n + 7)
	case configdef.Double:
		return "0.123"
	}
	return "cdcd-not-the-default"
}

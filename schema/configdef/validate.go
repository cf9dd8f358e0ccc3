package configdef

import (
	"slices"
	"sort"
	"strings"
)

// Value is the outcome of validating one defined key, as Kafka's ConfigValue.
type Value struct {
	Name   string
	Parsed any      // nil when unset with a null default, or unparseable
	Errors []string // Connect's messages, in the order Kafka adds them
	// Set reports whether the configuration supplied the key.
	Set bool
}

// UnknownKey is a supplied key that no definition (or known prefix) covers.
// Connect ignores such keys silently; cdcd reports them as warnings.
type UnknownKey struct {
	Name string
	// Suggestion is the closest defined key, or "" when none is close.
	Suggestion string
}

// Result is the outcome of Validate. Values follow the order of the
// definitions, like Kafka's LinkedHashMap of ConfigKeys.
type Result struct {
	Values  []Value
	Unknown []UnknownKey
}

// ErrorCount is the number of error messages, ConfigInfos.error_count.
func (r Result) ErrorCount() int {
	n := 0
	for _, v := range r.Values {
		n += len(v.Errors)
	}
	return n
}

// Errors lists every message in definition order.
func (r Result) Errors() []string {
	var out []string
	for _, v := range r.Values {
		out = append(out, v.Errors...)
	}
	return out
}

// AddErrors adds each error to the value of the key it names (its ConfigKey method), adding a value for
// a key the result does not list yet; an error naming no key is left out.
func (r *Result) AddErrors(errs []error) {
	for _, err := range errs {
		k, ok := err.(interface{ ConfigKey() string })
		if !ok {
			continue
		}
		i := slices.IndexFunc(r.Values, func(v Value) bool { return v.Name == k.ConfigKey() })
		if i < 0 {
			r.Values = append(r.Values, Value{Name: k.ConfigKey(), Set: true})
			i = len(r.Values) - 1
		}
		r.Values[i].Errors = append(r.Values[i].Errors, err.Error())
	}
}

// Value returns the validated value of a key and whether it is defined.
func (r Result) Value(name string) (Value, bool) {
	for _, v := range r.Values {
		if v.Name == name {
			return v, true
		}
	}
	return Value{}, false
}

// Validate checks cfg against defs as ConfigDef.validateAll does: each key
// is parsed by its type (or takes its default), a missing required key gets
// "Missing required configuration", and the validator then runs on the
// parsed value — even a nil one, so a bad number can yield two messages, as
// in Kafka. Keys of cfg that are neither defined nor under one of
// knownPrefixes are returned as Unknown with a did-you-mean suggestion.
func Validate(defs []Key, cfg map[string]string, knownPrefixes ...string) Result {
	var res Result
	defined := make(map[string]bool, len(defs))
	for _, k := range defs {
		defined[k.Name] = true
	}
	for _, k := range defs {
		res.Values = append(res.Values, validateKey(k, cfg))
	}
	for _, k := range defs {
		for _, dep := range k.Dependents {
			if !defined[dep] && !slices.ContainsFunc(res.Values, func(v Value) bool { return v.Name == dep }) {
				res.Values = append(res.Values, Value{Name: dep, Errors: []string{dep + " is referred in the dependents, but not defined."}})
			}
		}
	}
	names := make([]string, 0, len(defs))
	for _, k := range defs {
		names = append(names, k.Name)
	}
	for name := range cfg {
		if defined[name] || hasAnyPrefix(name, knownPrefixes) {
			continue
		}
		res.Unknown = append(res.Unknown, UnknownKey{Name: name, Suggestion: closest(name, names)})
	}
	sort.Slice(res.Unknown, func(i, j int) bool { return res.Unknown[i].Name < res.Unknown[j].Name })
	return res
}

func validateKey(k Key, cfg map[string]string) Value {
	v := Value{Name: k.Name}
	raw, set := cfg[k.Name]
	v.Set = set
	switch {
	case set:
		parsed, err := ParseValue(k.Name, raw, k.Type)
		if err != nil {
			v.Errors = append(v.Errors, err.Error())
		}
		v.Parsed = parsed
	case k.Required:
		v.Errors = append(v.Errors, `Missing required configuration "`+k.Name+`" which has no default value.`)
	case k.Default != nil:
		parsed, err := ParseValue(k.Name, *k.Default, k.Type)
		if err != nil {
			// A bad default is a programming error in the definitions;
			// report it rather than panic.
			v.Errors = append(v.Errors, "default of "+err.Error())
		}
		v.Parsed = parsed
	}
	if k.Validator != nil {
		if err := k.Validator(k.Name, v.Parsed); err != nil {
			v.Errors = append(v.Errors, err.Error())
		}
	}
	return v
}

func hasAnyPrefix(name string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// closest returns the defined name nearest to name by Damerau–Levenshtein
// distance (optimal string alignment), if it is near enough to be a typo:
// at most 2 edits, or 3 for names of 12 characters or more.
func closest(name string, candidates []string) string {
	limit := 2
	if len(name) >= 12 {
		limit = 3
	}
	best, bestDist := "", limit+1
	for _, c := range candidates {
		if d := editDistance(name, c); d < bestDist || (d == bestDist && best != "" && c < best) {
			best, bestDist = c, d
		}
	}
	if bestDist > limit {
		return ""
	}
	return best
}

// editDistance counts insertions, deletions, substitutions and swaps of
// adjacent characters (optimal string alignment distance).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

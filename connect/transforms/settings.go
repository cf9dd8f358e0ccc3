package transforms

import (
	"fmt"
	"slices"
	"strings"
)

// settings reads one transform's or predicate's properties (those under "transforms.<alias>." or
// "predicates.<alias>."), parsing them as Kafka's ConfigDef does: values are trimmed, booleans are
// case-insensitive, lists are comma-separated with blank entries dropped.
type settings struct {
	prefix string
	props  map[string]string
}

func (s settings) key(name string) string { return s.prefix + name }

// lookup returns the trimmed value of name and whether it is set.
func (s settings) lookup(name string) (string, bool) {
	v, ok := s.props[s.key(name)]
	return strings.TrimSpace(v), ok
}

func (s settings) str(name, def string) string {
	if v, ok := s.lookup(name); ok {
		return v
	}
	return def
}

// required returns the value of a setting that has no default.
func (s settings) required(name string) (string, error) {
	v, ok := s.lookup(name)
	if !ok {
		return "", &ConfigError{Key: s.key(name), Problem: "missing required setting, which has no default value"}
	}
	return v, nil
}

func (s settings) boolean(name string, def bool) (bool, error) {
	v, ok := s.lookup(name)
	if !ok {
		return def, nil
	}
	switch strings.ToLower(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, &ConfigError{Key: s.key(name), Value: v, Problem: "expected true or false"}
}

func (s settings) list(name string) []string {
	v, _ := s.lookup(name)
	return splitList(v)
}

// enum returns the setting's value, matched case-insensitively against allowed (Debezium's EnumeratedValue
// parsing), or def when unset.
func (s settings) enum(name, def string, allowed ...string) (string, error) {
	v, ok := s.lookup(name)
	if !ok {
		return def, nil
	}
	for _, a := range allowed {
		if strings.EqualFold(a, v) {
			return a, nil
		}
	}
	return "", &ConfigError{Key: s.key(name), Value: v, Problem: "supported values are " + strings.Join(allowed, ", ")}
}

// unsupported fails when any of names is set: settings the real transform honours but cdcd does not yet,
// which must not be silently ignored.
func (s settings) unsupported(transform string, names ...string) error {
	for _, n := range names {
		if v, ok := s.lookup(n); ok {
			return &ConfigError{Key: s.key(n), Value: v, Problem: fmt.Sprintf("not supported by cdcd's %s yet", transform)}
		}
	}
	return nil
}

// splitList splits a ConfigDef LIST value: comma-separated, entries trimmed, an empty value is an empty list.
func splitList(v string) []string {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	items := strings.Split(v, ",")
	for i := range items {
		items[i] = strings.TrimSpace(items[i])
	}
	return slices.DeleteFunc(items, func(s string) bool { return s == "" })
}

package transforms

import (
	"fmt"
	"log/slog"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/javacompat"
	"github.com/cdcd/cdcd/source"
)

// part is the half of a record a Kafka transform's $Key or $Value variant works on.
type part struct{ key bool }

var (
	keyPart   = part{key: true}
	valuePart = part{key: false}
)

func (p part) get(ev *source.Event) (*schema.Schema, any) {
	if p.key {
		return ev.KeySchema, ev.Key
	}
	return ev.ValueSchema, ev.Value
}

func (p part) set(ev *source.Event, s *schema.Schema, v any) {
	if p.key {
		ev.KeySchema, ev.Key = s, v
		return
	}
	ev.ValueSchema, ev.Value = s, v
}

// onKey and onValue register a transform's $Key and $Value classes with one constructor.
func onKey(build func(settings, part) (transformation, error)) func(settings, *slog.Logger) (transformation, error) {
	return func(s settings, _ *slog.Logger) (transformation, error) { return build(s, keyPart) }
}

func onValue(build func(settings, part) (transformation, error)) func(settings, *slog.Logger) (transformation, error) {
	return func(s settings, _ *slog.Logger) (transformation, error) { return build(s, valuePart) }
}

// A schemaless key or value is a Connect Map: []schema.MapEntry with string keys.

// requireMap is Kafka's Requirements.requireMap.
func requireMap(v any, purpose string) ([]schema.MapEntry, error) {
	m, ok := v.([]schema.MapEntry)
	if !ok {
		return nil, fmt.Errorf("only Map objects supported in absence of schema for [%s], found: %s", purpose, javaClassName(v))
	}
	return m, nil
}

// mapGet is Map.get: the value of key, nil when absent.
func mapGet(m []schema.MapEntry, key string) any {
	for _, e := range m {
		if e.Key == key {
			return e.Value
		}
	}
	return nil
}

// hashMap collects the entries of a java.util.HashMap<String, Object> a transform builds for a schemaless
// record, and lists them in the order Java iterates them, which is the order the converter writes.
type hashMap struct {
	keys   []string
	values map[string]any
}

func newHashMap(from []schema.MapEntry) *hashMap {
	h := &hashMap{values: make(map[string]any, len(from))}
	for _, e := range from {
		if k, ok := e.Key.(string); ok {
			h.put(k, e.Value)
		}
	}
	return h
}

func (h *hashMap) put(k string, v any) {
	if _, ok := h.values[k]; !ok {
		h.keys = append(h.keys, k)
	}
	h.values[k] = v
}

func (h *hashMap) remove(k string) { delete(h.values, k) }

func (h *hashMap) entries() []schema.MapEntry {
	var out []schema.MapEntry
	for _, k := range javacompat.HashMapOrder(h.keys) {
		if v, ok := h.values[k]; ok {
			out = append(out, schema.MapEntry{Key: k, Value: v})
		}
	}
	return out
}

// javaClassName names v's type as Java would for the value Connect holds, for error messages.
func javaClassName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case *schema.Struct:
		return "org.apache.kafka.connect.data.Struct"
	case []schema.MapEntry:
		return "java.util.HashMap"
	case []any:
		return "java.util.ArrayList"
	case string:
		return "java.lang.String"
	case bool:
		return "java.lang.Boolean"
	case int8:
		return "java.lang.Byte"
	case int16:
		return "java.lang.Short"
	case int32:
		return "java.lang.Integer"
	case int64:
		return "java.lang.Long"
	case float32:
		return "java.lang.Float"
	case float64:
		return "java.lang.Double"
	case []byte:
		return "[B"
	case schema.Decimal:
		return "java.math.BigDecimal"
	}
	return fmt.Sprintf("%T", v)
}

// structValue is Struct.get (with default) or Struct.getWithoutDefault, as replace.null.with.default picks.
func structValue(st *schema.Struct, i int, replaceNullWithDefault bool) any {
	if replaceNullWithDefault {
		return getWithDefault(st, i)
	}
	return st.Values[i]
}

// replaceNullWithDefaultSetting reads replace.null.with.default, which Kafka 3.8+ field transforms share:
// whether a null field reads as its schema default.
func replaceNullWithDefaultSetting(s settings) (bool, error) {
	return s.boolean("replace.null.with.default", true)
}

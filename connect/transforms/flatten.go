package transforms

import (
	"fmt"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
)

// flatten is Kafka's Flatten$Key or Flatten$Value: nested structs (or schemaless maps) become top-level
// fields named by joining the path with "delimiter" ("." by default). A field inside an optional struct
// becomes optional, and takes its parent's default when it has none; arrays are kept as they are, and a
// map field of a schemaful record fails the record, as in Kafka.
type flatten struct {
	part
	delimiter string
	schemas   schemaCache[*schema.Schema]
}

const flattenPurpose = "flattening"

func newFlatten(s settings, p part) (transformation, error) {
	// ConfigDef trims it, so a blank delimiter joins names with nothing.
	return &flatten{part: p, delimiter: s.str("delimiter", ".")}, nil
}

func (t *flatten) name(prefix, field string) string {
	if prefix == "" {
		return field
	}
	return prefix + t.delimiter + field
}

func (t *flatten) apply(ev *source.Event) (bool, error) {
	sch, val := t.get(ev)
	if val == nil {
		return true, nil
	}
	if sch == nil {
		m, err := requireMap(val, flattenPurpose)
		if err != nil {
			return false, err
		}
		var out linkedMap
		if err := t.flattenMap(m, "", &out); err != nil {
			return false, err
		}
		t.set(ev, nil, out.entries)
		return true, nil
	}
	st, err := requireStruct(val, flattenPurpose)
	if err != nil {
		return false, err
	}
	updated, err := t.schemas.get(sch, func() (*schema.Schema, error) {
		if sch.Type != schema.StructT {
			return nil, fmt.Errorf("cannot list fields on non-struct type")
		}
		out := copyBasics(sch)
		def, _ := sch.Default.(*schema.Struct)
		return out, t.flattenSchema(sch, "", out, sch.Optional, def)
	})
	if err != nil {
		return false, err
	}
	out := &schema.Struct{Schema: updated, Values: make([]any, len(updated.Fields))}
	t.flattenStruct(st, "", out)
	t.set(ev, updated, out)
	return true, nil
}

func isFlattenLeaf(typ schema.Type) bool {
	switch typ {
	case schema.StructT, schema.Map:
		return false
	}
	return true
}

// flattenSchema is Flatten's buildUpdatedSchema: optional is true under an optional ancestor, and
// parentDefault is the default the ancestors give this struct.
func (t *flatten) flattenSchema(s *schema.Schema, prefix string, out *schema.Schema, optional bool, parentDefault *schema.Struct) error {
	for i, f := range s.Fields {
		name := t.name(prefix, f.Name)
		fieldOptional := optional || f.Schema.Optional
		var def any
		if f.Schema.HasDefault && f.Schema.Default != nil {
			def = f.Schema.Default
		} else if parentDefault != nil {
			def = getWithDefault(parentDefault, i)
		}
		switch {
		case f.Schema.Type == schema.StructT:
			d, _ := def.(*schema.Struct)
			if err := t.flattenSchema(f.Schema, name, out, fieldOptional, d); err != nil {
				return err
			}
		case isFlattenLeaf(f.Schema.Type):
			fs := copyBasics(f.Schema)
			fs.Optional = fieldOptional
			if def != nil {
				fs.Default, fs.HasDefault = def, true
			}
			if out.FieldIndex(name) >= 0 {
				return fmt.Errorf("cannot create field because of field name duplication %s", name)
			}
			out.Fields = append(out.Fields, schema.Field{Name: name, Schema: fs})
		default:
			return fmt.Errorf("flatten transformation does not support %s for record with schemas (for field %s)", castTypeNames[f.Schema.Type], name)
		}
	}
	return nil
}

// flattenStruct is Flatten's buildWithSchema: nulls read as their schema's default, and a null struct
// leaves its fields null.
func (t *flatten) flattenStruct(st *schema.Struct, prefix string, out *schema.Struct) {
	if st == nil {
		return
	}
	for i, f := range st.Schema.Fields {
		name := t.name(prefix, f.Name)
		v := getWithDefault(st, i)
		if f.Schema.Type == schema.StructT {
			nested, _ := v.(*schema.Struct)
			t.flattenStruct(nested, name, out)
			continue
		}
		out.Values[out.Schema.FieldIndex(name)] = v
	}
}

// linkedMap is a java.util.LinkedHashMap<String, Object>: insertion order, a repeated key keeps its place.
type linkedMap struct{ entries []schema.MapEntry }

func (m *linkedMap) put(k string, v any) {
	for i := range m.entries {
		if m.entries[i].Key == k {
			m.entries[i].Value = v
			return
		}
	}
	m.entries = append(m.entries, schema.MapEntry{Key: k, Value: v})
}

func (t *flatten) flattenMap(m []schema.MapEntry, prefix string, out *linkedMap) error {
	for _, e := range m {
		key, _ := e.Key.(string)
		name := t.name(prefix, key)
		switch v := e.Value.(type) {
		case nil, bool, int8, int16, int32, int64, float32, float64, string, []byte, []any:
			out.put(name, v)
		case []schema.MapEntry:
			if err := t.flattenMap(v, name, out); err != nil {
				return err
			}
		default:
			return fmt.Errorf("flatten transformation does not support class %s for record without schemas (for field %s)", javaClassName(v), name)
		}
	}
	return nil
}

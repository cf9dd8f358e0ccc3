package transforms

import (
	"fmt"
	"strings"
	"sync"

	"github.com/cdcd/cdcd/schema"
)

// Schema and struct helpers that reproduce how Kafka's transforms rebuild records. Output schemas are
// cached per input schema: converters cache their rendering per *Schema, so the same input must keep
// yielding the same output pointer.

var optionalStringSchema = &schema.Schema{Type: schema.String, Optional: true}

// copyBasics is Kafka's SchemaUtil.copySchemaBasics(source): a new schema of the same type (with an array's
// items or a map's keys and values) carrying name, version, doc and parameters, but neither optionality,
// nor default, nor a struct's fields.
func copyBasics(s *schema.Schema) *schema.Schema {
	c := &schema.Schema{Type: s.Type, Name: s.Name, Version: s.Version, Doc: s.Doc, Parameters: s.Parameters}
	switch s.Type {
	case schema.Array:
		c.Items = s.Items
	case schema.Map:
		c.Keys, c.Values = s.Keys, s.Values
	}
	return c
}

// withField appends a field to a struct schema under construction, refusing a duplicate name as Connect's
// SchemaBuilder does.
func withField(s *schema.Schema, name string, fs *schema.Schema) error {
	if s.FieldIndex(name) >= 0 {
		return fmt.Errorf("cannot create field %q: a field of that name already exists in %q", name, s.Name)
	}
	s.Fields = append(s.Fields, schema.Field{Name: name, Schema: fs})
	return nil
}

// isEnvelope is Debezium's Envelope.isEnvelopeSchema: a change event's value schema is named "….Envelope".
func isEnvelope(s *schema.Schema) bool {
	return s != nil && strings.HasSuffix(s.Name, ".Envelope")
}

// requireStruct is Kafka's Requirements.requireStruct.
func requireStruct(v any, purpose string) (*schema.Struct, error) {
	st, ok := v.(*schema.Struct)
	if !ok || st == nil {
		return nil, fmt.Errorf("only Struct objects supported for [%s], found: %T", purpose, v)
	}
	return st, nil
}

// getWithDefault is Connect's Struct.get: a null field reads as its schema's default.
func getWithDefault(st *schema.Struct, i int) any {
	v := st.Values[i]
	if f := st.Schema.Fields[i].Schema; v == nil && f.HasDefault {
		return f.Default
	}
	return v
}

// fieldValue is Connect's ExtractField on a struct: the named field's schema and value (its default when
// null).
func fieldValue(st *schema.Struct, name string) (*schema.Schema, any, error) {
	i := st.Schema.FieldIndex(name)
	if i < 0 {
		return nil, nil, fmt.Errorf("unknown field: %s", name)
	}
	return st.Schema.Fields[i].Schema, getWithDefault(st, i), nil
}

// stringField is Connect's Struct.getString: the field must exist and be a string.
func stringField(st *schema.Struct, name string) (string, error) {
	fs, v, err := fieldValue(st, name)
	if err != nil {
		return "", err
	}
	if fs.Type != schema.String {
		return "", fmt.Errorf("field %q is not of type STRING", name)
	}
	s, _ := v.(string)
	return s, nil
}

// schemaCache memoizes derived schemas. It is bounded like Debezium's and Kafka's caches; clearing it
// costs only a rebuild.
type schemaCache[K comparable] struct {
	mu sync.Mutex
	m  map[K]*schema.Schema
}

const schemaCacheSize = 256

func (c *schemaCache[K]) get(k K, build func() (*schema.Schema, error)) (*schema.Schema, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.m[k]; ok {
		return s, nil
	}
	s, err := build()
	if err != nil {
		return nil, err
	}
	if c.m == nil || len(c.m) >= schemaCacheSize {
		c.m = make(map[K]*schema.Schema)
	}
	c.m[k] = s
	return s, nil
}

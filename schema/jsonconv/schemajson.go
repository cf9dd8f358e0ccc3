package jsonconv

import (
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"weak"

	"github.com/cdcd/cdcd/schema"
)

// schemaCacheKey identifies one rendering of a schema: its identity plus the settings that change how its
// default values are written.
type schemaCacheKey struct {
	schema        weak.Pointer[schema.Schema]
	decimalFormat DecimalFormat
	replaceNull   bool
}

// schemaCache maps schemaCacheKey to the schema's JSON ([]byte). Schemas are immutable and shared, so
// identity is a sound key. The key holds the schema weakly and a cleanup drops the entry once the schema
// is garbage, so a reader that builds a schema per table version does not grow the cache forever.
var schemaCache sync.Map

// schemaJSON returns the JSON of s as JsonConverter.asJsonSchema renders it, rendering it once per
// schema and converter setting.
func (c Converter) schemaJSON(s *schema.Schema) ([]byte, error) {
	key := schemaCacheKey{schema: weak.Make(s), decimalFormat: c.DecimalFormat, replaceNull: c.ReplaceNullWithDefault}
	if b, ok := schemaCache.Load(key); ok {
		return b.([]byte), nil
	}
	b, err := c.appendSchema(nil, s, "")
	if err != nil {
		return nil, err
	}
	if _, loaded := schemaCache.LoadOrStore(key, b); !loaded {
		runtime.AddCleanup(s, func(k schemaCacheKey) { schemaCache.Delete(k) }, key)
	}
	return b, nil
}

// appendSchema renders s with JsonConverter's key order: type, then fields / items / keys+values, optional,
// name, version, doc, parameters, default, and last the field name when s describes a struct field.
func (c Converter) appendSchema(dst []byte, s *schema.Schema, fieldName string) ([]byte, error) {
	if s == nil {
		return dst, ErrNoFieldSchema
	}
	dst = append(dst, `{"type":`...)
	dst = appendJSONString(dst, string(s.Type))
	var err error
	switch s.Type {
	case schema.Boolean, schema.Int8, schema.Int16, schema.Int32, schema.Int64,
		schema.Float32, schema.Float64, schema.String, schema.Bytes:
	case schema.Array:
		dst = append(dst, `,"items":`...)
		if dst, err = c.appendNestedSchema(dst, s.Items); err != nil {
			return dst, fmt.Errorf("items: %w", err)
		}
	case schema.Map:
		dst = append(dst, `,"keys":`...)
		if dst, err = c.appendNestedSchema(dst, s.Keys); err != nil {
			return dst, fmt.Errorf("keys: %w", err)
		}
		dst = append(dst, `,"values":`...)
		if dst, err = c.appendNestedSchema(dst, s.Values); err != nil {
			return dst, fmt.Errorf("values: %w", err)
		}
	case schema.StructT:
		dst = append(dst, `,"fields":[`...)
		for i, f := range s.Fields {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = c.appendSchema(dst, f.Schema, f.Name); err != nil {
				return dst, fmt.Errorf("field %q: %w", f.Name, err)
			}
		}
		dst = append(dst, ']')
	default:
		return dst, fmt.Errorf("%w %q", ErrUnknownType, s.Type)
	}
	dst = append(dst, `,"optional":`...)
	dst = strconv.AppendBool(dst, s.Optional)
	if s.Name != "" {
		dst = append(dst, `,"name":`...)
		dst = appendJSONString(dst, s.Name)
	}
	if s.Version != 0 {
		dst = append(dst, `,"version":`...)
		dst = strconv.AppendInt(dst, int64(s.Version), 10)
	}
	if s.Doc != "" {
		dst = append(dst, `,"doc":`...)
		dst = appendJSONString(dst, s.Doc)
	}
	if len(s.Parameters) > 0 { // Connect writes no "parameters" for an empty map either
		dst = append(dst, `,"parameters":{`...)
		for i, p := range s.Parameters {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, p.Key)
			dst = append(dst, ':')
			dst = appendJSONString(dst, p.Value)
		}
		dst = append(dst, '}')
	}
	if s.HasDefault && s.Default != nil {
		dst = append(dst, `,"default":`...)
		if dst, err = c.appendValue(dst, s, s.Default); err != nil {
			return dst, fmt.Errorf("default: %w", err)
		}
	}
	if fieldName != "" { // Connect refuses empty field names
		dst = append(dst, `,"field":`...)
		dst = appendJSONString(dst, fieldName)
	}
	return append(dst, '}'), nil
}

// appendNestedSchema renders an array's or map's element schema; Connect writes a missing one as null.
func (c Converter) appendNestedSchema(dst []byte, s *schema.Schema) ([]byte, error) {
	if s == nil {
		return append(dst, "null"...), nil
	}
	return c.appendSchema(dst, s, "")
}

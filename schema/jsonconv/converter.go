// Package jsonconv writes Kafka Connect data exactly as Kafka Connect 4.x's JsonConverter (with its Jackson
// serializer) writes it, so that cdcd's records are byte-for-byte those of Debezium on Kafka Connect.
//
// The encoder appends straight into a caller-owned buffer: no reflection, no encoding/json, and the
// schema half of the {"schema":…,"payload":…} envelope is rendered once per *schema.Schema and cached.
package jsonconv

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/javacompat"
)

// DecimalFormat is JsonConverter's decimal.format: how Connect Decimal values are written.
type DecimalFormat uint8

const (
	// Base64 writes the unscaled value's two's complement bytes as a base64 string (Connect's default).
	Base64 DecimalFormat = iota
	// Numeric writes a JSON number, as Java's BigDecimal.toString.
	Numeric
)

// Converter is one configured JsonConverter. The zero value is not Connect's default configuration
// (ReplaceNullWithDefault is false there): use New or FromConfig. A Converter is a small value, safe to
// copy and to use from many goroutines at once.
type Converter struct {
	// SchemasEnable wraps every record as {"schema":…,"payload":…} (schemas.enable, default true).
	SchemasEnable bool
	// DecimalFormat is decimal.format (default Base64).
	DecimalFormat DecimalFormat
	// ReplaceNullWithDefault writes a schema's default in place of a null value
	// (replace.null.with.default, default true).
	ReplaceNullWithDefault bool
}

// Connect's converter settings read by FromConfig.
const (
	ConfigSchemasEnable          = "schemas.enable"
	ConfigDecimalFormat          = "decimal.format"
	ConfigReplaceNullWithDefault = "replace.null.with.default"
)

// New returns a Converter with Kafka Connect's defaults: schemas on, BASE64 decimals, nulls replaced by
// defaults.
func New() Converter {
	return Converter{SchemasEnable: true, DecimalFormat: Base64, ReplaceNullWithDefault: true}
}

// FromConfig builds a Converter from converter settings (the keys without a key.converter. or
// value.converter. prefix). Missing keys keep Connect's defaults; other keys are ignored, as Connect's
// converter ignores them. Values are parsed as Connect parses them: booleans and the decimal format
// case-insensitively, surrounding blanks trimmed.
func FromConfig(cfg map[string]string) (Converter, error) {
	c := New()
	var err error
	if v, ok := cfg[ConfigSchemasEnable]; ok {
		if c.SchemasEnable, err = parseBool(ConfigSchemasEnable, v); err != nil {
			return Converter{}, err
		}
	}
	if v, ok := cfg[ConfigReplaceNullWithDefault]; ok {
		if c.ReplaceNullWithDefault, err = parseBool(ConfigReplaceNullWithDefault, v); err != nil {
			return Converter{}, err
		}
	}
	if v, ok := cfg[ConfigDecimalFormat]; ok {
		switch strings.ToUpper(strings.TrimSpace(v)) {
		case "BASE64":
			c.DecimalFormat = Base64
		case "NUMERIC":
			c.DecimalFormat = Numeric
		default:
			return Converter{}, fmt.Errorf("%w: %s=%q (want BASE64 or NUMERIC)", ErrConfig, ConfigDecimalFormat, v)
		}
	}
	return c, nil
}

func parseBool(key, v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("%w: %s=%q (want true or false)", ErrConfig, key, v)
}

// Encode returns the bytes JsonConverter.fromConnectData produces for (s, v). A nil schema with a nil
// value is a tombstone: Encode returns nil bytes and no error.
//
// The record is built in a pooled scratch buffer and returned as one right-sized copy the caller owns:
// appending to an empty slice instead would reallocate it several times per record as it grows past
// the schema and the row's long strings (half of cdcd's allocations when it was profiled).
func (c Converter) Encode(s *schema.Schema, v any) ([]byte, error) {
	if s == nil && v == nil {
		return nil, nil
	}
	buf := encodeBuffers.Get().(*[]byte)
	defer encodeBuffers.Put(buf)
	out, err := c.EncodeAppend((*buf)[:0], s, v)
	if err != nil {
		return nil, err
	}
	if cap(out) <= maxPooledEncodeBuffer {
		*buf = out // keep the grown buffer for the next record
	}
	return bytes.Clone(out), nil
}

// encodeBuffers holds Encode's scratch buffers (*[]byte, so that Put does not allocate).
var encodeBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledEncodeBuffer keeps one huge record (a large text or bytea column) from pinning its buffer.
const maxPooledEncodeBuffer = 1 << 20

// EncodeAppend appends the encoding of (s, v) to dst and returns the extended buffer; on error dst is
// returned unchanged. A tombstone (nil schema and nil value) appends nothing: a caller that must tell it
// from a record checks for it first, as Encode does.
func (c Converter) EncodeAppend(dst []byte, s *schema.Schema, v any) ([]byte, error) {
	if s == nil && v == nil {
		return dst, nil
	}
	out := dst
	if c.SchemasEnable {
		out = append(out, `{"schema":`...)
		if s == nil {
			out = append(out, "null"...)
		} else {
			sj, err := c.schemaJSON(s)
			if err != nil {
				return dst, err
			}
			out = append(out, sj...)
		}
		out = append(out, `,"payload":`...)
	}
	out, err := c.appendValue(out, s, v)
	if err != nil {
		return dst, err
	}
	if c.SchemasEnable {
		out = append(out, '}')
	}
	return out, nil
}

// appendValue is JsonConverter.convertToJson followed by Jackson's serialisation of the resulting node.
func (c Converter) appendValue(dst []byte, s *schema.Schema, v any) ([]byte, error) {
	if v == nil {
		return c.appendNull(dst, s)
	}
	if s == nil {
		return c.appendSchemaless(dst, v)
	}
	if s.Name != "" {
		if out, handled, err := c.appendLogical(dst, s, v); handled {
			return out, err
		}
	}
	switch s.Type {
	case schema.Int8:
		if x, ok := v.(int8); ok {
			return strconv.AppendInt(dst, int64(x), 10), nil
		}
	case schema.Int16:
		if x, ok := v.(int16); ok {
			return strconv.AppendInt(dst, int64(x), 10), nil
		}
	case schema.Int32:
		if x, ok := v.(int32); ok {
			return strconv.AppendInt(dst, int64(x), 10), nil
		}
	case schema.Int64:
		if x, ok := v.(int64); ok {
			return strconv.AppendInt(dst, x, 10), nil
		}
	case schema.Float32:
		if x, ok := v.(float32); ok {
			return appendJavaFloatJSON(dst, float64(x), 32), nil
		}
	case schema.Float64:
		if x, ok := v.(float64); ok {
			return appendJavaFloatJSON(dst, x, 64), nil
		}
	case schema.Boolean:
		if x, ok := v.(bool); ok {
			return strconv.AppendBool(dst, x), nil
		}
	case schema.String:
		if x, ok := v.(string); ok {
			return appendJSONString(dst, x), nil
		}
	case schema.Bytes:
		if x, ok := v.([]byte); ok {
			return appendBase64(dst, x), nil
		}
	case schema.Array:
		if x, ok := v.([]any); ok {
			return c.appendArray(dst, s.Items, x)
		}
	case schema.Map:
		if x, ok := v.([]schema.MapEntry); ok {
			return c.appendMap(dst, s, x)
		}
	case schema.StructT:
		if x, ok := v.(*schema.Struct); ok {
			if x == nil {
				return c.appendNull(dst, s)
			}
			return c.appendStruct(dst, s, x)
		}
	default:
		return dst, fmt.Errorf("%w %q", ErrUnknownType, s.Type)
	}
	return dst, fmt.Errorf("%w: %s schema, got %T", ErrValueType, s.Type, v)
}

// appendNull writes a null value: the schema's default when there is one and the converter replaces
// nulls, JSON null when the schema is optional (or absent), and an error for a required schema.
func (c Converter) appendNull(dst []byte, s *schema.Schema) ([]byte, error) {
	switch {
	case s == nil:
		return append(dst, "null"...), nil
	case s.HasDefault && s.Default != nil && c.ReplaceNullWithDefault:
		return c.appendValue(dst, s, s.Default)
	case s.Optional:
		return append(dst, "null"...), nil
	}
	return dst, ErrNullRequired
}

// appendLogical handles Connect's own logical types (Decimal, Date, Time, Timestamp), which JsonConverter
// converts before looking at the schema type. Debezium's semantic types are plain schemas to it.
func (c Converter) appendLogical(dst []byte, s *schema.Schema, v any) ([]byte, bool, error) {
	switch s.Name {
	case schema.DecimalName:
		d, ok := v.(schema.Decimal)
		if !ok || d.Unscaled == nil {
			return dst, true, fmt.Errorf("%w: Decimal schema, got %T", ErrValueType, v)
		}
		if c.DecimalFormat == Numeric {
			return javacompat.AppendBigDecimal(dst, d.Unscaled, d.Scale), true, nil
		}
		// Connect's Decimal.fromLogical refuses a value whose scale is not the schema's.
		scale, ok := s.Param("scale")
		if !ok {
			return dst, true, fmt.Errorf("%w: Decimal schema without a scale parameter", ErrValueType)
		}
		if strconv.Itoa(int(d.Scale)) != scale {
			return dst, true, fmt.Errorf("%w: Decimal value has scale %d, schema has %s", ErrValueType, d.Scale, scale)
		}
		return appendDecimalBase64(dst, d), true, nil
	case schema.DateName, schema.TimeName, schema.TimestampName:
		n, err := logicalTimeValue(s.Name, v)
		if err != nil {
			return dst, true, err
		}
		return strconv.AppendInt(dst, n, 10), true, nil
	}
	return dst, false, nil
}

const millisPerDay = 24 * 60 * 60 * 1000

// logicalTimeValue returns the integer JsonConverter writes for Connect's Date (days since the epoch),
// Time (milliseconds of the day) and Timestamp (milliseconds since the epoch). Readers may hand either
// that integer (int32 for Date and Time, int64 for Timestamp) or a time.Time, which must obey the same
// rules Connect's fromLogical enforces.
func logicalTimeValue(name string, v any) (int64, error) {
	switch x := v.(type) {
	case int32:
		if name != schema.TimestampName {
			return int64(x), nil
		}
	case int64:
		if name == schema.TimestampName {
			return x, nil
		}
	case time.Time:
		ms := x.UnixMilli()
		switch name {
		case schema.TimestampName:
			return ms, nil
		case schema.DateName:
			if ms%millisPerDay != 0 {
				return 0, fmt.Errorf("%w: a Connect Date value has a time of day", ErrValueType)
			}
			return ms / millisPerDay, nil
		default:
			if ms < 0 || ms >= millisPerDay {
				return 0, fmt.Errorf("%w: a Connect Time value has a date", ErrValueType)
			}
			return ms, nil
		}
	}
	return 0, fmt.Errorf("%w: %s schema, got %T", ErrValueType, name, v)
}

// appendJavaFloatJSON writes a float as Jackson does: the Java toString text as a bare number, except that
// NaN and the infinities become JSON strings (Jackson's QUOTE_NON_NUMERIC_NUMBERS is on by default).
func appendJavaFloatJSON(dst []byte, f float64, bitSize int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		dst = append(dst, '"')
		dst = javacompat.AppendDouble(dst, f, bitSize)
		return append(dst, '"')
	}
	return javacompat.AppendDouble(dst, f, bitSize)
}

func appendBase64(dst, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

func (c Converter) appendArray(dst []byte, items *schema.Schema, elems []any) ([]byte, error) {
	dst = append(dst, '[')
	for i, e := range elems {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = c.appendValue(dst, items, e); err != nil {
			return dst, fmt.Errorf("array element %d: %w", i, err)
		}
	}
	return append(dst, ']'), nil
}

// appendMap writes a JSON object when the key schema is a string and an array of [key, value] pairs for
// any other key type, as JsonConverter does.
func (c Converter) appendMap(dst []byte, s *schema.Schema, entries []schema.MapEntry) ([]byte, error) {
	if s.Keys == nil || s.Keys.Type != schema.String {
		return c.appendPairs(dst, s.Keys, s.Values, entries)
	}
	dst = append(dst, '{')
	for i, e := range entries {
		if i > 0 {
			dst = append(dst, ',')
		}
		key, err := c.objectKey(s.Keys, e.Key)
		if err != nil {
			return dst, fmt.Errorf("map key %d: %w", i, err)
		}
		dst = appendJSONString(dst, key)
		dst = append(dst, ':')
		if dst, err = c.appendValue(dst, s.Values, e.Value); err != nil {
			return dst, fmt.Errorf("map value %d: %w", i, err)
		}
	}
	return append(dst, '}'), nil
}

// objectKey is the text of a string map key: JsonConverter converts the key and takes the node's asText,
// so a null key becomes its default, or the text "null".
func (c Converter) objectKey(ks *schema.Schema, k any) (string, error) {
	switch x := k.(type) {
	case string:
		return x, nil
	case nil:
		if ks.HasDefault && c.ReplaceNullWithDefault {
			if d, ok := ks.Default.(string); ok {
				return d, nil
			}
		}
		if ks.Optional {
			return "null", nil
		}
		return "", ErrNullRequired
	}
	return "", fmt.Errorf("%w: string map key, got %T", ErrValueType, k)
}

func (c Converter) appendPairs(dst []byte, ks, vs *schema.Schema, entries []schema.MapEntry) ([]byte, error) {
	dst = append(dst, '[')
	for i, e := range entries {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '[')
		var err error
		if dst, err = c.appendValue(dst, ks, e.Key); err != nil {
			return dst, fmt.Errorf("map key %d: %w", i, err)
		}
		dst = append(dst, ',')
		if dst, err = c.appendValue(dst, vs, e.Value); err != nil {
			return dst, fmt.Errorf("map value %d: %w", i, err)
		}
		dst = append(dst, ']')
	}
	return append(dst, ']'), nil
}

// appendStruct writes the fields in schema order. Like JsonConverter 4.x (Struct.getWithoutDefault), a
// null field is handed to the null rule of its own schema, so replace.null.with.default=false keeps it null.
func (c Converter) appendStruct(dst []byte, s *schema.Schema, st *schema.Struct) ([]byte, error) {
	// JsonConverter rejects a struct built for another schema; comparing identity and shape is enough
	// here because readers build values from the schema they publish.
	if st.Schema != s && (st.Schema == nil || len(st.Schema.Fields) != len(s.Fields)) {
		return dst, fmt.Errorf("%w: struct of %q written with schema %q", ErrValueType, structName(st), s.Name)
	}
	if len(st.Values) != len(s.Fields) {
		return dst, fmt.Errorf("%w: struct %q has %d values for %d fields", ErrValueType, s.Name, len(st.Values), len(s.Fields))
	}
	dst = append(dst, '{')
	for i, f := range s.Fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, f.Name)
		dst = append(dst, ':')
		if f.Schema == nil {
			return dst, fmt.Errorf("field %q: %w", f.Name, ErrNoFieldSchema)
		}
		var err error
		if dst, err = c.appendValue(dst, f.Schema, st.Values[i]); err != nil {
			return dst, fmt.Errorf("field %q: %w", f.Name, err)
		}
	}
	return append(dst, '}'), nil
}

func structName(st *schema.Struct) string {
	if st.Schema == nil {
		return ""
	}
	return st.Schema.Name
}

// appendSchemaless writes a value without a schema, inferring the Connect type from the Go type as
// JsonConverter infers it from the Java class. Structs and decimals need a schema there too.
func (c Converter) appendSchemaless(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case bool:
		return strconv.AppendBool(dst, x), nil
	case int8:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case float32:
		return appendJavaFloatJSON(dst, float64(x), 32), nil
	case float64:
		return appendJavaFloatJSON(dst, x, 64), nil
	case string:
		return appendJSONString(dst, x), nil
	case []byte:
		return appendBase64(dst, x), nil
	case []any:
		return c.appendArray(dst, nil, x)
	case []schema.MapEntry:
		for _, e := range x {
			if _, ok := e.Key.(string); !ok {
				return c.appendPairs(dst, nil, nil, x)
			}
		}
		return c.appendMap(dst, &schemalessStringMap, x)
	}
	return dst, fmt.Errorf("%w: no schema, got %T", ErrValueType, v)
}

// schemalessStringMap stands for the absent schema of a schemaless map whose keys are all strings: keys
// are written as they are and values are schemaless.
var schemalessStringMap = schema.Schema{Type: schema.Map, Keys: &schema.Schema{Type: schema.String}}

package offsets

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cdcd/cdcd/schema/javacompat"
	"github.com/cdcd/cdcd/schema/jsonconv"
)

// Field is one entry of an offset or partition map.
type Field struct {
	Name  string
	Value any
}

// Fields is a Java map's entries in order: for encoding, the order the
// connector put them into its HashMap; after decoding, the order they were
// written in.
type Fields []Field

// Map returns the fields as a map for lookups.
func (f Fields) Map() map[string]any {
	m := make(map[string]any, len(f))
	for _, field := range f {
		m[field.Name] = field.Value
	}
	return m
}

// Key returns the offset key Connect writes for a connector's source
// partition: the compact JSON of [connector, partition], byte for byte as the
// schemaless JsonConverter (Jackson) writes it. Partition values must be
// primitives (see EncodeValue).
//
// Debezium's partition maps are java.util.HashMaps, so their fields are
// written in javacompat.HashMapOrder. A Go map carries no insertion order,
// so keys are taken as put in sorted order; that matters only for keys that
// share a hash bucket, which the partition keys of Debezium's connectors do
// not.
func Key(connector string, partition map[string]any) ([]byte, error) {
	if !utf8.ValidString(connector) {
		return nil, fmt.Errorf("offset key: %w", &JSONError{Reason: fmt.Sprintf("connector name %q is not valid UTF-8", connector)})
	}
	var fields Fields
	if partition != nil {
		fields = make(Fields, 0, len(partition))
		for _, name := range slices.Sorted(maps.Keys(partition)) {
			fields = append(fields, Field{Name: name, Value: partition[name]})
		}
	}
	b := append([]byte{'['}, jsonconv.AppendJSONString(nil, connector)...)
	b = append(b, ',')
	b, err := appendObject(b, fields)
	if err != nil {
		return nil, fmt.Errorf("offset key of %q: %w", connector, err)
	}
	return append(b, ']'), nil
}

// EncodeValue returns the offset value Connect writes for an offset map: its
// compact JSON object, fields in javacompat.HashMapOrder. Pass the fields in
// the order the Debezium connector puts them into its HashMap: keys that share
// a bucket are written in put order, and Debezium's offset keys do share
// buckets (MySQL's "event" and "server_id", for one). Fields from DecodeValue
// re-encode to the bytes they came from. Nil fields encode as nil, Connect's
// tombstone.
//
// Values may be nil, bool, string, []byte (base64, as JsonConverter writes
// bytes), any Go integer type within int64, float32, float64 (written as
// Java's Float/Double.toString, so 1.0 stays 1.0) or json.Number. Nested maps
// and lists are rejected, as Connect's OffsetUtils rejects them.
func EncodeValue(fields Fields) ([]byte, error) {
	if fields == nil {
		return nil, nil
	}
	b, err := appendObject(nil, fields)
	if err != nil {
		return nil, fmt.Errorf("offset value: %w", err)
	}
	return b, nil
}

// DecodeKey splits an offset key into its connector name and partition map.
// Numbers decode as in DecodeValue.
func DecodeKey(key []byte) (connector string, partition map[string]any, err error) {
	var parts []json.RawMessage
	if err := decodeJSON(key, &parts); err != nil {
		return "", nil, fmt.Errorf("offset key %s: %w", key, err)
	}
	if len(parts) != 2 {
		return "", nil, fmt.Errorf("offset key %s: %w", key, &JSONError{Reason: fmt.Sprintf("array has %d elements, want [connector, partition]", len(parts))})
	}
	if err := decodeJSON(parts[0], &connector); err != nil {
		return "", nil, fmt.Errorf("offset key %s: connector name: %w", key, err)
	}
	fields, err := decodeObject(parts[1])
	if err != nil {
		return "", nil, fmt.Errorf("offset key %s: partition: %w", key, err)
	}
	if fields != nil {
		partition = fields.Map()
	}
	return connector, partition, nil
}

// DecodeValue parses an offset value into its fields in written order.
// Integers become int64 and other numbers float64, as Connect reads them back
// as Long and Double, so no integer loses precision. A nil value (a
// tombstone) or JSON null decodes as nil fields.
func DecodeValue(value []byte) (Fields, error) {
	if value == nil {
		return nil, nil
	}
	fields, err := decodeObject(value)
	if err != nil {
		return nil, fmt.Errorf("offset value %s: %w", value, err)
	}
	return fields, nil
}

// appendObject writes fields, given in put order, as a JSON object in
// javacompat.HashMapOrder. Nil fields are JSON null; repeated names keep the
// first position and the last value, as repeated puts do.
func appendObject(b []byte, fields Fields) ([]byte, error) {
	if fields == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '{')
	for i, f := range javacompat.HashMapOrderFunc(fields, func(f Field) string { return f.Name }) {
		if i > 0 {
			b = append(b, ',')
		}
		if !utf8.ValidString(f.Name) {
			return nil, &JSONError{Reason: fmt.Sprintf("field name %q is not valid UTF-8", f.Name)}
		}
		b = jsonconv.AppendJSONString(b, f.Name)
		b = append(b, ':')
		var err error
		if b, err = appendPrimitive(b, f.Value); err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
	}
	return append(b, '}'), nil
}

func appendPrimitive(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case string:
		if !utf8.ValidString(v) {
			return nil, &JSONError{Reason: fmt.Sprintf("string %q is not valid UTF-8", v)}
		}
		return jsonconv.AppendJSONString(b, v), nil
	case []byte:
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, v)
		return append(b, '"'), nil
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int8:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int16:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int32:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case uint8:
		return strconv.AppendUint(b, uint64(v), 10), nil
	case uint16:
		return strconv.AppendUint(b, uint64(v), 10), nil
	case uint32:
		return strconv.AppendUint(b, uint64(v), 10), nil
	case uint:
		return appendUint64(b, uint64(v))
	case uint64:
		return appendUint64(b, v)
	case float32:
		return appendJavaFloat(b, float64(v), 32)
	case float64:
		return appendJavaFloat(b, v, 64)
	case json.Number:
		n, err := parseNumber(v)
		if err != nil {
			return nil, err
		}
		return appendPrimitive(b, n)
	default:
		return nil, &JSONError{Reason: fmt.Sprintf("value of type %T; offsets hold only primitives", v)}
	}
}

func appendUint64(b []byte, v uint64) ([]byte, error) {
	if v > math.MaxInt64 {
		return nil, &JSONError{Reason: fmt.Sprintf("integer %d does not fit a Java long", v)}
	}
	return strconv.AppendUint(b, v, 10), nil
}

// appendJavaFloat writes f as Jackson does: Java's Double.toString (bitSize 64) or Float.toString
// (bitSize 32). NaN and the infinities are not JSON numbers, and offsets never hold them.
func appendJavaFloat(b []byte, f float64, bitSize int) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, &JSONError{Reason: fmt.Sprintf("%v is not a JSON number", f)}
	}
	return javacompat.AppendDouble(b, f, bitSize), nil
}

// decodeJSON unmarshals exactly one JSON value, keeping numbers as
// json.Number.
func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return &JSONError{Reason: err.Error()}
	}
	return expectEnd(dec)
}

// decodeObject parses a JSON object of primitives, or null, keeping the
// order of its fields.
func decodeObject(data []byte) (Fields, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, &JSONError{Reason: err.Error()}
	}
	if tok == nil {
		return nil, expectEnd(dec)
	}
	if tok != json.Delim('{') {
		return nil, &JSONError{Reason: fmt.Sprintf("%v where an object was expected", tok)}
	}
	fields := Fields{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, &JSONError{Reason: err.Error()}
		}
		name, _ := tok.(string) // object keys are always strings
		if tok, err = dec.Token(); err != nil {
			return nil, &JSONError{Reason: err.Error()}
		}
		switch v := tok.(type) {
		case nil, bool, string:
		case json.Number:
			if tok, err = parseNumber(v); err != nil {
				return nil, fmt.Errorf("field %q: %w", name, err)
			}
		default:
			return nil, &JSONError{Reason: fmt.Sprintf("field %q holds a nested %v; offsets hold only primitives", name, v)}
		}
		fields = append(fields, Field{Name: name, Value: tok})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, &JSONError{Reason: err.Error()}
	}
	return fields, expectEnd(dec)
}

func expectEnd(dec *json.Decoder) error {
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &JSONError{Reason: "trailing data after the JSON value"}
	}
	return nil
}

// parseNumber turns a JSON number into int64 when it is written as an
// integer, float64 otherwise.
func parseNumber(n json.Number) (any, error) {
	s := n.String()
	if !strings.ContainsAny(s, ".eE") {
		i, err := strconv.ParseInt(s, 10, 64)
		if errors.Is(err, strconv.ErrRange) {
			return nil, &JSONError{Reason: fmt.Sprintf("integer %s does not fit a Java long", s)}
		}
		if err != nil {
			return nil, &JSONError{Reason: fmt.Sprintf("%q is not a number", s)}
		}
		return i, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, &JSONError{Reason: fmt.Sprintf("number %s: %v", s, err)}
	}
	return f, nil
}

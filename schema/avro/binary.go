package avro

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/javacompat"
)

// Avro binary encoding of Connect values, walking the Avro schema built for the Connect schema so that
// union branch indexes are the ones of the registered schema. Values are cdcd's Connect values (package
// schema): a Decimal is written as its unscaled two's-complement bytes, Connect Date/Time/Timestamp as
// int/int/long (they may also come as time.Time), INT8/INT16 as int.

// valueEncoder appends one value; ignoreDefaultForNullables is AvroData's ignore.default.for.nullables.
type valueEncoder struct {
	ignoreDefaultForNullables bool
}

func (e valueEncoder) appendValue(dst []byte, a *avroSchema, s *schema.Schema, v any) ([]byte, error) {
	if a.typ == typeUnion {
		nullBranch, valueBranch := a.nullIndex()
		if v == nil {
			return appendLong(dst, int64(nullBranch)), nil
		}
		dst = appendLong(dst, int64(valueBranch))
		a = a.branches[valueBranch]
	}
	if v == nil {
		return nil, ErrNullRequired
	}
	if isDecimal(s) {
		b, err := decimalBytes(s, v)
		if err != nil {
			return nil, err
		}
		return appendBytes(dst, b), nil
	}
	switch s.Type {
	case schema.Int8, schema.Int16, schema.Int32, schema.Int64:
		n, err := integerValue(s, v)
		if err != nil {
			return nil, err
		}
		return appendLong(dst, n), nil
	case schema.Float32:
		if f, ok := v.(float32); ok {
			return binary.LittleEndian.AppendUint32(dst, math.Float32bits(f)), nil
		}
	case schema.Float64:
		if f, ok := v.(float64); ok {
			return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f)), nil
		}
	case schema.Boolean:
		if b, ok := v.(bool); ok {
			if b {
				return append(dst, 1), nil
			}
			return append(dst, 0), nil
		}
	case schema.String:
		if str, ok := v.(string); ok {
			return appendString(dst, str), nil
		}
	case schema.Bytes:
		if b, ok := v.([]byte); ok {
			return appendBytes(dst, b), nil
		}
	case schema.Array:
		if elems, ok := v.([]any); ok {
			return e.appendArray(dst, a, s, elems)
		}
	case schema.Map:
		if entries, ok := v.([]schema.MapEntry); ok {
			return e.appendMap(dst, a, s, entries)
		}
	case schema.StructT:
		if st, ok := v.(*schema.Struct); ok && st != nil {
			return e.appendStruct(dst, a, s, st)
		}
	}
	return nil, fmt.Errorf("%w: %s schema, got %T", ErrValueType, s.Type, v)
}

func (e valueEncoder) appendArray(dst []byte, a *avroSchema, s *schema.Schema, elems []any) ([]byte, error) {
	if len(elems) > 0 {
		dst = appendLong(dst, int64(len(elems)))
		for i, el := range elems {
			var err error
			if dst, err = e.appendValue(dst, a.items, s.Items, el); err != nil {
				return nil, fmt.Errorf("array element %d: %w", i, err)
			}
		}
	}
	return append(dst, 0), nil
}

// appendMap writes an Avro map, or the array of {key, value} records that stands for a map whose keys
// are not required strings.
func (e valueEncoder) appendMap(dst []byte, a *avroSchema, s *schema.Schema, entries []schema.MapEntry) ([]byte, error) {
	if len(entries) > 0 {
		dst = appendLong(dst, int64(len(entries)))
		for i, en := range entries {
			var err error
			if a.typ == typeMap {
				key, ok := en.Key.(string)
				if !ok {
					return nil, fmt.Errorf("%w: map key is a %T, want string", ErrValueType, en.Key)
				}
				dst = appendString(dst, key)
			} else if dst, err = e.appendValue(dst, a.items.fields[0].typ, s.Keys, en.Key); err != nil {
				return nil, fmt.Errorf("map key: %w", err)
			}
			valueSchema := a.items
			if a.typ == typeArray {
				valueSchema = a.items.fields[1].typ
			}
			if dst, err = e.appendValue(dst, valueSchema, s.Values, en.Value); err != nil {
				return nil, fmt.Errorf("map value %d: %w", i, err)
			}
		}
	}
	return append(dst, 0), nil
}

func (e valueEncoder) appendStruct(dst []byte, a *avroSchema, s *schema.Schema, st *schema.Struct) ([]byte, error) {
	if len(st.Values) != len(s.Fields) || len(a.fields) != len(s.Fields) {
		return nil, fmt.Errorf("%w: struct has %d values for %d fields", ErrValueType, len(st.Values), len(s.Fields))
	}
	for i, f := range s.Fields {
		var err error
		v := fieldValue(f.Schema, st.Values[i], e.ignoreDefaultForNullables)
		if dst, err = e.appendValue(dst, a.fields[i].typ, f.Schema, v); err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
	}
	return dst, nil
}

// fieldValue is Connect's Struct.get: a null field reads as its schema's default. With
// ignore.default.for.nullables, an optional field keeps its null.
func fieldValue(s *schema.Schema, v any, ignoreDefaultForNullables bool) any {
	if v == nil && hasDefault(s) && !(ignoreDefaultForNullables && s.Optional) {
		return s.Default
	}
	return v
}

// decimalBytes is Connect's Decimal.fromLogical: the unscaled value as BigInteger.toByteArray, refused
// when the value's scale is not the schema's.
func decimalBytes(s *schema.Schema, v any) ([]byte, error) {
	d, ok := v.(schema.Decimal)
	if !ok || d.Unscaled == nil {
		return nil, fmt.Errorf("%w: Decimal schema, got %T", ErrValueType, v)
	}
	if scale, _ := s.Param(schema.DecimalScaleParam); scale != strconv.Itoa(int(d.Scale)) {
		return nil, fmt.Errorf("%w: Decimal value has scale %d, schema has %q", ErrValueType, d.Scale, scale)
	}
	return javacompat.AppendBigIntegerBytes(nil, d.Unscaled), nil
}

const millisPerDay = 24 * 60 * 60 * 1000

// integerValue returns the value of an INT8/16/32/64 schema as the Avro int or long that holds it.
// Connect's Date (days), Time (ms of the day) and Timestamp (ms) may also come as a time.Time, under the
// rules of Connect's fromLogical.
func integerValue(s *schema.Schema, v any) (int64, error) {
	switch x := v.(type) {
	case int8:
		if s.Type == schema.Int8 {
			return int64(x), nil
		}
	case int16:
		if s.Type == schema.Int16 {
			return int64(x), nil
		}
	case int32:
		if s.Type == schema.Int32 {
			return int64(x), nil
		}
	case int64:
		if s.Type == schema.Int64 {
			return x, nil
		}
	case time.Time:
		ms := x.UnixMilli()
		switch s.Name {
		case schema.TimestampName:
			return ms, nil
		case schema.DateName:
			if ms%millisPerDay == 0 {
				return ms / millisPerDay, nil
			}
			return 0, fmt.Errorf("%w: a Connect Date value has a time of day", ErrValueType)
		case schema.TimeName:
			if ms >= 0 && ms < millisPerDay {
				return ms, nil
			}
			return 0, fmt.Errorf("%w: a Connect Time value has a date", ErrValueType)
		}
	}
	return 0, fmt.Errorf("%w: %s schema, got %T", ErrValueType, s.Type, v)
}

// appendLong writes Avro's zig-zag varint.
func appendLong(dst []byte, n int64) []byte {
	return binary.AppendUvarint(dst, uint64(n<<1)^uint64(n>>63))
}

func appendBytes(dst, b []byte) []byte {
	return append(appendLong(dst, int64(len(b))), b...)
}

// appendString writes a string's UTF-8 bytes; invalid UTF-8 becomes U+FFFD per byte, as a Java string
// decoded from the same bytes would hold it.
func appendString(dst []byte, s string) []byte {
	if utf8.ValidString(s) {
		return append(appendLong(dst, int64(len(s))), s...)
	}
	var valid []byte
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		valid = utf8.AppendRune(valid, r) // RuneError is U+FFFD
		i += size
	}
	return appendBytes(dst, valid)
}

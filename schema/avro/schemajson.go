package avro

import (
	"fmt"
	"unicode/utf8"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/jsonconv"
)

// renderSchema writes a as Avro's Schema.toString() does (Avro 1.11/1.12, compact Jackson output):
//   - a primitive without properties is its bare name, "int"; with properties {"type":"int",props…};
//   - a record is {"type":"record","name","namespace","doc","fields",props…}, the namespace only where it
//     differs from the enclosing one (and "" for a null namespace inside a named one);
//   - a field is {"name","type","doc","default",props…};
//   - arrays are {"type":"array","items",props…}, maps {"type":"map","values",props…}, unions […];
//   - a record already written is written again as its name, qualified unless it is in the enclosing
//     namespace.
func renderSchema(a *avroSchema) []byte {
	r := renderer{known: map[string]bool{}}
	return r.schema(nil, a, "")
}

type renderer struct {
	known map[string]bool // full names of the records written so far
}

func (r *renderer) schema(dst []byte, a *avroSchema, namespace string) []byte {
	switch a.typ {
	case typeRecord:
		return r.record(dst, a, namespace)
	case typeUnion:
		dst = append(dst, '[')
		for i, b := range a.branches {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = r.schema(dst, b, namespace)
		}
		return append(dst, ']')
	case typeArray, typeMap:
		dst = append(dst, `{"type":`...)
		dst = jsonString(dst, typeNames[a.typ])
		if a.typ == typeArray {
			dst = append(dst, `,"items":`...)
		} else {
			dst = append(dst, `,"values":`...)
		}
		dst = r.schema(dst, a.items, namespace)
		return appendProps(dst, a.props)
	}
	if len(a.props) == 0 {
		return jsonString(dst, typeNames[a.typ])
	}
	dst = append(dst, `{"type":`...)
	dst = jsonString(dst, typeNames[a.typ])
	return appendProps(dst, a.props)
}

func (r *renderer) record(dst []byte, a *avroSchema, namespace string) []byte {
	full := a.fullName()
	if r.known[full] {
		return jsonString(dst, qualifiedName(a, namespace))
	}
	r.known[full] = true
	dst = append(dst, `{"type":"record","name":`...)
	dst = jsonString(dst, a.name)
	switch {
	case a.namespace != "" && a.namespace != namespace:
		dst = append(dst, `,"namespace":`...)
		dst = jsonString(dst, a.namespace)
	case a.namespace == "" && namespace != "":
		dst = append(dst, `,"namespace":""`...)
	}
	if a.doc != "" {
		dst = append(dst, `,"doc":`...)
		dst = jsonString(dst, a.doc)
	}
	dst = append(dst, `,"fields":[`...)
	for i, f := range a.fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"name":`...)
		dst = jsonString(dst, f.name)
		dst = append(dst, `,"type":`...)
		dst = r.schema(dst, f.typ, a.namespace)
		if f.doc != "" {
			dst = append(dst, `,"doc":`...)
			dst = jsonString(dst, f.doc)
		}
		if f.def != nil {
			dst = append(dst, `,"default":`...)
			dst = append(dst, f.def...)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	return appendProps(dst, a.props)
}

// qualifiedName is Name.getQualified: the short name inside its own namespace, unless the short name is
// also the name of an Avro type and would be read as that type.
func qualifiedName(a *avroSchema, namespace string) string {
	if a.namespace != "" && a.namespace == namespace && !avroTypeName[a.name] {
		return a.name
	}
	return a.fullName()
}

// avroTypeName holds the names of Avro's types (Schema.Type).
var avroTypeName = map[string]bool{
	"record": true, "enum": true, "array": true, "map": true, "union": true, "fixed": true, "string": true,
	"bytes": true, "int": true, "long": true, "float": true, "double": true, "boolean": true, "null": true,
}

// appendProps writes the properties and closes the object.
func appendProps(dst []byte, props []prop) []byte {
	for _, p := range props {
		dst = append(dst, ',')
		dst = jsonString(dst, p.key)
		dst = append(dst, ':')
		dst = append(dst, p.value...)
	}
	return append(dst, '}')
}

// jsonString appends s as Jackson's writer-based generator (the one Schema.toString uses) quotes it:
// '"', '\\' and the control characters below 0x20 are escaped (\b \t \n \f \r, the rest as \u00XX), and
// everything else, non-ASCII included, is written as it is. Invalid UTF-8 cannot occur in a Java string;
// each invalid byte is written as U+FFFD, which is what Java's decoder makes of it.
func jsonString(dst []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, "\uFFFD"...)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
			continue
		}
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\b':
			dst = append(dst, '\\', 'b')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\f':
			dst = append(dst, '\\', 'f')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		default:
			dst = append(dst, c)
		}
		i++
	}
	return append(dst, '"')
}

// defaultJSON renders a Connect default value as AvroData.defaultValueFromConnect does: logical values as
// their Avro form, bytes (and decimals) as a string of ISO-8859-1 characters, floats with Java's
// toString, maps with string keys as objects and other maps as arrays of [key, value] pairs, and structs
// as objects whose null fields take their own defaults.
func defaultJSON(dst []byte, s *schema.Schema, v any) ([]byte, error) {
	if v == nil {
		return append(dst, "null"...), nil
	}
	mismatch := func() ([]byte, error) {
		return nil, fmt.Errorf("%w: default of a %s schema is a %T", ErrValueType, s.Type, v)
	}
	if isDecimal(s) {
		b, err := decimalBytes(s, v)
		if err != nil {
			return nil, err
		}
		return latin1String(dst, b), nil
	}
	switch s.Type {
	case schema.Int8, schema.Int16, schema.Int32, schema.Int64:
		n, err := integerValue(s, v)
		if err != nil {
			return nil, err
		}
		return fmt.Appendf(dst, "%d", n), nil
	case schema.Float32:
		if f, ok := v.(float32); ok {
			return jsonconv.AppendJacksonFloat(dst, float64(f), 32), nil
		}
	case schema.Float64:
		if f, ok := v.(float64); ok {
			return jsonconv.AppendJacksonFloat(dst, f, 64), nil
		}
	case schema.Boolean:
		if b, ok := v.(bool); ok {
			return fmt.Appendf(dst, "%t", b), nil
		}
	case schema.String:
		if str, ok := v.(string); ok {
			return jsonString(dst, str), nil
		}
	case schema.Bytes:
		if b, ok := v.([]byte); ok {
			return latin1String(dst, b), nil
		}
	case schema.Array:
		elems, ok := v.([]any)
		if !ok {
			return mismatch()
		}
		dst = append(dst, '[')
		for i, e := range elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = defaultJSON(dst, s.Items, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case schema.Map:
		entries, ok := v.([]schema.MapEntry)
		if !ok {
			return mismatch()
		}
		return mapDefaultJSON(dst, s, entries)
	case schema.StructT:
		st, ok := v.(*schema.Struct)
		if !ok || st == nil || len(st.Values) != len(s.Fields) {
			return mismatch()
		}
		dst = append(dst, '{')
		for i, f := range s.Fields {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonString(dst, f.Name)
			dst = append(dst, ':')
			var err error
			if dst, err = defaultJSON(dst, f.Schema, fieldValue(f.Schema, st.Values[i], false)); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	}
	return mismatch()
}

func mapDefaultJSON(dst []byte, s *schema.Schema, entries []schema.MapEntry) ([]byte, error) {
	var err error
	if s.Keys.Type == schema.String && !s.Keys.Optional {
		dst = append(dst, '{')
		for i, e := range entries {
			key, ok := e.Key.(string)
			if !ok {
				return nil, fmt.Errorf("%w: map default key is a %T", ErrValueType, e.Key)
			}
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(jsonString(dst, key), ':')
			if dst, err = defaultJSON(dst, s.Values, e.Value); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	}
	dst = append(dst, '[')
	for i, e := range entries {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '[')
		if dst, err = defaultJSON(dst, s.Keys, e.Key); err != nil {
			return nil, err
		}
		dst = append(dst, ',')
		if dst, err = defaultJSON(dst, s.Values, e.Value); err != nil {
			return nil, err
		}
		dst = append(dst, ']')
	}
	return append(dst, ']'), nil
}

// latin1String writes bytes as the JSON string of new String(bytes, ISO_8859_1): each byte is the
// character of the same code.
func latin1String(dst, b []byte) []byte {
	runes := make([]byte, 0, len(b)*2)
	for _, c := range b {
		runes = utf8.AppendRune(runes, rune(c))
	}
	return jsonString(dst, string(runes))
}

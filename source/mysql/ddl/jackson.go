package ddl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The schema history topic holds Debezium's documents as Jackson's default pretty printer writes them:
// two-space indented objects, `"name" : value`, arrays on one line as `[ a, b ]` (and `[ ]` when empty),
// objects inside arrays continuing the enclosing indentation. A document is built as ordered fields.

type field struct {
	name  string
	value any // nil, string, bool, int, int32, int64, uint32, uint64, float64, document or []any
}

type document []field

func (d document) get(name string) (any, bool) {
	for _, f := range d {
		if f.name == name {
			return f.value, true
		}
	}
	return nil, false
}

// writePretty appends v as Jackson's DefaultPrettyPrinter writes it at the given object nesting level.
func writePretty(b *bytes.Buffer, v any, level int) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		writeJacksonString(b, x)
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int:
		b.WriteString(strconv.Itoa(x))
	case int32:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case uint32:
		b.WriteString(strconv.FormatUint(uint64(x), 10))
	case uint64:
		b.WriteString(strconv.FormatUint(x, 10))
	case float64:
		b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
	case document:
		if len(x) == 0 {
			b.WriteString("{ }")
			return nil
		}
		b.WriteByte('{')
		for i, f := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
			b.WriteString(strings.Repeat("  ", level+1))
			writeJacksonString(b, f.name)
			b.WriteString(" : ")
			if err := writePretty(b, f.value, level+1); err != nil {
				return err
			}
		}
		b.WriteByte('\n')
		b.WriteString(strings.Repeat("  ", level))
		b.WriteByte('}')
	case []any:
		b.WriteString("[ ")
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := writePretty(b, e, level); err != nil {
				return err
			}
		}
		if len(x) > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte(']')
	default:
		return fmt.Errorf("%w: cannot write a %T", ErrHistory, v)
	}
	return nil
}

// writeJacksonString quotes s as Jackson does: ", \ and control characters escaped (\b \t \n \f \r by
// letter, the others as \u00XX), everything else as UTF-8.
func writeJacksonString(b *bytes.Buffer, s string) {
	const hex = "0123456789ABCDEF"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xF])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

// readDocument decodes a JSON object keeping its fields' order; numbers become int64 when integral, else
// float64.
func readDocument(data []byte) (document, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := readValue(dec)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrHistory, err)
	}
	d, ok := v.(document)
	if !ok {
		return nil, fmt.Errorf("%w: not a JSON object", ErrHistory)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the document", ErrHistory)
	}
	return d, nil
}

func readValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			d := document{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				name, _ := k.(string)
				v, err := readValue(dec)
				if err != nil {
					return nil, err
				}
				d = append(d, field{name, v})
			}
			_, err := dec.Token()
			return d, err
		case '[':
			a := []any{}
			for dec.More() {
				v, err := readValue(dec)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := dec.Token()
			return a, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case json.Number:
		if n, err := t.Int64(); err == nil {
			return n, nil
		}
		return t.Float64()
	default:
		return t, nil // string, bool or nil
	}
}

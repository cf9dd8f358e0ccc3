package catalog

import (
	"fmt"
	"strings"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/javacompat"
)

type hstoreEntry struct {
	key   string
	value *string // nil for NULL
}

// parseHStore is pgjdbc's HStoreConverter.fromString over hstore's output ("k"=>"v", "n"=>NULL), and
// returns the entries in the order the resulting java.util.HashMap iterates them, which is the order
// Debezium writes them in (as JSON, or as a Connect map).
func parseHStore(s string) ([]hstoreEntry, error) {
	var entries []hstoreEntry
	bad := func() error { return fmt.Errorf("invalid hstore %q", truncate(s)) }
	// untilQuote is appendUntilQuote: the text after the quote at pos up to the next unescaped quote.
	untilQuote := func(pos int) (string, int, bool) {
		var sb strings.Builder
		for pos++; pos < len(s); pos++ {
			c := s[pos]
			if c == '"' {
				return sb.String(), pos, true
			}
			if c == '\\' {
				if pos++; pos >= len(s) {
					return "", 0, false
				}
				c = s[pos]
			}
			sb.WriteByte(c)
		}
		return "", 0, false
	}
	for pos := 0; pos < len(s); {
		start := strings.IndexByte(s[pos:], '"')
		if start < 0 {
			return nil, bad()
		}
		key, end, ok := untilQuote(pos + start)
		if !ok || end+3 >= len(s) {
			return nil, bad()
		}
		pos = end + 3 // past `"=>`
		var value *string
		if s[pos] == 'N' {
			pos += 4
		} else {
			v, end, ok := untilQuote(pos)
			if !ok {
				return nil, bad()
			}
			value, pos = &v, end
		}
		pos++
		entries = append(entries, hstoreEntry{key, value})
	}
	// A repeated key keeps its first position and takes the later value, as HashMap.put does.
	return javacompat.HashMapOrderFunc(entries, func(e hstoreEntry) string { return e.key }), nil
}

// hstoreJSON is PostgresValueConverter.convertMapToJsonStringRepresentation: a compact JSON object as
// Jackson's JsonGenerator writes it.
func hstoreJSON(entries []hstoreEntry) string {
	var sb strings.Builder
	sb.WriteByte('{')
	for i, e := range entries {
		if i > 0 {
			sb.WriteByte(',')
		}
		jacksonQuote(&sb, e.key)
		sb.WriteByte(':')
		if e.value == nil {
			sb.WriteString("null")
		} else {
			jacksonQuote(&sb, *e.value)
		}
	}
	sb.WriteByte('}')
	return sb.String()
}

// jacksonQuote writes s as a JSON string the way Jackson does by default: quote, backslash and control
// characters escaped (\b \t \n \f \r, others as \u00XX in upper-case hex), everything else verbatim.
func jacksonQuote(sb *strings.Builder, s string) {
	const hexDigits = "0123456789ABCDEF"
	sb.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			sb.WriteByte('\\')
			sb.WriteByte(c)
		case c == '\b':
			sb.WriteString(`\b`)
		case c == '\t':
			sb.WriteString(`\t`)
		case c == '\n':
			sb.WriteString(`\n`)
		case c == '\f':
			sb.WriteString(`\f`)
		case c == '\r':
			sb.WriteString(`\r`)
		case c < 0x20:
			sb.WriteString(`\u00`)
			sb.WriteByte(hexDigits[c>>4])
			sb.WriteByte(hexDigits[c&0xf])
		default:
			sb.WriteByte(c)
		}
	}
	sb.WriteByte('"')
}

// hstoreType is hstore under hstore.handling.mode: JSON text, or a map of string to optional string.
func (b builder) hstoreType() valueType {
	ph := b.placeholder()
	placeholder := []hstoreEntry{{ph, &ph}}
	if b.m.HStore == HStoreMap {
		s := &schema.Schema{Type: schema.Map, Keys: &schema.Schema{Type: schema.String}, Values: &schema.Schema{Type: schema.String, Optional: true}}
		toMap := func(entries []hstoreEntry) []schema.MapEntry {
			m := make([]schema.MapEntry, len(entries))
			for i, e := range entries {
				m[i].Key = e.key
				if e.value != nil {
					m[i].Value = *e.value
				}
			}
			return m
		}
		decode := func(t string) (any, error) {
			entries, err := parseHStore(t)
			if err != nil {
				return nil, err
			}
			return toMap(entries), nil
		}
		return valueType{schema: s, decode: decode, fallback: []schema.MapEntry{}, unavailable: toMap(placeholder)}
	}
	decode := func(t string) (any, error) {
		entries, err := parseHStore(t)
		if err != nil {
			return nil, err
		}
		return hstoreJSON(entries), nil
	}
	return valueType{schema: schema.Json(), decode: decode, fallback: "{}", unavailable: hstoreJSON(placeholder)}
}

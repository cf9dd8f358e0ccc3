package transforms

import (
	"fmt"
	"log/slog"
	"math"
	"math/big"
	"slices"
	"strings"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/javacompat"
	"github.com/cdcd/cdcd/source"
)

// dropHeaders is Kafka's DropHeaders: it removes every header named in "headers".
type dropHeaders struct{ names []string }

func newDropHeaders(s settings, _ *slog.Logger) (transformation, error) {
	names, err := nonEmptyList(s, "headers")
	if err != nil {
		return nil, err
	}
	return dropHeaders{names: names}, nil
}

func (t dropHeaders) apply(ev *source.Event) (bool, error) {
	ev.Headers = slices.DeleteFunc(slices.Clone(ev.Headers), func(h source.Header) bool { return slices.Contains(t.names, h.Key) })
	return true, nil
}

// insertHeader is Kafka's InsertHeader: it appends header "header" with "value.literal", typed as Connect's
// Values.parseString infers it (a boolean, the smallest integer type that holds it, a float, a decimal, or
// a string), which decides how the header converter writes it.
type insertHeader struct {
	header source.Header
}

func newInsertHeader(s settings, _ *slog.Logger) (transformation, error) {
	name, err := s.required("header")
	if err != nil {
		return nil, err
	}
	literal, err := s.required("value.literal") // trimmed, as ConfigDef trims strings
	if err != nil {
		return nil, err
	}
	sch, v, err := parseConnectLiteral(literal)
	if err != nil {
		return nil, &ConfigError{Key: s.key("value.literal"), Value: literal, Problem: err.Error()}
	}
	return insertHeader{header: source.Header{Key: name, Schema: sch, Value: v}}, nil
}

func (t insertHeader) apply(ev *source.Event) (bool, error) {
	ev.Headers = append(slices.Clip(ev.Headers), t.header)
	return true, nil
}

// Values.parseString's delimiters: a literal holding one is tokenized by Connect's parser.
const connectLiteralDelimiters = `:,{}[]"`

// parseConnectLiteral is Values.parseString for the literals cdcd can type exactly: a single token (no
// delimiter) that is null, true, false, a number or text, or text whose first token is not a number.
// Arrays, maps, dates and times, and a number followed by delimiters are refused.
func parseConnectLiteral(literal string) (*schema.Schema, any, error) {
	if literal == "" {
		return requiredStringSchema, "", nil
	}
	token := strings.TrimSpace(literal)
	if strings.HasPrefix(token, "[") || strings.HasPrefix(token, "{") {
		return nil, nil, fmt.Errorf("cdcd does not type array or map literals as Connect does; remove the brackets or braces")
	}
	first := token
	if i := strings.IndexAny(literal, connectLiteralDelimiters); i >= 0 {
		first = strings.TrimSpace(literal[:i])
	}
	numeric := first != "" && (first[0] >= '0' && first[0] <= '9' || first[0] == '+' || first[0] == '-')
	if first != token {
		if numeric {
			return nil, nil, fmt.Errorf("cdcd does not type a literal that starts with a number and holds any of %s as Connect does", connectLiteralDelimiters)
		}
		return requiredStringSchema, literal, nil
	}
	switch token {
	case "":
		return requiredStringSchema, literal, nil
	case "null":
		return nil, nil, nil
	case "true", "false":
		return &schema.Schema{Type: schema.Boolean}, token == "true", nil
	}
	if token[0] >= '0' && token[0] <= '9' {
		if n := len(token); n == 10 || n == 13 || n == 24 {
			for _, f := range []*javaDateFormat{isoDateFormat, isoTimeFormat, isoTimestampFormat} {
				if _, err := f.parse(token); err == nil {
					return nil, nil, fmt.Errorf("cdcd does not type date, time or timestamp literals as Connect does")
				}
			}
		}
	}
	if numeric {
		if unscaled, scale, err := javacompat.ParseBigDecimal(token); err == nil {
			sch, v := connectNumber(schema.Decimal{Unscaled: unscaled, Scale: scale})
			return sch, v, nil
		}
	}
	return requiredStringSchema, literal, nil
}

// connectNumber is Values.parseAsNumber: an integral value gets the smallest integer type that holds it,
// a fraction a float when float's range holds it, else a double, else a Decimal.
func connectNumber(d schema.Decimal) (*schema.Schema, any) {
	r := decimalRat(d)
	if r.IsInt() && r.Num().IsInt64() {
		n := r.Num().Int64()
		switch {
		case n >= math.MinInt8 && n <= math.MaxInt8:
			return &schema.Schema{Type: schema.Int8}, int8(n)
		case n >= math.MinInt16 && n <= math.MaxInt16:
			return &schema.Schema{Type: schema.Int16}, int16(n)
		case n >= math.MinInt32 && n <= math.MaxInt32:
			return &schema.Schema{Type: schema.Int32}, int32(n)
		}
		return &schema.Schema{Type: schema.Int64}, n
	}
	if d.Scale != 0 {
		if f, _ := r.Float32(); !math.IsInf(float64(f), 0) {
			return &schema.Schema{Type: schema.Float32}, f
		}
		if f, _ := r.Float64(); !math.IsInf(f, 0) {
			return &schema.Schema{Type: schema.Float64}, f
		}
	}
	return schema.ConnectDecimal(int(d.Scale)), schema.Decimal{Unscaled: new(big.Int).Set(d.Unscaled), Scale: d.Scale}
}

// headerFrom is Kafka's HeaderFrom$Key or HeaderFrom$Value: the listed fields of the key or value are
// copied, or moved, to headers of the paired names, with their field schemas.
type headerFrom struct {
	part
	fields, headers        []string
	move                   bool
	replaceNullWithDefault bool
	schemas                schemaCache[*schema.Schema]
}

func newHeaderFrom(s settings, p part) (transformation, error) {
	fields, err := nonEmptyList(s, "fields")
	if err != nil {
		return nil, err
	}
	headers, err := nonEmptyList(s, "headers")
	if err != nil {
		return nil, err
	}
	if len(fields) != len(headers) {
		return nil, &ConfigError{Key: s.key("headers"), Value: s.str("headers", ""),
			Problem: "'fields' config must have the same number of elements as 'headers' config."}
	}
	if _, err := s.required("operation"); err != nil {
		return nil, err
	}
	op, err := validString(s, "operation", "", "move", "copy")
	if err != nil {
		return nil, err
	}
	t := &headerFrom{part: p, fields: fields, headers: headers, move: op == "move"}
	if t.replaceNullWithDefault, err = replaceNullWithDefaultSetting(s); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *headerFrom) purpose() string {
	if t.move {
		return "header move"
	}
	return "header copy"
}

func (t *headerFrom) apply(ev *source.Event) (bool, error) {
	sch, val := t.get(ev)
	headers := slices.Clip(ev.Headers)
	if sch == nil {
		m, err := requireMap(val, t.purpose())
		if err != nil {
			return false, err
		}
		out := newHashMap(m)
		for i, f := range t.fields {
			if t.move {
				out.remove(f)
			}
			headers = append(headers, source.Header{Key: t.headers[i], Value: mapGet(m, f)})
		}
		t.set(ev, nil, out.entries())
		ev.Headers = headers
		return true, nil
	}
	st, err := requireStruct(val, t.purpose())
	if err != nil {
		return false, err
	}
	for i, f := range t.fields {
		idx := st.Schema.FieldIndex(f)
		if idx < 0 {
			return false, fmt.Errorf("field %q does not exist in the %s schema %q", f, t.partName(), st.Schema.Name)
		}
		headers = append(headers, source.Header{Key: t.headers[i], Schema: st.Schema.Fields[idx].Schema,
			Value: structValue(st, idx, t.replaceNullWithDefault)})
	}
	if t.move {
		updated, err := t.schemas.get(st.Schema, func() (*schema.Schema, error) {
			out := copyBasics(st.Schema)
			for _, f := range st.Schema.Fields {
				if !slices.Contains(t.fields, f.Name) {
					out.Fields = append(out.Fields, f)
				}
			}
			return out, nil
		})
		if err != nil {
			return false, err
		}
		values := make([]any, 0, len(updated.Fields))
		for i, f := range st.Schema.Fields {
			if !slices.Contains(t.fields, f.Name) {
				values = append(values, structValue(st, i, t.replaceNullWithDefault))
			}
		}
		t.set(ev, updated, &schema.Struct{Schema: updated, Values: values})
	}
	ev.Headers = headers
	return true, nil
}

func (t *headerFrom) partName() string {
	if t.key {
		return "key"
	}
	return "value"
}

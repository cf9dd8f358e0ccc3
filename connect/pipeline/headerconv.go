package pipeline

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/javacompat"
)

// simpleHeaderConverter is Connect's default header.converter, SimpleHeaderConverter: a header value is
// written as Values.convertToString renders it. For the structs Debezium puts in __debezium.oldkey and
// __debezium.newkey that is a JSON-like text, {"id":1}, with strings quoted and only \ and " escaped.
type simpleHeaderConverter struct{}

func (simpleHeaderConverter) Encode(s *schema.Schema, v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	var b strings.Builder
	if err := appendConnectString(&b, v, false); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// appendConnectString follows org.apache.kafka.connect.data.Values.append; embedded is true inside a
// struct, list or map, where strings and bytes are quoted.
func appendConnectString(b *strings.Builder, v any, embedded bool) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int8:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int16:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int32:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float32:
		b.WriteString(javacompat.FormatDouble(float64(x), 32))
	case float64:
		b.WriteString(javacompat.FormatDouble(x, 64))
	case string:
		if embedded {
			b.WriteByte('"')
			b.WriteString(strings.ReplaceAll(strings.ReplaceAll(x, `\`, `\\`), `"`, `\"`))
			b.WriteByte('"')
		} else {
			b.WriteString(x)
		}
	case []byte:
		s := base64.StdEncoding.EncodeToString(x)
		if embedded {
			s = `"` + s + `"`
		}
		b.WriteString(s)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := appendConnectString(b, e, true); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case []schema.MapEntry:
		b.WriteByte('{')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := appendConnectString(b, e.Key, true); err != nil {
				return err
			}
			b.WriteByte(':')
			if err := appendConnectString(b, e.Value, true); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case *schema.Struct:
		b.WriteByte('{')
		for i, f := range x.Schema.Fields {
			if i > 0 {
				b.WriteByte(',')
			}
			appendConnectString(b, f.Name, true)
			b.WriteByte(':')
			if err := appendConnectString(b, x.Values[i], true); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case schema.Decimal:
		if x.Unscaled == nil { // no BigDecimal to print (jsonconv refuses it too)
			return fmt.Errorf("header value is a Decimal without an unscaled value")
		}
		b.WriteString(javacompat.FormatBigDecimal(x.Unscaled, x.Scale))
	default:
		return fmt.Errorf("header value of type %T cannot be written by SimpleHeaderConverter", v)
	}
	return nil
}

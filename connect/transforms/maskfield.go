package transforms

import (
	"fmt"
	"math/big"
	"slices"
	"time"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/javacompat"
	"github.com/cdcd/cdcd/source"
)

// maskField is Kafka's MaskField$Key or MaskField$Value: the listed fields become their type's empty value
// (0, false, "", an empty list or map, the epoch), or "replacement" converted to the field's numeric or
// string type. Like Kafka's, it fails on a null key or value, so configs pair it with a predicate.
type maskField struct {
	part
	fields                 []string
	replacement            *string
	replaceNullWithDefault bool
}

const maskFieldPurpose = "mask fields"

func newMaskField(s settings, p part) (transformation, error) {
	fields, err := nonEmptyList(s, "fields")
	if err != nil {
		return nil, err
	}
	t := &maskField{part: p, fields: fields}
	if r, ok := s.lookup("replacement"); ok {
		if r == "" {
			return nil, &ConfigError{Key: s.key("replacement"), Value: r, Problem: "String must be non-empty"}
		}
		t.replacement = &r
	}
	if t.replaceNullWithDefault, err = replaceNullWithDefaultSetting(s); err != nil {
		return nil, err
	}
	return t, nil
}

// nonEmptyList reads a required LIST setting that Kafka's NonEmptyListValidator checks.
func nonEmptyList(s settings, name string) ([]string, error) {
	if _, err := s.required(name); err != nil {
		return nil, err
	}
	list := s.list(name)
	if len(list) == 0 {
		return nil, &ConfigError{Key: s.key(name), Value: s.str(name, ""), Problem: "empty list is not allowed"}
	}
	return list, nil
}

func (t *maskField) apply(ev *source.Event) (bool, error) {
	sch, val := t.get(ev)
	if sch == nil {
		m, err := requireMap(val, maskFieldPurpose)
		if err != nil {
			return false, err
		}
		out := newHashMap(m)
		for _, f := range t.fields {
			masked, err := t.mask(mapGet(m, f))
			if err != nil {
				return false, err
			}
			out.put(f, masked)
		}
		t.set(ev, nil, out.entries())
		return true, nil
	}
	st, err := requireStruct(val, maskFieldPurpose)
	if err != nil {
		return false, err
	}
	values := make([]any, len(st.Values))
	for i, f := range st.Schema.Fields {
		values[i] = structValue(st, i, t.replaceNullWithDefault)
		if slices.Contains(t.fields, f.Name) {
			if values[i], err = t.mask(values[i]); err != nil {
				return false, err
			}
		}
	}
	t.set(ev, sch, &schema.Struct{Schema: st.Schema, Values: values})
	return true, nil
}

// mask follows MaskField by the value's Java class: Connect's Date, Time and Timestamp are java.util.Date
// (which cdcd may hold as time.Time or as their integer encoding; both mask to the epoch).
func (t *maskField) mask(v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if t.replacement != nil {
		return maskWithReplacement(v, *t.replacement)
	}
	switch x := v.(type) {
	case bool:
		return false, nil
	case int8, int16, int32, int64, float32, float64:
		return zeroOf(x), nil
	case string:
		return "", nil
	case schema.Decimal:
		return schema.Decimal{Unscaled: new(big.Int), Scale: 0}, nil
	case time.Time:
		return time.UnixMilli(0).UTC(), nil
	case []any:
		return []any{}, nil
	case []schema.MapEntry:
		return []schema.MapEntry{}, nil
	}
	return nil, fmt.Errorf("cannot mask value of type: class %s", javaClassName(v))
}

func zeroOf(v any) any {
	switch v.(type) {
	case int8:
		return int8(0)
	case int16:
		return int16(0)
	case int32:
		return int32(0)
	case int64:
		return int64(0)
	case float32:
		return float32(0)
	}
	return float64(0)
}

// maskWithReplacement converts the replacement to the value's class as MaskField's Values.convertTo* and
// BigDecimal constructor do; other classes (booleans, bytes, dates, structs) cannot take one.
func maskWithReplacement(v any, replacement string) (any, error) {
	var out any
	var err error
	switch v.(type) {
	case string:
		return replacement, nil
	case int8, int16, int32, int64, float32, float64:
		out, err = javaParseNumberAs(replacement, v)
	case schema.Decimal:
		unscaled, scale, perr := javacompat.ParseBigDecimal(replacement)
		if perr != nil {
			// MaskField reports the BigDecimal constructor's NumberFormatException so.
			return nil, fmt.Errorf("unable to convert %s (class java.lang.String) to number", replacement)
		}
		out = schema.Decimal{Unscaled: unscaled, Scale: scale}
	default:
		return nil, fmt.Errorf("cannot mask value of type class %s with custom replacement", javaClassName(v))
	}
	return out, err
}

package catalog

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/javacompat"
)

func decodeBool(s string) (any, error) { return strings.EqualFold(s, "t"), nil } // PgOutputColumnValue.asBoolean

func decodeInt16(s string) (any, error) {
	v, err := strconv.ParseInt(s, 10, 16)
	return int16(v), err
}

func decodeInt32(s string) (any, error) {
	v, err := strconv.ParseInt(s, 10, 32)
	return int32(v), err
}

func decodeInt64(s string) (any, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err
}

func decodeFloat32(s string) (any, error) {
	v, err := strconv.ParseFloat(s, 32)
	return float32(v), err
}

func decodeFloat64(s string) (any, error) {
	v, err := strconv.ParseFloat(s, 64)
	return v, err
}

// bitsType follows PostgresValueConverter: bit(1) and varbit(1) are booleans, longer bit strings are
// Bits with length n (2^31-1 for an unbounded varbit, pgjdbc's unknownLength).
func bitsType(name string, mod int32) valueType {
	length := int(mod)
	if name == "varbit" && mod < 0 {
		length = math.MaxInt32
	}
	if length <= 1 {
		// convertBit: Integer.valueOf(text, 2) != 0.
		decode := func(s string) (any, error) {
			v, err := strconv.ParseInt(s, 2, 64)
			return v != 0, err
		}
		return valueType{schema: &schema.Schema{Type: schema.Boolean}, decode: decode, fallback: false}
	}
	return valueType{schema: schema.Bits(length), decode: decodeBits, fallback: []byte{}}
}

// decodeBits is PostgresValueConverter.convertBits for text: the last character is bit 0, and the value
// is BitSet.toByteArray, little-endian and only as long as the highest set bit needs (no bit set: no bytes).
func decodeBits(s string) (any, error) {
	n := len(s)
	out := []byte{}
	for i := n - 1; i >= 0; i-- {
		switch s[i] {
		case '1':
			bit := n - 1 - i
			for len(out) <= bit/8 {
				out = append(out, 0)
			}
			out[bit/8] |= 1 << (bit % 8)
		case '0':
		default:
			return nil, fmt.Errorf("invalid bit string %q", truncate(s))
		}
	}
	return out, nil
}

// numericShape is numeric's precision and scale from its type modifier, as pgjdbc's TypeInfoCache
// reports them: no modifier gives precision 0 and display size 131089, which Debezium treats as
// "variable scale" (PostgresValueConverter.isVariableScaleDecimal).
func numericShape(mod int32) (precision, scale int, variable bool) {
	if mod < 0 {
		return 131089, 0, true
	}
	return int(((mod - 4) >> 16) & 0xffff), int((mod - 4) & 0xffff), false
}

// Special numeric values as Debezium names them in string mode (SpecialValueDecimal.toString).
var specialDecimalNames = map[string]string{"NaN": "NAN", "Infinity": "POSITIVE_INFINITY", "-Infinity": "NEGATIVE_INFINITY"}

func (b builder) numericType(mod int32, inArray bool) valueType {
	precision, scale, variable := numericShape(mod)
	// parse is PostgresValueConverter.convertDecimal's first half: special values, then the scale set to
	// the column's (exactly; PostgreSQL never sends more digits than the scale).
	parse := func(s string) (d schema.Decimal, special string, err error) {
		if name, ok := specialDecimalNames[s]; ok {
			if inArray { // pgjdbc's PgResultSet.toBigDecimal rejects them inside arrays
				return d, "", fmt.Errorf("numeric array element %q: %w", s, ErrSpecialDecimal)
			}
			return d, name, nil
		}
		unscaled, sc, err := javacompat.ParseBigDecimal(s)
		if err != nil {
			return d, "", fmt.Errorf("invalid decimal %q: %w", truncate(s), err)
		}
		d = schema.Decimal{Unscaled: unscaled, Scale: sc}
		if !variable {
			if unscaled, err = javacompat.SetScale(d.Unscaled, d.Scale, int32(scale)); err != nil {
				return d, "", fmt.Errorf("decimal %s has more than %d fraction digits", javacompat.FormatBigDecimalPlain(d.Unscaled, d.Scale), scale)
			}
			d = schema.Decimal{Unscaled: unscaled, Scale: int32(scale)}
		}
		return d, "", nil
	}
	switch b.m.Decimal {
	case DecimalDouble:
		decode := func(s string) (any, error) {
			_, special, err := parse(s)
			if err != nil {
				return nil, err
			}
			if special != "" {
				return map[string]float64{"NAN": math.NaN(), "POSITIVE_INFINITY": math.Inf(1), "NEGATIVE_INFINITY": math.Inf(-1)}[special], nil
			}
			return strconv.ParseFloat(s, 64)
		}
		return valueType{schema: &schema.Schema{Type: schema.Float64}, decode: decode, fallback: float64(0)}
	case DecimalString:
		decode := func(s string) (any, error) {
			d, special, err := parse(s)
			if special != "" || err != nil {
				return special, err
			}
			return javacompat.FormatBigDecimalPlain(d.Unscaled, d.Scale), nil
		}
		zeroScale := int32(0)
		if !variable {
			zeroScale = int32(scale)
		}
		return valueType{schema: &schema.Schema{Type: schema.String}, decode: decode, fallback: javacompat.FormatBigDecimalPlain(new(big.Int), zeroScale)}
	}
	if variable {
		s := schema.VariableScaleDecimal()
		decode := func(text string) (any, error) {
			d, special, err := parse(text)
			if err != nil {
				return nil, err
			}
			if special != "" {
				return nil, ErrSpecialDecimal
			}
			// convertDecimal: stripTrailingZeros, and a negative scale back to 0.
			return schema.VariableScaleDecimalValue(s, stripTrailingZeros(d)), nil
		}
		zero := schema.VariableScaleDecimalValue(s, schema.Decimal{Unscaled: new(big.Int)})
		return valueType{schema: s, decode: decode, fallback: zero}
	}
	decode := func(text string) (any, error) {
		d, special, err := parse(text)
		if err != nil {
			return nil, err
		}
		if special != "" {
			return nil, ErrSpecialDecimal
		}
		return d, nil
	}
	return valueType{schema: schema.DecimalSchema(scale, precision), decode: decode, fallback: schema.Decimal{Unscaled: new(big.Int), Scale: int32(scale)}}
}

// moneyType follows PostgresValueConverter.convertMoney over PostgresMoney.parse.
func (b builder) moneyType() valueType {
	digits := b.m.MoneyFractionDigits
	switch b.m.Decimal {
	case DecimalDouble:
		decode := func(s string) (any, error) {
			d, err := parseMoney(s)
			if err != nil {
				return nil, err
			}
			return strconv.ParseFloat(javacompat.FormatBigDecimalPlain(d.Unscaled, d.Scale), 64)
		}
		return valueType{schema: &schema.Schema{Type: schema.Float64}, decode: decode, fallback: float64(0)}
	case DecimalString:
		decode := func(s string) (any, error) {
			d, err := parseMoney(s)
			if err != nil {
				return nil, err
			}
			return javacompat.FormatBigDecimalPlain(d.Unscaled, d.Scale), nil
		}
		// The fallback is BigDecimal.ZERO.setScale(digits).toString(), which turns scientific past 6 digits.
		fallback := javacompat.FormatBigDecimal(new(big.Int), int32(digits))
		return valueType{schema: &schema.Schema{Type: schema.String}, decode: decode, fallback: fallback}
	}
	decode := func(s string) (any, error) {
		d, err := parseMoney(s)
		if err != nil {
			return nil, err
		}
		return schema.Decimal{Unscaled: javacompat.SetScaleHalfUp(d.Unscaled, d.Scale, int32(digits)), Scale: int32(digits)}, nil
	}
	return valueType{schema: schema.ConnectDecimal(digits), decode: decode, fallback: schema.Decimal{Unscaled: new(big.Int), Scale: int32(digits)}}
}

// parseMoney is PostgresMoney.parse: a leading '-' or parenthesis makes the value negative, one leading
// currency character is dropped, and commas (thousands separators) go. It therefore only reads money
// printed under a locale like C or en_US; other lc_monetary settings fail, as they do in Debezium.
func parseMoney(s string) (schema.Decimal, error) {
	if s == "" {
		return schema.Decimal{}, errors.New("empty money value")
	}
	negative := s[0] == '(' || s[0] == '-'
	v := s
	if s[0] == '-' {
		v = "(" + s[1:] + ")"
	}
	if strings.HasPrefix(v, "(") && strings.HasSuffix(v, ")") { // PGtokenizer.removePara
		v = v[1 : len(v)-1]
	}
	if v != "" && !(v[0] >= '0' && v[0] <= '9') && v[0] != '.' {
		_, size := firstRune(v)
		v = v[size:]
	}
	v = strings.ReplaceAll(v, ",", "")
	if negative {
		v = "-" + v
	}
	unscaled, scale, err := javacompat.ParseBigDecimal(v)
	if err != nil {
		return schema.Decimal{}, fmt.Errorf("money %q: %w", s, err)
	}
	return schema.Decimal{Unscaled: unscaled, Scale: scale}, nil
}

func firstRune(s string) (rune, int) {
	for i, r := range s {
		if i > 0 {
			return r, i
		}
	}
	return 0, len(s)
}

func pow10(n int32) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

// stripTrailingZeros is BigDecimal.stripTrailingZeros followed by Debezium's setScale(0) for a negative
// scale: zero becomes 0 with scale 0.
func stripTrailingZeros(d schema.Decimal) schema.Decimal {
	u, scale := new(big.Int).Set(d.Unscaled), d.Scale
	if u.Sign() == 0 {
		return schema.Decimal{Unscaled: u}
	}
	ten, r := big.NewInt(10), new(big.Int)
	for scale > 0 {
		q, rem := new(big.Int).QuoRem(u, ten, r)
		if rem.Sign() != 0 {
			break
		}
		u, scale = q, scale-1
	}
	if scale < 0 {
		u.Mul(u, pow10(-scale))
		scale = 0
	}
	return schema.Decimal{Unscaled: u, Scale: scale}
}

package transforms

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"github.com/cdcd/cdcd/schema"
)

// Java's number conversions, as Cast and MaskField apply them to Connect values.

// javaLong is Number.longValue (and Boolean as 1/0 where Cast allows it) of a Connect numeric value. For
// floating-point values it is Java's (long) cast: NaN is 0 and out-of-range values saturate; for a decimal it
// is BigDecimal.longValue, the low 64 bits of the integer part.
func javaLong(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case float32:
		return javaFloatToLong(float64(x)), true
	case float64:
		return javaFloatToLong(x), true
	case schema.Decimal:
		i := decimalIntegerPart(x)
		return int64(new(big.Int).And(i, big.NewInt(0).SetUint64(math.MaxUint64)).Uint64()), true
	}
	return 0, false
}

// javaInt is Number.intValue: Java's (int) cast for floating point values (saturating at int's range, not
// long's), the low 32 bits otherwise.
func javaInt(v any) (int32, bool) {
	switch x := v.(type) {
	case float32:
		return javaFloatToInt(float64(x)), true
	case float64:
		return javaFloatToInt(x), true
	}
	l, ok := javaLong(v)
	return int32(l), ok
}

func javaFloatToLong(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

func javaFloatToInt(f float64) int32 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt32:
		return math.MaxInt32
	case f <= math.MinInt32:
		return math.MinInt32
	}
	return int32(f)
}

// javaDouble is Number.doubleValue.
func javaDouble(v any) (float64, bool) {
	switch x := v.(type) {
	case float32:
		return float64(x), true
	case float64:
		return x, true
	case schema.Decimal:
		f, _ := decimalRat(x).Float64()
		return f, true
	}
	l, ok := javaLong(v)
	return float64(l), ok
}

// javaFloat is Number.floatValue: a long or a decimal rounds to float directly, not through double.
func javaFloat(v any) (float32, bool) {
	switch x := v.(type) {
	case float32:
		return x, true
	case float64:
		return float32(x), true
	case schema.Decimal:
		f, _ := decimalRat(x).Float32()
		return f, true
	}
	l, ok := javaLong(v)
	return float32(l), ok
}

func decimalRat(d schema.Decimal) *big.Rat {
	r := new(big.Rat).SetInt(d.Unscaled)
	scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs32(d.Scale))), nil))
	if d.Scale >= 0 {
		return r.Quo(r, scale)
	}
	return r.Mul(r, scale)
}

// decimalIntegerPart is BigDecimal.toBigInteger: the value truncated toward zero.
func decimalIntegerPart(d schema.Decimal) *big.Int {
	r := decimalRat(d)
	return new(big.Int).Quo(r.Num(), r.Denom())
}

func abs32(x int32) int32 {
	if x < 0 {
		return -x
	}
	return x
}

// javaIntegerSyntax is what Byte/Short/Integer/Long.parseLong accept in base 10.
var javaIntegerSyntax = regexp.MustCompile(`^[+-]?[0-9]+$`)

// parseJavaInteger is Long.parseLong (bits=64), Integer.parseInt (32), Short.parseShort (16) or
// Byte.parseByte (8): a NumberFormatException becomes an error.
func parseJavaInteger(s string, bits int) (int64, error) {
	if !javaIntegerSyntax.MatchString(s) {
		return 0, fmt.Errorf("for input string: %q", s)
	}
	n, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		return 0, fmt.Errorf("value out of range. Value:%q Radix:10", s)
	}
	return n, nil
}

// javaFloatSyntax is Double.parseDouble's decimal syntax (after trimming): digits with an optional point
// and exponent, an optional f/F/d/D suffix, or NaN and Infinity.
var javaFloatSyntax = regexp.MustCompile(`^[+-]?(NaN|Infinity|(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)[fFdD]?)$`)

// parseJavaDouble is Double.parseDouble (bits=64) or Float.parseFloat (32). Hexadecimal floating-point
// literals are not accepted.
func parseJavaDouble(s string, bits int) (float64, error) {
	t := strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	if !javaFloatSyntax.MatchString(t) {
		return 0, fmt.Errorf("for input string: %q", s)
	}
	t = strings.TrimRight(t, "fFdD")
	switch strings.TrimLeft(t, "+-") {
	case "NaN":
		return math.NaN(), nil
	case "Infinity":
		if strings.HasPrefix(t, "-") {
			return math.Inf(-1), nil
		}
		return math.Inf(1), nil
	}
	f, err := strconv.ParseFloat(t, bits)
	if err != nil && !strings.Contains(err.Error(), "range") { // Java overflows to infinity, as ParseFloat does
		return 0, fmt.Errorf("for input string: %q", s)
	}
	return f, nil
}

// javaBigDecimalSyntax is the BigDecimal(String) constructor's syntax.
var javaBigDecimalSyntax = regexp.MustCompile(`^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$`)

// parseJavaBigDecimal is new BigDecimal(String): the scale is the number of fraction digits minus the
// exponent.
func parseJavaBigDecimal(s string) (schema.Decimal, error) {
	m := javaBigDecimalSyntax.FindStringSubmatch(s)
	if m == nil || m[2]+m[3] == "" {
		return schema.Decimal{}, fmt.Errorf("character array is missing \"exponent\" mark 'e' or 'E' or is not a number: %q", s)
	}
	unscaled, _ := new(big.Int).SetString(m[1]+m[2]+m[3], 10)
	scale := int64(len(m[3]))
	if m[4] != "" {
		exp, err := strconv.ParseInt(m[4], 10, 32)
		if err != nil {
			return schema.Decimal{}, fmt.Errorf("exponent overflow: %q", s)
		}
		scale -= exp
	}
	if scale > math.MaxInt32 || scale < math.MinInt32 {
		return schema.Decimal{}, fmt.Errorf("scale out of range: %q", s)
	}
	return schema.Decimal{Unscaled: unscaled, Scale: int32(scale)}, nil
}

// javaParseNumberAs converts a string to the class of like (a Connect numeric value) as Connect's
// Values.convertTo{Byte,Short,Integer,Long,Float,Double} do: new BigDecimal(s), then its longValue narrowed
// like a Java cast, or its doubleValue.
func javaParseNumberAs(s string, like any) (any, error) {
	d, err := parseJavaBigDecimal(s)
	if err != nil {
		return nil, fmt.Errorf("unable to convert %s (class java.lang.String) to a number", s)
	}
	switch like.(type) {
	case float32, float64:
		f, _ := javaDouble(d)
		return castNumber(f, like)
	}
	l, _ := javaLong(d)
	return castNumber(l, like)
}

// castNumber narrows or widens n to like's class as Java's Number.xxxValue methods do.
func castNumber(n, like any) (any, error) {
	switch like.(type) {
	case int8:
		i, ok := javaInt(n)
		return int8(i), okOrErr(ok, n)
	case int16:
		i, ok := javaInt(n)
		return int16(i), okOrErr(ok, n)
	case int32:
		i, ok := javaInt(n)
		return i, okOrErr(ok, n)
	case int64:
		l, ok := javaLong(n)
		return l, okOrErr(ok, n)
	case float32:
		f, ok := javaFloat(n)
		return f, okOrErr(ok, n)
	case float64:
		f, ok := javaDouble(n)
		return f, okOrErr(ok, n)
	}
	return nil, fmt.Errorf("not a numeric class: %s", javaClassName(like))
}

func okOrErr(ok bool, v any) error {
	if ok {
		return nil
	}
	return fmt.Errorf("unexpected type in Cast transformation: class %s", javaClassName(v))
}

// javaBigDecimalString is BigDecimal.toString: plain notation when the scale is not negative and the
// adjusted exponent is at least -6, scientific notation otherwise.
func javaBigDecimalString(d schema.Decimal) string {
	digits := new(big.Int).Abs(d.Unscaled).String()
	sign := ""
	if d.Unscaled.Sign() < 0 {
		sign = "-"
	}
	scale := int(d.Scale)
	adjusted := len(digits) - 1 - scale
	if scale >= 0 && adjusted >= -6 {
		switch {
		case scale == 0:
			return sign + digits
		case len(digits) > scale:
			return sign + digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
		default:
			return sign + "0." + strings.Repeat("0", scale-len(digits)) + digits
		}
	}
	mantissa := digits[:1]
	if len(digits) > 1 {
		mantissa += "." + digits[1:]
	}
	exp := strconv.Itoa(adjusted)
	if adjusted >= 0 {
		exp = "+" + exp
	}
	return sign + mantissa + "E" + exp
}

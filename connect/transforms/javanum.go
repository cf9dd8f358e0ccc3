package transforms

import (
	"fmt"
	"math"
	"math/big"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/javacompat"
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
		return javacompat.DoubleToLong(float64(x)), true
	case float64:
		return javacompat.DoubleToLong(x), true
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
		return javacompat.DoubleToInt(float64(x)), true
	case float64:
		return javacompat.DoubleToInt(x), true
	}
	l, ok := javaLong(v)
	return int32(l), ok
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

// javaParseNumberAs converts a string to the class of like (a Connect numeric value) as Connect's
// Values.convertTo{Byte,Short,Integer,Long,Float,Double} do: new BigDecimal(s), then its longValue narrowed
// like a Java cast, or its doubleValue.
func javaParseNumberAs(s string, like any) (any, error) {
	unscaled, scale, err := javacompat.ParseBigDecimal(s)
	if err != nil {
		return nil, fmt.Errorf("unable to convert %s (class java.lang.String) to a number", s)
	}
	d := schema.Decimal{Unscaled: unscaled, Scale: scale}
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

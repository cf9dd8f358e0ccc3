package javacompat

import (
	"errors"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

// bigDecimalSyntax is what the BigDecimal(String) constructor reads: an optional sign, digits with an
// optional point (at least one digit in all), an optional exponent. Java also takes the decimal digits
// of other scripts (Character.isDigit); cdcd only ASCII ones.
var bigDecimalSyntax = regexp.MustCompile(`^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$`)

// ErrNotBigDecimal is ParseBigDecimal's error for text that is not a number at all.
var ErrNotBigDecimal = errors.New("not a decimal number")

// ParseBigDecimal is new BigDecimal(String): the unscaled value is every digit, the scale the number of
// fraction digits minus the exponent, so "1.50" is 150 with scale 2 and "15E+1" 15 with scale -1. Errors
// name no input; callers say what they were reading.
func ParseBigDecimal(s string) (unscaled *big.Int, scale int32, err error) {
	m := bigDecimalSyntax.FindStringSubmatch(s)
	if m == nil || m[2]+m[3] == "" {
		return nil, 0, ErrNotBigDecimal
	}
	unscaled, _ = new(big.Int).SetString(m[1]+m[2]+m[3], 10)
	sc := int64(len(m[3]))
	if m[4] != "" {
		exp, err := strconv.ParseInt(m[4], 10, 32)
		if err != nil {
			return nil, 0, errors.New("exponent overflow")
		}
		sc -= exp
	}
	if sc > math.MaxInt32 || sc < math.MinInt32 {
		return nil, 0, errors.New("scale out of range")
	}
	return unscaled, int32(sc), nil
}

// AppendBigDecimal appends d as BigDecimal.toString writes it: plain when the scale is not negative and
// the adjusted exponent (the exponent of the first digit) is at least -6, otherwise scientific with an
// explicit exponent sign, e.g. 12 with scale -3 is 1.2E+4 and 12 with scale 10 is 1.2E-9. Kafka's
// Values, Jackson's decimal nodes and Debezium's string decimals all print this form.
func AppendBigDecimal(dst []byte, unscaled *big.Int, scale int32) []byte {
	var small [24]byte
	var coeff []byte
	if unscaled.IsInt64() {
		coeff = strconv.AppendInt(small[:0], unscaled.Int64(), 10)
	} else {
		coeff = unscaled.Append(small[:0], 10)
	}
	if coeff[0] == '-' {
		dst = append(dst, '-')
		coeff = coeff[1:]
	}
	sc := int64(scale)
	adjusted := int64(len(coeff)-1) - sc
	if sc >= 0 && adjusted >= -6 {
		switch {
		case sc == 0:
			return append(dst, coeff...)
		case int64(len(coeff)) > sc:
			point := int64(len(coeff)) - sc
			dst = append(dst, coeff[:point]...)
			dst = append(dst, '.')
			return append(dst, coeff[point:]...)
		default:
			dst = append(dst, '0', '.')
			for i := int64(len(coeff)); i < sc; i++ {
				dst = append(dst, '0')
			}
			return append(dst, coeff...)
		}
	}
	dst = append(dst, coeff[0])
	if len(coeff) > 1 {
		dst = append(dst, '.')
		dst = append(dst, coeff[1:]...)
	}
	dst = append(dst, 'E')
	if adjusted >= 0 {
		dst = append(dst, '+')
	}
	return strconv.AppendInt(dst, adjusted, 10)
}

// FormatBigDecimal is BigDecimal.toString (see AppendBigDecimal).
func FormatBigDecimal(unscaled *big.Int, scale int32) string {
	return string(AppendBigDecimal(nil, unscaled, scale))
}

// FormatBigDecimalPlain is BigDecimal.toPlainString: never an exponent, trailing zeros for a negative
// scale, except that a zero of negative scale is plain "0".
func FormatBigDecimalPlain(unscaled *big.Int, scale int32) string {
	digits := new(big.Int).Abs(unscaled).String()
	sign := ""
	if unscaled.Sign() < 0 {
		sign = "-"
	}
	switch {
	case scale <= 0:
		if unscaled.Sign() == 0 {
			return "0"
		}
		return sign + digits + strings.Repeat("0", int(-scale))
	case int(scale) >= len(digits):
		return sign + "0." + strings.Repeat("0", int(scale)-len(digits)) + digits
	}
	point := len(digits) - int(scale)
	return sign + digits[:point] + "." + digits[point:]
}

// ErrRoundingNecessary is SetScale's error when the new scale would drop non-zero digits, Java's
// ArithmeticException("Rounding necessary").
var ErrRoundingNecessary = errors.New("rounding necessary")

// SetScale is BigDecimal.setScale(n) with no rounding mode (RoundingMode.UNNECESSARY): the unscaled
// value of unscaled × 10^-scale at scale n, or ErrRoundingNecessary where digits would be lost.
func SetScale(unscaled *big.Int, scale, n int32) (*big.Int, error) {
	if n >= scale {
		return new(big.Int).Mul(unscaled, pow10(n-scale)), nil
	}
	q, r := new(big.Int).QuoRem(unscaled, pow10(scale-n), new(big.Int))
	if r.Sign() != 0 {
		return nil, ErrRoundingNecessary
	}
	return q, nil
}

// SetScaleHalfUp is BigDecimal.setScale(n, RoundingMode.HALF_UP): the unscaled value at scale n, ties
// rounded away from zero.
func SetScaleHalfUp(unscaled *big.Int, scale, n int32) *big.Int {
	if n >= scale {
		exact, _ := SetScale(unscaled, scale, n)
		return exact
	}
	div := pow10(scale - n)
	q, r := new(big.Int).QuoRem(unscaled, div, new(big.Int))
	if new(big.Int).Mul(new(big.Int).Abs(r), big.NewInt(2)).Cmp(div) >= 0 {
		q.Add(q, big.NewInt(int64(unscaled.Sign())))
	}
	return q
}

func pow10(n int32) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

// AppendBigIntegerBytes appends x as BigInteger.toByteArray returns it: big-endian two's complement in
// the fewest bytes that keep the sign bit right (so 128 is 00 80 and zero is 00), the form Connect's
// Decimal and Debezium's VariableScaleDecimal carry an unscaled value in.
func AppendBigIntegerBytes(dst []byte, x *big.Int) []byte {
	if x.IsInt64() {
		v := x.Int64()
		var b [8]byte
		for i := 7; i >= 0; i-- {
			b[i] = byte(v)
			v >>= 8
		}
		n := 0
		// A leading byte is redundant when it only repeats the sign carried by the next byte's top bit.
		for n < 7 && ((b[n] == 0x00 && b[n+1]&0x80 == 0) || (b[n] == 0xFF && b[n+1]&0x80 != 0)) {
			n++
		}
		return append(dst, b[n:]...)
	}
	if x.Sign() > 0 {
		mag := x.Bytes()
		if mag[0]&0x80 != 0 {
			dst = append(dst, 0x00)
		}
		return append(dst, mag...)
	}
	// Negative: two's complement of |x| is ^(|x|-1) over the magnitude's bytes, plus a 0xFF sign byte
	// when the top bit of that result is clear.
	m := new(big.Int).Neg(x)
	m.Sub(m, big.NewInt(1))
	mag := m.Bytes()
	if len(mag) == 0 || mag[0]&0x80 != 0 {
		dst = append(dst, 0xFF)
	}
	for _, c := range mag {
		dst = append(dst, ^c)
	}
	return dst
}

package jsonconv

import (
	"encoding/base64"
	"math/big"
	"strconv"

	"github.com/cdcd/cdcd/schema"
)

// appendTwosComplement appends the unscaled value as Java's BigInteger.toByteArray writes it: big-endian
// two's complement in the fewest bytes that keep the sign bit right (so 128 is 00 80 and zero is 00).
func appendTwosComplement(dst []byte, x *big.Int) []byte {
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

// appendDecimalBase64 writes the BASE64 form of a Connect Decimal: the two's complement bytes of the
// unscaled value, base64 with padding, as a JSON string.
func appendDecimalBase64(dst []byte, d schema.Decimal) []byte {
	var small [32]byte
	raw := appendTwosComplement(small[:0], d.Unscaled)
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, raw)
	return append(dst, '"')
}

// appendBigDecimal writes d as Java's BigDecimal.toString (the form Jackson uses for decimal.format=NUMERIC):
// plain when the scale is not negative and the adjusted exponent is at least -6, otherwise scientific
// with an explicit exponent sign, e.g. 12 with scale -3 is 1.2E+4 and 12 with scale 10 is 1.2E-9.
func appendBigDecimal(dst []byte, d schema.Decimal) []byte {
	var small [24]byte
	var coeff []byte
	if d.Unscaled.IsInt64() {
		coeff = strconv.AppendInt(small[:0], d.Unscaled.Int64(), 10)
	} else {
		coeff = d.Unscaled.Append(small[:0], 10)
	}
	if coeff[0] == '-' {
		dst = append(dst, '-')
		coeff = coeff[1:]
	}
	scale := int64(d.Scale)
	adjusted := int64(len(coeff)-1) - scale
	if scale >= 0 && adjusted >= -6 {
		switch {
		case scale == 0:
			return append(dst, coeff...)
		case int64(len(coeff)) > scale:
			point := int64(len(coeff)) - scale
			dst = append(dst, coeff[:point]...)
			dst = append(dst, '.')
			return append(dst, coeff[point:]...)
		default:
			dst = append(dst, '0', '.')
			for i := int64(len(coeff)); i < scale; i++ {
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

package javacompat

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// AppendDouble appends f as Java's Double.toString (JDK 19 and later) writes it; bitSize 32 gives
// Float.toString of float32(f). NaN and the infinities come out as NaN, Infinity and -Infinity; quoting
// them is the caller's business (Jackson writes them as JSON strings).
//
// Java picks the shortest decimal that rounds back to the value, as Go's strconv does, with one
// difference: when that shortest decimal has a single digit, Java prefers a two-digit decimal that is
// closer to the value and still rounds back (Double.MIN_VALUE is 4.9E-324, not 5e-324). The layout is
// plain for 1e-3 <= |f| < 1e7 and computerized scientific notation (1.0E7, 1.0E-4) elsewhere, always
// with at least one digit after the point.
func AppendDouble(dst []byte, f float64, bitSize int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	var buf [32]byte
	digits, exp := shortestDigits(buf[:0], f, bitSize)
	if len(digits) == 1 {
		var buf2 [32]byte
		if d2, e2, ok := closerTwoDigits(buf2[:0], f, bitSize); ok {
			digits, exp = d2, e2
		}
	}
	return appendLayout(dst, digits, exp)
}

// FormatDouble is AppendDouble as a string: Double.toString (bitSize 64) or Float.toString (32).
func FormatDouble(f float64, bitSize int) string {
	var buf [32]byte
	return string(AppendDouble(buf[:0], f, bitSize))
}

// shortestDigits returns the significant digits of the shortest round-tripping decimal of f (> 0) and the
// decimal exponent of its first digit: f ≈ d.ddd × 10^exp.
func shortestDigits(buf []byte, f float64, bitSize int) ([]byte, int) {
	return splitE(strconv.AppendFloat(buf, f, 'e', -1, bitSize))
}

// closerTwoDigits returns f correctly rounded to two significant digits when that decimal is not the
// one-digit shortest form (its second digit is not zero) and still rounds back to f.
func closerTwoDigits(buf []byte, f float64, bitSize int) ([]byte, int, bool) {
	formatted := strconv.AppendFloat(buf, f, 'e', 1, bitSize)
	if formatted[2] == '0' { // "d.0e…" is the one-digit decimal again
		return nil, 0, false
	}
	back, err := strconv.ParseFloat(string(formatted), bitSize)
	if err != nil || back != f {
		return nil, 0, false
	}
	digits, exp := splitE(formatted)
	return digits, exp, true
}

// splitE splits strconv's 'e' format ("d.ddde±XX") into its digits (compacted in place, without the
// point) and the exponent.
func splitE(b []byte) ([]byte, int) {
	ePos := len(b) - 1
	for b[ePos] != 'e' {
		ePos--
	}
	exp := 0
	for _, c := range b[ePos+2:] {
		exp = exp*10 + int(c-'0')
	}
	if b[ePos+1] == '-' {
		exp = -exp
	}
	digits := b[:1]
	if ePos > 1 { // skip the '.'
		digits = append(digits, b[2:ePos]...)
	}
	return digits, exp
}

// appendLayout writes digits × 10^exp (first digit at 10^exp) in Double.toString's layout.
func appendLayout(dst, digits []byte, exp int) []byte {
	if exp < -3 || exp >= 7 {
		dst = append(dst, digits[0], '.')
		if len(digits) > 1 {
			dst = append(dst, digits[1:]...)
		} else {
			dst = append(dst, '0')
		}
		dst = append(dst, 'E')
		return strconv.AppendInt(dst, int64(exp), 10)
	}
	if exp < 0 {
		dst = append(dst, '0', '.')
		for i := -1; i > exp; i-- {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	intLen := exp + 1
	if len(digits) <= intLen {
		dst = append(dst, digits...)
		for i := len(digits); i < intLen; i++ {
			dst = append(dst, '0')
		}
		return append(dst, '.', '0')
	}
	dst = append(dst, digits[:intLen]...)
	dst = append(dst, '.')
	return append(dst, digits[intLen:]...)
}

// doubleSyntax is what Double.parseDouble and Float.parseFloat accept once the text is trimmed (the
// FloatValue grammar of Double.valueOf): an optional sign, then NaN, Infinity, or a decimal or
// hexadecimal literal (the hexadecimal one with its binary exponent) with an optional f/F/d/D suffix,
// which NaN and Infinity do not take.
var doubleSyntax = regexp.MustCompile(`^[+-]?(NaN|Infinity|(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|0[xX]([0-9a-fA-F]+\.?|[0-9a-fA-F]*\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?)$`)

// ParseDouble is Double.parseDouble (bitSize 64) or Float.parseFloat (32): the text is trimmed as
// String.trim does, and a value too large for the type is an infinity rather than an error. Text Java
// throws a NumberFormatException for is an error reading "for input string: " and the text, the message
// Java gives for most such text (lower-cased, as Go errors are). Go's strconv alone would not do: it
// also takes inf and nan in any letter case and underscores in hexadecimal literals, and it refuses
// "+NaN" and the f/d suffixes.
func ParseDouble(s string, bitSize int) (float64, error) {
	t := Trim(s)
	if !doubleSyntax.MatchString(t) {
		return 0, fmt.Errorf("for input string: %q", s)
	}
	switch strings.TrimLeft(t, "+-") {
	case "NaN":
		return math.NaN(), nil
	case "Infinity":
		if t[0] == '-' {
			return math.Inf(-1), nil
		}
		return math.Inf(1), nil
	}
	f, err := strconv.ParseFloat(strings.TrimRight(t, "fFdD"), bitSize)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("for input string: %q", s)
	}
	return f, nil
}

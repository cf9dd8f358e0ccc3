package javacompat

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// ParseInteger is Long.parseLong (bitSize 64), Integer.parseInt (32), Short.parseShort (16) or
// Byte.parseByte (8) in base 10: an optional sign and digits, no white space. Its errors are the
// NumberFormatException messages of parseByte and parseShort, lower-cased as Go errors are: "for input
// string" for text that is not an integer, "value out of range" for one the type cannot hold (where
// parseInt and parseLong say "for input string" too). Java also takes the decimal digits of other
// scripts, as Character.digit does; ParseInteger only ASCII ones.
func ParseInteger(s string, bitSize int) (int64, error) {
	n, err := strconv.ParseInt(s, 10, bitSize)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("value out of range. Value:%q Radix:10", s)
	case err != nil:
		return 0, fmt.Errorf("for input string: %q", s)
	}
	return n, nil
}

// DoubleToLong is Java's (long) cast of a double: truncation toward zero, NaN to 0, and values beyond
// the long range saturating at Long.MIN_VALUE and Long.MAX_VALUE, where Go's conversion is undefined.
func DoubleToLong(f float64) int64 { return saturatingCast[int64](f, math.MinInt64, math.MaxInt64) }

// DoubleToInt is Java's (int) cast of a double or float. It saturates at int's range, so it is not
// (int) (long) f, whose low 32 bits would wrap.
func DoubleToInt(f float64) int32 { return saturatingCast[int32](f, math.MinInt32, math.MaxInt32) }

// saturatingCast is the JLS narrowing of a double to an integer type whose range is [lo, hi].
func saturatingCast[T int32 | int64](f float64, lo, hi T) T {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= float64(hi): // float64(math.MaxInt64) is 2^63, one past the range
		return hi
	case f <= float64(lo):
		return lo
	}
	return T(f)
}

// Round is Math.round(double): the closest long, ties toward positive infinity, NaN to 0, saturating.
// Since Java 7 it is exact, not the (long) Math.floor(x + 0.5) of its documentation: x + 0.5 itself
// rounds, so that formula takes 0.49999999999999994 to 1 and the odd integers between 2^52 and 2^53
// one too high, where Java returns 0 and the value itself. Comparing x with its floor avoids the addition.
func Round(x float64) int64 {
	r := math.Floor(x)
	if x-r >= 0.5 {
		r++
	}
	return DoubleToLong(r)
}

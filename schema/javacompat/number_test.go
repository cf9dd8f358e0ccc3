package javacompat

import (
	"math"
	"testing"
)

// The outcomes are Java 17's (the messages lower-cased, see ParseInteger).
func TestParseInteger(t *testing.T) {
	for _, c := range []struct {
		s       string
		bitSize int
		want    int64
		err     string
	}{
		{"42", 64, 42, ""}, {"+42", 32, 42, ""}, {"-128", 8, -128, ""}, {"9223372036854775807", 64, math.MaxInt64, ""},
		{"128", 8, 0, `value out of range. Value:"128" Radix:10`}, {"40000", 16, 0, `value out of range. Value:"40000" Radix:10`},
		{" 1", 32, 0, `for input string: " 1"`}, {"1_000", 32, 0, `for input string: "1_000"`}, {"", 64, 0, `for input string: ""`},
		{"0x10", 64, 0, `for input string: "0x10"`}, {"1.0", 64, 0, `for input string: "1.0"`},
	} {
		got, err := ParseInteger(c.s, c.bitSize)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("ParseInteger(%q, %d) = %d, %v; want error %s", c.s, c.bitSize, got, err, c.err)
			}
		} else if err != nil || got != c.want {
			t.Errorf("ParseInteger(%q, %d) = %d, %v; want %d", c.s, c.bitSize, got, err, c.want)
		}
	}
}

func TestDoubleCastsSaturate(t *testing.T) {
	for f, want := range map[float64]int64{1.9: 1, -1.9: -1, 1e300: math.MaxInt64, -1e300: math.MinInt64, 9.3e18: math.MaxInt64} {
		if got := DoubleToLong(f); got != want {
			t.Errorf("(long) %v = %d, want %d", f, got, want)
		}
	}
	for f, want := range map[float64]int32{2.5e10: math.MaxInt32, -2.5e10: math.MinInt32, -7.99: -7} {
		if got := DoubleToInt(f); got != want {
			t.Errorf("(int) %v = %d, want %d", f, got, want)
		}
	}
	if DoubleToLong(math.NaN()) != 0 || DoubleToInt(math.NaN()) != 0 || DoubleToLong(math.Inf(1)) != math.MaxInt64 || DoubleToInt(math.Inf(-1)) != math.MinInt32 {
		t.Error("NaN and the infinities are not cast as Java casts them")
	}
}

// The outcomes are Math.round's, checked on Java 17.
func TestRoundIsJava7MathRound(t *testing.T) {
	for x, want := range map[float64]int64{
		2.5: 3, -2.5: -2, -0.5: 0, 0.5: 1, 1.4999: 1, -1.5001: -2,
		0.49999999999999994: 0,                // 0.49999999999999994 + 0.5 rounds up to 1.0
		4503599627370497:    4503599627370497, // 2^52 + 1: x + 0.5 rounds to 2^52 + 2
		-4503599627370497:   -4503599627370497,
		1e19:                math.MaxInt64, -1e19: math.MinInt64,
	} {
		if got := Round(x); got != want {
			t.Errorf("Math.round(%v) = %d, want %d", x, got, want)
		}
	}
	if Round(math.NaN()) != 0 || Round(math.Inf(1)) != math.MaxInt64 || Round(math.Inf(-1)) != math.MinInt64 {
		t.Error("Math.round of NaN or an infinity")
	}
}

package javacompat

import (
	"encoding/hex"
	"errors"
	"math/big"
	"testing"
)

func bigInt(s string) *big.Int {
	u, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic("bad test integer " + s)
	}
	return u
}

// TestBigDecimalStrings checks toString and toPlainString of the same values.
func TestBigDecimalStrings(t *testing.T) {
	for _, tc := range []struct {
		unscaled      string
		scale         int32
		str, plainStr string
	}{
		{"0", 0, "0", "0"}, {"0", 2, "0.00", "0.00"}, {"0", -3, "0E+3", "0"}, {"12345", 2, "123.45", "123.45"},
		{"-5", 3, "-0.005", "-0.005"}, {"1", 6, "0.000001", "0.000001"}, {"1", 7, "1E-7", "0.0000001"},
		{"123", 9, "1.23E-7", "0.000000123"}, {"12", -3, "1.2E+4", "12000"}, {"-12", -1, "-1.2E+2", "-120"},
		{"-1500", 3, "-1.500", "-1.500"}, {"0", 7, "0E-7", "0.0000000"}, {"123456789012345678901", 2, "1234567890123456789.01", "1234567890123456789.01"},
		{"123456789012345678901234567890", 5, "1234567890123456789012345.67890", "1234567890123456789012345.67890"},
		{"-123456789012345678901234567890", 40, "-1.23456789012345678901234567890E-11", "-0.0000000000123456789012345678901234567890"},
	} {
		if got := FormatBigDecimal(bigInt(tc.unscaled), tc.scale); got != tc.str {
			t.Errorf("%s scale %d: toString %s, want %s", tc.unscaled, tc.scale, got, tc.str)
		}
		if got := FormatBigDecimalPlain(bigInt(tc.unscaled), tc.scale); got != tc.plainStr {
			t.Errorf("%s scale %d: toPlainString %s, want %s", tc.unscaled, tc.scale, got, tc.plainStr)
		}
	}
}

// The outcomes are new BigDecimal(String)'s, checked on Java 17.
func TestParseBigDecimal(t *testing.T) {
	for _, tc := range []struct {
		in       string
		unscaled string
		scale    int32
	}{
		{"0", "0", 0}, {"1.50", "150", 2}, {"-1.5", "-15", 1}, {"+.5", "5", 1}, {"5.", "5", 0}, {"15E+1", "15", -1},
		{"1.23e-5", "123", 7}, {"-0", "0", 0}, {"12345678901234567890.1", "123456789012345678901", 1},
	} {
		unscaled, scale, err := ParseBigDecimal(tc.in)
		if err != nil || unscaled.String() != tc.unscaled || scale != tc.scale {
			t.Errorf("new BigDecimal(%q) = %v scale %d, %v; want %s scale %d", tc.in, unscaled, scale, err, tc.unscaled, tc.scale)
		}
	}
	for _, in := range []string{"", ".", "-", "e5", "1e", "1.2.3", " 1", "1 ", "NaN", "Infinity", "0x10", "1_0", "--1", "1e+-2"} {
		if _, _, err := ParseBigDecimal(in); !errors.Is(err, ErrNotBigDecimal) {
			t.Errorf("new BigDecimal(%q): %v, want ErrNotBigDecimal", in, err)
		}
	}
	for _, in := range []string{"1e2147483648", "1e-2147483648", "0.1e-2147483647"} {
		if _, _, err := ParseBigDecimal(in); err == nil || errors.Is(err, ErrNotBigDecimal) {
			t.Errorf("new BigDecimal(%q): %v, want an exponent or scale error", in, err)
		}
	}
}

func TestSetScale(t *testing.T) {
	for _, tc := range []struct {
		unscaled string
		scale    int32
		to       int32
		halfUp   string // unscaled after setScale(to, HALF_UP)
		exact    string // unscaled after setScale(to), "" when rounding is necessary
	}{
		{"12345", 2, 4, "1234500", "1234500"}, {"12345", 2, 2, "12345", "12345"}, {"12345", 2, 1, "1235", ""},
		{"-12345", 2, 1, "-1235", ""}, {"12344", 2, 1, "1234", ""}, {"-12344", 2, 1, "-1234", ""},
		{"12300", 2, 0, "123", "123"}, {"-5", 1, 0, "-1", ""}, {"4", 1, 0, "0", ""}, {"15", -1, 0, "150", "150"},
	} {
		u := bigInt(tc.unscaled)
		if got := SetScaleHalfUp(u, tc.scale, tc.to); got.String() != tc.halfUp {
			t.Errorf("%s scale %d setScale(%d, HALF_UP) = %v", tc.unscaled, tc.scale, tc.to, got)
		}
		got, err := SetScale(u, tc.scale, tc.to)
		switch {
		case tc.exact == "" && !errors.Is(err, ErrRoundingNecessary):
			t.Errorf("%s scale %d setScale(%d) = %v, %v; want ErrRoundingNecessary", tc.unscaled, tc.scale, tc.to, got, err)
		case tc.exact != "" && (err != nil || got.String() != tc.exact):
			t.Errorf("%s scale %d setScale(%d) = %v, %v; want %s", tc.unscaled, tc.scale, tc.to, got, err, tc.exact)
		}
		if u.String() != tc.unscaled {
			t.Errorf("setScale changed its operand %s to %v", tc.unscaled, u)
		}
	}
}

// The expected bytes are BigInteger.toByteArray's.
func TestAppendBigIntegerBytes(t *testing.T) {
	for in, want := range map[string]string{
		"0": "00", "1": "01", "127": "7f", "128": "0080", "255": "00ff", "256": "0100", "-1": "ff", "-128": "80",
		"-129": "ff7f", "-256": "ff00", "-32768": "8000", "12345": "3039", "-12345": "cfc7",
		"9223372036854775807": "7fffffffffffffff", "-9223372036854775808": "8000000000000000",
		"9223372036854775808": "008000000000000000", "-9223372036854775809": "ff7fffffffffffffff",
		"18446744073709551616": "010000000000000000", "-18446744073709551616": "ff0000000000000000",
	} {
		if got := hex.EncodeToString(AppendBigIntegerBytes([]byte("x"), bigInt(in))); got != "78"+want {
			t.Errorf("%s: got %s, want 78%s (after the existing byte x)", in, got, want)
		}
	}
}

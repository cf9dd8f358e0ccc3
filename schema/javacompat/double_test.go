package javacompat

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The vectors come from the JDK itself (testdata/java/FloatVectors.java on JDK 25).
func TestAppendDoubleMatchesJDK(t *testing.T) {
	forEachVector(t, "testdata/doubles.txt", func(bits uint64, want string) {
		f := math.Float64frombits(bits)
		if got := string(AppendDouble(nil, f, 64)); got != want {
			t.Errorf("Double.toString(%016x): got %s, want %s", bits, got, want)
		}
	})
}

func TestAppendFloatMatchesJDK(t *testing.T) {
	forEachVector(t, "testdata/floats.txt", func(bits uint64, want string) {
		f := math.Float32frombits(uint32(bits))
		if got := string(AppendDouble(nil, float64(f), 32)); got != want {
			t.Errorf("Float.toString(%08x): got %s, want %s", bits, got, want)
		}
	})
}

// TestAppendDoubleMatchesJava25 checks a second, independently drawn
// set: Double.toString of Java 25 (testdata/java/Vectors.java), whose
// shortest-digits algorithm every JDK since 19 uses. JDK 17 differs in rare
// cases such as 2.0E23.
func TestAppendDoubleMatchesJava25(t *testing.T) {
	forEachVector(t, "testdata/java_doubles.txt", func(bits uint64, want string) {
		if got := FormatDouble(math.Float64frombits(bits), 64); got != want {
			t.Errorf("Double.toString(%016x): got %s, want %s", bits, got, want)
		}
	})
}

func TestFormatDoubleLayout(t *testing.T) {
	cases := map[float64]string{1: "1.0", 0.5: "0.5", 1e7: "1.0E7", 1.5e10: "1.5E10", 1e-5: "1.0E-5", 0.001: "0.001", 12345678.9: "1.23456789E7"}
	for f, want := range cases {
		if got := FormatDouble(f, 64); got != want {
			t.Errorf("FormatDouble(%v) = %q, want %q", f, got, want)
		}
	}
}

// The outcomes are Double.parseDouble's, checked on Java 17.
func TestParseDouble(t *testing.T) {
	for s, want := range map[string]float64{
		"1": 1, " 1.5\t": 1.5, "\x01-2e3\x01": -2000, "1.": 1, ".5": 0.5, "1e2d": 100, "2.5F": 2.5, "+7D": 7,
		"Infinity": math.Inf(1), "-Infinity": math.Inf(-1), "+Infinity": math.Inf(1), "1e400": math.Inf(1), "-1e400": math.Inf(-1),
		"1e-400": 0, "0x1p-2": 0.25, "0X1.8P1": 3, "-0x.8p1f": -1, "0x1.p1": 2,
	} {
		if got, err := ParseDouble(s, 64); err != nil || got != want {
			t.Errorf("ParseDouble(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"NaN", "+NaN", "-NaN", " NaN "} {
		if got, err := ParseDouble(s, 64); err != nil || !math.IsNaN(got) {
			t.Errorf("ParseDouble(%q) = %v, %v; want NaN", s, got, err)
		}
	}
	for _, s := range []string{"", " ", ".", "e5", "1e", "1.0.0", "nan", "inf", "infinity", "NaNd", "Infinityf", "1_000", "0x1", "0x1.8", "0x_1p0", "1ff", "--1", "1\u00a0", "١"} {
		if got, err := ParseDouble(s, 64); err == nil || err.Error() != "for input string: "+strconv.Quote(s) {
			t.Errorf("ParseDouble(%q) = %v, %v; want a NumberFormatException", s, got, err)
		}
	}
	if got, err := ParseDouble("1e39", 32); err != nil || !math.IsInf(got, 1) {
		t.Errorf("Float.parseFloat(1e39) = %v, %v; want Infinity", got, err)
	}
	if got, err := ParseDouble("0.1", 32); err != nil || float32(got) != float32(0.1) {
		t.Errorf("Float.parseFloat(0.1) = %v, %v", got, err)
	}
}

func forEachVector(t *testing.T, path string, check func(bits uint64, want string)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		hexBits, want, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			t.Fatalf("%s: bad line %q", path, sc.Text())
		}
		bits, err := strconv.ParseUint(hexBits, 16, 64)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		check(bits, want)
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 1000 {
		t.Fatalf("%s: only %d vectors", path, n)
	}
}

package jsonconv

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The vectors come from the JDK itself (testdata/gen/FloatVectors.java on JDK 25).
func TestAppendJavaDoubleMatchesJDK(t *testing.T) {
	forEachVector(t, "testdata/doubles.txt", func(bits uint64, want string) {
		f := math.Float64frombits(bits)
		if got := string(appendJavaDouble(nil, f, 64)); got != want {
			t.Errorf("Double.toString(%016x): got %s, want %s", bits, got, want)
		}
	})
}

func TestAppendJavaFloatMatchesJDK(t *testing.T) {
	forEachVector(t, "testdata/floats.txt", func(bits uint64, want string) {
		f := math.Float32frombits(uint32(bits))
		if got := string(appendJavaDouble(nil, float64(f), 32)); got != want {
			t.Errorf("Float.toString(%08x): got %s, want %s", bits, got, want)
		}
	})
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

package javacompat

import (
	"bufio"
	"encoding/hex"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// objectArrayCases are the arrays testdata/java/ObjectArrays.java serialises, as Go values.
var objectArrayCases = map[string][]any{
	"null":       nil,
	"empty":      {},
	"int":        {int32(1)},
	"ints":       {int32(1), int32(-7)},
	"long":       {int64(25)},
	"longmin":    {int64(-1 << 63)},
	"string":     {"abc"},
	"short":      {int16(5)},
	"bools":      {true, false},
	"nullelem":   {nil, int32(9)},
	"mixed":      {"a", int32(2), "a", int64(3), int32(4)},
	"unicode":    {"é€\x00x😀"},
	"longstring": {strings.Repeat("x", 70000)},
	"composite":  {int32(1<<31 - 1), "k", int16(-1), int64(1<<63 - 1)},
	"boxcache": {int32(1), int32(1), int32(200), int32(200), true, true, int16(3), int16(3), int64(5), int64(5),
		int32(-128), int32(-128), int32(128), int32(128)},
}

func readObjectArrayVectors(t *testing.T) map[string][]byte {
	t.Helper()
	f, err := os.Open("testdata/object_arrays.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	vectors := map[string][]byte{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		name, hexBytes, ok := strings.Cut(sc.Text(), "\t")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		b, err := hex.DecodeString(hexBytes)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		vectors[name] = b
	}
	return vectors
}

// TestObjectArrayMatchesJava writes each array as Java's ObjectOutputStream did and reads Java's bytes back.
func TestObjectArrayMatchesJava(t *testing.T) {
	vectors := readObjectArrayVectors(t)
	for name, vals := range objectArrayCases {
		want, ok := vectors[name]
		if !ok {
			t.Fatalf("no Java vector %q", name)
		}
		got, err := AppendObjectArray(nil, vals)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: wrote\n%x\nJava wrote\n%x", name, got, want)
		}
		back, err := DecodeObjectArray(want)
		if err != nil {
			t.Fatalf("%s: decoding Java's bytes: %v", name, err)
		}
		if !reflect.DeepEqual(back, vals) {
			t.Errorf("%s: decoded %#v, want %#v", name, back, vals)
		}
	}
	// Java shares a String instance used twice: the second is a back reference to the first.
	shared, err := DecodeObjectArray(vectors["sharedstring"])
	if err != nil || !reflect.DeepEqual(shared, []any{"a", int32(2), "a"}) {
		t.Fatalf("sharedstring = %#v, %v", shared, err)
	}
}

func TestObjectArrayRefusesWhatItCannotRepresent(t *testing.T) {
	if _, err := AppendObjectArray(nil, []any{1.5}); !errors.Is(err, ErrUnsupportedJavaType) {
		t.Fatalf("float64 element: %v", err)
	}
	vectors := readObjectArrayVectors(t)
	good := vectors["composite"]
	for i := range good {
		if _, err := DecodeObjectArray(good[:i]); err == nil {
			t.Fatalf("a stream cut at byte %d of %d decoded", i, len(good))
		}
	}
	// A java.util.Date element (a class this package does not know) is refused by name.
	date, _ := hex.DecodeString("aced0005757200135b4c6a6176612e6c616e672e4f626a6563743b90ce589f1073296c020000787000000001737200" +
		"0e6a6176612e7574696c2e44617465686a81014b597419030000787077080000018c0000000078")
	if _, err := DecodeObjectArray(date); !errors.Is(err, ErrUnsupportedJavaType) || !strings.Contains(err.Error(), "java.util.Date") {
		t.Fatalf("java.util.Date element: %v", err)
	}
}

func FuzzDecodeObjectArray(f *testing.F) {
	for _, vals := range objectArrayCases {
		b, _ := AppendObjectArray(nil, vals)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		vals, err := DecodeObjectArray(data)
		if err != nil {
			return
		}
		again, err := AppendObjectArray(nil, vals)
		if err != nil {
			t.Fatalf("decoded %#v cannot be written back: %v", vals, err)
		}
		if back, err := DecodeObjectArray(again); err != nil || !reflect.DeepEqual(back, vals) {
			t.Fatalf("round trip of %#v: %#v, %v", vals, back, err)
		}
	})
}

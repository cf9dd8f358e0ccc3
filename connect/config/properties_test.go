package config

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// javaLoad is what java.util.Properties.load made of one input.
type javaLoad struct {
	Props map[string]string `json:"props"`
	Error string            `json:"error"`
}

type propertiesVector struct {
	Name   string   `json:"name"`
	Input  string   `json:"input"`
	Stream javaLoad `json:"stream"`
	Reader javaLoad `json:"reader"`
}

// TestPropertiesMatchJDK replays vectors produced by the real JDK
// (testdata/gen/PropertiesVectors.java), in both of Java's reading modes.
func TestPropertiesMatchJDK(t *testing.T) {
	f, err := os.Open("testdata/properties_vectors.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		var v propertiesVector
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		raw, err := base64.StdEncoding.DecodeString(v.Input)
		if err != nil {
			t.Fatal(err)
		}
		n++
		checkLoad(t, v.Name+"/stream", DecodeLatin1(raw), v.Stream)
		if utf8.Valid(raw) {
			checkLoad(t, v.Name+"/reader", string(raw), v.Reader)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 400 {
		t.Fatalf("only %d vectors read", n)
	}
}

func checkLoad(t *testing.T, name, text string, want javaLoad) {
	t.Helper()
	props, err := ParseProperties(text)
	if want.Error != "" {
		if err == nil || !strings.Contains(err.Error(), want.Error) {
			t.Errorf("%s: got (%v, %v), want error %q", name, props, err, want.Error)
		}
		return
	}
	if err != nil {
		t.Errorf("%s: unexpected error %v", name, err)
		return
	}
	if got := PropertiesMap(props); !maps.Equal(got, want.Props) {
		t.Errorf("%s: got %q, want %q", name, got, want.Props)
	}
}

func TestParsePropertiesKeepsOrderAndLines(t *testing.T) {
	props, err := ParseProperties("# header\n\nb=1\r\na = x \\\n   y\n\nb=2\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []Property{{"b", "1", 3}, {"a", "x y", 4}, {"b", "2", 7}}
	if len(props) != len(want) {
		t.Fatalf("got %+v, want %+v", props, want)
	}
	for i := range want {
		if props[i] != want[i] {
			t.Errorf("entry %d: got %+v, want %+v", i, props[i], want[i])
		}
	}
	if _, err := ParseProperties("x=\\u00"); err == nil {
		t.Error("short \\u escape accepted")
	}
}

func TestLoadPropertiesFileIsLatin1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.properties")
	// "é" written as UTF-8 bytes reads as two Latin-1 characters in Connect;
	// the escape form is the portable one.
	if err := os.WriteFile(path, []byte("raw=caf\xc3\xa9\nescaped=caf\\u00e9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	props, err := LoadPropertiesFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := PropertiesMap(props)
	if m["raw"] != "caf\u00c3\u00a9" || m["escaped"] != "café" {
		t.Errorf("got %q", m)
	}
	if _, err := LoadPropertiesFile(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing file accepted")
	}
}

func FuzzParseProperties(f *testing.F) {
	for _, seed := range []string{"a=b", "\\", "k=\\u12", "a\\\r\n b", "#c\n!d\n", "\\u0041=\\uD83D",
		// Line ends and continuations at the very end of the input, where the parser looks one character ahead.
		"a\\\r", "k=v\\\r\n", "\\\n#x", "k\\u", "\r\n\\\r\n", "a:\\\n\n", "= \\\n", "\\u00"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		props, err := ParseProperties(s)
		if err != nil {
			return
		}
		for _, p := range props {
			if !utf8.ValidString(p.Key) || !utf8.ValidString(p.Value) {
				t.Fatalf("invalid UTF-8 in %+v", p)
			}
		}
	})
}

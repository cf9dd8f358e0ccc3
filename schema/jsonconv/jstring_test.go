package jsonconv

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestPlainASCII8MatchesBytewiseRule puts every byte value at every position of an otherwise plain word:
// the 8-byte test must agree with the one-byte rule everywhere, borrows included (a flagged byte below
// plain ones, or two special bytes side by side).
func TestPlainASCII8MatchesBytewiseRule(t *testing.T) {
	plainByte := func(c byte) bool { return c < utf8.RuneSelf && shortEscape[c] == 0 }
	for pos := range 8 {
		for c := range 256 {
			for _, fill := range []byte{'a', ' ', '!', '#', '[', ']', 0x7f, 0x00, '"'} {
				w := []byte(strings.Repeat(string(fill), 8))
				w[pos] = byte(c)
				want := true
				for _, b := range w {
					want = want && plainByte(b)
				}
				if got := plainASCII8(load8(string(w))); got != want {
					t.Fatalf("plainASCII8(%q) = %v, want %v", w, got, want)
				}
			}
		}
	}
}

// TestJSONStringEscapesAtEveryOffset moves each kind of character through a string long enough for the
// 8-byte fast path, so it lands at the start, middle and end of a word and in the byte-wise tail.
func TestJSONStringEscapesAtEveryOffset(t *testing.T) {
	for _, special := range []struct{ in, out string }{
		{"\x00", `\u0000`}, {"\x1f", `\u001F`}, {"\n", `\n`}, {`"`, `\"`}, {`\`, `\\`},
		{"\x7f", "\x7f"}, {"/", "/"}, {"é", "é"}, {"€", "€"}, {"😀", `\uD83D\uDE00`}, {"\xff", "\uFFFD"},
	} {
		for at := range 24 {
			in := strings.Repeat("a", at) + special.in + strings.Repeat("b", 23-at)
			want := fmt.Sprintf(`"%s%s%s"`, strings.Repeat("a", at), special.out, strings.Repeat("b", 23-at))
			if got := string(appendJSONString(nil, in)); got != want {
				t.Fatalf("%q at %d: got %s, want %s", special.in, at, got, want)
			}
		}
	}
}

// BenchmarkJSONString1KB is the benchmark table's payload column: 1 KB of hex digits.
func BenchmarkJSONString1KB(b *testing.B) {
	s := strings.Repeat("0123456789abcdef", 64)
	buf := make([]byte, 0, 2048)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = appendJSONString(buf[:0], s)
	}
}

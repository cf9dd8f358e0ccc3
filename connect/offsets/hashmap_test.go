package offsets

import (
	"bufio"
	"encoding/hex"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestJavaHashMapOrderVectors checks the emulation against iteration orders
// printed by a real java.util.HashMap (testdata/java/Vectors.java, identical
// on Java 17 and 25).
func TestJavaHashMapOrderVectors(t *testing.T) {
	f, err := os.Open("testdata/hashmap_order.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		inserted, iterated, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			t.Fatalf("line %d: no tab", n+1)
		}
		n++
		if got, want := JavaHashMapOrder(hexKeys(t, inserted)), hexKeys(t, iterated); !slices.Equal(got, want) {
			t.Errorf("line %d: insertion order %q\ngot  %q\nwant %q", n, hexKeys(t, inserted), got, want)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 1000 {
		t.Fatalf("only %d vectors", n)
	}
}

func hexKeys(t *testing.T, line string) []string {
	t.Helper()
	var keys []string
	for _, h := range strings.Fields(line) {
		b, err := hex.DecodeString(h)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, string(b))
	}
	return keys
}

func TestJavaHashMapOrderPostgresOffset(t *testing.T) {
	// Debezium's PostgresOffsetContext puts ts_usec, txId, lsn, lsn_proc,
	// lsn_commit, messageType; Java iterates them in this order.
	got := JavaHashMapOrder([]string{"ts_usec", "txId", "lsn", "lsn_proc", "lsn_commit", "messageType"})
	want := []string{"lsn_proc", "messageType", "lsn_commit", "lsn", "txId", "ts_usec"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestJavaHashMapOrderKeepsFirstPositionOfRepeatedKey(t *testing.T) {
	// "Aa" and "BB" share String.hashCode 2112, so their bucket order is the
	// insertion order; putting "Aa" again must not move it behind "BB".
	got := JavaHashMapOrder([]string{"Aa", "BB", "Aa"})
	if want := []string{"Aa", "BB"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	got = JavaHashMapOrder([]string{"BB", "Aa"})
	if want := []string{"BB", "Aa"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestJavaStringHashUsesUTF16(t *testing.T) {
	for s, want := range map[string]int32{
		"":      0,
		"a":     97,
		"Aa":    2112,
		"é":     233,
		"😀":     1772899, // surrogates 0xD83D 0xDE00: 0xD83D*31 + 0xDE00
		"hello": 99162322,
	} {
		if got := int32(javaStringHash(s)); got != want {
			t.Errorf("hash(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestJavaHashMapCapacity(t *testing.T) {
	for n, want := range map[int]int{0: 16, 1: 16, 12: 16, 13: 32, 24: 32, 25: 64, 48: 64, 49: 128} {
		if got := javaHashMapCapacity(n); got != want {
			t.Errorf("capacity(%d) = %d, want %d", n, got, want)
		}
	}
}

package javacompat

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// hexKeys decodes a line of Vectors.java's output: hex-encoded UTF-8 keys.
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

// TestHashMapOrderVectors checks the emulation against iteration orders
// printed by a real java.util.HashMap (testdata/java/Vectors.java, identical
// on Java 17 and 25).
func TestHashMapOrderVectors(t *testing.T) {
	vectors, err := os.ReadFile("testdata/hashmap_order.txt")
	if err != nil {
		t.Fatal(err)
	}
	if n := checkHashMapVectors(t, bytes.NewReader(vectors)); n < 1000 {
		t.Fatalf("only %d vectors", n)
	}
}

// TestHashMapOrderFreshVectors checks the emulation on key sets the
// committed vectors do not hold. It needs CDCD_E2E set and java on PATH.
func TestHashMapOrderFreshVectors(t *testing.T) {
	if os.Getenv("CDCD_E2E") == "" {
		t.Skip("set CDCD_E2E to run the Java interop tests")
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("java is not on PATH")
	}
	cmd := exec.CommandContext(t.Context(), java, "testdata/java/Vectors.java", "hashmap", "20260101", "2000")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("java Vectors.java: %v", err)
	}
	checkHashMapVectors(t, bytes.NewReader(out))
}

// checkHashMapVectors checks every line of Vectors.java's hashmap output and
// returns how many there were.
func checkHashMapVectors(t *testing.T, r io.Reader) int {
	t.Helper()
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		inserted, iterated, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			t.Fatalf("line %d: no tab", n+1)
		}
		n++
		if got, want := HashMapOrder(hexKeys(t, inserted)), hexKeys(t, iterated); !slices.Equal(got, want) {
			t.Errorf("line %d: insertion order %q\ngot  %q\nwant %q", n, hexKeys(t, inserted), got, want)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestHashMapOrderPostgresOffset(t *testing.T) {
	// Debezium's PostgresOffsetContext puts ts_usec, txId, lsn, lsn_proc,
	// lsn_commit, messageType; Java iterates them in this order.
	got := HashMapOrder([]string{"ts_usec", "txId", "lsn", "lsn_proc", "lsn_commit", "messageType"})
	want := []string{"lsn_proc", "messageType", "lsn_commit", "lsn", "txId", "ts_usec"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestHashMapOrderKeepsFirstPositionOfRepeatedKey(t *testing.T) {
	// "Aa" and "BB" share String.hashCode 2112, so their bucket order is the
	// insertion order; putting "Aa" again must not move it behind "BB".
	got := HashMapOrder([]string{"Aa", "BB", "Aa"})
	if want := []string{"Aa", "BB"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	got = HashMapOrder([]string{"BB", "Aa"})
	if want := []string{"BB", "Aa"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestStringHashUsesUTF16(t *testing.T) {
	for s, want := range map[string]int32{
		"":      0,
		"a":     97,
		"Aa":    2112,
		"é":     233,
		"😀":     1772899, // surrogates 0xD83D 0xDE00: 0xD83D*31 + 0xDE00
		"hello": 99162322,
	} {
		if got := StringHash(s); got != want {
			t.Errorf("hash(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestHashMapCapacity(t *testing.T) {
	for n, want := range map[int]int{0: 16, 1: 16, 12: 16, 13: 32, 24: 32, 25: 64, 48: 64, 49: 128} {
		if got := HashMapCapacity(n); got != want {
			t.Errorf("capacity(%d) = %d, want %d", n, got, want)
		}
	}
}

// TestHashMapOrderAfterResizes: 30 keys grow the table from 16 to 64
// buckets (the order pgjdbc's HStoreConverter map of these keys iterates).
func TestHashMapOrderAfterResizes(t *testing.T) {
	var keys []string
	for i := range 30 {
		keys = append(keys, "k"+strconv.Itoa(i*7))
	}
	want := []string{"k91", "k70", "k77", "k98", "k35", "k56", "k14", "k161", "k182", "k140", "k189", "k147", "k168", "k105", "k126", "k203", "k0", "k84", "k42", "k63", "k21", "k7", "k28", "k49", "k196", "k154", "k175", "k112", "k133", "k119"}
	if got := HashMapOrder(keys); !slices.Equal(got, want) {
		t.Errorf("order after resizes = %q\nwant %q", got, want)
	}
}

func TestHashSetOrder(t *testing.T) {
	// Orders Kafka 4.4 printed for its own case-insensitive validators
	// (a HashSet filled by Collectors.toSet).
	cases := [][2][]string{
		{{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}, {"SASL_SSL", "PLAINTEXT", "SSL", "SASL_PLAINTEXT"}},
		{{"ONLY_SCAN", "HYBRID_WARN", "HYBRID_FAIL", "SERVICE_LOAD"}, {"ONLY_SCAN", "SERVICE_LOAD", "HYBRID_WARN", "HYBRID_FAIL"}},
		{{"DISABLED", "ENABLED", "PREPARING"}, {"DISABLED", "ENABLED", "PREPARING"}},
		{{"NONE", "REBOOTSTRAP"}, {"REBOOTSTRAP", "NONE"}},
	}
	for _, c := range cases {
		if got := HashMapOrder(c[0]); !slices.Equal(got, c[1]) {
			t.Errorf("HashMapOrder(%q) = %q, want %q", c[0], got, c[1])
		}
	}
}

func TestHashMapOrderFuncPutsLikeHashMap(t *testing.T) {
	// "Aa" and "BB" share a bucket. Putting "Aa" again replaces its value in
	// place; the input slice is left as it was.
	type entry struct{ k, v string }
	in := []entry{{"BB", "1"}, {"Aa", "2"}, {"x", "3"}, {"BB", "4"}}
	got := HashMapOrderFunc(in, func(e entry) string { return e.k })
	want := []entry{{"BB", "4"}, {"Aa", "2"}, {"x", "3"}}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if in[0] != (entry{"BB", "1"}) || len(in) != 4 {
		t.Errorf("input changed: %v", in)
	}
}

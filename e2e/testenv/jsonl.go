package testenv

import (
	"bufio"
	"bytes"
	"os"
	"testing"
)

// maxJSONLine is the longest line JSONLines reads: a recorded Debezium event with its schema runs to megabytes.
const maxJSONLine = 16 << 20

// JSONLines returns the non-empty lines of the JSON Lines file at path (the vectors recorded from Kafka,
// Connect and Debezium under a package's testdata), one JSON document each, in file order. A file
// that cannot be read, or a line longer than 16 MiB, fails t.
func JSONLines(t testing.TB, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxJSONLine)
	for sc.Scan() {
		if len(sc.Bytes()) > 0 {
			lines = append(lines, bytes.Clone(sc.Bytes()))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return lines
}

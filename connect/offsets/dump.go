package offsets

import (
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"unicode"
	"unicode/utf8"
)

// Dump prints the offsets file at path for people: one line per entry,
// "key => value", sorted by key. Keys and values print as text when they are
// UTF-8 without control characters (Connect's JSON always is), otherwise as
// 0x-prefixed hex; a tombstone prints as <null>.
func Dump(w io.Writer, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("dump offsets: %w", err)
	}
	entries, err := decodeMap(data)
	if err != nil {
		return fmt.Errorf("dump offsets file %s: %w", path, err)
	}
	byKey := make(map[string][]byte, len(entries))
	for _, e := range entries {
		byKey[string(e.Key)] = e.Value
	}
	for _, e := range sortedEntries(byKey) {
		value := "<null>"
		if e.Value != nil {
			value = readable(e.Value)
		}
		if _, err := fmt.Fprintf(w, "%s => %s\n", readable(e.Key), value); err != nil {
			return fmt.Errorf("dump offsets: %w", err)
		}
	}
	return nil
}

func readable(b []byte) string {
	printable := utf8.Valid(b)
	for _, r := range string(b) {
		if unicode.IsControl(r) {
			printable = false
			break
		}
	}
	if printable && len(b) > 0 {
		return string(b)
	}
	return "0x" + hex.EncodeToString(b)
}

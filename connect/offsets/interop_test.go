package offsets

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// These tests run the Java programs under testdata/java against this
// package. They need CDCD_E2E set and java on PATH; the Connect ones also
// need CDCD_KAFKA_LIBS, a directory holding the Kafka Connect 4.x jars
// (connect-runtime, connect-json, connect-api, kafka-clients, Jackson, slf4j).

func javaOrSkip(t *testing.T) string {
	t.Helper()
	if os.Getenv("CDCD_E2E") == "" {
		t.Skip("set CDCD_E2E to run the Java interop tests")
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("java is not on PATH")
	}
	return java
}

func kafkaLibsOrSkip(t *testing.T) string {
	t.Helper()
	libs := os.Getenv("CDCD_KAFKA_LIBS")
	if libs == "" {
		t.Skip("set CDCD_KAFKA_LIBS to a directory of Kafka Connect jars")
	}
	return libs
}

func runJava(t *testing.T, java string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), java, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("java %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

func sortedLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n"
}

// TestJavaReadsAndWritesOurFiles has Java deserialize a file appendMap wrote,
// print it, and serialize it again for decodeMap.
func TestJavaReadsAndWritesOurFiles(t *testing.T) {
	java := javaOrSkip(t)
	entries := []Entry{
		{Key: []byte(`["inventory",{"server":"dbserver1"}]`), Value: []byte(`{"lsn":24023128}`)},
		{Key: []byte(`["inventory",{"server":"reset"}]`), Value: nil},
		{Key: []byte{0xff, 0}, Value: []byte{}},
		{Key: []byte("big"), Value: bytes.Repeat([]byte{0xac, 0xed}, 5000)},
	}
	for i := range 50 {
		entries = append(entries, Entry{Key: fmt.Appendf(nil, `["c",{"server":"s%d"}]`, i), Value: fmt.Appendf(nil, `{"pos":%d}`, i)})
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "go.ser"), filepath.Join(dir, "java.ser")
	data, err := appendMap(nil, entries)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	printed := runJava(t, java, "testdata/java/OffsetFile.java", "copy", in, out)
	want := sortedLines(formatEntries(entries))
	if printed != want {
		t.Fatalf("Java read\n%s\nwant\n%s", printed, want)
	}
	javaData, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeMap(javaData)
	if err != nil {
		t.Fatal(err)
	}
	if sortedLines(formatEntries(got)) != want {
		t.Fatalf("decodeMap of Java's file\n%s\nwant\n%s", formatEntries(got), want)
	}
}

// TestConnectJsonConverterBytes compares Key and EncodeValue with what
// Connect's JsonConverter writes for the maps in testdata/json_cases.txt.
func TestConnectJsonConverterBytes(t *testing.T) {
	java := javaOrSkip(t)
	libs := kafkaLibsOrSkip(t)
	out := runJava(t, java, "-cp", filepath.Join(libs, "*"), "testdata/java/ConnectInterop.java", "json", "testdata/json_cases.txt")
	javaLines := strings.Split(strings.TrimSpace(out), "\n")
	cases, err := os.ReadFile("testdata/json_cases.txt")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(cases), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, "\t")
		if n >= len(javaLines) {
			t.Fatalf("Java printed %d lines for more cases", len(javaLines))
		}
		wantKey, wantValue, _ := strings.Cut(javaLines[n], " ")
		n++
		partition, err := DecodeValue([]byte(parts[1]))
		if err != nil {
			t.Fatal(err)
		}
		offset, err := DecodeValue([]byte(parts[2]))
		if err != nil {
			t.Fatal(err)
		}
		key, err := Key(parts[0], partition.Map())
		if err != nil {
			t.Fatal(err)
		}
		value, err := EncodeValue(offset)
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(key); got != wantKey {
			t.Errorf("case %d key\ngot  %s\nwant %s", n, key, unhexString(wantKey))
		}
		if got := hex.EncodeToString(value); got != wantValue {
			t.Errorf("case %d value\ngot  %s\nwant %s", n, value, unhexString(wantValue))
		}
	}
	if n != len(javaLines) {
		t.Fatalf("%d cases, Java printed %d lines", n, len(javaLines))
	}
}

func unhexString(h string) string {
	b, _ := hex.DecodeString(h)
	return string(b)
}

// TestConnectFileOffsetBackingStore has Connect's own FileOffsetBackingStore
// load a FileStore file, look its offsets up by the keys Key produces, and
// write an update that FileStore then reads.
func TestConnectFileOffsetBackingStore(t *testing.T) {
	java := javaOrSkip(t)
	libs := kafkaLibsOrSkip(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "offsets.dat")
	s, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var entries []Entry
	for _, server := range []string{"a", "b", "c"} {
		key, err := Key("inventory", map[string]any{"server": server})
		if err != nil {
			t.Fatal(err)
		}
		value, err := EncodeValue(Fields{{"lsn", int64(1) << 40}, {"txId", int64(7)}, {"server", server}})
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, Entry{Key: key, Value: value})
	}
	if err := s.Put(entries); err != nil {
		t.Fatal(err)
	}
	var keyList strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&keyList, "%x\n", e.Key)
	}
	keysFile := filepath.Join(dir, "keys.txt")
	if err := os.WriteFile(keysFile, []byte(keyList.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	out := runJava(t, java, "-cp", filepath.Join(libs, "*"), "testdata/java/ConnectInterop.java", "store", path, keysFile)
	want := formatEntries(entries) + "partitions [{server=a}, {server=b}, {server=c}]\n"
	if out != want {
		t.Fatalf("Connect read\n%s\nwant\n%s", out, want)
	}

	reopened, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	added, _ := Key("inventory", map[string]any{"server": "added"})
	if v, ok := reopened.Get(added); !ok || string(v) != `{"lsn":42}` {
		t.Fatalf("Connect's new offset: %q %v", v, ok)
	}
	if v, ok := reopened.Get(entries[0].Key); ok {
		t.Fatalf("offset Connect tombstoned reads as %q", v)
	}
	if v, ok := reopened.Get(entries[1].Key); !ok || !bytes.Equal(v, entries[1].Value) {
		t.Fatalf("untouched offset reads as %q", v)
	}
	if got := len(reopened.Entries()); got != 4 {
		t.Fatalf("%d entries, want 4 (one tombstone)", got)
	}
}

package offsets

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
)

var fixtureNames = []string{"empty", "one", "null-value", "many"}

// readFixture returns a Java-written offsets file and its entries in stream
// order, as listed by testdata/java/OffsetFile.java.
func readFixture(t *testing.T, name string) ([]byte, []Entry) {
	t.Helper()
	data, err := os.ReadFile("testdata/fixtures/" + name + ".ser")
	if err != nil {
		t.Fatal(err)
	}
	listing, err := os.ReadFile("testdata/fixtures/" + name + ".txt")
	if err != nil {
		t.Fatal(err)
	}
	return data, parseEntryLines(t, string(listing))
}

// parseEntryLines parses "KEYHEX VALUEHEX|null" lines.
func parseEntryLines(t *testing.T, text string) []Entry {
	t.Helper()
	entries := []Entry{}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("bad entry line %q", line)
		}
		var e Entry
		var err error
		if e.Key, err = hex.DecodeString(k); err != nil {
			t.Fatal(err)
		}
		if v != "null" {
			if e.Value, err = hex.DecodeString(v); err != nil {
				t.Fatal(err)
			}
			if e.Value == nil {
				e.Value = []byte{}
			}
		}
		entries = append(entries, e)
	}
	return entries
}

func formatEntries(entries []Entry) string {
	var sb strings.Builder
	for _, e := range entries {
		v := "null"
		if e.Value != nil {
			v = hex.EncodeToString(e.Value)
		}
		fmt.Fprintf(&sb, "%x %s\n", e.Key, v)
	}
	return sb.String()
}

func TestDecodeMapJavaFixtures(t *testing.T) {
	for _, name := range fixtureNames {
		t.Run(name, func(t *testing.T) {
			data, want := readFixture(t, name)
			got, err := decodeMap(data)
			if err != nil {
				t.Fatal(err)
			}
			if formatEntries(got) != formatEntries(want) {
				t.Fatalf("entries\n%s\nwant\n%s", formatEntries(got), formatEntries(want))
			}
		})
	}
}

func TestDecodeMapDistinguishesNullFromEmptyValue(t *testing.T) {
	data, _ := readFixture(t, "many")
	entries, err := decodeMap(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if string(e.Key) == `["conn-0",{"server":"srv-0"}]` && (e.Value == nil || len(e.Value) != 0) {
			t.Fatalf("empty byte[] value read as %#v, want empty non-nil", e.Value)
		}
	}
	data, _ = readFixture(t, "null-value")
	entries, err = decodeMap(data)
	if err != nil {
		t.Fatal(err)
	}
	if entries[0].Value != nil && entries[1].Value != nil {
		t.Fatalf("no null value read: %q", entries)
	}
}

// TestAppendMapMatchesJavaBytes writes each fixture's entries in Java's order
// and expects Java's bytes exactly: same handles, sizing fields and layout.
func TestAppendMapMatchesJavaBytes(t *testing.T) {
	for _, name := range fixtureNames {
		t.Run(name, func(t *testing.T) {
			data, entries := readFixture(t, name)
			b, err := appendMap(nil, entries)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b, data) {
				t.Fatalf("bytes differ from Java's\ngot  %x\nwant %x", b, data)
			}
		})
	}
}

func TestAppendMapRoundTrip(t *testing.T) {
	entries := []Entry{
		{Key: []byte("a"), Value: []byte("1")},
		{Key: []byte{}, Value: []byte{}},
		{Key: []byte{0xff, 0x00}, Value: nil},
		{Key: bytes.Repeat([]byte("k"), 70000), Value: bytes.Repeat([]byte("v"), 300)},
	}
	for i := range 30 {
		entries = append(entries, Entry{Key: fmt.Appendf(nil, "key-%d", i), Value: fmt.Appendf(nil, "value-%d", i)})
	}
	b, err := appendMap(nil, entries)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeMap(b)
	if err != nil {
		t.Fatal(err)
	}
	if formatEntries(got) != formatEntries(entries) {
		t.Fatal("round trip changed the entries")
	}
}

func TestAppendMapRejectsNilKey(t *testing.T) {
	if _, err := appendMap(nil, []Entry{{Key: nil, Value: []byte("x")}}); err == nil {
		t.Fatal("nil key written")
	}
}

// blockOffset is where HashMap.writeObject's block data (bucket count and
// size) starts in a stream from appendMap.
const blockOffset = 71

// oneEntryStream is the "one" fixture's layout from appendMap, taken apart so
// tests can rebuild it with other framings ObjectOutputStream may produce.
func oneEntryStream(t *testing.T) (head, block, rest []byte) {
	t.Helper()
	b, err := appendMap(nil, []Entry{{Key: []byte("k"), Value: []byte("v")}})
	if err != nil {
		t.Fatal(err)
	}
	if b[blockOffset] != tcBlockData || b[blockOffset+1] != 8 {
		t.Fatalf("no block data at %d: %x", blockOffset, b)
	}
	return b[:blockOffset], b[blockOffset+2 : blockOffset+10], b[blockOffset+10:]
}

func concat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestDecodeMapAcceptsOtherValidFramings(t *testing.T) {
	head, block, rest := oneEntryStream(t)
	long := binary.BigEndian.AppendUint32([]byte{tcBlockDataLong}, 8)
	// The entry's value written as a back reference to the key array, whose
	// handle is 3 (0: HashMap desc, 1: map, 2: [B desc, 3: key).
	valueAndEnd := "\x75\x71\x00\x7e\x00\x02\x00\x00\x00\x01v\x78"
	if !strings.HasSuffix(string(rest), valueAndEnd) {
		t.Fatalf("unexpected stream tail %x", rest)
	}
	keyArray := rest[:len(rest)-len(valueAndEnd)]
	cases := map[string][]byte{
		"block split across segments": concat(head, []byte{tcBlockData, 3}, block[:3], []byte{tcBlockData, 0}, []byte{tcBlockData, 5}, block[3:], rest),
		"long block header":           concat(head, long, block, rest),
		"reset before the map":        concat(head[:4], []byte{tcReset, tcReset}, head[4:], []byte{tcBlockData, 8}, block, rest),
		"value references key array":  concat(head, []byte{tcBlockData, 8}, block, keyArray, []byte{tcReference, 0, 0x7e, 0, 3, tcEndBlockData}),
	}
	for name, stream := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := decodeMap(stream)
			if err != nil {
				t.Fatalf("%v\nstream %x", err, stream)
			}
			if len(got) != 1 || string(got[0].Key) != "k" {
				t.Fatalf("got %q", got)
			}
			if name == "value references key array" {
				if string(got[0].Value) != "k" {
					t.Fatalf("value %q, want the key's bytes", got[0].Value)
				}
			} else if string(got[0].Value) != "v" {
				t.Fatalf("value %q", got[0].Value)
			}
		})
	}
}

func TestDecodeMapRejects(t *testing.T) {
	head, block, rest := oneEntryStream(t)
	valid := concat(head, []byte{tcBlockData, 8}, block, rest)
	replace := func(old, new string) []byte {
		if !bytes.Contains(valid, []byte(old)) {
			t.Fatalf("%q not in stream", old)
		}
		return bytes.Replace(valid, []byte(old), []byte(new), 1)
	}
	nullKey := concat(head, []byte{tcBlockData, 8}, block, []byte{tcNull, tcNull, tcEndBlockData})
	negativeSize := concat(head, []byte{tcBlockData, 8}, block[:4], []byte{0xff, 0xff, 0xff, 0xff}, rest)
	hugeSize := concat(head, []byte{tcBlockData, 8}, block[:4], []byte{0x7f, 0xff, 0xff, 0xff}, rest)
	stringKey := concat(head, []byte{tcBlockData, 8}, block, []byte{tcString, 0, 1, 'k', tcNull, tcEndBlockData})
	cases := map[string]struct {
		stream []byte
		reason string
	}{
		"empty":              {nil, "unexpected end of stream"},
		"bad magic":          {concat([]byte{0xca, 0xfe}, valid[2:]), "stream magic"},
		"bad version":        {concat(valid[:3], []byte{4}, valid[4:]), "stream version"},
		"other class":        {replace("java.util.HashMap", "java.util.HashSet"), "java.util.HashSet"},
		"other suid":         {replace("\x05\x07\xda\xc1", "\x05\x07\xda\xc2"), "serialVersionUID"},
		"no write method":    {replace("\x60\xd1\x03", "\x60\xd1\x02"), "class flags"},
		"zero load factor":   {replace("\x3f\x40\x00\x00", "\x00\x00\x00\x00"), "load factor"},
		"int array":          {replace("\x00\x02[B", "\x00\x02[I"), "array of another type"},
		"string key":         {stringKey, "want a byte[]"},
		"null key":           {nullKey, "null"},
		"negative size":      {negativeSize, "negative map size"},
		"huge size":          {hugeSize, "exceeds"},
		"trailing bytes":     {concat(valid, []byte{0}), "trailing"},
		"missing end marker": {valid[:len(valid)-1], "unexpected end of stream"},
		"not an object":      {concat(valid[:4], []byte{tcString, 0, 1, 'x'}), "top-level TC_STRING"},
		"dangling reference": {replace("\x71\x00\x7e\x00\x02", "\x71\x00\x7e\x00\x09"), "unknown handle"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := decodeMap(c.stream)
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v, want a *FormatError", err)
			}
			if !strings.Contains(err.Error(), c.reason) {
				t.Fatalf("error %q does not mention %q", err, c.reason)
			}
		})
	}
}

func TestDecodeMapRejectsEveryTruncation(t *testing.T) {
	data, _ := readFixture(t, "many")
	for n := range len(data) {
		if _, err := decodeMap(data[:n]); err == nil {
			t.Fatalf("prefix of %d bytes accepted", n)
		}
	}
}

func FuzzDecodeMap(f *testing.F) {
	for _, name := range fixtureNames {
		data, err := os.ReadFile("testdata/fixtures/" + name + ".ser")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	// Back references within the bound, and the issue 17 reproducer's shape beyond it.
	f.Add(referencingStream(f, bytes.Repeat([]byte{'x'}, 64), 3))
	f.Add(referencingStream(f, bytes.Repeat([]byte{'x'}, 64), 100))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := decodeMap(data)
		if err != nil {
			return
		}
		// Whatever was accepted must survive our own writer.
		b, err := appendMap(nil, entries)
		if err != nil {
			t.Fatalf("accepted entries cannot be written: %v", err)
		}
		again, err := decodeMap(b)
		if err != nil {
			t.Fatalf("rewritten stream rejected: %v", err)
		}
		if formatEntries(again) != formatEntries(entries) {
			t.Fatal("rewrite changed the entries")
		}
	})
}

// referencingStream is a stream of n entries: the first has the key big, each
// other one a 4-byte key and, as its value, a back reference to big (handle 3:
// 0 is the HashMap's descriptor, 1 the map, 2 byte[]'s descriptor).
func referencingStream(tb testing.TB, big []byte, n int) []byte {
	tb.Helper()
	b, err := appendMap(nil, []Entry{{Key: big}})
	if err != nil {
		tb.Fatal(err)
	}
	b = b[:len(b)-1] // tcEndBlockData
	binary.BigEndian.PutUint32(b[blockOffset+6:], uint32(n))
	for i := 1; i < n; i++ {
		b = append(b, tcArray, tcReference, 0, 0x7e, 0, 2, 0, 0, 0, 4)
		b = binary.BigEndian.AppendUint32(b, uint32(i))
		b = append(b, tcReference, 0, 0x7e, 0, 3)
	}
	return append(b, tcEndBlockData)
}

// TestDecodeMapSharesReferencedArrays: a back reference yields the array it
// refers to, not a copy of it.
func TestDecodeMapSharesReferencedArrays(t *testing.T) {
	got, err := decodeMap(referencingStream(t, []byte("shared"), 2))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got[1].Value) != "shared" || &got[1].Value[0] != &got[0].Key[0] {
		t.Fatalf("entries %q: the value must be the key's array", got)
	}
}

// TestDecodeMapBoundsReferences is issue 17's reproducer: a 1 MiB file whose
// 100 entries refer back to one 1 MiB array allocated 200 MiB. Now it is
// refused, and decoding it allocates about the input's size.
func TestDecodeMapBoundsReferences(t *testing.T) {
	data := referencingStream(t, bytes.Repeat([]byte{'x'}, 1<<20), 100)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := decodeMap(data)
	runtime.ReadMemStats(&after)
	var fe *FormatError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "back references repeat") {
		t.Fatalf("error %v, want a *FormatError about back references", err)
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 2*uint64(len(data)) {
		t.Fatalf("decoding %d bytes allocated %d", len(data), allocated)
	}
}

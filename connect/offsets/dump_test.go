package offsets

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestDump(t *testing.T) {
	path := filepath.Join(t.TempDir(), "offsets.dat")
	data, err := appendMap(nil, []Entry{
		{Key: []byte(`["pg",{"server":"b"}]`), Value: []byte(`{"lsn":2}`)},
		{Key: []byte(`["pg",{"server":"a"}]`), Value: []byte(`{"lsn":1}`)},
		{Key: []byte{0xff, 0x01}, Value: []byte("line\nbreak")},
		{Key: []byte(`["pg",{"server":"gone"}]`), Value: nil},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Dump(&out, path); err != nil {
		t.Fatal(err)
	}
	want := `["pg",{"server":"a"}] => {"lsn":1}
["pg",{"server":"b"}] => {"lsn":2}
["pg",{"server":"gone"}] => <null>
0xff01 => 0x6c696e650a627265616b
`
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
}

func TestDumpNamesCorruptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "offsets.dat")
	if err := os.WriteFile(path, []byte("not java"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Dump(&bytes.Buffer{}, path)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte(path)) {
		t.Fatalf("error %v does not name %s", err, path)
	}
}

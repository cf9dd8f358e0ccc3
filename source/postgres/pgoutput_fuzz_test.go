package postgres

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/jackc/pglogrepl"
)

// Messages other than row changes, as PostgreSQL 17's pgoutput (protocol version 1) sends them.
var (
	beginBytes    = append([]byte{'B'}, make([]byte, 20)...)
	commitBytes   = append([]byte{'C'}, make([]byte, 25)...)
	originBytes   = append(append([]byte{'O'}, make([]byte, 8)...), "origin\x00"...)
	typeBytes     = append([]byte{'Y', 0, 0, 0x40, 0x02}, "public\x00mood\x00"...)
	relationBytes = func() []byte {
		b := append([]byte{'R', 0, 0, 0x40, 0x01}, "public\x00t\x00"...)
		b = append(b, 'd', 0, 2)
		b = append(b, 1, 'i', 'd', 0, 0, 0, 0, 23, 0xff, 0xff, 0xff, 0xff) // id int4, part of the key
		return append(b, 0, 'v', 0, 0, 0, 0, 25, 0xff, 0xff, 0xff, 0xff)   // v text
	}()
	truncateBytes = []byte{'T', 0, 0, 0, 2, 1, 0, 0, 0x40, 0x01, 0, 0, 0x40, 0x02}
	messageBytes  = append(append([]byte{'M', 1, 0, 0, 0, 0, 1, 0x6B, 0x37, 0x48}, "prefix\x00"...), 0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o')
)

// malformedMessages are the reproducers of issue 17: each made pglogrepl.Parse or the reader panic.
var malformedMessages = map[string]struct {
	walData []byte
	want    string // in the error
}{
	"empty": {nil, "empty pgoutput message"},
	// 10 bytes that ask pglogrepl for 2^32-1 relation ids: a 16 GiB allocation, then an index out of range.
	"truncate with forged count":  {[]byte{'T', 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0x40, 0x01}, "Truncate message of 10 bytes: declares 4294967295 relations, 4 bytes hold 1"},
	"message with forged length":  {append(append([]byte{'M', 0, 0, 0, 0, 0, 0, 0, 0, 1}, "p\x00"...), 0x7f, 0xff, 0xff, 0xff, 'x'), "Message message of 17 bytes: content declares 2147483647 bytes, 1 left"},
	"message without prefix end":  {append([]byte{'M', 0, 0, 0, 0, 0, 0, 0, 0, 1}, "abcdefgh"...), "prefix is not NUL-terminated"},
	"relation with forged column": {relationBytes[:len(relationBytes)-4], "Relation message of 36 bytes: type of column 2 of 2 truncated: 8 bytes needed, 4 left"},
	"relation without columns":    {relationBytes[:14], "replica identity truncated"},
	"truncated insert":            {[]byte{'I', 0, 0, 0x40}, "Insert message of 4 bytes: truncated"},
	"insert with forged columns":  {[]byte{'I', 0, 0, 0x40, 0x01, 'N', 0xff, 0xff, 't'}, "tuple declares 65535 columns, 1 bytes left"},
	"unknown type":                {[]byte{'Z', 0, 0, 0, 1, 0}, "of unknown type 'Z'"},
}

func TestDecodeWALRefusesMalformedMessages(t *testing.T) {
	var d rowDecoder
	for name, c := range malformedMessages {
		_, _, err := d.decodeWAL(c.walData)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, c.want)
		}
	}
}

// TestDecodeWALRefusesEveryTruncation: each prefix of a well-formed message shorter than its fixed and
// declared parts is an error, never a panic (pglogrepl alone panics on most of them).
func TestDecodeWALRefusesEveryTruncation(t *testing.T) {
	var d rowDecoder
	for _, msg := range [][]byte{beginBytes, commitBytes, relationBytes, truncateBytes, messageBytes} {
		if _, other, err := d.decodeWAL(msg); err != nil || other == nil {
			t.Fatalf("%q: %v", msg, err)
		}
		for n := range len(msg) {
			if _, _, err := d.decodeWAL(msg[:n]); err == nil {
				t.Errorf("%s cut to %d of %d bytes: no error", pglogrepl.MessageType(msg[0]), n, len(msg))
			}
		}
	}
}

// TestDecodeWALAgreesWithPglogrepl: what the framing check lets through, pglogrepl decodes as it would alone.
func TestDecodeWALAgreesWithPglogrepl(t *testing.T) {
	var d rowDecoder
	_, other, err := d.decodeWAL(relationBytes)
	if err != nil {
		t.Fatal(err)
	}
	rel := other.(*pglogrepl.RelationMessage)
	if rel.RelationID != 16385 || rel.Namespace != "public" || rel.RelationName != "t" || len(rel.Columns) != 2 ||
		rel.Columns[0].Name != "id" || rel.Columns[0].Flags != 1 || rel.Columns[1].DataType != 25 {
		t.Fatalf("relation %+v", rel)
	}
	_, other, err = d.decodeWAL(truncateBytes)
	if err != nil {
		t.Fatal(err)
	}
	if tr := other.(*pglogrepl.TruncateMessage); len(tr.RelationIDs) != 2 || tr.RelationIDs[1] != 16386 {
		t.Fatalf("truncate %+v", tr)
	}
	_, other, err = d.decodeWAL(messageBytes)
	if err != nil {
		t.Fatal(err)
	}
	if m := other.(*pglogrepl.LogicalDecodingMessage); !m.Transactional || m.Prefix != "prefix" || string(m.Content) != "hello" {
		t.Fatalf("message %+v", m)
	}
}

func TestParseCopyDataRefusesMalformedMessages(t *testing.T) {
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"empty":           {nil, "empty CopyData message"},
		"short keepalive": {[]byte{'k', 0, 0}, "keepalive: PrimaryKeepaliveMessage must be 17 bytes, got 2"},
		"short XLogData":  {[]byte{'w', 0}, "XLogData: XLogData must be at least 24 bytes, got 1"},
	} {
		if _, _, _, err := parseCopyData(c.data); err == nil || err.Error() != c.want {
			t.Errorf("%s: error %v, want %q", name, err, c.want)
		}
	}
	kind, _, xld, err := parseCopyData(xlogData(0x16B3748, truncateBytes))
	if err != nil || kind != 'w' || xld.WALStart != 0x16B3748 || string(xld.WALData) != string(truncateBytes) {
		t.Fatalf("kind %q, %+v, %v", kind, xld, err)
	}
}

// xlogData is a CopyData message carrying walData from WAL position start.
func xlogData(start uint64, walData []byte) []byte {
	b := binary.BigEndian.AppendUint64([]byte{'w'}, start)
	return append(append(b, make([]byte, 16)...), walData...) // server WAL end and time: unused
}

// FuzzPgoutputMessage feeds the stream's two decoding steps: bytes as a CopyData message (parseCopyData,
// then decodeWAL of its WAL data, as the receive loop does) and as WAL data directly. Neither may panic.
func FuzzPgoutputMessage(f *testing.F) {
	s := func(v string) *string { return &v }
	row := tupleBytes(s("42"), nil, s("\x00u"), s("text"))
	for _, msg := range [][]byte{
		beginBytes, commitBytes, originBytes, typeBytes, relationBytes, truncateBytes, messageBytes,
		rowMessageBytes('I', byte('N'), row),
		rowMessageBytes('U', byte('K'), tupleBytes(s("41"), nil, nil, nil), byte('N'), row),
		rowMessageBytes('D', byte('O'), row),
	} {
		f.Add(msg)
		f.Add(xlogData(1, msg))
	}
	for _, c := range malformedMessages {
		f.Add(c.walData)
		f.Add(xlogData(1, c.walData))
	}
	f.Add([]byte{})
	f.Add([]byte{'k'})
	var d rowDecoder
	f.Fuzz(func(t *testing.T, data []byte) {
		if kind, _, xld, err := parseCopyData(data); err == nil && kind == pglogrepl.XLogDataByteID {
			_, _, _ = d.decodeWAL(xld.WALData)
		}
		row, other, err := d.decodeWAL(data)
		if err == nil && (other == nil) == (row.op == 0) {
			t.Fatalf("decoded %q into row %+v and message %+v: exactly one must be set", data, row, other)
		}
	})
}

package postgres

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/jackc/pglogrepl"
)

// rowMessage is a pgoutput Insert, Update or Delete (protocol version 1) decoded in place: column data
// aliases the XLogData buffer, which the next receive overwrites, and the tuples are the decoder's own,
// reused for the next message. pglogrepl.Parse copies every column byte by byte into its own allocation,
// which was the reader's largest cost; here nothing is allocated once the scratch tuples have grown.
// Everything that keeps a value copies it (catalog converters decode from a string copy).
type rowMessage struct {
	op       byte // 'c', 'u' or 'd'
	relation uint32
	oldKind  uint8                // 'K' (key columns) or 'O' (whole row); 0 without an old tuple
	old, new *pglogrepl.TupleData // nil when the message has no such tuple
}

// rowDecoder holds the scratch tuples of rowMessage. It belongs to the reader goroutine.
type rowDecoder struct {
	old, new scratchTuple
}

type scratchTuple struct {
	tuple   pglogrepl.TupleData
	columns []pglogrepl.TupleDataColumn
}

// isRowMessage reports whether a pgoutput message is one rowDecoder decodes.
func isRowMessage(walData []byte) bool {
	return len(walData) > 0 && (walData[0] == 'I' || walData[0] == 'U' || walData[0] == 'D')
}

// decodeWAL decodes one pgoutput message, the WAL data of an XLogData message: a row change into row (in
// place, see rowMessage), any other message into other, as pglogrepl decodes it. Exactly one is set unless
// err is not nil. Malformed input is an error naming the message type, never a panic: the server's bytes
// are checked before pglogrepl sees them (see checkFraming).
func (d *rowDecoder) decodeWAL(walData []byte) (row rowMessage, other pglogrepl.Message, err error) {
	if len(walData) == 0 {
		return row, nil, errors.New("empty pgoutput message")
	}
	if isRowMessage(walData) {
		row, err = d.decode(walData)
	} else if err = checkFraming(walData); err == nil {
		other, err = pglogrepl.Parse(walData)
	}
	if err != nil {
		return row, nil, fmt.Errorf("pgoutput %s message of %d bytes: %w", messageTypeName(walData[0]), len(walData), err)
	}
	return row, other, nil
}

// messageTypeName names a pgoutput message type as pglogrepl does (Truncate, Message, …).
func messageTypeName(b byte) string {
	if name := pglogrepl.MessageType(b).String(); name != "Unknown" {
		return name
	}
	return fmt.Sprintf("of unknown type %q", b)
}

// checkFraming checks that the counts and lengths inside a message that is not a row change fit in it.
// pglogrepl.Parse trusts them: it indexes past the end of a Relation message that declares more columns than
// it holds, allocates a Truncate message's relation list at its declared count (a 10-byte message can ask
// for 16 GiB) and slices a logical decoding Message at its declared content length. Begin, Commit, Origin
// and Type messages have fixed parts that pglogrepl checks itself.
func checkFraming(walData []byte) error {
	f := frame{rest: walData[1:]}
	switch walData[0] {
	case byte(pglogrepl.MessageTypeRelation):
		f.take(4, "relation id")
		f.cstring("namespace")
		f.cstring("relation name")
		f.take(1, "replica identity")
		n := f.uint16("column count")
		for i := range n {
			if f.err != nil {
				break
			}
			f.take(1, fmt.Sprintf("flags of column %d of %d", i+1, n))
			f.cstring(fmt.Sprintf("name of column %d of %d", i+1, n))
			f.take(8, fmt.Sprintf("type of column %d of %d", i+1, n))
		}
	case byte(pglogrepl.MessageTypeTruncate):
		n := f.uint32("relation count")
		f.take(1, "options")
		if f.err == nil && uint64(n)*4 > uint64(len(f.rest)) {
			return fmt.Errorf("declares %d relations, %d bytes hold %d", n, len(f.rest), len(f.rest)/4)
		}
	case byte(pglogrepl.MessageTypeMessage):
		f.take(1, "flags")
		f.take(8, "LSN")
		f.cstring("prefix")
		n := f.uint32("content length")
		if f.err == nil && uint64(n) > uint64(len(f.rest)) {
			return fmt.Errorf("content declares %d bytes, %d left", n, len(f.rest))
		}
	}
	return f.err
}

// frame walks the fields of a message. The first field that does not fit sets err, after which every
// read is a no-op that returns zero.
type frame struct {
	rest []byte
	err  error
}

func (f *frame) take(n int, field string) []byte {
	if f.err != nil {
		return nil
	}
	if len(f.rest) < n {
		f.err = fmt.Errorf("%s truncated: %d bytes needed, %d left", field, n, len(f.rest))
		return nil
	}
	b := f.rest[:n]
	f.rest = f.rest[n:]
	return b
}

func (f *frame) cstring(field string) {
	if f.err != nil {
		return
	}
	end := bytes.IndexByte(f.rest, 0)
	if end < 0 {
		f.err = fmt.Errorf("%s is not NUL-terminated", field)
		return
	}
	f.rest = f.rest[end+1:]
}

func (f *frame) uint16(field string) int {
	if b := f.take(2, field); b != nil {
		return int(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (f *frame) uint32(field string) uint32 {
	if b := f.take(4, field); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

// decode decodes an Insert ('I'), Update ('U') or Delete ('D') message. Malformed input is an error.
func (d *rowDecoder) decode(src []byte) (rowMessage, error) {
	var m rowMessage
	if len(src) < 6 {
		return m, errors.New("truncated: a row change has at least 6 bytes")
	}
	kind := src[0]
	m.relation = binary.BigEndian.Uint32(src[1:5])
	rest := src[5:]
	var err error
	switch kind {
	case 'I':
		m.op = 'c'
		m.new, err = d.new.expect('N', rest)
	case 'U':
		m.op = 'u'
		if rest[0] == 'K' || rest[0] == 'O' {
			m.oldKind = rest[0]
			if m.old, rest, err = d.old.decode(rest[1:]); err != nil {
				break
			}
		}
		m.new, err = d.new.expect('N', rest)
	case 'D':
		m.op = 'd'
		if rest[0] != 'K' && rest[0] != 'O' {
			return m, fmt.Errorf("old tuple of kind %q, want 'K' or 'O'", rest[0])
		}
		m.oldKind = rest[0]
		m.old, _, err = d.old.decode(rest[1:])
	default:
		return m, fmt.Errorf("message %q is not a row change", kind)
	}
	return m, err
}

// expect decodes a tuple that src introduces with the byte kind.
func (s *scratchTuple) expect(kind byte, src []byte) (*pglogrepl.TupleData, error) {
	if len(src) == 0 || src[0] != kind {
		return nil, fmt.Errorf("tuple kind %q expected", kind)
	}
	t, _, err := s.decode(src[1:])
	return t, err
}

// decode reads TupleData from src and returns the bytes after it.
func (s *scratchTuple) decode(src []byte) (*pglogrepl.TupleData, []byte, error) {
	if len(src) < 2 {
		return nil, nil, fmt.Errorf("tuple truncated")
	}
	n := int(binary.BigEndian.Uint16(src))
	src = src[2:]
	if n > len(src) { // every column takes at least its kind byte: refuse before growing the scratch tuple
		return nil, nil, fmt.Errorf("tuple declares %d columns, %d bytes left", n, len(src))
	}
	if cap(s.columns) < n {
		s.columns = make([]pglogrepl.TupleDataColumn, n)
		s.tuple.Columns = make([]*pglogrepl.TupleDataColumn, n)
		for i := range s.columns {
			s.tuple.Columns[i] = &s.columns[i]
		}
	}
	s.tuple.ColumnNum = uint16(n)
	s.tuple.Columns = s.tuple.Columns[:n]
	for i := range n {
		if len(src) == 0 {
			return nil, nil, fmt.Errorf("tuple truncated at column %d of %d", i+1, n)
		}
		col := &s.columns[i]
		*col = pglogrepl.TupleDataColumn{DataType: src[0]}
		src = src[1:]
		switch col.DataType {
		case pglogrepl.TupleDataTypeText, pglogrepl.TupleDataTypeBinary:
			if len(src) < 4 {
				return nil, nil, fmt.Errorf("tuple truncated at column %d of %d", i+1, n)
			}
			size := binary.BigEndian.Uint32(src)
			src = src[4:]
			if uint64(size) > uint64(len(src)) {
				return nil, nil, fmt.Errorf("column %d of %d claims %d bytes, %d left", i+1, n, size, len(src))
			}
			col.Length, col.Data = size, src[:size:size]
			src = src[size:]
		case pglogrepl.TupleDataTypeNull, pglogrepl.TupleDataTypeToast:
		default:
			return nil, nil, fmt.Errorf("column %d of %d has kind %q", i+1, n, col.DataType)
		}
	}
	return &s.tuple, src, nil
}

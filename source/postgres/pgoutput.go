package postgres

import (
	"encoding/binary"
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

// decode decodes an Insert ('I'), Update ('U') or Delete ('D') message. Malformed input is an error.
func (d *rowDecoder) decode(src []byte) (rowMessage, error) {
	var m rowMessage
	if len(src) < 6 {
		return m, fmt.Errorf("pgoutput row message of %d bytes", len(src))
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
			return m, fmt.Errorf("pgoutput delete with tuple kind %q", rest[0])
		}
		m.oldKind = rest[0]
		m.old, _, err = d.old.decode(rest[1:])
	default:
		return m, fmt.Errorf("pgoutput message %q is not a row change", kind)
	}
	if err != nil {
		return m, fmt.Errorf("pgoutput %q message: %w", kind, err)
	}
	return m, nil
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

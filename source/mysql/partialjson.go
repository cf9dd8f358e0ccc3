package mysql

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

// Partial JSON updates (MySQL 8.0.3+, binlog_row_value_options=PARTIAL_JSON, settable per session): an
// update of a JSON column by JSON_SET, JSON_REPLACE or JSON_REMOVE may be logged as a PARTIAL_UPDATE_ROWS
// event whose after image holds, for that column, only the changes (a diff vector of replace, insert and
// remove operations at JSON paths) instead of the document. Debezium 3.6.1 drops such events without a
// word; cdcd applies the diffs to the before image (complete with binlog_row_image=FULL, which the server
// check requires) and emits the whole after image, as for any other update.
//
// go-mysql decodes only the first diff of a vector, so the after images are read a second time here from
// the event's bytes: the sizes of the other columns' values are walked past, each partial column's diff
// vector is decoded, and its values (MySQL's binary JSON) are rendered by go-mysql itself, as a one-column
// row, so that they read exactly as the rest of the document does.

// errPartialJSON marks a partial JSON update that cannot be applied; the event is then undecodable.
var errPartialJSON = errors.New("partial JSON update")

// isPartialUpdate reports whether e is a PARTIAL_UPDATE_ROWS event, the one rows event go-mysql decodes
// but does not classify as an insert, update or delete.
func isPartialUpdate(e *replication.RowsEvent) bool {
	return e.Type() == replication.EnumRowsEventTypeUnknown
}

// applyPartialJSON replaces each partial JSON value of e's after images (go-mysql's *JsonDiff) with the
// document the before image becomes by the column's diffs. data is the event's rows part, which
// go-mysql has decoded into e.Rows already.
func applyPartialJSON(e *replication.RowsEvent, data []byte) error {
	w := rowWalker{e: e, data: data}
	for row := 0; w.pos < len(data); row += 2 {
		if row+1 >= len(e.Rows) {
			return fmt.Errorf("%w: the event holds more row images than go-mysql decoded", errPartialJSON)
		}
		if _, err := w.image(e.ColumnBitmap1, false); err != nil {
			return err
		}
		diffs, err := w.image(e.ColumnBitmap2, true)
		if err != nil {
			return err
		}
		for col, vector := range diffs {
			before, ok := e.Rows[row][col].(string)
			if !ok {
				return fmt.Errorf("%w: column %d has no before image to apply the changes to (binlog_row_image must be FULL)", errPartialJSON, col)
			}
			after, err := applyDiffVector(e, before, vector)
			if err != nil {
				return fmt.Errorf("column %d of %s.%s: %w", col, e.Table.Schema, e.Table.Table, err)
			}
			e.Rows[row+1][col] = after
		}
	}
	return nil
}

// rowWalker steps through a rows event's row images by the sizes of their values.
type rowWalker struct {
	e    *replication.RowsEvent
	data []byte
	pos  int
}

func (w *rowWalker) take(n int) ([]byte, error) {
	if n < 0 || n > len(w.data)-w.pos {
		return nil, fmt.Errorf("%w: a row image runs past the end of its event", errPartialJSON)
	}
	b := w.data[w.pos : w.pos+n]
	w.pos += n
	return b, nil
}

// image walks one row image of the columns bitmap selects and returns, by column, the diff vectors of
// its partial JSON values; after says it is an update's after image, which starts with its value options.
func (w *rowWalker) image(bitmap []byte, after bool) (map[int][]byte, error) {
	t := w.e.Table
	var partial []byte
	if after {
		if w.pos >= len(w.data) {
			return nil, fmt.Errorf("%w: an update without its after image", errPartialJSON)
		}
		options, _, n := gomysql.LengthEncodedInt(w.data[w.pos:])
		if _, err := w.take(n); err != nil {
			return nil, err
		}
		if options&uint64(replication.EnumBinlogRowValueOptionsPartialJsonUpdates) != 0 {
			var err error
			if partial, err = w.take(bitmapBytes(int(t.JsonColumnCount()))); err != nil {
				return nil, err
			}
		}
	}
	count := int(w.e.ColumnCount)
	if len(t.ColumnType) < count || len(t.ColumnMeta) < count || len(bitmap)*8 < count {
		return nil, fmt.Errorf("%w: the table map does not describe the event's %d columns", errPartialJSON, count)
	}
	present := 0
	for i := range count {
		if bitmap[i/8]&(1<<(i%8)) != 0 {
			present++
		}
	}
	nulls, err := w.take(bitmapBytes(present))
	if err != nil {
		return nil, err
	}
	diffs := map[int][]byte{}
	jsonIndex, presentIndex := 0, 0
	for i := range count {
		isPartial := false
		if t.ColumnType[i] == gomysql.MYSQL_TYPE_JSON {
			isPartial = partial != nil && partial[jsonIndex/8]&(1<<(jsonIndex%8)) != 0
			jsonIndex++
		}
		if bitmap[i/8]&(1<<(i%8)) == 0 {
			continue
		}
		isNull := nulls[presentIndex/8]&(1<<(presentIndex%8)) != 0
		presentIndex++
		if isNull {
			continue
		}
		value, err := w.value(t.ColumnType[i], t.ColumnMeta[i])
		if err != nil {
			return nil, fmt.Errorf("column %d: %w", i, err)
		}
		if isPartial {
			diffs[i] = value
		}
	}
	return diffs, nil
}

// value steps over one value of a column of binlog type typ with metadata meta, as the server writes it
// (Field::unpack), and returns the bytes of a JSON or other length-prefixed value after its length.
func (w *rowWalker) value(typ byte, meta uint16) ([]byte, error) {
	length := int(meta)
	if typ == gomysql.MYSQL_TYPE_STRING && meta >= 256 { // the real type and the length share meta
		b0, b1 := byte(meta>>8), byte(meta)
		if b0&0x30 != 0x30 {
			length = int(uint16(b1) | uint16((b0&0x30)^0x30)<<4)
			typ = b0 | 0x30
		} else {
			length, typ = int(b1), b0
		}
	}
	fixed := map[byte]int{
		gomysql.MYSQL_TYPE_NULL: 0, gomysql.MYSQL_TYPE_TINY: 1, gomysql.MYSQL_TYPE_SHORT: 2, gomysql.MYSQL_TYPE_INT24: 3,
		gomysql.MYSQL_TYPE_LONG: 4, gomysql.MYSQL_TYPE_LONGLONG: 8, gomysql.MYSQL_TYPE_FLOAT: 4, gomysql.MYSQL_TYPE_DOUBLE: 8,
		gomysql.MYSQL_TYPE_TIMESTAMP: 4, gomysql.MYSQL_TYPE_DATETIME: 8, gomysql.MYSQL_TYPE_TIME: 3, gomysql.MYSQL_TYPE_DATE: 3,
		gomysql.MYSQL_TYPE_NEWDATE: 3, gomysql.MYSQL_TYPE_YEAR: 1,
	}
	if n, ok := fixed[typ]; ok {
		return w.take(n)
	}
	fraction := (int(meta) + 1) / 2 // the fractional seconds' bytes of the temporal types of 5.6+
	switch typ {
	case gomysql.MYSQL_TYPE_TIMESTAMP2:
		return w.take(4 + fraction)
	case gomysql.MYSQL_TYPE_DATETIME2:
		return w.take(5 + fraction)
	case gomysql.MYSQL_TYPE_TIME2:
		return w.take(3 + fraction)
	case gomysql.MYSQL_TYPE_NEWDECIMAL:
		return w.take(decimalBytes(int(meta>>8), int(meta&0xff)))
	case gomysql.MYSQL_TYPE_BIT:
		return w.take((int(meta>>8)*8 + int(meta&0xff) + 7) / 8)
	case gomysql.MYSQL_TYPE_ENUM, gomysql.MYSQL_TYPE_SET:
		return w.take(int(meta & 0xff))
	case gomysql.MYSQL_TYPE_VARCHAR, gomysql.MYSQL_TYPE_VAR_STRING, gomysql.MYSQL_TYPE_STRING:
		prefix := 1
		if length >= 256 {
			prefix = 2
		}
		return w.prefixed(prefix)
	case gomysql.MYSQL_TYPE_BLOB, gomysql.MYSQL_TYPE_GEOMETRY, gomysql.MYSQL_TYPE_JSON, gomysql.MYSQL_TYPE_VECTOR,
		gomysql.MYSQL_TYPE_TINY_BLOB, gomysql.MYSQL_TYPE_MEDIUM_BLOB, gomysql.MYSQL_TYPE_LONG_BLOB:
		return w.prefixed(int(meta))
	}
	return nil, fmt.Errorf("%w: a column of binlog type %d, whose size cdcd does not know", errPartialJSON, typ)
}

// prefixed takes a value preceded by its length in n little-endian bytes and returns the value.
func (w *rowWalker) prefixed(n int) ([]byte, error) {
	if n < 1 || n > 4 {
		return nil, fmt.Errorf("%w: a length of %d bytes", errPartialJSON, n)
	}
	head, err := w.take(n)
	if err != nil {
		return nil, err
	}
	var buf [4]byte
	copy(buf[:], head)
	return w.take(int(binary.LittleEndian.Uint32(buf[:])))
}

// decimalBytes is the size of a DECIMAL(precision, scale) in MySQL's binary form: nine digits in four
// bytes, the leftover digits of either side in as few bytes as they need.
func decimalBytes(precision, scale int) int {
	leftover := [10]int{0, 1, 1, 2, 2, 3, 3, 4, 4, 4}
	integer := precision - scale
	if integer < 0 || scale < 0 || precision > 65 {
		return -1
	}
	return integer/9*4 + leftover[integer%9] + scale/9*4 + leftover[scale%9]
}

func bitmapBytes(bitCount int) int { return (bitCount + 7) / 8 }

// jsonDiff is one operation of a diff vector (Json_diff in MySQL's sql/json_diff.h).
type jsonDiff struct {
	op    replication.JsonDiffOperation
	path  string
	value string // the new value as go-mysql renders it; "" for a removal
}

// applyDiffVector applies the diff vector (MySQL's Json_diff_vector::write_binary, without its length)
// to the document before and returns the new document.
func applyDiffVector(e *replication.RowsEvent, before string, vector []byte) (string, error) {
	doc, err := parseJSON(before)
	if err != nil {
		return "", fmt.Errorf("%w: the before image %q: %w", errPartialJSON, before, err)
	}
	for len(vector) > 0 {
		var d jsonDiff
		if d, vector, err = readDiff(e, vector); err != nil {
			return "", err
		}
		if doc, err = d.apply(doc); err != nil {
			return "", err
		}
	}
	var out bytes.Buffer
	doc.write(&out)
	return out.String(), nil
}

// readDiff decodes the first diff of vector and returns it with the rest.
func readDiff(e *replication.RowsEvent, vector []byte) (jsonDiff, []byte, error) {
	d := jsonDiff{op: replication.JsonDiffOperation(vector[0])}
	if d.op > replication.JsonDiffOperationRemove {
		return d, nil, fmt.Errorf("%w: unknown operation %d", errPartialJSON, d.op)
	}
	rest := vector[1:]
	path, rest, err := lengthPrefixed(rest)
	if err != nil {
		return d, nil, err
	}
	d.path = string(path)
	if d.op == replication.JsonDiffOperationRemove {
		return d, rest, nil
	}
	value, rest, err := lengthPrefixed(rest)
	if err != nil {
		return d, nil, err
	}
	if d.value, err = renderJSONBinary(e, value); err != nil {
		return d, nil, err
	}
	return d, rest, nil
}

// lengthPrefixed splits b into the value its length-encoded length announces and the rest.
func lengthPrefixed(b []byte) ([]byte, []byte, error) {
	if len(b) == 0 {
		return nil, nil, fmt.Errorf("%w: a diff cut short", errPartialJSON)
	}
	n, _, size := gomysql.LengthEncodedInt(b)
	if size > len(b) || n > uint64(len(b)-size) {
		return nil, nil, fmt.Errorf("%w: a diff cut short", errPartialJSON)
	}
	end := size + int(n)
	return b[size:end], b[end:], nil
}

// renderJSONBinary renders a binary JSON value as go-mysql renders the documents of e (same options):
// it decodes it as the only column of a row of a copy of e.
func renderJSONBinary(e *replication.RowsEvent, value []byte) (string, error) {
	one := *e
	one.Table = &replication.TableMapEvent{Schema: e.Table.Schema, Table: e.Table.Table, ColumnCount: 1,
		ColumnType: []byte{gomysql.MYSQL_TYPE_JSON}, ColumnMeta: []uint16{4}}
	one.ColumnCount, one.ColumnBitmap1, one.ColumnBitmap2 = 1, []byte{1}, []byte{1}
	// The before image holds the value; the after image (a PARTIAL_UPDATE_ROWS event's: no value options,
	// the column null) is there because the copy decodes as an update.
	row := make([]byte, 0, 8+len(value))
	row = append(row, 0) // null bitmap: not null
	row = binary.LittleEndian.AppendUint32(row, uint32(len(value)))
	row = append(row, value...)
	row = append(row, 0, 1) // value options: none; null bitmap: null
	if err := one.DecodeData(0, row); err != nil {
		return "", fmt.Errorf("%w: a new value: %w", errPartialJSON, err)
	}
	if len(one.Rows) == 0 || len(one.Rows[0]) != 1 {
		return "", fmt.Errorf("%w: a new value go-mysql does not decode", errPartialJSON)
	}
	s, ok := one.Rows[0][0].(string)
	if !ok {
		return "", fmt.Errorf("%w: a new value decoded as %T", errPartialJSON, one.Rows[0][0])
	}
	return s, nil
}

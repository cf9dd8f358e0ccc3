package mysql

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/mysql/types"
)

// The binlog decoding path the stream uses: go-mysql's parser, configured as the reader's syncer configures
// it (syncerConfig, with decodeRowsEvent), in go-mysql's reading goroutine, whose panics go-mysql recovers
// into the read error (BinlogSyncer.onStream; parseLikeTheSyncer does the same), classified by readError;
// then stream.handle and the conversions of each row.

// parserLike is the parser NewBinlogSyncer builds from cfg.
func parserLike(cfg replication.BinlogSyncerConfig) *replication.BinlogParser {
	p := replication.NewBinlogParser()
	p.SetFlavor(cfg.Flavor)
	p.SetRawMode(cfg.RawModeEnabled)
	p.SetParseTime(cfg.ParseTime)
	p.SetTimestampStringLocation(cfg.TimestampStringLocation)
	p.SetUseDecimal(cfg.UseDecimal)
	p.SetUseFloatWithTrailingZero(cfg.UseFloatWithTrailingZero)
	p.SetRenderJSONAsMySQLText(cfg.RenderJSONAsMySQLText)
	p.SetVerifyChecksum(cfg.VerifyChecksum)
	p.SetPayloadDecoderConcurrency(cfg.PayloadDecoderConcurrency)
	p.SetRowsEventDecodeFunc(cfg.RowsEventDecodeFunc)
	p.SetTableMapOptionalMetaDecodeFunc(cfg.TableMapOptionalMetaDecodeFunc)
	return p
}

// parseLikeTheSyncer parses one event as the syncer's goroutine does, its panic recovered into an error
// as go-mysql's onStream recovers it.
func parseLikeTheSyncer(p *replication.BinlogParser, data []byte) (ev *replication.BinlogEvent, err error) {
	defer func() {
		if v := recover(); v != nil {
			ev, err = nil, fmt.Errorf("panic %v\nstack: (go-mysql's)", v)
		}
	}()
	return p.Parse(data)
}

// binlogEvent frames body as a v4 binlog event of typ ending at end.
func binlogEvent(typ replication.EventType, end uint32, body []byte) []byte {
	b := make([]byte, replication.EventHeaderSize, replication.EventHeaderSize+len(body))
	binary.LittleEndian.PutUint32(b[0:], 1800000000)
	b[4] = byte(typ)
	binary.LittleEndian.PutUint32(b[5:], 42)
	binary.LittleEndian.PutUint32(b[9:], uint32(len(b)+len(body)))
	binary.LittleEndian.PutUint32(b[13:], end)
	return append(b, body...)
}

// formatDescription is MySQL 5.7's format description event (go-mysql's parser test's), with checksums
// off so that the events after it carry none.
func formatDescription() []byte {
	fde := []byte{0x64, 0x61, 0x72, 0x63, 0xf, 0xb, 0x0, 0x0, 0x0, 0x77, 0x0, 0x0, 0x0, 0x7b, 0x0, 0x0, 0x0, 0x1, 0x0, 0x4, 0x0, 0x35, 0x2e, 0x37, 0x2e, 0x32, 0x32, 0x2d, 0x6c, 0x6f, 0x67, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x64, 0x61, 0x72, 0x63, 0x13, 0x38, 0xd, 0x0, 0x8, 0x0, 0x12, 0x0, 0x4, 0x4, 0x4, 0x4, 0x12, 0x0, 0x0, 0x5f, 0x0, 0x4, 0x1a, 0x8, 0x0, 0x0, 0x0, 0x8, 0x8, 0x8, 0x2, 0x0, 0x0, 0x0, 0xa, 0xa, 0xa, 0x2a, 0x2a, 0x0, 0x12, 0x34, 0x0, 0x1, 0xb8, 0x78, 0x9d, 0xfe}
	fde[len(fde)-5] = byte(replication.BINLOG_CHECKSUM_ALG_OFF)
	return fde
}

// mariadbFormatDescription is a MariaDB 10.11 format description event: its post-header lengths reach
// MariaDB's own event types (the compressed rows events among them), checksums off.
func mariadbFormatDescription() []byte {
	body := binary.LittleEndian.AppendUint16(nil, 4)
	version := make([]byte, 50)
	copy(version, "10.11.6-MariaDB-log")
	body = append(append(body, version...), 0, 0, 0, 0, replication.EventHeaderSize)
	for range replication.MARIADB_DELETE_ROWS_COMPRESSED_EVENT_V1 {
		body = append(body, 8) // a 6-byte table id and the flags, for the table map and rows events
	}
	body = append(body, byte(replication.BINLOG_CHECKSUM_ALG_OFF), 0, 0, 0, 0)
	return binlogEvent(replication.FORMAT_DESCRIPTION_EVENT, 0, body)
}

// tableID is the table id of the fuzzed table map and rows events (6 bytes, as the format description says).
var tableID = []byte{0x71, 0, 0, 0, 0, 0}

// tableMapBody is a table map event of d.<table> with tail after the names: column count, types,
// metadata, null bitmap, optional metadata.
func tableMapBody(table string, tail []byte) []byte {
	b := append(append([]byte(nil), tableID...), 0, 0, 1, 'd', 0, byte(len(table)))
	b = append(append(b, table...), 0)
	return append(b, tail...)
}

// rowsEventTypes are the rows events the stream decodes, by the fuzzer's choice.
var rowsEventTypes = []replication.EventType{
	replication.WRITE_ROWS_EVENTv2, replication.UPDATE_ROWS_EVENTv2, replication.DELETE_ROWS_EVENTv2,
	replication.WRITE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv1,
	replication.WRITE_ROWS_EVENTv0, replication.PARTIAL_UPDATE_ROWS_EVENT,
	replication.MARIADB_WRITE_ROWS_COMPRESSED_EVENT_V1, replication.MARIADB_UPDATE_ROWS_COMPRESSED_EVENT_V1,
}

// FuzzBinlogRowsEvent feeds a table map event of d.t (id INT PRIMARY KEY, v VARCHAR(10)) or d.u (a column
// of most types) and a rows event through the stream's decoding path, then a commit. Nothing may panic;
// an event go-mysql cannot decode must be a fatal stream error carrying the position.
func FuzzBinlogRowsEvent(f *testing.F) {
	// d.t: INT, VARCHAR(10) (40 bytes in utf8mb4) nullable.
	tMap := []byte{2, 0x03, 0x0f, 2, 40, 0, 0x02}
	tMapNames := append(append([]byte(nil), tMap...), 4, 5, 2, 'i', 'd', 1, 'v') // binlog_row_metadata=FULL
	row := func(id byte, v string) []byte { return append([]byte{0, id, 0, 0, 0, byte(len(v))}, v...) }
	v2 := func(bitmaps int, rows ...[]byte) []byte {
		b := []byte{1, 0, 2, 0, 2} // flags (end of statement), no extra data, 2 columns
		for range bitmaps {
			b = append(b, 0x03)
		}
		for _, r := range rows {
			b = append(b, r...)
		}
		return b
	}
	f.Add(false, false, tMap, v2(1, row(1, "a"), row(2, "bc")), uint8(0))
	f.Add(false, false, tMapNames, v2(2, row(1, "a"), row(1, "b")), uint8(1))
	f.Add(false, false, tMap, v2(1, row(3, "")), uint8(2))
	f.Add(false, false, []byte{2, 0xf5, 0x0f, 3, 4, 40, 0, 0x02}, v2(1, row(1, "a")), uint8(0))                  // id as JSON
	f.Add(false, false, []byte{2, 0x03, 0x0f, 2, 40, 0, 0x02}, v2(1, []byte{0, 1, 0, 0, 0, 200, 'x'}), uint8(0)) // a length past the end
	f.Add(false, false, []byte{0xfc, 0xff, 0xff}, v2(1), uint8(0))                                               // a huge column count
	f.Add(false, false, []byte{}, []byte{}, uint8(3))
	f.Add(true, true, []byte{8, 0x08, 0x12, 0xf6, 0xf5, 0xf7, 0x10, 0x05, 0x0d, 8, 0, 0x04, 10, 2, 0xf7, 1, 0x03, 0, 0xff}, v2(1), uint8(0))
	// MariaDB's compressed rows: a header byte counting the size's bytes, the uncompressed size, zlib data.
	compressed := func(raw []byte, size ...byte) []byte {
		var z bytes.Buffer
		w := zlib.NewWriter(&z)
		_, _ = w.Write(raw)
		_ = w.Close()
		if size == nil {
			size = []byte{byte(len(raw))}
		}
		return append(append([]byte{0x80 | byte(len(size))}, size...), z.Bytes()...)
	}
	f.Add(true, false, tMap, append([]byte{1, 0, 2, 3}, compressed(row(1, "a"))...), uint8(8))
	f.Add(true, false, tMap, append([]byte{1, 0, 2, 3}, compressed(row(1, "a"), 1, 0, 0, 0, 0, 0)...), uint8(8)) // 2^40 bytes, go-mysql would allocate them
	f.Add(false, false, tMap, []byte{1, 0, 2, 0, 3, 7, 0, 1, 0, 0, 0, 1, 'a', 0}, uint8(0))                      // 3 columns for a map of 2
	f.Add(false, false, tMap, []byte{1, 0, 2, 0, 2, 0, 3, 0}, uint8(0))                                          // no column selected: rows of no bytes
	f.Fuzz(func(t *testing.T, mariadb, u bool, mapTail, rowsTail []byte, rowsType uint8) {
		flavor, fde := types.MySQL, formatDescription()
		if mariadb {
			flavor, fde = types.MariaDB, mariadbFormatDescription()
		}
		r := fuzzReader(t, flavor)
		out := make(chan source.Batch, 64)
		st, err := r.newStream(context.Background(), out, Offset{File: "mysql-bin.000003", Pos: 4})
		if err != nil {
			t.Fatal(err)
		}
		table := "t"
		if u {
			table = "u"
		}
		typ := rowsEventTypes[int(rowsType)%len(rowsEventTypes)]
		p := parserLike(r.syncerConfig())
		for i, data := range [][]byte{
			fde,
			binlogEvent(replication.TABLE_MAP_EVENT, 300, tableMapBody(table, mapTail)),
			binlogEvent(typ, 400, append(append([]byte(nil), tableID...), rowsTail...)),
		} {
			ev, err := parseLikeTheSyncer(p, data)
			if err != nil {
				if i == 0 {
					t.Fatalf("the format description: %v", err)
				}
				if rerr := st.readError(err); !source.IsFatal(rerr) {
					t.Fatalf("an event go-mysql cannot decode is not fatal: %v", rerr)
				}
				return
			}
			if err := st.handle(context.Background(), ev); err != nil {
				return // a stream error: the position is in it
			}
		}
		xid := &replication.BinlogEvent{Header: &replication.EventHeader{EventType: replication.XID_EVENT, LogPos: 431, EventSize: 31}, Event: &replication.XIDEvent{}}
		if err := st.handle(context.Background(), xid); err != nil {
			t.Fatalf("commit: %v", err)
		}
	})
}

// fuzzReader is testReader's reader, its catalog also holding d.u, a column of most types.
func fuzzReader(t *testing.T, flavor types.Flavor) *Reader {
	r := testReader(t, flavor)
	if _, err := r.catalog.Apply("d", "CREATE TABLE u (id BIGINT UNSIGNED PRIMARY KEY, d DATETIME(3), n DECIMAL(10,2), j JSON, "+
		"e ENUM('a','b'), b BIT(3), x DOUBLE, y YEAR, tm TIME(6), ts TIMESTAMP(6), bl BLOB, s SET('p','q'), c CHAR(2), f FLOAT, dt DATE, ti TINYINT)"); err != nil {
		t.Fatal(err)
	}
	return r
}

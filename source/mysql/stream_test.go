package mysql

import (
	"context"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/mysql/ddl"
	"github.com/cdcd/cdcd/source/mysql/types"
)

// testReader is a MySQL-flavor reader whose catalog knows d.t (id INT PRIMARY KEY, v VARCHAR(10)).
func testReader(t *testing.T, flavor types.Flavor) *Reader {
	t.Helper()
	class := map[types.Flavor]string{types.MySQL: MySQLConnectorClass, types.MariaDB: MariaDBConnectorClass}[flavor]
	cfg, err := ParseConfig("c", flavor, map[string]string{
		"connector.class": class, "database.hostname": "h", "database.user": "u", "database.server.id": "7",
		"topic.prefix": "p", "schema.history.internal.kafka.topic": "h", "schema.history.internal.kafka.bootstrap.servers": "b:9092",
	}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	r := NewReader(cfg, nil, slog.New(slog.DiscardHandler))
	r.catalog = ddl.NewCatalog(flavor)
	if _, err := r.catalog.Apply("d", "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))"); err != nil {
		t.Fatal(err)
	}
	return r
}

// event wraps a binlog event with a header: its type, time, and end position (LogPos) for a size.
func event(typ replication.EventType, ts uint32, end, size uint32, e replication.Event) *replication.BinlogEvent {
	return &replication.BinlogEvent{Header: &replication.EventHeader{EventType: typ, Timestamp: ts, ServerID: 42, LogPos: end, EventSize: size}, Event: e}
}

func rows(typ replication.EventType, values ...[]any) *replication.RowsEvent {
	return &replication.RowsEvent{Table: &replication.TableMapEvent{Schema: []byte("d"), Table: []byte("t")}, Rows: values}
}

// TestMySQLTransaction feeds a MySQL-flavor transaction as the binlog carries it — GTID event with the
// original commit time, BEGIN query, table map, V2 rows event, XID — and checks the batch: one event per
// row with MySQL's source block (UUID GTID, ts_ms and ts_us from the original commit time, to the
// microsecond), and an offset after the
// commit with the GTID set grown by the transaction.
func TestMySQLTransaction(t *testing.T) {
	r := testReader(t, types.MySQL)
	out := make(chan source.Batch, 4)
	start := Offset{File: "mysql-bin.000003", Pos: 4, GTIDs: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-4"}
	st, err := r.newStream(context.Background(), out, start)
	if err != nil {
		t.Fatal(err)
	}
	sid := [16]byte{0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1, 0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62}
	commit := time.Date(2026, 11, 30, 10, 0, 0, 123456000, time.UTC)
	events := []*replication.BinlogEvent{
		event(replication.GTID_EVENT, 1800000000, 200, 65, &replication.GTIDEvent{SID: sid[:], GNO: 5, OriginalCommitTimestamp: uint64(commit.UnixMicro())}),
		event(replication.QUERY_EVENT, 1800000000, 280, 80, &replication.QueryEvent{Query: []byte("BEGIN"), SlaveProxyID: 99}),
		event(replication.TABLE_MAP_EVENT, 1800000000, 330, 50, &replication.TableMapEvent{Schema: []byte("d"), Table: []byte("t")}),
		event(replication.WRITE_ROWS_EVENTv2, 1800000000, 400, 70, rows(replication.WRITE_ROWS_EVENTv2, []any{int32(1), "a"}, []any{int32(2), "b"})),
		event(replication.XID_EVENT, 1800000000, 431, 31, &replication.XIDEvent{XID: 9}),
	}
	for _, ev := range events {
		if err := st.handle(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	b := <-out
	if len(b.Events) != 2 {
		t.Fatalf("%d events, want 2", len(b.Events))
	}
	src := b.Events[1].Value.(*schema.Struct).Get("source").(*schema.Struct)
	checks := map[string]any{
		"connector": "mysql", "gtid": "3e11fa47-71ca-11e1-9e33-c80aa9429562:5", "ts_ms": commit.UnixMilli(),
		"ts_us": commit.UnixMicro(), "ts_ns": commit.UnixMicro() * 1000,
		"file": "mysql-bin.000003", "pos": int64(330), "row": int32(1), "server_id": int64(42), "thread": int64(99), "table": "t", "db": "d", // the BEGIN's thread
	}
	for field, want := range checks {
		if got := src.Get(field); got != want {
			t.Errorf("source.%s = %v (%T), want %v", field, got, got, want)
		}
	}
	if src.Schema.Name != schema.MySQLSourceName {
		t.Errorf("source schema %s, want %s", src.Schema.Name, schema.MySQLSourceName)
	}
	off := b.Position.(binlogPosition).Offset
	want := Offset{File: "mysql-bin.000003", Pos: 431, GTIDs: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5", ServerID: 42, TsSec: 1800000000}
	if off != want {
		t.Errorf("offset %+v, want %+v", off, want)
	}
}

// TestResumeSkipsWhatDebeziumDelivered resumes from an offset Debezium wrote inside a MariaDB transaction
// (event=2, row=1: the GTID and table map events, and the first row of the rows event, were delivered):
// only the rest of the transaction is emitted.
func TestResumeSkipsWhatDebeziumDelivered(t *testing.T) {
	r := testReader(t, types.MariaDB)
	out := make(chan source.Batch, 4)
	st, err := r.newStream(context.Background(), out, Offset{File: "mariadb-bin.000002", Pos: 100, GTIDs: "0-1-10", Events: 2, Rows: 1})
	if err != nil {
		t.Fatal(err)
	}
	events := []*replication.BinlogEvent{
		event(replication.MARIADB_GTID_EVENT, 1800000000, 138, 38, &replication.MariadbGTIDEvent{GTID: gomysql.MariadbGTID{DomainID: 0, ServerID: 1, SequenceNumber: 11}}),
		event(replication.TABLE_MAP_EVENT, 1800000000, 190, 52, &replication.TableMapEvent{Schema: []byte("d"), Table: []byte("t")}),
		event(replication.WRITE_ROWS_EVENTv1, 1800000000, 260, 70, rows(replication.WRITE_ROWS_EVENTv1, []any{int32(1), "a"}, []any{int32(2), "b"})),
		event(replication.WRITE_ROWS_EVENTv1, 1800000000, 330, 70, rows(replication.WRITE_ROWS_EVENTv1, []any{int32(3), "c"})),
		event(replication.XID_EVENT, 1800000000, 361, 31, &replication.XIDEvent{XID: 9}),
	}
	for _, ev := range events {
		if err := st.handle(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	b := <-out
	var ids []any
	for _, ev := range b.Events {
		ids = append(ids, ev.Key.(*schema.Struct).Get("id"))
	}
	if len(ids) != 2 || ids[0] != int32(2) || ids[1] != int32(3) {
		t.Errorf("emitted keys %v, want [2 3]", ids)
	}
	if got := b.Position.(binlogPosition).GTIDs; got != "0-1-11" {
		t.Errorf("gtids after the transaction %s, want 0-1-11", got)
	}
}

// TestGTIDSourceFilter: with gtid.source.excludes naming a MariaDB domain-server pair, that source's row
// changes are not emitted, while its transaction still advances the GTID set and the offset.
func TestGTIDSourceFilter(t *testing.T) {
	r := testReader(t, types.MariaDB)
	r.cfg.GTIDExcludes = []*regexp.Regexp{regexp.MustCompile(`^(?:0-2)$`)}
	out := make(chan source.Batch, 4)
	st, err := r.newStream(context.Background(), out, Offset{File: "mariadb-bin.000002", Pos: 100, GTIDs: "0-1-10"})
	if err != nil {
		t.Fatal(err)
	}
	tx := func(server uint32, seq uint64, end uint32) {
		for _, ev := range []*replication.BinlogEvent{
			event(replication.MARIADB_GTID_EVENT, 1800000000, end-100, 38, &replication.MariadbGTIDEvent{GTID: gomysql.MariadbGTID{DomainID: 0, ServerID: server, SequenceNumber: seq}}),
			event(replication.WRITE_ROWS_EVENTv1, 1800000000, end-31, 69, rows(replication.WRITE_ROWS_EVENTv1, []any{int32(seq), "x"})),
			event(replication.XID_EVENT, 1800000000, end, 31, &replication.XIDEvent{XID: seq}),
		} {
			if err := st.handle(context.Background(), ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	tx(2, 11, 300) // excluded source 0-2
	tx(1, 12, 500)
	first, second := <-out, <-out
	if len(first.Events) != 0 || len(second.Events) != 1 {
		t.Errorf("events per transaction %d, %d; want 0 (filtered source), 1", len(first.Events), len(second.Events))
	}
	if got := first.Position.(binlogPosition).Pos; got != 300 {
		t.Errorf("the filtered transaction's offset is at %d, want 300", got)
	}
}

// TestThreadComesOnlyFromBegin: a DDL query event carries a thread id too, but Debezium takes the thread only
// from a BEGIN and forgets it at the commit, so a MariaDB transaction after a DDL (no BEGIN) has none.
func TestThreadComesOnlyFromBegin(t *testing.T) {
	r := testReader(t, types.MariaDB)
	r.history = nil
	out := make(chan source.Batch, 4)
	st, err := r.newStream(context.Background(), out, Offset{File: "mariadb-bin.000002", Pos: 100, GTIDs: "0-1-10"})
	if err != nil {
		t.Fatal(err)
	}
	st.thread = 77 // as a DDL's query event would have left it before the fix
	st.commit(context.Background(), 200)
	<-out
	for _, ev := range []*replication.BinlogEvent{
		event(replication.MARIADB_GTID_EVENT, 1800000000, 238, 38, &replication.MariadbGTIDEvent{GTID: gomysql.MariadbGTID{DomainID: 0, ServerID: 1, SequenceNumber: 12}}),
		event(replication.WRITE_ROWS_EVENTv1, 1800000000, 269, 31, rows(replication.WRITE_ROWS_EVENTv1, []any{int32(1), "x"})),
		event(replication.XID_EVENT, 1800000000, 300, 31, &replication.XIDEvent{XID: 1}),
	} {
		if err := st.handle(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	b := <-out
	if got := b.Events[0].Value.(*schema.Struct).Get("source").(*schema.Struct).Get("thread"); got != nil {
		t.Errorf("source.thread = %v after a commit, want null", got)
	}
}

// TestEventProcessingFailureHandlingMode: a row cdcd cannot convert (here an INT column holding text) fails
// the stream by default, naming its binlog position and the key that would skip it; with warn or skip the
// row is skipped and the event's next row still goes out.
func TestEventProcessingFailureHandlingMode(t *testing.T) {
	for _, mode := range []string{"fail", "warn", "skip"} {
		r := testReader(t, types.MariaDB)
		r.cfg.EventFailureMode = mode
		out := make(chan source.Batch, 4)
		st, err := r.newStream(context.Background(), out, Offset{File: "mariadb-bin.000002", Pos: 100, GTIDs: "0-1-10"})
		if err != nil {
			t.Fatal(err)
		}
		var failed error
		for _, ev := range []*replication.BinlogEvent{
			event(replication.MARIADB_GTID_EVENT, 1800000000, 200, 38, &replication.MariadbGTIDEvent{GTID: gomysql.MariadbGTID{DomainID: 0, ServerID: 1, SequenceNumber: 11}}),
			event(replication.WRITE_ROWS_EVENTv1, 1800000000, 269, 69, rows(replication.WRITE_ROWS_EVENTv1, []any{"not a number", "x"}, []any{int32(2), "y"})),
			event(replication.XID_EVENT, 1800000000, 300, 31, &replication.XIDEvent{XID: 11}),
		} {
			if failed = st.handle(context.Background(), ev); failed != nil {
				break
			}
		}
		if mode == "fail" {
			if failed == nil || !strings.Contains(failed.Error(), "mariadb-bin.000002:200") || !strings.Contains(failed.Error(), "event.processing.failure.handling.mode") {
				t.Errorf("fail: got %v, want the row's position and the key", failed)
			}
			if !source.IsFatal(failed) {
				t.Errorf("fail: %v is retriable, but a restart would fail on the same row", failed)
			}
			continue
		}
		if failed != nil {
			t.Fatalf("%s: %v", mode, failed)
		}
		if b := <-out; len(b.Events) != 1 {
			t.Errorf("%s: %d events, want the convertible row's only", mode, len(b.Events))
		}
	}
}

// TestMySQLDDLTimeIsTheCommitTime: a DDL statement's schema change event takes its source time from its
// GTID event's original commit time (microseconds), as its row changes would, not from the binlog
// header's whole seconds.
func TestMySQLDDLTimeIsTheCommitTime(t *testing.T) {
	r := testReader(t, types.MySQL)
	r.history = &history{log: &memoryLog{}, topic: "h"}
	out := make(chan source.Batch, 4)
	st, err := r.newStream(context.Background(), out, Offset{File: "mysql-bin.000003", Pos: 4, GTIDs: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-4"})
	if err != nil {
		t.Fatal(err)
	}
	sid := [16]byte{0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1, 0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62}
	commit := time.Date(2026, 11, 30, 10, 0, 0, 123456000, time.UTC)
	for _, ev := range []*replication.BinlogEvent{
		event(replication.GTID_EVENT, 1800000000, 200, 65, &replication.GTIDEvent{SID: sid[:], GNO: 5, OriginalCommitTimestamp: uint64(commit.UnixMicro())}),
		event(replication.QUERY_EVENT, 1800000000, 300, 100, &replication.QueryEvent{Schema: []byte("d"), Query: []byte("CREATE TABLE u (id INT PRIMARY KEY)")}),
	} {
		if err := st.handle(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	b := <-out
	if len(b.Events) == 0 {
		t.Fatal("no schema change event")
	}
	src := b.Events[0].Value.(*schema.Struct).Get("source").(*schema.Struct)
	if got := src.Get("ts_ms"); got != commit.UnixMilli() {
		t.Errorf("source.ts_ms = %v, want %d", got, commit.UnixMilli())
	}
	if got := src.Get("ts_us"); got != commit.UnixMicro() {
		t.Errorf("source.ts_us = %v, want %d", got, commit.UnixMicro())
	}
}

// TestMySQLCompressedTransactionPositions: the events of a TRANSACTION_PAYLOAD (go-mysql has decoded them,
// with positions of its own) are handled as if uncompressed, at the payload event's position, as Debezium
// records them: each row's source.pos is the payload's start, the commit's offset its end, and the GTID
// event before it names the transaction.
func TestMySQLCompressedTransactionPositions(t *testing.T) {
	r := testReader(t, types.MySQL)
	out := make(chan source.Batch, 4)
	st, err := r.newStream(context.Background(), out, Offset{File: "mysql-bin.000003", Pos: 4, GTIDs: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-4"})
	if err != nil {
		t.Fatal(err)
	}
	sid := [16]byte{0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1, 0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62}
	inner := func(typ replication.EventType, e replication.Event) *replication.BinlogEvent {
		return event(typ, 1, 7, 3, e) // go-mysql's stand-in positions, which must not be used
	}
	payload := &replication.TransactionPayloadEvent{Events: []*replication.BinlogEvent{
		inner(replication.QUERY_EVENT, &replication.QueryEvent{Query: []byte("BEGIN")}),
		inner(replication.TABLE_MAP_EVENT, &replication.TableMapEvent{Schema: []byte("d"), Table: []byte("t")}),
		inner(replication.WRITE_ROWS_EVENTv2, rows(replication.WRITE_ROWS_EVENTv2, []any{int32(1), "a"}, []any{int32(2), "b"})),
		inner(replication.UPDATE_ROWS_EVENTv2, rows(replication.UPDATE_ROWS_EVENTv2, []any{int32(1), "a"}, []any{int32(1), "c"})),
		inner(replication.XID_EVENT, &replication.XIDEvent{XID: 9}),
	}}
	for _, ev := range []*replication.BinlogEvent{
		event(replication.GTID_EVENT, 1800000000, 200, 65, &replication.GTIDEvent{SID: sid[:], GNO: 5}),
		event(replication.TRANSACTION_PAYLOAD_EVENT, 1800000000, 500, 300, payload),
	} {
		if err := st.handle(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	var b source.Batch
	select { // handle sends synchronously into the buffered channel: a batch is there, or none came
	case b = <-out:
	default:
		t.Fatal("no batch: the commit inside the payload was not handled")
	}
	if len(b.Events) != 3 {
		t.Fatalf("%d events, want 3", len(b.Events))
	}
	for i, ev := range b.Events {
		src := ev.Value.(*schema.Struct).Get("source").(*schema.Struct)
		if pos, gtid := src.Get("pos"), src.Get("gtid"); pos != int64(200) || gtid != "3e11fa47-71ca-11e1-9e33-c80aa9429562:5" {
			t.Errorf("event %d: source.pos %v, gtid %v; want the payload's position 200 and GTID :5", i, pos, gtid)
		}
	}
	off := b.Position.(binlogPosition).Offset
	if off.Pos != 500 || off.GTIDs != "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5" {
		t.Errorf("offset %+v, want the payload's end 500 and the GTID set with :5", off)
	}
	if st.inTx || st.txEvents != 0 {
		t.Errorf("after the commit inside the payload: in a transaction %v, %d events counted", st.inTx, st.txEvents)
	}
}

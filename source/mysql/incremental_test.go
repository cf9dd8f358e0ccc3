package mysql

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/snapshot/incremental"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/mysql/ddl"
	"github.com/cdcd/cdcd/source/mysql/tables"
	"github.com/cdcd/cdcd/source/mysql/types"
)

// fakeChunks is incremental.Database over d.t's rows 1..3, recording the watermarks it is asked to write.
type fakeChunks struct {
	ts         *tableSchema
	watermarks []string // "id kind"
}

func (f *fakeChunks) Tables(context.Context) ([]string, error) { return []string{"d.t"}, nil }

func (f *fakeChunks) WriteWatermark(_ context.Context, id, kind, _ string) error {
	f.watermarks = append(f.watermarks, id+" "+kind)
	return nil
}

func (f *fakeChunks) DeleteWatermark(context.Context, string) error { return nil }

func (f *fakeChunks) MaxKey(context.Context, incremental.Collection) ([]any, error) {
	return []any{int32(3)}, nil
}

func (f *fakeChunks) ReadChunk(_ context.Context, _ incremental.Collection, after, _ []any, _ int) ([]incremental.Row, error) {
	if after != nil {
		return nil, nil // the table is done
	}
	var out []incremental.Row
	for _, id := range []int32{1, 2, 3} {
		row, err := f.ts.rowStruct([]any{id, "snap"}, types.Modes{Flavor: types.MariaDB}.FromBinlog)
		if err != nil {
			return nil, err
		}
		key := f.ts.keyOf(row)
		out = append(out, incremental.Row{KeyText: incremental.KeyText(key), JavaKey: []any{id}, Value: chunkRow{ts: f.ts, key: key, row: row}})
	}
	return out, nil
}

func tableRows(table string, values ...[]any) *replication.RowsEvent {
	return &replication.RowsEvent{Table: &replication.TableMapEvent{Schema: []byte("d"), Table: []byte(table)}, Rows: values}
}

// TestIncrementalWindowInTheBinlog runs one window through the stream: the signal table's insert starts
// the snapshot, a change of row 2 streams between the watermarks, and the close watermark's transaction
// carries rows 1 and 3 (op "r", source.snapshot "incremental", the close watermark's position), before the
// watermark's own event; its offset holds the snapshot's progress.
func TestIncrementalWindowInTheBinlog(t *testing.T) {
	st, db, out := incrementalStream(t, Offset{File: "mariadb-bin.000002", Pos: 100, GTIDs: "0-1-10"})
	tx := func(seq uint32, at uint32, e *replication.RowsEvent, typ replication.EventType) {
		t.Helper()
		streamTx(t, st, seq, at, e, typ)
	}
	tx(11, 200, tableRows("sig", []any{"s1", "execute-snapshot", `{"data-collections": ["d.t"]}`}), replication.WRITE_ROWS_EVENTv1)
	if len(db.watermarks) != 2 || !strings.HasSuffix(db.watermarks[0], "-open snapshot-window-open") {
		t.Fatalf("watermarks %v, want an open and a close one", db.watermarks)
	}
	open, _, _ := strings.Cut(db.watermarks[0], " ")
	closing, _, _ := strings.Cut(db.watermarks[1], " ")
	tx(12, 400, tableRows("sig", []any{open, "snapshot-window-open", "{}"}), replication.WRITE_ROWS_EVENTv1)
	tx(13, 600, tableRows("t", []any{int32(2), "old"}, []any{int32(2), "new"}), replication.UPDATE_ROWS_EVENTv1)
	tx(14, 800, tableRows("sig", []any{closing, "snapshot-window-close", "{}"}), replication.WRITE_ROWS_EVENTv1)
	checkWindowBatches(t, out)
}

// TestSignalTableNotCoveredBySnapshot: after a resumed initial snapshot, whose tables drop the changes
// they already hold, the signal table's changes still stream: the snapshot does not read its rows.
func TestSignalTableNotCoveredBySnapshot(t *testing.T) {
	at := binlogSequence("mariadb-bin.000002", 100000) // every table was read after the signal
	progress := fmt.Sprintf(`{"tables":[{"id":"d.sig","done":true,"epochs":[{"position":%d}]},{"id":"d.t","done":true,"epochs":[{"position":%d}]}]}`, at, at)
	st, db, _ := incrementalStream(t, Offset{File: "mariadb-bin.000002", Pos: 100, GTIDs: "0-1-10", SnapshotProgress: progress})
	streamTx(t, st, 11, 200, tableRows("sig", []any{"s1", "execute-snapshot", `{"data-collections": ["d.t"]}`}), replication.WRITE_ROWS_EVENTv1)
	if len(db.watermarks) != 2 {
		t.Fatalf("the signal was dropped as covered by the snapshot: watermarks %v", db.watermarks)
	}
}

// incrementalStream is a MariaDB stream from start whose catalog knows d.t and the signal table d.sig,
// its incremental snapshots reading fakeChunks.
func incrementalStream(t *testing.T, start Offset) (*stream, *fakeChunks, chan source.Batch) {
	t.Helper()
	cfg, err := ParseConfig("c", types.MariaDB, map[string]string{
		"connector.class": MariaDBConnectorClass, "database.hostname": "h", "database.user": "u", "database.server.id": "7",
		"topic.prefix": "p", "schema.history.internal.kafka.topic": "h", "schema.history.internal.kafka.bootstrap.servers": "b:9092",
		"table.include.list": "d.t", "signal.data.collection": "d.sig", "incremental.snapshot.chunk.size": "3",
	}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	r := NewReader(cfg, nil, slog.New(slog.DiscardHandler))
	r.catalog = ddl.NewCatalog(types.MariaDB)
	for _, create := range []string{"CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))",
		"CREATE TABLE sig (id VARCHAR(64) PRIMARY KEY, type VARCHAR(32) NOT NULL, data VARCHAR(2048))"} {
		if _, err := r.catalog.Apply("d", create); err != nil {
			t.Fatal(err)
		}
	}
	ts, err := r.tableSchema(tables.ID{Database: "d", Table: "t"})
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan source.Batch, 8)
	st, err := r.newStream(context.Background(), out, start)
	if err != nil {
		t.Fatal(err)
	}
	db := &fakeChunks{ts: ts}
	st.inc.DB = db
	return st, db, out
}

// streamTx streams one MariaDB transaction of one rows event: GTID event at, the rows, the XID.
func streamTx(t *testing.T, st *stream, seq uint32, at uint32, e *replication.RowsEvent, typ replication.EventType) {
	t.Helper()
	for _, ev := range []*replication.BinlogEvent{
		event(replication.MARIADB_GTID_EVENT, 1800000000, at, 40, &replication.MariadbGTIDEvent{GTID: gomysql.MariadbGTID{DomainID: 0, ServerID: 1, SequenceNumber: uint64(seq)}}),
		event(typ, 1800000000, at+100, 60, e),
		event(replication.XID_EVENT, 1800000000, at+131, 31, &replication.XIDEvent{XID: uint64(seq)}),
	} {
		if err := st.handle(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
}

// checkWindowBatches checks the four transactions' batches of TestIncrementalWindowInTheBinlog.
func checkWindowBatches(t *testing.T, out chan source.Batch) {
	t.Helper()
	var batches []source.Batch
	for range 4 {
		batches = append(batches, <-out)
	}
	last := batches[3]
	var got []string
	for _, ev := range last.Events {
		v := ev.Value.(*schema.Struct)
		src := v.Get(schema.EnvelopeSource).(*schema.Struct)
		got = append(got, fmt.Sprint(ev.Topic, " ", v.Get(schema.EnvelopeOp), " ", src.Get(schema.SourceSnapshot), " ", src.Get(schema.SourceGTID)))
		if src.Get(schema.SourcePos) != int64(840) {
			t.Errorf("%s: source.pos %v, want the close watermark's rows event at 840", ev.Topic, src.Get(schema.SourcePos))
		}
	}
	want := []string{"p.d.t r incremental 0-1-14", "p.d.t r incremental 0-1-14", "p.d.sig c <nil> 0-1-14"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the close watermark's batch: %q, want %q (row 2 superseded by the streamed update)", got, want)
	}
	if id := last.Events[1].Key.(*schema.Struct).Values[0]; id != int32(3) {
		t.Errorf("the second snapshot row is id %v, want 3", id)
	}
	// The offsets of the window's transactions hold the running snapshot; the one after its last window,
	// which found the table done, no longer does.
	for i, b := range batches {
		var names []string
		for _, f := range b.Offset {
			names = append(names, f.Name)
		}
		if running := strings.Contains(strings.Join(names, ","), "incremental_snapshot_collections"); running != (i < 3) {
			t.Errorf("batch %d's offset keys %v", i, names)
		}
	}
}

// TestIncrementalOffsetInBinlogOffset writes a running snapshot's keys into a binlog offset, after the
// position's keys as Debezium's getOffset puts them, and reads them back.
func TestIncrementalOffsetInBinlogOffset(t *testing.T) {
	id := "sig-1"
	inc := &incremental.Offset{Collections: `[{"incremental_snapshot_collections_id":"d.t"}]`, PrimaryKey: "aced", MaximumKey: "aced", CorrelationID: &id}
	o := Offset{File: "mariadb-bin.000002", Pos: 100, ServerID: 1, Incremental: inc}
	m := map[string]any{}
	var names []string
	for _, f := range o.Fields() {
		m[f.Name] = f.Value
		names = append(names, f.Name)
	}
	if strings.Join(names, ",") != "server_id,file,pos,incremental_snapshot_primary_key,incremental_snapshot_maximum_key,incremental_snapshot_collections,incremental_snapshot_correlation_id" {
		t.Fatalf("offset keys %v", names)
	}
	parsed, err := ParseOffset(m)
	if err != nil || !reflect.DeepEqual(parsed.Incremental, inc) {
		t.Fatalf("read back %+v, %v", parsed.Incremental, err)
	}
}

// TestChunkKeyJavaTypes: the key types cdcd chunks by become the Java objects the JDBC drivers return;
// the others are refused naming surrogate-key.
func TestChunkKeyJavaTypes(t *testing.T) {
	signed := func(n int64) gomysql.FieldValue {
		return gomysql.NewFieldValue(gomysql.FieldValueTypeSigned, uint64(n), nil)
	}
	for _, tc := range []struct {
		typeName string
		v        gomysql.FieldValue
		want     any
	}{
		{"INT", signed(-7), int32(-7)},
		{"INT UNSIGNED", gomysql.NewFieldValue(gomysql.FieldValueTypeUnsigned, 4000000000, nil), int64(4000000000)},
		{"BIGINT", signed(1 << 40), int64(1 << 40)},
		{"VARCHAR", gomysql.NewFieldValue(gomysql.FieldValueTypeString, 0, []byte("k")), "k"},
		{"CHAR", gomysql.NewFieldValue(gomysql.FieldValueTypeString, 0, []byte("k")), "k"},
	} {
		kind, err := keyKind(&tables.Column{Name: "c", TypeName: tc.typeName})
		if err != nil {
			t.Fatalf("%s: %v", tc.typeName, err)
		}
		got, err := javaKey([]javaKind{kind}, []gomysql.FieldValue{tc.v})
		if err != nil || !reflect.DeepEqual(got, []any{tc.want}) {
			t.Errorf("%s: %v, %v; want %T %v", tc.typeName, got, err, tc.want, tc.want)
		}
	}
	for _, typ := range []string{"TINYINT", "SMALLINT", "MEDIUMINT", "BIGINT UNSIGNED", "DECIMAL", "DATETIME"} {
		if _, err := keyKind(&tables.Column{Name: "c", TypeName: typ}); err == nil || !strings.Contains(err.Error(), "surrogate-key") {
			t.Errorf("%s: %v, want a refusal naming surrogate-key", typ, err)
		}
	}
	if _, err := keyKind(&tables.Column{Name: "c", TypeName: "VARCHAR", Charset: "binary"}); err == nil {
		t.Error("a binary string key was accepted")
	}
	if _, err := javaKey([]javaKind{javaInteger}, []gomysql.FieldValue{{}}); err == nil {
		t.Error("a null key was accepted")
	}
}

// TestSignalTableIsCaptured: the signal table is captured whatever the table filters say, as Debezium adds it.
func TestSignalTableIsCaptured(t *testing.T) {
	cfg, err := ParseConfig("c", types.MariaDB, map[string]string{
		"connector.class": MariaDBConnectorClass, "database.hostname": "h", "database.user": "u", "database.server.id": "7",
		"topic.prefix": "p", "schema.history.internal.kafka.topic": "h", "schema.history.internal.kafka.bootstrap.servers": "b:9092",
		"table.include.list": "d.t", "signal.data.collection": "d.sig",
	}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Filter.IncludeTable("d", "sig") || cfg.Filter.IncludeTable("d", "other") || !cfg.signalTable(tables.ID{Database: "d", Table: "sig"}) {
		t.Fatal("the signal table is not captured, or another table is")
	}
	if _, err := ParseConfig("c", types.MariaDB, map[string]string{
		"connector.class": MariaDBConnectorClass, "database.hostname": "h", "database.user": "u", "database.server.id": "7",
		"topic.prefix": "p", "schema.history.internal.kafka.topic": "h", "schema.history.internal.kafka.bootstrap.servers": "b:9092",
		"signal.enabled.channels": "kafka",
	}, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "signal.enabled.channels") {
		t.Fatalf("the kafka channel: %v", err)
	}
}

// TestBoundedSelect: a snapshot query a signal starts is limited to snapshot.query.timeout.ms as each
// server limits one statement (MariaDB's max_statement_time in seconds, MySQL's MAX_EXECUTION_TIME hint in
// milliseconds), and not at all with 0.
func TestBoundedSelect(t *testing.T) {
	for _, tc := range []struct {
		flavor  types.Flavor
		timeout time.Duration
		want    string
	}{
		{types.MariaDB, 1500 * time.Millisecond, "SET STATEMENT max_statement_time=1.500 FOR SELECT * FROM `d`.`t` WHERE (`v` > 1)"},
		{types.MySQL, 1500 * time.Millisecond, "SELECT /*+ MAX_EXECUTION_TIME(1500) */ * FROM `d`.`t` WHERE (`v` > 1)"},
		{types.MySQL, 0, "SELECT * FROM `d`.`t` WHERE (`v` > 1)"},
	} {
		c := &Config{Flavor: tc.flavor}
		c.Signals.QueryTimeout = tc.timeout
		if got := c.boundedSelect("SELECT * FROM `d`.`t` WHERE (`v` > 1)"); got != tc.want {
			t.Errorf("flavor %v, timeout %s: %s, want %s", tc.flavor, tc.timeout, got, tc.want)
		}
	}
}

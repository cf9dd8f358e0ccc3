package mysql

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/mysql/types"
)

// txCompact renders a batch's events: "BEGIN id @ts", "END id n [collection:n …] @ts", "topic op id
// total/order" ("-" without a transaction block), "tombstone", or the topic of any other record.
func txCompact(evs []source.Event) []string {
	var out []string
	for _, ev := range evs {
		v, _ := ev.Value.(*schema.Struct)
		switch {
		case v == nil:
			out = append(out, "tombstone")
		case v.Schema == schema.TransactionValueSchema():
			s := fmt.Sprintf("%s %s", v.Get("status"), v.Get("id"))
			if v.Get("status") == "END" {
				var dc []string
				for _, c := range v.Get("data_collections").([]any) {
					c := c.(*schema.Struct)
					dc = append(dc, fmt.Sprintf("%s:%d", c.Get("data_collection"), c.Get("event_count")))
				}
				s += fmt.Sprintf(" %d [%s]", v.Get("event_count"), strings.Join(dc, " "))
			}
			s += fmt.Sprintf(" @%d", v.Get("ts_ms").(int64)/1000)
			if ev.Key.(*schema.Struct).Get("id") != v.Get("id") || ev.Topic != "p.transaction" {
				s += " (bad key or topic)"
			}
			out = append(out, s)
		case v.Schema.FieldIndex("transaction") < 0:
			out = append(out, ev.Topic)
		default:
			block, _ := v.Get("transaction").(*schema.Struct)
			if block == nil {
				out = append(out, fmt.Sprintf("%s %s -", ev.Topic, v.Get("op")))
				continue
			}
			out = append(out, fmt.Sprintf("%s %s %s %d/%d", ev.Topic, v.Get("op"), block.Get("id"),
				block.Get("total_order"), block.Get("data_collection_order")))
		}
	}
	return out
}

func TestTransactionMetadata(t *testing.T) {
	sid := [16]byte{0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1, 0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62}
	commit := time.Unix(1800000005, 0)
	mariaGTID := func(seq uint64, ts, end uint32) *replication.BinlogEvent {
		return event(replication.MARIADB_GTID_EVENT, ts, end, 38, &replication.MariadbGTIDEvent{GTID: gomysql.MariadbGTID{DomainID: 0, ServerID: 1, SequenceNumber: seq}})
	}
	write := func(ts, end uint32, ids ...int32) *replication.BinlogEvent {
		var values [][]any
		for _, id := range ids {
			values = append(values, []any{id, "x"})
		}
		return event(replication.WRITE_ROWS_EVENTv1, ts, end, 70, rows(replication.WRITE_ROWS_EVENTv1, values...))
	}
	for _, tc := range []struct {
		name    string
		flavor  types.Flavor
		exclude bool // d.t is left out by table.exclude.list
		start   Offset
		events  []*replication.BinlogEvent
		want    [][]string // per batch
	}{{
		// MariaDB's GTID event opens the transaction; the id is the GTID; BEGIN and END take the time of the
		// event before them, as Debezium reads its binlog clock before the event moves it.
		name:   "MariaDB",
		flavor: types.MariaDB,
		start:  Offset{File: "mariadb-bin.000002", Pos: 100, GTIDs: "0-1-10"},
		events: []*replication.BinlogEvent{
			event(replication.FORMAT_DESCRIPTION_EVENT, 1799999000, 100, 96, &replication.FormatDescriptionEvent{}),
			mariaGTID(11, 1800000001, 138), write(1800000002, 208, 1, 2),
			event(replication.DELETE_ROWS_EVENTv1, 1800000002, 278, 70, rows(replication.DELETE_ROWS_EVENTv1, []any{int32(1), "x"})),
			event(replication.XID_EVENT, 1800000003, 309, 31, &replication.XIDEvent{XID: 9}),
		},
		want: [][]string{{"BEGIN 0-1-11 @1799999000", "p.d.t c 0-1-11 1/1", "p.d.t c 0-1-11 2/2", "p.d.t d 0-1-11 3/3", "tombstone",
			"END 0-1-11 3 [d.t:3] @1800000002"}},
	}, {
		// MySQL sends BEGIN after its GTID event: the transaction opens there, its id is the GTID and its
		// time the original commit time.
		name:   "MySQL with GTIDs",
		flavor: types.MySQL,
		start:  Offset{File: "mysql-bin.000003", Pos: 4, GTIDs: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-4"},
		events: []*replication.BinlogEvent{
			event(replication.GTID_EVENT, 1800000000, 200, 65, &replication.GTIDEvent{SID: sid[:], GNO: 5, OriginalCommitTimestamp: uint64(commit.UnixMicro())}),
			event(replication.QUERY_EVENT, 1800000000, 280, 80, &replication.QueryEvent{Query: []byte("BEGIN")}),
			write(1800000000, 350, 1),
			event(replication.XID_EVENT, 1800000000, 381, 31, &replication.XIDEvent{XID: 9}),
		},
		want: [][]string{{"BEGIN 3e11fa47-71ca-11e1-9e33-c80aa9429562:5 @1800000005", "p.d.t c 3e11fa47-71ca-11e1-9e33-c80aa9429562:5 1/1",
			"END 3e11fa47-71ca-11e1-9e33-c80aa9429562:5 1 [d.t:1] @1800000005"}},
	}, {
		// Without GTIDs the id is the binlog position of the BEGIN.
		name:   "MySQL without GTIDs",
		flavor: types.MySQL,
		start:  Offset{File: "mysql-bin.000003", Pos: 200},
		events: []*replication.BinlogEvent{
			event(replication.QUERY_EVENT, 1800000001, 280, 80, &replication.QueryEvent{Query: []byte("BEGIN")}),
			write(1800000002, 350, 1),
			event(replication.QUERY_EVENT, 1800000003, 400, 50, &replication.QueryEvent{Query: []byte("COMMIT")}),
		},
		want: [][]string{{"BEGIN file=mysql-bin.000003,pos=200 @1800000001", "p.d.t c file=mysql-bin.000003,pos=200 1/1",
			"END file=mysql-bin.000003,pos=200 1 [d.t:1] @1800000002"}},
	}, {
		// A transaction without a captured change still gets its BEGIN and an END without events.
		name:    "no captured change",
		flavor:  types.MariaDB,
		exclude: true,
		start:   Offset{File: "mariadb-bin.000002", Pos: 100, GTIDs: "0-1-10"},
		events: []*replication.BinlogEvent{
			mariaGTID(11, 1800000001, 138), write(1800000001, 208, 1),
			event(replication.XID_EVENT, 1800000001, 239, 31, &replication.XIDEvent{XID: 9}),
		},
		want: [][]string{{"BEGIN 0-1-11 @1800000001", "END 0-1-11 0 [] @1800000001"}},
	}, {
		// A DDL statement is a transaction MariaDB opens with a GTID event and nothing ends: Debezium
		// writes its BEGIN and no END, and the next transaction's BEGIN follows.
		name:   "MariaDB DDL",
		flavor: types.MariaDB,
		start:  Offset{File: "mariadb-bin.000002", Pos: 100, GTIDs: "0-1-10"},
		events: []*replication.BinlogEvent{
			mariaGTID(11, 1800000001, 138),
			event(replication.QUERY_EVENT, 1800000001, 238, 100, &replication.QueryEvent{Schema: []byte("d"), Query: []byte("CREATE TABLE u (id INT PRIMARY KEY)")}),
			mariaGTID(12, 1800000001, 276), write(1800000001, 346, 1),
			event(replication.XID_EVENT, 1800000001, 377, 31, &replication.XIDEvent{XID: 9}),
		},
		want: [][]string{{"BEGIN 0-1-11 @1800000001", "p"}, {"BEGIN 0-1-12 @1800000001", "p.d.t c 0-1-12 1/1", "END 0-1-12 1 [d.t:1] @1800000001"}},
	}, {
		// A transaction Debezium's offset was written inside (2 events delivered, 1 counted) is read again
		// from its start: no second BEGIN, the counters go on.
		name:   "restored from Debezium's offset",
		flavor: types.MariaDB,
		start: Offset{File: "mariadb-bin.000002", Pos: 100, GTIDs: "0-1-10", Events: 2, Transaction: newTxOffset([]source.OffsetField{
			{Name: "transaction_id", Value: "0-1-11"}, {Name: "transaction_data_collection_order_d.t", Value: int64(1)}})},
		events: []*replication.BinlogEvent{
			mariaGTID(11, 1800000001, 138), write(1800000001, 208, 1),
			write(1800000001, 278, 2), event(replication.XID_EVENT, 1800000001, 309, 31, &replication.XIDEvent{XID: 9}),
		},
		want: [][]string{{"p.d.t c 0-1-11 2/2", "END 0-1-11 2 [d.t:2] @1800000001"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			r := testReader(t, tc.flavor)
			r.history = &history{log: &memoryLog{}, topic: "h"}
			r.cfg.ProvideTxMetadata = true
			if tc.exclude {
				r.cfg.Filter.TableExclude = []*regexp.Regexp{regexp.MustCompile(`^(?:d\.t)$`)}
			}
			out := make(chan source.Batch, 8)
			st, err := r.newStream(context.Background(), out, tc.start)
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range tc.events {
				if err := st.handle(context.Background(), ev); err != nil {
					t.Fatal(err)
				}
			}
			close(out)
			var got [][]string
			for b := range out {
				got = append(got, txCompact(b.Events))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("batches\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestTransactionMetadataOffsets: the commit's offset carries the keys Debezium's END record's offset
// holds; after a DDL statement the still open transaction's id; a heartbeat after a commit none.
func TestTransactionMetadataOffsets(t *testing.T) {
	r := testReader(t, types.MariaDB)
	r.history = &history{log: &memoryLog{}, topic: "h"}
	r.cfg.ProvideTxMetadata = true
	r.cfg.HeartbeatInterval = time.Millisecond
	out := make(chan source.Batch, 8)
	st, err := r.newStream(context.Background(), out, Offset{File: "mariadb-bin.000002", Pos: 100, GTIDs: "0-1-10"})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []*replication.BinlogEvent{
		event(replication.MARIADB_GTID_EVENT, 1800000001, 138, 38, &replication.MariadbGTIDEvent{GTID: gomysql.MariadbGTID{DomainID: 0, ServerID: 1, SequenceNumber: 11}}),
		event(replication.WRITE_ROWS_EVENTv1, 1800000001, 208, 70, rows(replication.WRITE_ROWS_EVENTv1, []any{int32(1), "x"})),
		event(replication.XID_EVENT, 1800000001, 239, 31, &replication.XIDEvent{XID: 9}),
	} {
		if err := st.handle(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	st.lastHeartbeat = time.Time{}
	st.heartbeat()
	for _, ev := range []*replication.BinlogEvent{
		event(replication.MARIADB_GTID_EVENT, 1800000001, 277, 38, &replication.MariadbGTIDEvent{GTID: gomysql.MariadbGTID{DomainID: 0, ServerID: 1, SequenceNumber: 12}}),
		event(replication.QUERY_EVENT, 1800000001, 377, 100, &replication.QueryEvent{Schema: []byte("d"), Query: []byte("CREATE TABLE u (id INT PRIMARY KEY)")}),
	} {
		if err := st.handle(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	commit, heartbeat, ddl := <-out, <-out, <-out
	txKeys := func(b source.Batch) []source.OffsetField {
		var f []source.OffsetField
		for _, o := range b.Offset {
			if strings.HasPrefix(o.Name, "transaction_") {
				f = append(f, o)
			}
		}
		return f
	}
	if got, want := txKeys(commit), []source.OffsetField{{Name: "transaction_id", Value: "0-1-11"}, {Name: "transaction_data_collection_order_d.t", Value: int64(1)}}; !reflect.DeepEqual(got, want) {
		t.Errorf("commit offset: %v, want %v", got, want)
	}
	if got := txKeys(heartbeat); len(got) != 0 {
		t.Errorf("heartbeat offset: %v, want none", got)
	}
	if got, want := txKeys(ddl), []source.OffsetField{{Name: "transaction_id", Value: "0-1-12"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("DDL offset: %v, want %v", got, want)
	}
	// The offset reads back with its transaction.
	m := map[string]any{"file": "mariadb-bin.000002"}
	for _, f := range commit.Offset {
		m[f.Name] = f.Value
	}
	back, err := ParseOffset(m)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Transaction.list(), txKeys(commit)) {
		t.Errorf("parsed back %v, want %v", back.Transaction.list(), txKeys(commit))
	}
}

// TestTransactionMetadataConfig: provide.transaction.metadata and topic.transaction are read;
// transaction.metadata.factory is refused unless it names Debezium's default.
func TestTransactionMetadataConfig(t *testing.T) {
	props := func(kv ...string) map[string]string {
		m := map[string]string{"connector.class": MariaDBConnectorClass, "database.hostname": "h", "database.user": "u",
			"database.server.id": "7", "topic.prefix": "p", "schema.history.internal.kafka.topic": "h",
			"schema.history.internal.kafka.bootstrap.servers": "b:9092"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	cfg, err := ParseConfig("c", types.MariaDB, props("provide.transaction.metadata", "true", "topic.transaction", "tx"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.ProvideTxMetadata || cfg.Topics.TransactionTopic() != "p.tx" {
		t.Errorf("ProvideTxMetadata %v, topic %s; want true, p.tx", cfg.ProvideTxMetadata, cfg.Topics.TransactionTopic())
	}
	if _, err := ParseConfig("c", types.MariaDB, props("transaction.metadata.factory", "com.example.Factory"), slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "transaction.metadata.factory") {
		t.Errorf("a custom factory: %v, want a refusal naming the key", err)
	}
}

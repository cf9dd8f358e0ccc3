package postgres

import (
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/metrics"
	"github.com/cdcd/cdcd/source/postgres/catalog"
)

// txStep is one pgoutput message of a transaction-metadata test: begin (xid at lsn), a change of table at
// lsn ("c", "u", "d", "k" for a primary-key change), a transactional message, or the commit at lsn.
type txStep struct {
	kind  string // begin, change, message, commit
	xid   uint32
	lsn   LSN
	table string
	op    string
}

// txTestState is a stream state with transaction metadata on, fed without a server: changes are built
// as the change path builds them, on a table of one int column.
func txTestState(t *testing.T, restored []source.OffsetField) *streamState {
	t.Helper()
	cfg := &Config{Name: "tx-" + t.Name(), TopicPrefix: "p", DBName: "db", Topics: schema.NewTopicNaming("p"),
		TombstonesOnDelete: true, ProvideTxMetadata: true, Modes: catalog.Modes{Binary: catalog.BinaryBytes}}
	st := &streamState{cfg: cfg, now: time.Now, tables: newTableCache(cfg, nil, nil, slog.New(slog.DiscardHandler)),
		metrics: metrics.NewStream(cfg.Name)}
	st.txm = source.NewTxMonitor(cfg.Topics.TransactionTopic(), restored)
	return st
}

func txTestTable(name string) *table {
	row := &schema.Schema{Type: schema.StructT, Optional: true, Name: "p.public." + name + ".Value",
		Fields: []schema.Field{{Name: "id", Schema: &schema.Schema{Type: schema.Int32}}}}
	key := &schema.Schema{Type: schema.StructT, Name: "p.public." + name + ".Key", Fields: row.Fields}
	return &table{schemaName: "public", name: name, topic: "p.public." + name, rowSchema: row, keySchema: key,
		envelope: schema.EnvelopeSchema("p.public."+name+".Envelope", row, schema.PostgresSourceSchema())}
}

func (st *streamState) feed(t *testing.T, steps []txStep) {
	t.Helper()
	tables := map[string]*table{}
	commitTime := time.UnixMilli(1_700_000_000_123)
	for _, s := range steps {
		switch s.kind {
		case "begin":
			st.inTx, st.xid, st.commitTime, st.events = true, s.xid, commitTime, st.events[:0]
			st.txBegin(s.lsn)
		case "change":
			tb := tables[s.table]
			if tb == nil {
				tb = txTestTable(s.table)
				tables[s.table] = tb
			}
			row := schema.NewStruct(tb.rowSchema).Set("id", int32(1))
			key := schema.NewStruct(tb.keySchema).Set("id", int32(1))
			src := st.sourceInfo(s.lsn, tb.schemaName, tb.name, true)
			switch s.op {
			case "k":
				newKey := schema.NewStruct(tb.keySchema).Set("id", int32(2))
				st.keyChange(tb, key, newKey, row, row, src)
			case "d":
				st.emit(tb.event(key, st.envelope(tb, "d", row, nil, src)), tb.event(key, nil))
			default:
				st.emit(tb.event(key, st.envelope(tb, s.op, nil, row, src)))
			}
		case "message":
			if err := st.message(s.lsn, &pglogrepl.LogicalDecodingMessage{Transactional: true, Prefix: "x", Content: []byte("c")}); err != nil {
				t.Fatal(err)
			}
		case "commit":
			st.commit(s.lsn)
		}
	}
}

// compact renders a batch's events: "BEGIN id", "END id n [collection:n …]", or "topic op id total/order"
// ("-" for an event without a transaction block), "tombstone" for a tombstone.
func compact(evs []source.Event) []string {
	var out []string
	for _, ev := range evs {
		v, _ := ev.Value.(*schema.Struct)
		switch {
		case v == nil:
			out = append(out, "tombstone")
		case v.Schema == schema.TransactionValueSchema():
			s := fmt.Sprintf("%s %s", v.Get("status"), v.Get("id"))
			if v.Get("status") == "END" {
				var dc, messages []string // a message's place is random, as its name is: listed last
				for _, c := range v.Get("data_collections").([]any) {
					c := c.(*schema.Struct)
					name := c.Get("data_collection").(string)
					if strings.HasPrefix(name, messageCollectionPrefix) {
						messages = append(messages, fmt.Sprintf("message:%d", c.Get("event_count")))
						continue
					}
					dc = append(dc, fmt.Sprintf("%s:%d", name, c.Get("event_count")))
				}
				dc = append(dc, messages...)
				s += fmt.Sprintf(" %d [%s]", v.Get("event_count"), strings.Join(dc, " "))
			}
			if key := ev.Key.(*schema.Struct); key.Get("id") != v.Get("id") || ev.Topic != "p.transaction" {
				s += " (bad key or topic)"
			}
			out = append(out, s)
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
	for _, tc := range []struct {
		name  string
		steps []txStep
		want  []string
	}{{
		name: "one table",
		steps: []txStep{{kind: "begin", xid: 7, lsn: 100}, {kind: "change", table: "a", op: "c", lsn: 100},
			{kind: "change", table: "a", op: "u", lsn: 110}, {kind: "commit", lsn: 200}},
		want: []string{"BEGIN 7:100", "p.public.a c 7:100 1/1", "p.public.a u 7:110 2/2", "END 7:200 2 [public.a:2]"},
	}, {
		// Counters per data collection; END lists them in Java's HashMap order (full_identity before
		// composite_pk, as in the golden), a delete's tombstone is no event, a key change counts its delete
		// and its create.
		name: "several tables",
		steps: []txStep{{kind: "begin", xid: 8, lsn: 300}, {kind: "change", table: "composite_pk", op: "c", lsn: 300},
			{kind: "change", table: "full_identity", op: "d", lsn: 310}, {kind: "change", table: "composite_pk", op: "k", lsn: 320},
			{kind: "commit", lsn: 400}},
		want: []string{"BEGIN 8:300", "p.public.composite_pk c 8:300 1/1", "p.public.full_identity d 8:310 2/1", "tombstone",
			"p.public.composite_pk d 8:320 3/2", "tombstone", "p.public.composite_pk c 8:320 4/3",
			"END 8:400 4 [public.full_identity:1 public.composite_pk:3]"},
	}, {
		// A transactional message is counted under a collection of its own, as Debezium's
		// LogicalDecodingMessageId without toString is.
		name: "message",
		steps: []txStep{{kind: "begin", xid: 9, lsn: 500}, {kind: "change", table: "a", op: "c", lsn: 500},
			{kind: "message", lsn: 510}, {kind: "commit", lsn: 600}},
		want: []string{"BEGIN 9:500", "p.public.a c 9:500 1/1", "p.message m 9:510 2/1", "END 9:600 2 [public.a:1 message:1]"},
	}, {
		// Rows an incremental snapshot emits inside a transaction are no events of it, as in Debezium,
		// which dispatches them as snapshot records.
		name: "snapshot row",
		steps: []txStep{{kind: "begin", xid: 11, lsn: 900}, {kind: "change", table: "a", op: "r", lsn: 900},
			{kind: "commit", lsn: 950}},
		want: []string{"BEGIN 11:900", "p.public.a r -", "END 11:950 0 []"},
	}, {
		// pgoutput sends transactions whose changes are all filtered or skipped (a skipped TRUNCATE):
		// Debezium writes their BEGIN and an END with no events.
		name:  "no captured change",
		steps: []txStep{{kind: "begin", xid: 10, lsn: 700}, {kind: "commit", lsn: 800}},
		want:  []string{"BEGIN 10:700", "END 10:800 0 []"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			st := txTestState(t, nil)
			st.feed(t, tc.steps)
			if len(st.ready) != 1 {
				t.Fatalf("%d batches, want 1", len(st.ready))
			}
			if got := compact(st.ready[0].Events); !slices.Equal(got, tc.want) {
				t.Errorf("events\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestTransactionMetadataOffset: the commit's offset carries what Debezium's END record's offset does, the
// bare xid and the counters; a heartbeat's carries none.
func TestTransactionMetadataOffset(t *testing.T) {
	st := txTestState(t, nil)
	st.feed(t, []txStep{{kind: "begin", xid: 7, lsn: 100}, {kind: "change", table: "composite_pk", op: "c", lsn: 100},
		{kind: "change", table: "full_identity", op: "c", lsn: 110}, {kind: "commit", lsn: 200}})
	got := st.ready[0].Offset[len(st.ready[0].Offset)-3:]
	want := []source.OffsetField{{Name: "transaction_id", Value: "7"},
		{Name: "transaction_data_collection_order_public.full_identity", Value: int64(1)},
		{Name: "transaction_data_collection_order_public.composite_pk", Value: int64(1)}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("offset ends with %v, want %v", got, want)
	}
	if err := st.heartbeat(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, f := range st.ready[1].Offset {
		if strings.HasPrefix(f.Name, "transaction_") {
			t.Errorf("heartbeat offset has %s", f.Name)
		}
	}
}

// TestTransactionMetadataRestored: a transaction Debezium's offset was written inside is read again from
// its BEGIN; it keeps the restored counters and gets no second BEGIN, as in Debezium.
func TestTransactionMetadataRestored(t *testing.T) {
	m, err := ParseOffset(map[string]any{"lsn": float64(100), "lsn_proc": float64(110), "messageType": "INSERT",
		"transaction_id": "7", "transaction_data_collection_order_public.a": float64(2)})
	if err != nil {
		t.Fatal(err)
	}
	st := txTestState(t, m.Transaction)
	st.feed(t, []txStep{{kind: "begin", xid: 7, lsn: 90}, {kind: "change", table: "a", op: "c", lsn: 120}, {kind: "commit", lsn: 200}})
	want := []string{"p.public.a c 7:120 3/3", "END 7:200 3 [public.a:3]"}
	if got := compact(st.ready[0].Events); !slices.Equal(got, want) {
		t.Errorf("events\n got %q\nwant %q", got, want)
	}
	// The next transaction is a new one.
	st.feed(t, []txStep{{kind: "begin", xid: 8, lsn: 300}, {kind: "commit", lsn: 400}})
	if got := compact(st.ready[1].Events); !slices.Equal(got, []string{"BEGIN 8:300", "END 8:400 0 []"}) {
		t.Errorf("next transaction: %q", got)
	}
}

// TestTransactionMetadataSplit: a transaction larger than one batch keeps BEGIN in its first part and END
// in its last, the only part with an offset.
func TestTransactionMetadataSplit(t *testing.T) {
	st := txTestState(t, nil)
	steps := []txStep{{kind: "begin", xid: 7, lsn: 100}}
	for i := range maxBatchEvents + 10 {
		steps = append(steps, txStep{kind: "change", table: "a", op: "c", lsn: LSN(100 + i)})
	}
	st.feed(t, append(steps, txStep{kind: "commit", lsn: 5000}))
	if len(st.ready) != 2 {
		t.Fatalf("%d batches, want 2", len(st.ready))
	}
	first, last := compact(st.ready[0].Events), compact(st.ready[1].Events)
	if first[0] != "BEGIN 7:100" || st.ready[0].Offset != nil {
		t.Errorf("first part starts with %q, offset %v", first[0], st.ready[0].Offset)
	}
	total := maxBatchEvents + 10
	if got, want := last[len(last)-1], fmt.Sprintf("END 7:5000 %d [public.a:%d]", total, total); got != want || st.ready[1].Offset == nil {
		t.Errorf("last part ends with %q, want %q (offset %v)", got, want, st.ready[1].Offset)
	}
	if got, want := last[len(last)-2], fmt.Sprintf("p.public.a c 7:%d %d/%d", 100+total-1, total, total); got != want {
		t.Errorf("last event %q, want %q", got, want)
	}
}

// TestTransactionMetadataAfterReconnect: a transaction half read when the connection was lost comes again
// from its BEGIN, which gets its BEGIN record and counts from one again.
func TestTransactionMetadataAfterReconnect(t *testing.T) {
	st := txTestState(t, nil)
	st.feed(t, []txStep{{kind: "begin", xid: 7, lsn: 100}, {kind: "change", table: "a", op: "c", lsn: 100}})
	st.resetAfterReconnect()
	st.feed(t, []txStep{{kind: "begin", xid: 7, lsn: 100}, {kind: "change", table: "a", op: "c", lsn: 100}, {kind: "commit", lsn: 200}})
	want := []string{"BEGIN 7:100", "p.public.a c 7:100 1/1", "END 7:200 1 [public.a:1]"}
	if got := compact(st.ready[0].Events); !slices.Equal(got, want) {
		t.Errorf("events\n got %q\nwant %q", got, want)
	}
}

// TestTransactionMetadataConfig: provide.transaction.metadata and topic.transaction are read;
// transaction.metadata.factory is refused unless it names Debezium's default.
func TestTransactionMetadataConfig(t *testing.T) {
	base := map[string]string{"database.hostname": "h", "database.user": "u", "database.dbname": "d",
		"topic.prefix": "shop", "plugin.name": "pgoutput"}
	with := func(kv ...string) map[string]string {
		m := maps.Clone(base)
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	cfg, err := ParseConfig("c", with("provide.transaction.metadata", "true", "topic.transaction", "tx"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.ProvideTxMetadata || cfg.Topics.TransactionTopic() != "shop.tx" {
		t.Errorf("ProvideTxMetadata %v, topic %s; want true, shop.tx", cfg.ProvideTxMetadata, cfg.Topics.TransactionTopic())
	}
	if _, err := ParseConfig("c", with("transaction.metadata.factory", "io.debezium.pipeline.txmetadata.DefaultTransactionMetadataFactory"), slog.New(slog.DiscardHandler)); err != nil {
		t.Errorf("the default factory: %v", err)
	}
	if _, err := ParseConfig("c", with("transaction.metadata.factory", "com.example.Factory"), slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "transaction.metadata.factory") {
		t.Errorf("a custom factory: %v, want a refusal naming the key", err)
	}
}

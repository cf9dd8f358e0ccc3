package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdcd/cdcd/e2e/capture"
)

// jsonWorker is the standalone worker writing JSON with schemas.
func (b *mariadbBed) jsonWorker() map[string]string {
	return workerProps(b.brokers, filepath.Join(b.dir, "offsets.dat"))
}

// readUntil reads every topic under the bed's prefix until done says the records are complete, failing
// the test after a minute.
func (b *mariadbBed) readUntil(done func([]capture.Record) bool) []capture.Record {
	b.t.Helper()
	sel := capture.Selection{Prefix: b.prefix}
	var recs []capture.Record
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		var err error
		if recs, err = b.broker.Read(b.ctx, sel); err != nil {
			b.t.Fatal(err)
		}
		if done(recs) {
			return recs
		}
	}
	b.t.Fatalf("the records under %s were not complete after a minute; topics: %v", b.prefix, topicCounts(recs))
	return nil
}

func topicCounts(recs []capture.Record) map[string]int {
	counts := map[string]int{}
	for _, r := range recs {
		counts[r.Topic]++
	}
	return counts
}

// jsonDoc is a JsonConverter document with schemas enabled.
type jsonDoc struct {
	Schema struct {
		Name   string `json:"name"`
		Type   string `json:"type"`
		Fields []struct {
			Field    string `json:"field"`
			Type     string `json:"type"`
			Optional bool   `json:"optional"`
		} `json:"fields"`
	} `json:"schema"`
	Payload json.RawMessage `json:"payload"`
}

func parseJSONDoc(t *testing.T, what string, b []byte) jsonDoc {
	t.Helper()
	var doc jsonDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s is not a JsonConverter document: %v: %s", what, err, b)
	}
	return doc
}

// payloadMap decodes the document's payload as an object, numbers kept exact.
func (d jsonDoc) payloadMap(t *testing.T) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(d.Payload)))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("payload %s: %v", d.Payload, err)
	}
	return m
}

// header is the value of the record's only header named key (nil for a null value).
func header(t *testing.T, r capture.Record, key string) capture.Bytes {
	t.Helper()
	var values []capture.Bytes
	for _, h := range r.Headers {
		if h.Key == key {
			values = append(values, h.Value)
		}
	}
	if len(values) != 1 {
		t.Errorf("%s@%d has headers %q = %q, want exactly one", r.Topic, r.Offset, key, values)
		return nil
	}
	return values[0]
}

// outboxEvent is one row the application writes to the outbox table.
type outboxEvent struct{ id, aggregateType, aggregateID, typ, payload string }

// The outbox rows of outboxBed.run, by the transaction that writes them.
var (
	orderCreated1 = outboxEvent{"6f1c0a8e-0000-4000-8000-000000000001", "order", "o-1", "OrderCreated", `{"id": 1, "total": 9.5}`}
	orderCreated2 = outboxEvent{"6f1c0a8e-0000-4000-8000-000000000002", "order", "o-2", "OrderCreated", `{"id": 2, "total": 20}`}
	customerReg   = outboxEvent{"6f1c0a8e-0000-4000-8000-000000000003", "customer", "c-7", "CustomerRegistered", `{"name": "Ada"}`}
	orderPaid     = outboxEvent{"6f1c0a8e-0000-4000-8000-000000000004", "order", "o-1", "OrderPaid", `{"id": 1}`}
	orderShipped  = outboxEvent{"6f1c0a8e-0000-4000-8000-000000000005", "order", "o-2", "OrderShipped", `{"id": 2, "carrier": "post"}`}
)

// outboxBed is a MariaDB database with a business table and an outbox table, captured by cdcd with
// Debezium's documented outbox setup: only the outbox table, EventRouter routing to <prefix>.outbox.<type>.
type outboxBed struct {
	*mariadbBed
	routed string // the routed topics' prefix
}

func newOutboxBed(t *testing.T, ctx context.Context) *outboxBed {
	t.Helper()
	b := newMariaDBBed(t, ctx,
		"CREATE TABLE orders (id INT NOT NULL PRIMARY KEY, customer VARCHAR(20) NOT NULL, total DECIMAL(10, 2) NOT NULL)",
		`CREATE TABLE outbox (id VARCHAR(36) NOT NULL PRIMARY KEY, aggregatetype VARCHAR(255) NOT NULL,
			aggregateid VARCHAR(255) NOT NULL, type VARCHAR(255) NOT NULL, payload JSON)`)
	return &outboxBed{mariadbBed: b, routed: b.prefix + ".outbox"}
}

// connector routes outbox rows keyed by the aggregate id, with the event type as a header and the aggregate
// type beside the payload (the event id is EventRouter's "id" header).
func (b *outboxBed) connector(name string) map[string]string {
	return b.mariadbBed.connector(name, map[string]string{
		"table.include.list":                                  b.dsn.DB + ".outbox",
		"transforms":                                          "outbox",
		"transforms.outbox.type":                              "io.debezium.transforms.outbox.EventRouter",
		"transforms.outbox.table.field.event.key":             "aggregateid",
		"transforms.outbox.route.topic.replacement":           b.routed + ".${routedByValue}",
		"transforms.outbox.table.fields.additional.placement": "type:header:eventType,aggregatetype:envelope:aggregateType",
	})
}

// run plays the application's transactions, waits until the last event is routed and returns every
// record under the prefix with the events each routed topic must hold, in commit order.
func (b *outboxBed) run() ([]capture.Record, map[string][]outboxEvent) {
	b.t.Helper()
	emit := func(conn *client.Conn, e outboxEvent) {
		b.exec(conn, fmt.Sprintf("INSERT INTO outbox VALUES ('%s', '%s', '%s', '%s', '%s')",
			e.id, e.aggregateType, e.aggregateID, e.typ, e.payload))
	}
	app1, app2 := b.session(), b.session()
	// Order 1's transaction begins first but commits after order 2's.
	b.exec(app1, "BEGIN")
	b.exec(app1, "INSERT INTO orders VALUES (1, 'ada', 9.50)")
	emit(app1, orderCreated1)
	b.exec(app2, "BEGIN")
	b.exec(app2, "INSERT INTO orders VALUES (2, 'bob', 20.00)")
	emit(app2, orderCreated2)
	b.exec(app2, "COMMIT")
	b.exec(app1, "COMMIT")
	// The delete-after-insert idiom keeps the outbox table empty: two events, then their deletes.
	b.exec(app1, "BEGIN")
	emit(app1, customerReg)
	b.exec(app1, "UPDATE orders SET total = 0 WHERE id = 1")
	emit(app1, orderPaid)
	b.exec(app1, fmt.Sprintf("DELETE FROM outbox WHERE id IN ('%s', '%s')", customerReg.id, orderPaid.id))
	b.exec(app1, "COMMIT")
	// An outbox row is never updated in the pattern: EventRouter warns and routes nothing.
	b.exec(app2, fmt.Sprintf("UPDATE outbox SET type = 'Tampered' WHERE id = '%s'", orderCreated1.id))
	emit(app2, orderShipped)

	want := map[string][]outboxEvent{
		b.routed + ".order":    {orderCreated2, orderCreated1, orderPaid, orderShipped},
		b.routed + ".customer": {customerReg},
	}
	// Each routed topic is complete once it holds as many records as it should: topics are partitions of
	// their own, so the last event's arrival says nothing about another topic. The last event must be among
	// them (its id header is text in JSON and in Avro alike).
	recs := b.readUntil(func(recs []capture.Record) bool {
		for topic, events := range want {
			if len(byTopic(recs, topic)) < len(events) {
				return false
			}
		}
		for _, r := range byTopic(recs, b.routed+".order") {
			for _, h := range r.Headers {
				if h.Key == "id" && string(h.Value) == orderShipped.id {
					return true
				}
			}
		}
		return false
	})
	return recs, want
}

// routedEvent is what a consumer reads from a routed record.
type routedEvent struct {
	key, payload, aggregateType string
	fields                      int // the value's fields: payload and aggregateType, nothing else
}

// assertRouted checks that the routed topics hold exactly the wanted events, in order, each with its id
// and eventType headers, and that nothing else was written under the prefix but schema changes.
func (b *outboxBed) assertRouted(recs []capture.Record, want map[string][]outboxEvent, decode func(where string, r capture.Record) routedEvent) {
	t := b.t
	t.Helper()
	wantTopics := map[string]int{b.prefix: topicCounts(recs)[b.prefix]}
	for topic, events := range want {
		wantTopics[topic] = len(events)
	}
	if got := topicCounts(recs); !reflect.DeepEqual(got, wantTopics) {
		t.Errorf("records by topic %v, want %v (one per outbox row, nothing on the outbox table's own topic)", got, wantTopics)
	}
	for topic, events := range want {
		got := byTopic(recs, topic)
		if len(got) != len(events) {
			continue // reported above
		}
		for i, e := range events {
			r := got[i]
			where := fmt.Sprintf("%s@%d", topic, r.Offset)
			if id := string(header(t, r, "id")); id != e.id {
				t.Errorf("%s: id header %q, want %q (%s %s): events out of commit order?", where, id, e.id, e.typ, e.aggregateID)
				continue
			}
			if typ := string(header(t, r, "eventType")); typ != e.typ {
				t.Errorf("%s: eventType header %q, want %q", where, typ, e.typ)
			}
			wantEvent := routedEvent{key: e.aggregateID, payload: e.payload, aggregateType: e.aggregateType, fields: 2}
			if ev := decode(where, r); ev != wantEvent {
				t.Errorf("%s: routed %+v, want %+v", where, ev, wantEvent)
			}
		}
	}
}

// TestMariaDBOutboxEventRouter runs the outbox pattern on MariaDB as Debezium documents it for MySQL:
// application transactions write business rows and outbox rows, cdcd captures only the outbox table and
// EventRouter turns each inserted outbox row into exactly one event on outbox.<aggregatetype>, keyed by
// the aggregate id, with the event id and type as headers and the aggregate type beside the payload; in
// commit order (a transaction that commits first is routed first though it began later). The deletes of
// the delete-after-insert idiom and an update of an outbox row route nothing, and the schema change
// records, which are no change events, pass the router unchanged.
func TestMariaDBOutboxEventRouter(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := newOutboxBed(t, ctx)
	b.start(b.jsonWorker(), b.connector("mdb-outbox"))
	recs, want := b.run()
	b.assertRouted(recs, want, func(where string, r capture.Record) routedEvent {
		key := parseJSONDoc(t, where+" key", r.Key)
		var keyString string
		if key.Schema.Type != "string" || json.Unmarshal(key.Payload, &keyString) != nil {
			t.Errorf("%s: key %s, want a string", where, r.Key)
		}
		value := parseJSONDoc(t, where+" value", r.Value)
		v := value.payloadMap(t)
		if name := b.prefix + "." + b.dsn.DB + ".outbox.order.Value"; value.Schema.Name != name {
			// Debezium names every value schema after the first routed event's aggregate type.
			t.Errorf("%s: value schema %q, want %q", where, value.Schema.Name, name)
		}
		payload, _ := v["payload"].(string)
		aggregateType, _ := v["aggregateType"].(string)
		return routedEvent{key: keyString, payload: payload, aggregateType: aggregateType, fields: len(v)}
	})
	assertSchemaChangesPassed(t, b.mariadbBed, recs, "CREATE TABLE `outbox`")
}

// TestMariaDBOutboxEventRouterAvro runs the same outbox workload with Confluent's AvroConverter against the
// real registry: a consumer decoding with the registry's schemas sees the same events, the key a bare Avro
// string, and every routed subject has one version.
func TestMariaDBOutboxEventRouterAvro(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	reg := newRecordingProxy(t, realRegistry(t))
	b := newOutboxBed(t, ctx)
	b.start(b.avroWorker(reg.url), b.connector("mdb-outbox-avro"))
	recs, want := b.run()
	b.assertRouted(recs, want, func(where string, r capture.Record) routedEvent {
		keyID, valueID := assertWireFormat(t, &kgo.Record{Key: r.Key, Value: r.Value, Offset: r.Offset})
		var key string
		if err := avro.Unmarshal(avro.MustParse(reg.schemaByID(t, keyID)), r.Key[5:], &key); err != nil {
			t.Errorf("%s: key is not an Avro string: %v", where, err)
		}
		v := decodeAvro(t, reg.schemaByID(t, valueID), r.Value)
		payload, _ := unionValue(v["payload"]).(string)
		aggregateType, _ := v["aggregateType"].(string)
		return routedEvent{key: key, payload: payload, aggregateType: aggregateType, fields: len(v)}
	})
	for topic := range want {
		for _, subject := range []string{topic + "-key", topic + "-value"} {
			if vs := reg.versions(t, subject); len(vs) != 1 {
				t.Errorf("%s has versions %v, want one", subject, vs)
			}
		}
	}
	findSchemaChange(t, b.mariadbBed, reg, "CREATE TABLE `outbox`")
}

// assertSchemaChangesPassed checks that the schema change topic holds Debezium's schema change documents,
// untouched by the connector's transforms, among them the one whose DDL starts with ddlPrefix.
func assertSchemaChangesPassed(t *testing.T, b *mariadbBed, recs []capture.Record, ddlPrefix string) {
	t.Helper()
	var ddls []string
	for _, r := range byTopic(recs, b.prefix) {
		value := parseJSONDoc(t, "schema change", r.Value)
		if value.Schema.Name != "io.debezium.connector.mariadb.SchemaChangeValue" {
			t.Errorf("schema change record %d has value schema %q", r.Offset, value.Schema.Name)
		}
		ddl, _ := value.payloadMap(t)["ddl"].(string)
		if strings.HasPrefix(ddl, ddlPrefix) {
			return
		}
		ddls = append(ddls, ddl)
	}
	t.Errorf("no schema change starts with %q; DDL seen:\n%s", ddlPrefix, strings.Join(ddls, "\n"))
}

// TestMariaDBUnwrapRewritesDeletes runs ExtractNewRecordState on MariaDB change events with
// delete.tombstone.handling.mode=rewrite and add.fields=op,table,source.ts_ms: every record is the flat row
// state plus __deleted, __op, __table and __source_ts_ms; a delete becomes its before image marked
// __deleted=true and its tombstone is dropped; keys are unchanged; schema change records pass unchanged.
// add.headers=db,gtid copies MariaDB's source fields to headers: the GTID is null in the snapshot.
func TestMariaDBUnwrapRewritesDeletes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := newMariaDBBed(t, ctx, "CREATE TABLE items (id INT NOT NULL PRIMARY KEY, name VARCHAR(20), qty INT)",
		"INSERT INTO items VALUES (1, 'one', 1)")
	topic := b.prefix + "." + b.dsn.DB + ".items"
	b.start(b.jsonWorker(), b.connector("mdb-unwrap", map[string]string{
		"transforms":             "unwrap",
		"transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
		"transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
		"transforms.unwrap.add.fields":                     "op,table,source.ts_ms",
		"transforms.unwrap.add.headers":                    "db,gtid",
	}))
	for _, sql := range []string{
		"INSERT INTO items VALUES (2, 'two', 2)",
		"UPDATE items SET qty = 20 WHERE id = 2",
		"DELETE FROM items WHERE id = 1",
		"INSERT INTO items VALUES (3, 'three', 3)", // the last change: the delete's tombstone would precede it
	} {
		b.exec(b.db, sql)
	}
	recs := b.readUntil(func(recs []capture.Record) bool {
		got := byTopic(recs, topic)
		return len(got) > 0 && strings.Contains(string(got[len(got)-1].Value), "three")
	})
	got := byTopic(recs, topic)
	want := []struct {
		id          int
		name        string
		qty         int
		deleted, op string
	}{
		{1, "one", 1, "false", "r"},
		{2, "two", 2, "false", "c"},
		{2, "two", 20, "false", "u"},
		{1, "one", 1, "true", "d"},
		{3, "three", 3, "false", "c"},
	}
	if len(got) != len(want) {
		t.Fatalf("%s holds %d records, want %d (no tombstone after the rewritten delete)", topic, len(got), len(want))
	}
	wantFields := []string{"id:int32", "name:string?", "qty:int32?", "__deleted:string?", "__op:string?",
		"__table:string?", "__source_ts_ms:int64?"}
	for i, w := range want {
		where := fmt.Sprintf("%s@%d", topic, got[i].Offset)
		key := parseJSONDoc(t, where+" key", got[i].Key)
		if string(key.Payload) != fmt.Sprintf(`{"id":%d}`, w.id) || key.Schema.Name != topic+".Key" {
			t.Errorf("%s: key %s, want %s.Key with id %d", where, got[i].Key, topic, w.id)
		}
		value := parseJSONDoc(t, where+" value", got[i].Value)
		var fields []string
		for _, f := range value.Schema.Fields {
			optional := ""
			if f.Optional {
				optional = "?"
			}
			fields = append(fields, f.Field+":"+f.Type+optional)
		}
		if value.Schema.Name != topic+".Value" || !slices.Equal(fields, wantFields) {
			t.Errorf("%s: value schema %s %v, want %s.Value %v", where, value.Schema.Name, fields, topic, wantFields)
		}
		row := value.payloadMap(t)
		// A binlog event's time has whole seconds: a streamed change's __source_ts_ms is the source block's
		// ts_ms, not the envelope's (the time cdcd processed it, in milliseconds).
		sourceTS, _ := row["__source_ts_ms"].(json.Number)
		if ts, err := sourceTS.Int64(); err != nil || ts <= 0 || (w.op != "r" && ts%1000 != 0) {
			t.Errorf("%s: __source_ts_ms %v, want the source block's ts_ms", where, row["__source_ts_ms"])
		}
		delete(row, "__source_ts_ms")
		wantRow := map[string]any{"id": json.Number(fmt.Sprint(w.id)), "name": w.name, "qty": json.Number(fmt.Sprint(w.qty)),
			"__deleted": w.deleted, "__op": w.op, "__table": "items"}
		if !reflect.DeepEqual(row, wantRow) {
			t.Errorf("%s: row %v, want %v", where, row, wantRow)
		}
		if db := string(header(t, got[i], "__db")); db != b.dsn.DB {
			t.Errorf("%s: __db header %q, want %q", where, db, b.dsn.DB)
		}
		gtid := header(t, got[i], "__gtid")
		if w.op == "r" && gtid != nil || w.op != "r" && !mariadbGTID.Match(gtid) {
			t.Errorf("%s: __gtid header %q, want null in the snapshot and a MariaDB GTID (domain-server-sequence) after", where, gtid)
		}
	}
	assertSchemaChangesPassed(t, b, recs, "CREATE TABLE `items`")
}

var mariadbGTID = regexp.MustCompile(`^[0-9]+-[0-9]+-[0-9]+$`)

// TestMariaDBRouterMergesShards merges two MariaDB shard tables with the same primary keys into one topic
// with ByLogicalTableRouter: keys are kept apart by the physical table's topic, the key and envelope schemas
// are renamed after the logical topic, the source block still names the physical table, a delete's
// tombstone is routed with it, and nothing is left on the physical topics.
func TestMariaDBRouterMergesShards(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := newMariaDBBed(t, ctx,
		"CREATE TABLE orders_1 (id INT NOT NULL PRIMARY KEY, note VARCHAR(20))",
		"CREATE TABLE orders_2 (id INT NOT NULL PRIMARY KEY, note VARCHAR(20))")
	logical := b.prefix + ".orders"
	b.start(b.jsonWorker(), b.connector("mdb-router", map[string]string{
		"transforms":                          "shards",
		"transforms.shards.type":              "io.debezium.transforms.ByLogicalTableRouter",
		"transforms.shards.topic.regex":       strings.ReplaceAll(b.prefix+"."+b.dsn.DB, ".", `\.`) + `\.orders_[0-9]+`,
		"transforms.shards.topic.replacement": logical,
	}))
	for _, sql := range []string{
		"INSERT INTO orders_1 VALUES (1, 'first shard')",
		"INSERT INTO orders_2 VALUES (1, 'second shard')",
		"DELETE FROM orders_1 WHERE id = 1",
	} {
		b.exec(b.db, sql)
	}
	recs := b.readUntil(func(recs []capture.Record) bool { return len(byTopic(recs, logical)) >= 4 })
	shard := func(n int) string { return fmt.Sprintf("%s.%s.orders_%d", b.prefix, b.dsn.DB, n) }
	want := []struct {
		table, op string // op "" for the tombstone
	}{{shard(1), "c"}, {shard(2), "c"}, {shard(1), "d"}, {shard(1), ""}}
	orders := byTopic(recs, logical)
	if len(orders) != len(want) {
		t.Fatalf("%s has %d records, want %d (2 inserts, a delete and its tombstone)", logical, len(orders), len(want))
	}
	for i, w := range want {
		where := fmt.Sprintf("%s@%d", logical, orders[i].Offset)
		key := parseJSONDoc(t, where+" key", orders[i].Key)
		k := key.payloadMap(t)
		if key.Schema.Name != logical+".Key" || k["id"] != json.Number("1") || k["__dbz__physicalTableIdentifier"] != w.table {
			t.Errorf("%s: key %s, want %s.Key with id 1 from %s", where, orders[i].Key, logical, w.table)
		}
		if w.op == "" {
			if orders[i].Value != nil {
				t.Errorf("%s = %s, want the tombstone", where, orders[i].Value)
			}
			continue
		}
		value := parseJSONDoc(t, where+" value", orders[i].Value)
		var envelope struct {
			Op     string `json:"op"`
			Source struct {
				DB    string `json:"db"`
				Table string `json:"table"`
			} `json:"source"`
		}
		if err := json.Unmarshal(value.Payload, &envelope); err != nil {
			t.Fatal(err)
		}
		table := w.table[strings.LastIndexByte(w.table, '.')+1:]
		if value.Schema.Name != logical+".Envelope" || envelope.Op != w.op || envelope.Source.DB != b.dsn.DB || envelope.Source.Table != table {
			t.Errorf("%s: value schema %q op %q source %s.%s, want %s.Envelope op %s from %s.%s",
				where, value.Schema.Name, envelope.Op, envelope.Source.DB, envelope.Source.Table, logical, w.op, b.dsn.DB, table)
		}
	}
	for n := 1; n <= 2; n++ {
		if left := byTopic(recs, shard(n)); len(left) != 0 {
			t.Errorf("%d records stayed on the physical topic %s", len(left), shard(n))
		}
	}
}

// TestMariaDBRouterRenamesHeartbeats routes the MariaDB connector's heartbeats with ByLogicalTableRouter
// and key.enforce.uniqueness=false: they land on the renamed topic, their key renamed after it and holding
// only serverName, and nothing is left on __debezium-heartbeat.<prefix>.
func TestMariaDBRouterRenamesHeartbeats(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := newMariaDBBed(t, ctx, "CREATE TABLE beat (id INT NOT NULL PRIMARY KEY)")
	beats, heartbeatTopic := b.prefix+".beats", "__debezium-heartbeat."+b.prefix
	b.start(b.jsonWorker(), b.connector("mdb-beats", map[string]string{
		"heartbeat.interval.ms":                   "200",
		"transforms":                              "beats",
		"transforms.beats.type":                   "io.debezium.transforms.ByLogicalTableRouter",
		"transforms.beats.topic.regex":            `__debezium-heartbeat\.(.*)`,
		"transforms.beats.topic.replacement":      "$1.beats",
		"transforms.beats.key.enforce.uniqueness": "false",
	}))
	// Binlog events give the connector its occasions to beat; space them beyond the interval.
	for id := 1; id <= 3; id++ {
		b.exec(b.db, fmt.Sprintf("INSERT INTO beat VALUES (%d)", id))
		time.Sleep(500 * time.Millisecond)
	}
	recs := b.readUntil(func(recs []capture.Record) bool { return len(byTopic(recs, beats)) > 0 })
	key := parseJSONDoc(t, "heartbeat key", byTopic(recs, beats)[0].Key)
	if k := key.payloadMap(t); key.Schema.Name != beats+".Key" || len(k) != 1 || k["serverName"] != b.prefix {
		t.Errorf("heartbeat key = %s, want %s.Key holding only serverName %s", byTopic(recs, beats)[0].Key, beats, b.prefix)
	}
	if left := b.readAll(heartbeatTopic); len(left) != 0 {
		t.Errorf("%d heartbeats stayed on %s", len(left), heartbeatTopic)
	}
}

package e2e

import (
	"bytes"
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// mariadbBed is a fresh database of one of the test bed's binlog servers (MariaDB unless made by
// newBinlogBed), a session on it and a directory for the cdcd configuration that captures it under a
// topic prefix of the test's own.
type mariadbBed struct {
	t       *testing.T
	ctx     context.Context
	server  binlogServer
	dsn     testenv.MySQLDSN
	db      *client.Conn
	brokers []string
	broker  *capture.Broker
	prefix  string
	dir     string
	netns   string // the network namespace start runs cdcd in (none: the test's own)
}

// binlogServer is a server of the test bed that the binlog connector reads: the tests written for one
// run on the other by naming it.
type binlogServer struct {
	name           string // e2e/services.sh's service
	connectorClass string
	newDatabase    func(testing.TB) string // testenv's: a database of the test's own, its root DSN
	user, password string                  // the capture account
}

var (
	mariadbServer = binlogServer{name: "mariadb", connectorClass: "io.debezium.connector.mariadb.MariaDbConnector",
		newDatabase: testenv.NewMariaDB, user: testenv.MariaDBCaptureUser, password: testenv.MariaDBCapturePassword}
	mysqlServer = binlogServer{name: "mysql", connectorClass: "io.debezium.connector.mysql.MySqlConnector",
		newDatabase: testenv.NewMySQL, user: testenv.MySQLCaptureUser, password: testenv.MySQLCapturePassword}
)

// newMariaDBBed creates the database on MariaDB and runs ddl in it.
func newMariaDBBed(t *testing.T, ctx context.Context, ddl ...string) *mariadbBed {
	t.Helper()
	return newBinlogBed(t, ctx, mariadbServer, ddl...)
}

// newBinlogBed creates the database on server and runs ddl in it.
func newBinlogBed(t *testing.T, ctx context.Context, server binlogServer, ddl ...string) *mariadbBed {
	t.Helper()
	dsn, err := testenv.ParseMySQLDSN(server.newDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	b := &mariadbBed{t: t, ctx: ctx, server: server, dsn: dsn, brokers: testenv.Kafka(t), prefix: testenv.NewTopicPrefix(t), dir: t.TempDir()}
	b.db = b.session()
	if b.broker, err = capture.NewBroker(b.brokers); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.broker.Close)
	for _, sql := range ddl {
		b.exec(b.db, sql)
	}
	return b
}

// session opens a connection to the bed's database that sends UTF-8 and whose time zone is UTC, so
// TIMESTAMP literals name UTC instants whatever the server's zone.
func (b *mariadbBed) session() *client.Conn {
	b.t.Helper()
	conn, err := client.Connect(b.dsn.Addr, b.dsn.User, b.dsn.Password, b.dsn.DB)
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() { conn.Close() })
	b.exec(conn, "SET NAMES utf8mb4")
	b.exec(conn, "SET time_zone = '+00:00'")
	return conn
}

func (b *mariadbBed) exec(conn *client.Conn, sql string) {
	b.t.Helper()
	if _, err := conn.Execute(sql); err != nil {
		b.t.Fatalf("%s: %v", sql, err)
	}
}

// connector is the MariaDB connector config for the bed's database, with extra settings on top.
func (b *mariadbBed) connector(name string, extra map[string]string) map[string]string {
	b.t.Helper()
	conn := binlogConnector(b.server, b.dsn, b.brokers, name, b.prefix)
	for k, v := range extra {
		conn[k] = v
	}
	return conn
}

// avroWorker is the standalone worker with Confluent's AvroConverter on both sides, against registryURL.
func (b *mariadbBed) avroWorker(registryURL string) map[string]string {
	worker := workerProps(b.brokers, filepath.Join(b.dir, "offsets.dat"))
	for _, side := range []string{"key", "value"} {
		worker[side+".converter"] = "io.confluent.connect.avro.AvroConverter"
		worker[side+".converter.schema.registry.url"] = registryURL
	}
	return worker
}

// start runs cdcd with the worker and connector configs and returns once the snapshot has emitted the
// table's CREATE TABLE to the schema change topic: its binlog position is fixed by then, so whatever
// commits from now on is streamed. (An Avro string is its UTF-8 bytes, so the text is found in Avro too.)
func (b *mariadbBed) start(worker, conn map[string]string) *cdcdProcess {
	b.t.Helper()
	workerPath, connPath := filepath.Join(b.dir, "worker.properties"), filepath.Join(b.dir, "mariadb.properties")
	writeProperties(b.t, workerPath, worker)
	writeProperties(b.t, connPath, conn)
	p := startCdcdIn(b.t, b.netns, workerPath, connPath)
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		if p.exited() {
			b.t.Fatalf("cdcd exited before streaming; log:\n%s", tail(p.log.String(), 4000))
		}
		if b.schemaChangeContains("CREATE TABLE") {
			return p
		}
	}
	b.t.Fatalf("no CREATE TABLE on schema change topic %s within 2 minutes", b.prefix)
	return nil
}

func (b *mariadbBed) schemaChangeContains(text string) bool {
	b.t.Helper()
	for _, r := range b.readAll(b.prefix) {
		if strings.Contains(string(r.Value), text) {
			return true
		}
	}
	return false
}

// readAll returns the records topic holds now, none while it does not exist.
func (b *mariadbBed) readAll(topic string) []capture.Record {
	b.t.Helper()
	sel := capture.Selection{Topics: []string{topic}}
	existing, err := b.broker.Topics(b.ctx, sel)
	if err != nil {
		b.t.Fatal(err)
	}
	if len(existing) == 0 {
		return nil
	}
	recs, err := b.broker.Read(b.ctx, sel)
	if err != nil {
		b.t.Fatal(err)
	}
	return recs
}

// read returns every record of topic once it holds at least n, failing the test after a minute.
func (b *mariadbBed) read(topic string, n int) []capture.Record {
	b.t.Helper()
	var recs []capture.Record
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		if recs = b.readAll(topic); len(recs) >= n {
			return recs
		}
	}
	b.t.Fatalf("%s holds %d records after a minute, want %d", topic, len(recs), n)
	return nil
}

// avroRecord is a record decoded as a Confluent consumer decodes it: schema ids from the wire format,
// writer schemas fetched from the registry by id.
type avroRecord struct {
	keyID, valueID int
	changeEvent
}

func decodeAvroRecord(t *testing.T, reg *recordingProxy, r capture.Record) avroRecord {
	t.Helper()
	keyID, valueID := assertWireFormat(t, &kgo.Record{Key: r.Key, Value: r.Value, Offset: r.Offset})
	return avroRecord{keyID: keyID, valueID: valueID, changeEvent: changeEvent{
		key:   decodeAvro(t, reg.schemaByID(t, keyID), r.Key),
		value: decodeAvro(t, reg.schemaByID(t, valueID), r.Value),
	}}
}

// kindsDDL has a column for each of a representative set of MariaDB types, each mapped its own way.
const kindsDDL = `CREATE TABLE kinds (
	id INT NOT NULL PRIMARY KEY,
	i8 TINYINT, u8 TINYINT UNSIGNED, u16 SMALLINT UNSIGNED, i32 INT, u32 INT UNSIGNED,
	i64 BIGINT, u64 BIGINT UNSIGNED, price DECIMAL(10, 2), ratio DOUBLE,
	name VARCHAR(64), dt3 DATETIME(3), dt6 DATETIME(6), ts6 TIMESTAMP(6) NULL, born DATE,
	size ENUM('small', 'medium', 'large'), tags SET('a', 'b', 'c'), doc JSON, data BLOB,
	flag BIT(1), bits BIT(10), yr YEAR
) DEFAULT CHARSET = utf8mb4`

const kindsValues = `-128, 255, 65535, -2147483648, 4294967295, -9223372036854775808, 18446744073709551615,
	1234.50, 2.5, 'héllo ✓', '2024-05-06 07:08:09.123', '2024-05-06 07:08:09.123456', '2024-05-06 07:08:09.123456',
	'2024-05-06', 'medium', 'a,c', '{"k": [1, 2], "s": "x"}', x'0001ff', b'1', b'1000000001', 2024`

// TestMariaDBAvroTypes captures a MariaDB table holding a representative set of types with Confluent's
// AvroConverter against the real registry, and decodes every record independently (hamba/avro with the
// writer schema the registry returns for the record's id): the snapshot read and the binlog give the same
// values, NULLs are nulls, updates and deletes carry their images, the schema change topic is Avro too,
// and the registry keeps exactly what cdcd registered, one version per subject.
func TestMariaDBAvroTypes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	reg := newRecordingProxy(t, realRegistry(t))
	b := newMariaDBBed(t, ctx, kindsDDL, "INSERT INTO kinds VALUES (1, "+kindsValues+")")
	topic := b.prefix + "." + b.dsn.DB + ".kinds"
	b.start(b.avroWorker(reg.url), b.connector("mdb-avro-types", nil))

	b.exec(b.db, "INSERT INTO kinds VALUES (2, "+kindsValues+")")
	b.exec(b.db, "INSERT INTO kinds (id) VALUES (3)")
	b.exec(b.db, "UPDATE kinds SET price = 0.01, size = 'small', tags = '', flag = b'0', u8 = 0 WHERE id = 2")
	b.exec(b.db, "DELETE FROM kinds WHERE id = 3")

	recs := b.read(topic, 6) // r 1, c 2, c 3, u 2, d 3 and the tombstone of 3
	if len(recs) != 6 {
		t.Fatalf("%s holds %d records, want 6", topic, len(recs))
	}
	if recs[5].Value != nil {
		t.Errorf("the record after the delete is not a tombstone: % x", recs[5].Value)
	}
	events := make([]avroRecord, 5)
	for i, r := range recs[:5] {
		events[i] = decodeAvroRecord(t, reg, r)
		if events[i].keyID != events[0].keyID || events[i].valueID != events[0].valueID {
			t.Errorf("record %d uses schema ids %d/%d, the first %d/%d: the table did not change",
				i, events[i].keyID, events[i].valueID, events[0].keyID, events[0].valueID)
		}
		if key, row := events[i].key["id"], events[i].id(t); key != row {
			t.Errorf("record %d: key id %v, row id %v", i, key, row)
		}
	}
	for i, want := range []string{"r", "c", "c", "u", "d"} {
		if op := events[i].value["op"]; op != want {
			t.Errorf("event %d: op %v, want %s", i, op, want)
		}
	}

	at := time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.UTC)
	want := map[string]any{
		"i8": -128, "u8": 255, "u16": 65535, "i32": -2147483648, "u32": int64(4294967295),
		"i64":   int64(-9223372036854775808),
		"u64":   int64(-1), // bigint.unsigned.handling.mode=long: the unsigned maximum wraps as in Debezium
		"ratio": 2.5, "name": "héllo ✓",
		"dt3":  at.Truncate(time.Millisecond).UnixMilli(), // io.debezium.time.Timestamp
		"dt6":  at.UnixMicro(),                            // io.debezium.time.MicroTimestamp
		"ts6":  "2024-05-06T07:08:09.123456Z",             // io.debezium.time.ZonedTimestamp
		"born": int(at.Unix() / 86400),                    // io.debezium.time.Date: days since the epoch
		"size": "medium", "tags": "a,c", "doc": `{"k": [1, 2], "s": "x"}`,
		"data": []byte{0x00, 0x01, 0xff}, "flag": true,
		"bits": []byte{0x01, 0x02}, // io.debezium.data.Bits: 513 as little-endian bytes
		"yr":   2024,
	}
	snapshotRow, streamedRow := events[0].row(t, "after"), events[1].row(t, "after")
	for col, v := range want {
		assertField(t, snapshotRow, col, v)
		assertField(t, streamedRow, col, v)
	}
	assertDecimal(t, snapshotRow, "price", "1234.50")
	assertDecimal(t, streamedRow, "price", "1234.50")
	delete(snapshotRow, "id")
	delete(streamedRow, "id")
	if !reflect.DeepEqual(snapshotRow, streamedRow) {
		t.Errorf("the snapshot and the binlog disagree on the same values:\nsnapshot %v\nbinlog   %v", snapshotRow, streamedRow)
	}

	// The registered schema names Debezium's semantic types as Confluent's AvroData does, so consumers can
	// interpret the plain longs, ints, strings and bytes.
	valueSchema := reg.schemaByID(t, events[0].valueID)
	for col, name := range map[string]string{
		"dt3": "io.debezium.time.Timestamp", "dt6": "io.debezium.time.MicroTimestamp",
		"ts6": "io.debezium.time.ZonedTimestamp", "born": "io.debezium.time.Date", "yr": "io.debezium.time.Year",
		"size": "io.debezium.data.Enum", "tags": "io.debezium.data.EnumSet", "bits": "io.debezium.data.Bits",
		"price": "org.apache.kafka.connect.data.Decimal",
	} {
		assertConnectName(t, valueSchema, col, name)
	}
	if price, ok := avroRowFieldType(t, valueSchema, "price").(*avro.PrimitiveSchema); !ok || price.Logical() == nil ||
		price.Logical().Type() != avro.Decimal {
		t.Errorf("price is not an Avro decimal: %v", avroRowFieldType(t, valueSchema, "price"))
	} else if dec := price.Logical().(*avro.DecimalLogicalSchema); dec.Precision() != 10 || dec.Scale() != 2 {
		t.Errorf("price is decimal(%d, %d), want decimal(10, 2)", dec.Precision(), dec.Scale())
	}

	nulls := events[2].row(t, "after")
	for col := range want {
		assertField(t, nulls, col, nil)
	}
	assertField(t, nulls, "price", nil)

	updated := events[3].row(t, "after")
	assertDecimal(t, updated, "price", "0.01")
	assertField(t, updated, "size", "small")
	assertField(t, updated, "tags", "")
	assertField(t, updated, "flag", false)
	assertField(t, updated, "u8", 0)
	assertDecimal(t, events[3].row(t, "before"), "price", "1234.50")
	assertField(t, events[4].row(t, "before"), "id", 3)
	if events[4].value["after"] != nil {
		t.Errorf("delete event has an after image: %v", events[4].value["after"])
	}

	for i, ev := range events {
		src, _ := unionValue(ev.value["source"]).(map[string]any)
		if src["connector"] != "mariadb" || src["db"] != b.dsn.DB || unionValue(src["table"]) != "kinds" {
			t.Errorf("event %d: source block %v", i, ev.value["source"])
		}
		snapshot := unionValue(src["snapshot"])
		if streamed := i > 0; streamed != (snapshot == "false") {
			t.Errorf("event %d (op %v): source.snapshot = %v", i, ev.value["op"], snapshot)
		}
	}

	create := findSchemaChange(t, b, reg, "CREATE TABLE `kinds`")
	assertTableChange(t, create, "CREATE", b.dsn.DB, "kinds",
		[]string{"id", "i8", "u8", "u16", "i32", "u32", "i64", "u64", "price", "ratio", "name", "dt3", "dt6",
			"ts6", "born", "size", "tags", "doc", "data", "flag", "bits", "yr"})

	for _, subject := range []string{topic + "-key", topic + "-value", b.prefix + "-key", b.prefix + "-value"} {
		if latest, sent := reg.latest(t, subject), reg.registered(t, subject); latest.Schema != sent {
			t.Errorf("%s: registry stored\n%s\ncdcd sent\n%s", subject, latest.Schema, sent)
		}
		if versions := reg.versions(t, subject); len(versions) != 1 {
			t.Errorf("%s has versions %v, want exactly one", subject, versions)
		}
	}
}

// findSchemaChange decodes the schema change topic and returns the value of the record whose DDL starts
// with ddlPrefix. Every record must be Avro in the wire format.
func findSchemaChange(t *testing.T, b *mariadbBed, reg *recordingProxy, ddlPrefix string) map[string]any {
	t.Helper()
	var ddls []string
	for _, r := range b.readAll(b.prefix) {
		ev := decodeAvroRecord(t, reg, r)
		ddl, _ := unionValue(ev.value["ddl"]).(string)
		if strings.HasPrefix(ddl, ddlPrefix) {
			if db := unionValue(ev.key["databaseName"]); db != b.dsn.DB {
				t.Errorf("schema change %q: key databaseName %v, want %s", ddl, db, b.dsn.DB)
			}
			return ev.value
		}
		ddls = append(ddls, ddl)
	}
	t.Fatalf("no schema change record starts with %q; DDL seen:\n%s", ddlPrefix, strings.Join(ddls, "\n"))
	return nil
}

// assertTableChange checks a schema change value that changes one table: its database, the change type,
// the table id and the column names in order.
func assertTableChange(t *testing.T, value map[string]any, typ, db, table string, columns []string) {
	t.Helper()
	if got := unionValue(value["databaseName"]); got != db {
		t.Errorf("schema change databaseName %v, want %s", got, db)
	}
	changes, _ := value["tableChanges"].([]any)
	if len(changes) != 1 {
		t.Fatalf("schema change has table changes %v, want one", value["tableChanges"])
	}
	change, _ := changes[0].(map[string]any)
	if id := `"` + db + `"."` + table + `"`; change["type"] != typ || change["id"] != id {
		t.Errorf("table change %v %v, want %s %s", change["type"], change["id"], typ, id)
	}
	tbl, _ := unionValue(change["table"]).(map[string]any)
	cols, _ := tbl["columns"].([]any)
	var names []string
	for _, c := range cols {
		col, _ := c.(map[string]any)
		name, _ := col["name"].(string)
		names = append(names, name)
	}
	if !reflect.DeepEqual(names, columns) {
		t.Errorf("table change columns %v, want %v", names, columns)
	}
}

// TestMariaDBAvroSchemaEvolution alters a captured MariaDB table while cdcd streams it in Avro to the real
// registry, which enforces BACKWARD compatibility: ADD COLUMN of columns with defaults (NOT NULL ones need
// them under BACKWARD) registers a new value version whose new fields carry the column defaults as Avro
// defaults, DROP COLUMN another; the key keeps one version; old and new records decode with their own
// writer schemas; the ALTERs reach the schema change topic in Avro; a restarted cdcd, its table rebuilt
// from the schema history, registers no further version.
func TestMariaDBAvroSchemaEvolution(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	registryURL := realRegistry(t)
	var config struct{ CompatibilityLevel string }
	reg := newRecordingProxy(t, registryURL)
	reg.get(t, "/config", &config)
	if config.CompatibilityLevel != "BACKWARD" {
		t.Fatalf("the registry's compatibility is %q, the test needs BACKWARD", config.CompatibilityLevel)
	}
	b := newMariaDBBed(t, ctx, "CREATE TABLE evo (id INT NOT NULL PRIMARY KEY, x INT, d VARCHAR(10))")
	topic := b.prefix + "." + b.dsn.DB + ".evo"
	valueSubject := topic + "-value"
	worker, conn := b.avroWorker(reg.url), b.connector("mdb-avro-evo", nil)
	p := b.start(worker, conn)

	b.exec(b.db, "INSERT INTO evo VALUES (1, 10, 'd1')")
	b.exec(b.db, `ALTER TABLE evo ADD COLUMN note VARCHAR(20) NOT NULL DEFAULT 'none',
		ADD COLUMN amount DECIMAL(6, 2) DEFAULT 1.50, ADD COLUMN level ENUM('lo', 'hi') NOT NULL DEFAULT 'hi',
		ADD COLUMN since DATETIME(3) DEFAULT '2021-01-01 00:00:00.123', ADD COLUMN flags BIT(4) DEFAULT b'1010',
		ADD COLUMN seen TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP`)
	b.exec(b.db, "INSERT INTO evo (id, x, d) VALUES (2, 20, 'd2')")
	b.exec(b.db, "INSERT INTO evo (id, x, d, note) VALUES (3, 30, 'd3', 'n3')")
	b.exec(b.db, "ALTER TABLE evo DROP COLUMN d")
	b.exec(b.db, "INSERT INTO evo (id, x, note) VALUES (4, 40, 'n4')")

	recs := b.read(topic, 4)
	events := make([]avroRecord, len(recs))
	for i, r := range recs {
		events[i] = decodeAvroRecord(t, reg, r)
	}
	if len(events) != 4 {
		t.Fatalf("%s holds %d records, want 4", topic, len(events))
	}
	v1, v2, v3 := events[0].valueID, events[1].valueID, events[3].valueID
	if v1 == v2 || v2 == v3 || v1 == v3 || events[2].valueID != v2 {
		t.Errorf("value schema ids %d, %d, %d, %d: want a new id after each ALTER and the same between them",
			events[0].valueID, events[1].valueID, events[2].valueID, events[3].valueID)
	}
	for i, ev := range events {
		if ev.keyID != events[0].keyID {
			t.Errorf("record %d has key schema id %d, the first %d: the key did not change", i, ev.keyID, events[0].keyID)
		}
	}

	first, added, explicit, dropped := events[0].row(t, "after"), events[1].row(t, "after"), events[2].row(t, "after"), events[3].row(t, "after")
	if _, ok := first["note"]; ok {
		t.Errorf("the first record, decoded with its own schema %d, has column note: %v", v1, first)
	}
	assertField(t, first, "d", "d1")
	assertField(t, added, "note", "none") // the column default, filled in by MariaDB
	assertField(t, added, "d", "d2")
	assertField(t, explicit, "note", "n3")
	if _, ok := dropped["d"]; ok {
		t.Errorf("the record after DROP COLUMN has column d: %v", dropped)
	}
	assertField(t, dropped, "note", "n4")
	assertField(t, dropped, "x", 40)
	// The added columns' defaults become Avro field defaults, encoded as Confluent's AvroData encodes them
	// (a decimal as its unscaled two's-complement bytes, a nullable column's default in the first branch).
	since := time.Date(2021, 1, 1, 0, 0, 0, 123e6, time.UTC).UnixMilli()
	for col, want := range map[string]any{
		"note": "none", "amount": []byte{0x00, 0x96}, "level": "hi", "since": since, "flags": []byte{0x0a},
		"seen": "1970-01-01T00:00:00Z", // CURRENT_TIMESTAMP: Debezium's placeholder epoch
	} {
		f := avroRowField(t, reg.schemaByID(t, v2), col)
		if f == nil || !f.HasDefault() || !reflect.DeepEqual(f.Default(), want) {
			t.Errorf("column %s of value schema %d is %v, want a default %#v", col, v2, f, want)
		}
	}
	assertDecimal(t, added, "amount", "1.50")
	assertField(t, added, "level", "hi")
	assertField(t, added, "since", since)
	assertField(t, added, "flags", []byte{0x0a})
	if seen, _ := unionValue(added["seen"]).(string); !strings.HasSuffix(seen, "Z") {
		t.Errorf("seen = %#v, want the insert's UTC time", added["seen"])
	}

	if vs := reg.versions(t, valueSubject); len(vs) != 3 {
		t.Errorf("%s has versions %v, want three (create, ADD COLUMN, DROP COLUMN)", valueSubject, vs)
	}
	for _, subject := range []string{topic + "-key", b.prefix + "-key", b.prefix + "-value"} {
		if vs := reg.versions(t, subject); len(vs) != 1 {
			t.Errorf("%s has versions %v, want one", subject, vs)
		}
	}

	assertTableChange(t, findSchemaChange(t, b, reg, "ALTER TABLE evo ADD COLUMN"), "ALTER", b.dsn.DB, "evo",
		[]string{"id", "x", "d", "note", "amount", "level", "since", "flags", "seen"})
	assertTableChange(t, findSchemaChange(t, b, reg, "ALTER TABLE evo DROP COLUMN"), "ALTER", b.dsn.DB, "evo",
		[]string{"id", "x", "note", "amount", "level", "since", "flags", "seen"})

	// A restarted cdcd rebuilds the table from the schema history (CREATE, then both ALTERs): the schema it
	// derives must be the one registered last, or every restart would add a version.
	p.stop()
	b.start(worker, conn)
	b.exec(b.db, "INSERT INTO evo (id, x, note) VALUES (5, 50, 'n5')")
	recs = byTopic(b.readUntil(func(recs []capture.Record) bool {
		got := byTopic(recs, topic)
		return len(got) > 0 && bytes.Contains(got[len(got)-1].Value, []byte("n5"))
	}), topic)
	restarted := decodeAvroRecord(t, reg, recs[len(recs)-1])
	if restarted.keyID != events[0].keyID || restarted.valueID != v3 {
		t.Errorf("after the restart the record uses schema ids %d/%d, before it %d/%d", restarted.keyID, restarted.valueID, events[0].keyID, v3)
	}
	assertField(t, restarted.row(t, "after"), "note", "n5")
	if vs := reg.versions(t, valueSubject); len(vs) != 3 {
		t.Errorf("after the restart %s has versions %v, want still three", valueSubject, vs)
	}
	t.Logf("BACKWARD accepted ADD COLUMN with defaults (value ids %d -> %d) and DROP COLUMN (-> %d); a restart reused %d",
		v1, v2, v3, restarted.valueID)
}

// avroRowField is a column's field in the after image of an envelope schema, nil when it has none.
func avroRowField(t *testing.T, envelopeText, column string) *avro.Field {
	t.Helper()
	envelope, ok := avro.MustParse(envelopeText).(*avro.RecordSchema)
	if !ok {
		t.Fatalf("the envelope schema is not a record:\n%s", envelopeText)
	}
	for _, f := range envelope.Fields() {
		if union, ok := f.Type().(*avro.UnionSchema); ok && f.Name() == "after" {
			if row, ok := nonNullBranch(union).(*avro.RecordSchema); ok {
				for _, col := range row.Fields() {
					if col.Name() == column {
						return col
					}
				}
			}
		}
	}
	return nil
}

// nonNullBranch is the schema of an optional value's union, a reference resolved to the named schema.
func nonNullBranch(union *avro.UnionSchema) avro.Schema {
	for _, branch := range union.Types() {
		if ref, ok := branch.(*avro.RefSchema); ok { // e.g. after's "Value", defined in before
			return ref.Schema()
		}
		if branch.Type() != avro.Null {
			return branch
		}
	}
	return nil
}

// avroRowFieldType is the (non-null) type of a column's field in an envelope schema's after image.
func avroRowFieldType(t *testing.T, envelopeText, column string) avro.Schema {
	t.Helper()
	f := avroRowField(t, envelopeText, column)
	if f == nil {
		t.Fatalf("the envelope schema has no column %s", column)
	}
	if union, ok := f.Type().(*avro.UnionSchema); ok {
		return nonNullBranch(union)
	}
	return f.Type()
}

// assertConnectName checks the connect.name property of a column's type: the Connect schema name.
func assertConnectName(t *testing.T, envelopeText, column, want string) {
	t.Helper()
	typ, ok := avroRowFieldType(t, envelopeText, column).(avro.PropertySchema)
	if !ok {
		t.Errorf("column %s: its Avro type carries no properties", column)
		return
	}
	if got := typ.Prop("connect.name"); got != want {
		t.Errorf("column %s: connect.name %v, want %s", column, got, want)
	}
}

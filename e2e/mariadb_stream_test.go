package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestMariaDBHeartbeatsAdvanceTheOffset captures one table while another, not captured, is written: with
// heartbeat.interval.ms set, heartbeat records appear on __debezium-heartbeat.<prefix> and the durable offset
// moves past the filtered writes, so a restart does not read them again.
func TestMariaDBHeartbeatsAdvanceTheOffset(t *testing.T) {
	c := newMariaDBCase(t)
	c.run("CREATE TABLE other (id INT PRIMARY KEY)")
	c.conn["table.include.list"] = c.dsn.DB + ".t"
	c.conn["heartbeat.interval.ms"] = "200"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := c.launchStreaming()
	defer p.stop()
	key, err := offsets.Key(c.conn["name"], map[string]any{"server": c.prefix})
	if err != nil {
		t.Fatal(err)
	}
	before := storedBinlogPos(t, c.offsetFile, key)
	for i := range 50 {
		c.run(fmt.Sprintf("INSERT INTO other VALUES (%d)", i))
	}
	waitFor(t, ctx, c.broker, capture.Selection{Topics: []string{"__debezium-heartbeat." + c.prefix}}, `"name":"io.debezium.connector.common.Heartbeat"`)
	for deadline := time.Now().Add(30 * time.Second); storedBinlogPos(t, c.offsetFile, key) == before; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the durable offset stayed at %s while only uncaptured tables changed", before)
		}
	}
}

// storedBinlogPos is the stored offset's file:pos, "" when none is stored.
func storedBinlogPos(t *testing.T, path string, key []byte) string {
	t.Helper()
	m := storedOffset(t, path, key)
	if m == nil {
		return ""
	}
	return fmt.Sprintf("%v:%v", m["file"], m["pos"])
}

// storedOffset is the offset stored under key in the offsets file at path, nil when none is stored.
func storedOffset(t *testing.T, path string, key []byte) map[string]any {
	t.Helper()
	store, err := offsets.OpenFile(path)
	if err != nil {
		return nil
	}
	raw, ok := store.Get(key)
	if !ok {
		return nil
	}
	fields, err := offsets.DecodeValue(raw)
	if err != nil {
		t.Fatal(err)
	}
	return fields.Map()
}

// TestMariaDBInetTypes captures MariaDB's INET4 and INET6 columns, which Debezium's MariaDB connector cannot
// parse (its task fails at the snapshot): cdcd writes them as the text MariaDB prints, in the snapshot and
// from the binlog alike.
func TestMariaDBInetTypes(t *testing.T) {
	c := newMariaDBCase(t)
	c.run("CREATE TABLE inet (id INT PRIMARY KEY, a INET4, b INET6)")
	c.run("INSERT INTO inet VALUES (1, '192.168.0.1', '2001:db8::1')")
	p := c.launchStreaming()
	defer p.stop()
	c.run("INSERT INTO inet VALUES (2, '10.0.0.255', '::ffff:1.2.3.4')")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topic := capture.Selection{Topics: []string{c.prefix + "." + c.dsn.DB + ".inet"}}
	for _, want := range []string{`"after":{"id":1,"a":"192.168.0.1","b":"2001:db8::1"}`, `"after":{"id":2,"a":"10.0.0.255","b":"::ffff:1.2.3.4"}`} {
		waitFor(t, ctx, c.broker, topic, want)
	}
}

// TestMariaDBHistoryRecordsEveryDatabase: as Debezium's schema history does by default, cdcd's records the
// structure of every database of the server, captured or not, at the snapshot and through later DDL;
// schema.history.internal.store.only.captured.databases.ddl=true limits it to the captured ones.
func TestMariaDBHistoryRecordsEveryDatabase(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	other := newMariaDBBed(t, ctx, "CREATE TABLE elsewhere (id INT PRIMARY KEY)")
	for _, only := range []bool{false, true} {
		c := newMariaDBCase(t)
		c.conn["schema.history.internal.store.only.captured.databases.ddl"] = strconv.FormatBool(only)
		p := c.launchStreaming()
		other.exec(other.db, "ALTER TABLE elsewhere ADD COLUMN n"+strconv.FormatBool(only)+" INT")
		c.run("INSERT INTO t VALUES (1, '2026-01-01', '2026-01-02')")
		waitFor(t, ctx, c.broker, capture.Selection{Topics: []string{c.prefix + "." + c.dsn.DB + ".t"}}, `"id":1`)
		p.stop()
		history, err := c.broker.Read(ctx, capture.Selection{Topics: []string{c.prefix + "-schema-history"}})
		if err != nil {
			t.Fatal(err)
		}
		var created, altered bool
		for _, r := range history {
			created = created || strings.Contains(string(r.Value), "CREATE TABLE `elsewhere`")
			altered = altered || strings.Contains(string(r.Value), "ALTER TABLE elsewhere ADD COLUMN")
		}
		if created == only || altered == only {
			t.Errorf("store.only.captured.databases.ddl=%v: other database's CREATE recorded %v, ALTER recorded %v", only, created, altered)
		}
	}
}

// TestMariaDBHeartbeatActionQuery: heartbeat.action.query runs with every heartbeat, as Debezium's, here an
// insert into a captured table, whose changes then stream like any other.
func TestMariaDBHeartbeatActionQuery(t *testing.T) {
	c := newMariaDBCase(t)
	c.run("CREATE TABLE beats (id INT AUTO_INCREMENT PRIMARY KEY, at DATETIME(6) NOT NULL)")
	grant := fmt.Sprintf("INSERT ON `%s`.beats TO '%s'@'%%'", c.dsn.DB, testenv.MariaDBCaptureUser)
	c.run("GRANT " + grant)
	// The server keeps a table's grant after the table is dropped: revoked before the database goes.
	t.Cleanup(func() { c.run("REVOKE " + strings.Replace(grant, " TO ", " FROM ", 1)) })
	c.conn["table.include.list"] = c.dsn.DB + ".beats"
	c.conn["heartbeat.interval.ms"] = "200"
	c.conn["heartbeat.action.query"] = "INSERT INTO " + c.dsn.DB + ".beats (at) VALUES (NOW(6))"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := c.launchStreaming()
	defer p.stop()
	// The first query's row is streamed, and its transaction is followed by more heartbeats.
	topic := capture.Selection{Topics: []string{c.prefix + "." + c.dsn.DB + ".beats"}}
	for _, want := range []string{`"after":{"id":1,`, `"after":{"id":3,`} {
		waitFor(t, ctx, c.broker, topic, want)
	}
}

// TestMariaDBCompressedRowsEvents: with log_bin_compress=ON MariaDB writes its rows events compressed
// (*_ROWS_COMPRESSED_EVENT_V1); their inserts, updates and deletes stream as any others. The setting is
// the server's, put back when the test ends (the tests that share the server take turns).
func TestMariaDBCompressedRowsEvents(t *testing.T) {
	c := newMariaDBCase(t)
	c.run("SET GLOBAL log_bin_compress_min_len = 10")
	c.run("SET GLOBAL log_bin_compress = ON")
	t.Cleanup(func() {
		c.run("SET GLOBAL log_bin_compress = OFF")
		c.run("SET GLOBAL log_bin_compress_min_len = 256")
	})
	p := c.launchStreaming()
	defer p.stop()
	c.run("INSERT INTO t VALUES (1, '2026-01-01', '2026-01-02'), (2, '2026-02-01', '2026-02-02')")
	c.run("UPDATE t SET e = '2026-03-03' WHERE id = 1")
	c.run("DELETE FROM t WHERE id = 2")
	if ops := opsOf(changes(t, c.read(c.topic("t"), 4))); ops != "c1 c2 u1 d2" {
		t.Errorf("changes %s, want c1 c2 u1 d2", ops)
	}
}

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// mysqlChange is what the MySQL tests read of a change event (JSON converter with schemas).
type mysqlChange struct {
	Op            string
	Before, After map[string]any
	Source        struct {
		GTID *string `json:"gtid"`
		File string  `json:"file"`
		Pos  int64   `json:"pos"`
		Row  int     `json:"row"`
	}
}

// changes decodes the change events of recs, tombstones left out.
func changes(t *testing.T, recs []capture.Record) []mysqlChange {
	t.Helper()
	var out []mysqlChange
	for _, r := range recs {
		if r.Value == nil {
			continue
		}
		var ev struct{ Payload mysqlChange }
		if err := json.Unmarshal(r.Value, &ev); err != nil {
			t.Fatalf("record at offset %d: %v", r.Offset, err)
		}
		out = append(out, ev.Payload)
	}
	return out
}

// opsOf lists the changes as op and row id: "c1 u1 d1".
func opsOf(changes []mysqlChange) string {
	ops := make([]string, len(changes))
	for i, ch := range changes {
		ops[i] = fmt.Sprintf("%s%d", ch.Op, ch.id())
	}
	return strings.Join(ops, " ")
}

// gtid is the change's source.gtid, "" when null.
func (c mysqlChange) gtid() string {
	if c.Source.GTID == nil {
		return ""
	}
	return *c.Source.GTID
}

// id is the change's row id, from its after image (its before image for a delete).
func (c mysqlChange) id() int {
	row := c.After
	if row == nil {
		row = c.Before
	}
	id, _ := row["id"].(float64)
	return int(id)
}

// storedGTIDs is the GTID set of the case's durable offset, "" when none is stored.
func (c *mariadbCase) storedGTIDs() string {
	c.t.Helper()
	key, err := offsets.Key(c.conn["name"], map[string]any{"server": c.prefix})
	if err != nil {
		c.t.Fatal(err)
	}
	gtids, _ := storedOffset(c.t, c.offsetFile, key)["gtids"].(string)
	return gtids
}

// gtidSetHolds reports whether the MySQL GTID set holds the transaction gtid (uuid[:tag]:n).
func gtidSetHolds(t *testing.T, set, gtid string) bool {
	t.Helper()
	s, err := gomysql.ParseMysqlGTIDSet(set)
	if err != nil {
		t.Fatalf("GTID set %q: %v", set, err)
	}
	one, err := gomysql.ParseMysqlGTIDSet(gtid)
	if err != nil {
		t.Fatalf("GTID %q: %v", gtid, err)
	}
	return s.Contain(one)
}

// topic is the change topic of table of the case's database.
func (c *mariadbCase) topic(table string) string { return c.prefix + "." + c.dsn.DB + "." + table }

// TestMySQLStreams: the MySQL connector starts on the test bed's MySQL 9.7, which has no SHOW MASTER
// STATUS (8.4 removed it), snapshots a table and streams its inserts, updates and deletes, each with
// the GTID of its transaction.
func TestMySQLStreams(t *testing.T) {
	c := newBinlogCase(t, mysqlServer)
	c.run("INSERT INTO t VALUES (1, '2026-01-01', '2026-01-02')")
	p := c.launchStreaming()
	defer p.stop()
	c.run("INSERT INTO t VALUES (2, '2026-02-01', '2026-02-02')")
	c.run("UPDATE t SET e = '2026-03-03' WHERE id = 1")
	c.run("DELETE FROM t WHERE id = 2")
	got := changes(t, c.read(c.topic("t"), 5))
	for _, ch := range got {
		if ch.Op != "r" && !strings.Contains(ch.gtid(), ":") {
			t.Errorf("streamed change %s%d has source.gtid %q, want its transaction's", ch.Op, ch.id(), ch.gtid())
		}
	}
	if ops := opsOf(got); ops != "r1 c2 u1 d2" {
		t.Errorf("changes %s, want r1 c2 u1 d2", ops)
	}
}

// TestMySQLCompressedTransactions: with binlog_transaction_compression=ON the server writes a
// transaction's events zstd-compressed inside one TRANSACTION_PAYLOAD event. Every row of such a
// transaction (several rows events, two tables, well over the 250 bytes from which go-mysql misreads
// the payload's size) arrives, with the transaction's own GTID and, as Debezium records it, the payload
// event's position; the transaction after it, uncompressed, keeps its own GTID, and the durable offset
// holds both.
func TestMySQLCompressedTransactions(t *testing.T) {
	c := newBinlogCase(t, mysqlServer)
	c.run("CREATE TABLE items (id INT PRIMARY KEY, body VARCHAR(200) NOT NULL)")
	p := c.launchStreaming()
	defer p.stop()
	const rows = 150
	c.run("SET SESSION binlog_transaction_compression = ON")
	c.run("BEGIN")
	for i := range rows {
		c.run(fmt.Sprintf("INSERT INTO items VALUES (%d, REPEAT('x', %d))", i, 50+i))
	}
	c.run("INSERT INTO t VALUES (1, '2026-01-01', '2026-01-02')")
	c.run("UPDATE items SET body = 'updated' WHERE id < 10")
	c.run("COMMIT")
	c.run("SET SESSION binlog_transaction_compression = OFF")
	c.run("INSERT INTO t VALUES (2, '2026-02-01', '2026-02-02')")

	items := changes(t, c.read(c.topic("items"), rows+10))
	ts := changes(t, c.read(c.topic("t"), 2))
	compressed, after := ts[0].gtid(), ts[1].gtid()
	if compressed == "" || after == "" || compressed == after {
		t.Fatalf("source.gtid of the compressed transaction %q and of the one after it %q: want two GTIDs", compressed, after)
	}
	seen := map[string]bool{}
	for _, ch := range items {
		if ch.gtid() != compressed || ch.Source.Pos != ts[0].Source.Pos {
			t.Errorf("%s%d: source.gtid %q pos %d, want the compressed transaction's %q and its payload event's position %d",
				ch.Op, ch.id(), ch.gtid(), ch.Source.Pos, compressed, ts[0].Source.Pos)
		}
		seen[fmt.Sprintf("%s%d", ch.Op, ch.id())] = true
	}
	for i := range rows {
		if !seen[fmt.Sprintf("c%d", i)] || i < 10 && !seen[fmt.Sprintf("u%d", i)] {
			t.Errorf("a change of row %d of the compressed transaction is missing", i)
		}
	}
	if ts[1].Source.Pos <= ts[0].Source.Pos {
		t.Errorf("the transaction after the compressed one is at %d, not after it (%d)", ts[1].Source.Pos, ts[0].Source.Pos)
	}
	p.stop()
	for _, gtid := range []string{compressed, after} {
		if !gtidSetHolds(t, c.storedGTIDs(), gtid) {
			t.Errorf("the durable offset's GTID set %q does not hold %s", c.storedGTIDs(), gtid)
		}
	}
}

// TestMySQLTaggedGTIDs: a transaction committed under a tagged GTID (gtid_next='AUTOMATIC:<tag>', MySQL
// 8.3+; the binlog writes a GTID_TAGGED_LOG event) carries its uuid:tag:n in source.gtid, the durable
// offset's GTID set holds it, and a restart from that offset does not receive the transaction again.
func TestMySQLTaggedGTIDs(t *testing.T) {
	c := newBinlogCase(t, mysqlServer)
	tag := fmt.Sprintf("cdcd_%d", time.Now().UnixNano()%1_000_000_000)
	p := c.launchStreaming()
	c.run("SET gtid_next = 'AUTOMATIC:" + tag + "'")
	c.run("INSERT INTO t VALUES (1, '2026-01-01', '2026-01-02')")
	c.run("SET gtid_next = 'AUTOMATIC'")
	c.run("INSERT INTO t VALUES (2, '2026-02-01', '2026-02-02')")
	got := changes(t, c.read(c.topic("t"), 2))
	if tagged := got[0].gtid(); !strings.Contains(tagged, ":"+tag+":") {
		t.Errorf("source.gtid of the tagged transaction is %q, want uuid:%s:n", tagged, tag)
	}
	if plain := got[1].gtid(); plain == "" || strings.Contains(plain, tag) {
		t.Errorf("source.gtid of the untagged transaction after it is %q", plain)
	}
	p.stop()
	if stored := c.storedGTIDs(); !gtidSetHolds(t, stored, got[0].gtid()) || !gtidSetHolds(t, stored, got[1].gtid()) {
		t.Errorf("the durable offset's GTID set %q does not hold %s and %s", stored, got[0].gtid(), got[1].gtid())
	}
	p = c.launchStreaming()
	defer p.stop()
	c.run("INSERT INTO t VALUES (3, '2026-03-01', '2026-03-02')")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	waitFor(t, ctx, c.broker, capture.Selection{Topics: []string{c.topic("t")}}, `"id":3`)
	got = changes(t, c.readAll(c.topic("t")))
	var ids []int
	for _, ch := range got {
		ids = append(ids, ch.id())
	}
	if fmt.Sprint(ids) != "[1 2 3]" {
		t.Errorf("after the restart the topic holds the rows %v, want [1 2 3]: a transaction was sent again", ids)
	}
}

// TestMySQLVectorInvisibleAndGeneratedColumns: a VECTOR column is an io.debezium.data.FloatVector (as
// Debezium 3.6's MySQL connector maps it), and INVISIBLE and generated (virtual and stored) columns are in
// every row, in the snapshot (which "SELECT *" would read without the invisible one) and from the binlog.
func TestMySQLVectorInvisibleAndGeneratedColumns(t *testing.T) {
	c := newBinlogCase(t, mysqlServer)
	c.run("CREATE TABLE v (id INT PRIMARY KEY, vec VECTOR(3), hid INT INVISIBLE, g INT AS (id * 2) VIRTUAL, gs INT AS (id * 3) STORED)")
	c.run("INSERT INTO v (id, vec, hid) VALUES (1, STRING_TO_VECTOR('[1.5, 2, -3.25]'), 7)")
	p := c.launchStreaming()
	defer p.stop()
	c.run("INSERT INTO v (id, vec, hid) VALUES (2, STRING_TO_VECTOR('[0.5, 0, 1e10]'), 8)")
	recs := c.read(c.topic("v"), 2)
	want := []string{
		`"after":{"id":1,"vec":[1.5,2.0,-3.25],"hid":7,"g":2,"gs":3}`,
		`"after":{"id":2,"vec":[0.5,0.0,1.0E10],"hid":8,"g":4,"gs":6}`,
	}
	for i, r := range recs {
		if !strings.Contains(string(r.Value), want[i]) {
			t.Errorf("record %d: want %s in\n%s", i, want[i], r.Value)
		}
	}
	if !strings.Contains(string(recs[0].Value), `{"type":"array","items":{"type":"float","optional":false},"optional":true,"name":"io.debezium.data.FloatVector","version":1,"field":"vec"}`) {
		t.Errorf("the vec field's schema is not an optional io.debezium.data.FloatVector:\n%s", recs[0].Value)
	}
}

// TestMySQLPartialJSONUpdates: with binlog_row_value_options=PARTIAL_JSON (a session's choice) the server
// logs a JSON_SET, JSON_REPLACE or JSON_REMOVE as a PARTIAL_UPDATE_ROWS event carrying only the changes,
// which Debezium 3.6.1 drops. cdcd applies them to the before image and emits the whole after image: here
// several changes to one column at once (go-mysql decodes only the first), new members, removals, an
// array insert, a string with escapes, and changes beside other columns of many sizes.
func TestMySQLPartialJSONUpdates(t *testing.T) {
	c := newBinlogCase(t, mysqlServer)
	c.run(`CREATE TABLE docs (id INT PRIMARY KEY, price DECIMAL(12,3), name VARCHAR(300), doc JSON, at DATETIME(6), other JSON, n BIGINT)`)
	const body = `{"a": 1, "bb": [1, 2, 3], "c": {"d": "x", "long name": true}, "pad": "0123456789012345678901234567890123456789"}`
	c.run(`INSERT INTO docs VALUES (1, 12.5, 'one', '` + body + `', '2026-01-02 03:04:05.123456', '[1]', 7)`)
	c.run(`INSERT INTO docs VALUES (2, 0.001, REPEAT('x', 290), '` + body + `', NULL, NULL, NULL)`)
	p := c.launchStreaming()
	defer p.stop()
	c.run("SET SESSION binlog_row_value_options = 'PARTIAL_JSON'")
	c.run(`UPDATE docs SET doc = JSON_SET(doc, '$.a', 10, '$.c.d', 'y "quoted"', '$.new', JSON_OBJECT('k', 1.5)), n = 8 WHERE id = 1`)
	c.run(`UPDATE docs SET doc = JSON_REMOVE(doc, '$.c."long name"', '$.bb[0]') WHERE id = 2`)
	c.run(`UPDATE docs SET doc = JSON_ARRAY_INSERT(doc, '$.bb[1]', 'in') WHERE id = 1`)
	c.run(`UPDATE docs SET doc = JSON_REPLACE(doc, '$.pad', 'short'), other = JSON_SET(other, '$[0]', 2) WHERE id = 1`)
	c.run("SET SESSION binlog_row_value_options = ''")
	got := changes(t, c.read(c.topic("docs"), 6))
	// What the server holds now is what the last change of each row must say.
	res, err := c.db.Execute("SELECT id, CAST(doc AS CHAR), CAST(other AS CHAR) FROM docs ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	want := map[int][2]string{}
	for row := range res.Values {
		id, _ := res.GetInt(row, 0)
		doc, _ := res.GetString(row, 1)
		other, _ := res.GetString(row, 2)
		want[int(id)] = [2]string{doc, other}
	}
	last := map[int]mysqlChange{}
	updates := 0
	for _, ch := range got {
		last[ch.id()] = ch
		if ch.Op == "u" {
			updates++
		}
	}
	if updates != 4 {
		t.Errorf("%d updates streamed, want 4", updates)
	}
	for id, w := range want {
		for i, col := range []string{"doc", "other"} {
			text, _ := last[id].After[col].(string)
			if (w[i] != "" || text != "") && !sameJSON(t, text, w[i]) {
				t.Errorf("row %d's %s after the partial updates is %s, the server holds %s", id, col, text, w[i])
			}
		}
	}
	if n, _ := last[1].After["n"].(float64); n != 8 {
		t.Errorf("row 1's n = %v, want 8", last[1].After["n"])
	}
}

// sameJSON reports whether two JSON texts hold the same document (member order aside).
func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Errorf("%q: %v", a, err)
		return false
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Errorf("%q: %v", b, err)
		return false
	}
	return reflect.DeepEqual(x, y)
}

// TestMySQLCrashSafety is TestMariaDBCrashSafety on MySQL 9.7, with a workload whose transactions are by
// turns compressed (TRANSACTION_PAYLOAD), tagged (GTID_TAGGED_LOG), both, or neither: kill -9 at random
// moments loses no committed change and never reorders a key's changes.
func TestMySQLCrashSafety(t *testing.T) {
	tag := fmt.Sprintf("crash_%d", time.Now().UnixNano()%1_000_000_000)
	binlogCrashSafety(t, mysqlServer, func(dsn testenv.MySQLDSN) func() (workloadTx, error) {
		return binlogWorkload(dsn, func(n int) []string {
			compression, gtidNext := "OFF", "AUTOMATIC"
			if n%2 == 1 {
				compression = "ON"
			}
			if n%4 >= 2 {
				gtidNext = "AUTOMATIC:" + tag
			}
			return []string{"SET SESSION binlog_transaction_compression = " + compression, "SET gtid_next = '" + gtidNext + "'"}
		})
	})
}

// TestMySQLConnectorTLSModes runs the connector as a new caching_sha2_password user (so the server has
// not cached its password yet and asks for a full authentication) with database.ssl.mode=disabled, where
// the password goes over plain TCP under the server's RSA key, and verify_identity against the test CA:
// it snapshots and streams both ways, and the server sees its binlog connection with TLS exactly when asked.
func TestMySQLConnectorTLSModes(t *testing.T) {
	certs := testenv.Certs(t)
	for _, mode := range []string{"disabled", "verify_identity"} {
		t.Run(mode, func(t *testing.T) {
			c := newBinlogCase(t, mysqlServer)
			user := fmt.Sprintf("cdcd_%s_%d", mode[:3], time.Now().UnixNano()%1_000_000)
			c.run(fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED WITH caching_sha2_password BY 'pw-%s'", user, user))
			t.Cleanup(func() { c.run(fmt.Sprintf("DROP USER '%s'@'%%'", user)) })
			c.run(fmt.Sprintf("GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '%s'@'%%'", user))
			c.conn["database.user"], c.conn["database.password"] = user, "pw-"+user
			c.conn["database.ssl.mode"] = mode
			if mode != "disabled" {
				c.conn["database.ssl.truststore"], c.conn["database.ssl.truststore.password"] = certs.TruststoreJKS, certs.StorePassword
			}
			c.run("INSERT INTO t VALUES (1, '2026-01-01', '2026-01-02')")
			p := c.launchStreaming()
			defer p.stop()
			c.run("INSERT INTO t VALUES (2, '2026-02-01', '2026-02-02')")
			if ops := opsOf(changes(t, c.read(c.topic("t"), 2))); ops != "r1 c2" {
				t.Errorf("changes %s, want r1 c2", ops)
			}
			res, err := c.db.Execute(`SELECT s.VARIABLE_VALUE FROM performance_schema.threads t
				JOIN performance_schema.status_by_thread s USING (THREAD_ID)
				WHERE t.PROCESSLIST_USER = ? AND t.PROCESSLIST_COMMAND LIKE 'Binlog Dump%' AND s.VARIABLE_NAME = 'Ssl_version'`, user)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Values) != 1 {
				t.Fatalf("%d binlog connections of %s, want 1", len(res.Values), user)
			}
			version, _ := res.GetString(0, 0)
			if (version != "") != (mode != "disabled") {
				t.Errorf("database.ssl.mode=%s: the binlog connection's TLS version is %q", mode, version)
			}
		})
	}
}

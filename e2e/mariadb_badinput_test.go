package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/capture"
)

// mariadbCase is a bed (a test database) with one table t, a worker config and a connector config for
// it that tests adjust before launching cdcd.
type mariadbCase struct {
	*mariadbBed
	worker, conn         map[string]string
	workerPath, connPath string
	offsetFile           string
}

func newMariaDBCase(t *testing.T) *mariadbCase {
	t.Helper()
	return newBinlogCase(t, mariadbServer)
}

func newBinlogCase(t *testing.T, server binlogServer) *mariadbCase {
	t.Helper()
	b := newBinlogBed(t, context.Background(), server, "CREATE TABLE t (id INT PRIMARY KEY, s DATE NOT NULL, e DATE NOT NULL)")
	c := &mariadbCase{mariadbBed: b, conn: b.connector("mdb", nil), offsetFile: filepath.Join(b.dir, "offsets.dat"),
		workerPath: filepath.Join(b.dir, "worker.properties"), connPath: filepath.Join(b.dir, "mariadb.properties")}
	c.worker = workerProps(b.brokers, c.offsetFile)
	writeProperties(t, c.workerPath, c.worker)
	return c
}

// run executes sql as the database's owner.
func (c *mariadbCase) run(sql string) { c.exec(c.db, sql) }

// launchStreaming starts cdcd with the case's configs and returns once it streams (mariadbBed.start).
func (c *mariadbCase) launchStreaming() *cdcdProcess { return c.start(c.worker, c.conn) }

// launch starts cdcd with the case's configs, without waiting for anything.
func (c *mariadbCase) launch() *cdcdProcess {
	c.t.Helper()
	writeProperties(c.t, c.connPath, c.conn)
	return startCdcd(c.t, c.workerPath, c.connPath)
}

// TestMariaDBMissingPrivilegeFailsTheConnector runs the connector as a user with SELECT only: the
// connector must fail once, naming the missing privilege and the GRANT that fixes it.
func TestMariaDBMissingPrivilegeFailsTheConnector(t *testing.T) {
	c := newMariaDBCase(t)
	user := fmt.Sprintf("cdcd_nopriv_%d", rand.IntN(1_000_000))
	c.run(fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY 'pw'", user))
	t.Cleanup(func() { c.db.Execute(fmt.Sprintf("DROP USER '%s'@'%%'", user)) })
	c.run(fmt.Sprintf("GRANT SELECT ON `%s`.* TO '%s'@'%%'", c.dsn.DB, user))
	c.conn["database.user"], c.conn["database.password"] = user, "pw"
	p := c.launch()
	log := awaitFailure(t, p)
	if !strings.Contains(log, "lacks the REPLICATION SLAVE privilege") || !strings.Contains(log, "GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT ON *.*") {
		t.Errorf("the log does not name the missing privilege and the GRANT:\n%s", tail(log, 3000))
	}
	p.stop()
}

// TestMariaDBWrongConnectorClassFailsTheConnector points the MySQL connector class at a MariaDB server.
func TestMariaDBWrongConnectorClassFailsTheConnector(t *testing.T) {
	c := newMariaDBCase(t)
	c.conn["connector.class"] = "io.debezium.connector.mysql.MySqlConnector"
	p := c.launch()
	if log := awaitFailure(t, p); !strings.Contains(log, "set connector.class=io.debezium.connector.mariadb.MariaDbConnector") {
		t.Errorf("the log does not say which connector class reads MariaDB:\n%s", tail(log, 3000))
	}
	p.stop()
}

// TestMariaDBUnparseableDDL: a DDL statement cdcd cannot parse (MariaDB's application-time PERIOD) fails
// the connector with the statement and its binlog position; with
// schema.history.internal.skip.unparseable.ddl=true the connector skips it and goes on, losing nothing after.
func TestMariaDBUnparseableDDL(t *testing.T) {
	c := newMariaDBCase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p := c.launchStreaming()
	const ddl = "ALTER TABLE t ADD PERIOD FOR valid(s, e)"
	c.run(ddl)
	log := awaitFailure(t, p)
	if !strings.Contains(log, "could not be parsed") || !strings.Contains(log, "PERIOD FOR valid") ||
		!strings.Contains(log, "mariadb-bin.") || !strings.Contains(log, "schema.history.internal.skip.unparseable.ddl=true") {
		t.Errorf("the failure does not name the statement, its position and the way out:\n%s", tail(log, 3000))
	}
	p.stop()

	c.conn["schema.history.internal.skip.unparseable.ddl"] = "true"
	p = c.launch()
	c.run("INSERT INTO t VALUES (7, '2026-01-01', '2026-12-31')")
	waitFor(t, ctx, c.broker, capture.Selection{Topics: []string{c.prefix + "." + c.dsn.DB + ".t"}}, `"id":7`)
	if log := p.log.String(); !strings.Contains(log, "skipping a DDL statement cdcd cannot parse") {
		t.Errorf("the skipped statement was not logged:\n%s", tail(log, 3000))
	}
	p.stop()
}

// TestMariaDBDuplicateServerIDFailsTheConnector runs two connectors with one database.server.id: the server
// hands the binlog stream to the newer one and disconnects the older, which must fail naming the setting,
// not fight for the stream by restarting.
func TestMariaDBDuplicateServerIDFailsTheConnector(t *testing.T) {
	first := newMariaDBCase(t)
	p1 := first.launchStreaming()
	defer p1.stop()
	second := newMariaDBCase(t)
	second.conn["database.server.id"] = first.conn["database.server.id"]
	p2 := second.launchStreaming()
	defer p2.stop()
	log := awaitFailure(t, p1)
	if !strings.Contains(log, "database.server.id "+first.conn["database.server.id"]+" is used by another replica") {
		t.Errorf("the older connector's failure does not name the duplicate server id:\n%s", tail(log, 3000))
	}
}

// TestMariaDBSkippedDDLIsCaughtByRowMetadata: a column-adding DDL skipped as unparseable leaves the schema
// history one column short; the binlog's column names (binlog_row_metadata=FULL) show it at the next row,
// and the connector fails naming both structures instead of writing wrong events.
func TestMariaDBSkippedDDLIsCaughtByRowMetadata(t *testing.T) {
	c := newMariaDBCase(t)
	c.conn["schema.history.internal.skip.unparseable.ddl"] = "true"
	p := c.launchStreaming()
	defer p.stop()
	c.run("ALTER TABLE t ADD COLUMN note VARCHAR(10), ADD PERIOD FOR valid(s, e)") // PERIOD: unparseable
	c.run("INSERT INTO t VALUES (1, '2026-01-01', '2026-12-31', 'x')")
	log := awaitFailure(t, p)
	if !strings.Contains(log, "has columns (id, s, e, note) in the binlog but (id, s, e) in the schema history") {
		t.Errorf("the failure does not compare the two structures:\n%s", tail(log, 3000))
	}
}

// TestMariaDBUndecodableEventFailsTheConnector: a row of a column type the binlog library cannot decode
// (MariaDB's COMPRESSED columns) fails the connector once, naming the position and the cause, as Debezium's
// event.deserialization.failure.handling.mode=fail does; a restart would read the same bytes.
func TestMariaDBUndecodableEventFailsTheConnector(t *testing.T) {
	c := newMariaDBCase(t)
	c.conn["schema.history.internal.skip.unparseable.ddl"] = "true"
	p := c.launchStreaming()
	defer p.stop()
	c.run("ALTER TABLE t ADD COLUMN note VARCHAR(10) COMPRESSED")
	c.run("INSERT INTO t VALUES (1, '2026-01-01', '2026-12-31', 'x')")
	log := awaitFailure(t, p)
	if !strings.Contains(log, "holds an event cdcd cannot decode") || strings.Contains(log, "Data \"") {
		t.Errorf("the failure does not say which event and why, briefly:\n%s", tail(log, 3000))
	}
}

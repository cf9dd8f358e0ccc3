package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// mariadbConnector is a MariaDB connector config capturing database db of the test bed as the capture
// user, with its own server id and schema history topic.
func mariadbConnector(t testing.TB, dsn testenv.MySQLDSN, brokers []string, name, prefix string) map[string]string {
	t.Helper()
	return binlogConnector(mariadbServer, dsn, brokers, name, prefix)
}

// binlogConnector is the connector config of server's kind that captures database dsn.DB as the capture
// user, with a server id of its own.
func binlogConnector(server binlogServer, dsn testenv.MySQLDSN, brokers []string, name, prefix string) map[string]string {
	host, port, _ := strings.Cut(dsn.Addr, ":")
	return map[string]string{
		"name":                                name,
		"connector.class":                     server.connectorClass,
		"database.hostname":                   host,
		"database.port":                       port,
		"database.user":                       server.user,
		"database.password":                   server.password,
		"database.server.id":                  fmt.Sprint(200000 + rand.IntN(1000000)),
		"database.include.list":               dsn.DB,
		"topic.prefix":                        prefix,
		"schema.history.internal.kafka.topic": prefix + "-schema-history",
		"schema.history.internal.kafka.bootstrap.servers": strings.Join(brokers, ","),
	}
}

// TestMariaDBCrashSafety kills cdcd with SIGKILL at random moments while a workload of small transactions
// runs on MariaDB, restarts it each time, and proves from Kafka that every committed change arrived and
// that, per key, changes appear in commit order once redelivered ones (same binlog position) are set aside.
func TestMariaDBCrashSafety(t *testing.T) {
	binlogCrashSafety(t, mariadbServer, mariadbWorkload)
}

// binlogCrashSafety is the crash test on server, whose workload's transactions workload opens.
func binlogCrashSafety(t *testing.T, server binlogServer, workload func(testenv.MySQLDSN) func() (workloadTx, error)) {
	c := newBinlogCase(t, server)
	c.run("CREATE TABLE crash (id INT PRIMARY KEY, version BIGINT NOT NULL)")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// Once streaming, every change committed from then on is read from the binlog.
	p := c.launchStreaming()
	work := startCrashWorkload(ctx, workload(c.dsn))
	const crashes = 6
	for i := range crashes {
		time.Sleep(time.Duration(300+rand.IntN(1500)) * time.Millisecond)
		p.kill()
		time.Sleep(time.Duration(rand.IntN(300)) * time.Millisecond)
		p = c.launch()
		t.Logf("crash %d/%d done", i+1, crashes)
	}
	time.Sleep(time.Second)
	want := work.stop(t)
	got, dups := checkCrashDelivery(t, ctx, c.brokers, c.prefix+"."+c.dsn.DB+".crash", want)
	p.stop()
	t.Logf("crash test: %d crashes, %d committed changes, %d events in Kafka, %d redelivered duplicates set aside",
		crashes, len(want), len(got), dups)
}

// mariadbWorkload opens the MariaDB workload's transactions on one connection.
func mariadbWorkload(dsn testenv.MySQLDSN) func() (workloadTx, error) {
	return binlogWorkload(dsn, nil)
}

// binlogWorkload opens the workload's transactions on one connection, running the statements session
// gives for the n-th transaction before it begins (nil: none).
func binlogWorkload(dsn testenv.MySQLDSN, session func(n int) []string) func() (workloadTx, error) {
	var conn *client.Conn
	n := 0
	return func() (workloadTx, error) {
		if conn == nil {
			c, err := client.Connect(dsn.Addr, dsn.User, dsn.Password, dsn.DB)
			if err != nil {
				return nil, err
			}
			conn = c
		}
		if session != nil {
			for _, sql := range session(n) {
				if _, err := conn.Execute(sql); err != nil {
					return nil, fmt.Errorf("%s: %w", sql, err)
				}
			}
		}
		n++
		return mariadbTx{conn}, conn.Begin()
	}
}

type mariadbTx struct{ conn *client.Conn }

func (m mariadbTx) insert(id int, v int64) error {
	_, err := m.conn.Execute("INSERT INTO crash VALUES (?, ?)", id, v)
	return err
}

func (m mariadbTx) update(id int, v int64) error {
	_, err := m.conn.Execute("UPDATE crash SET version = ? WHERE id = ?", v, id)
	return err
}

func (m mariadbTx) delete(id int) error {
	_, err := m.conn.Execute("DELETE FROM crash WHERE id = ?", id)
	return err
}

func (m mariadbTx) commit() error { return m.conn.Commit() }

// TestMariaDBConnectionLoss kills the connector's binlog connection on the server side, again and again,
// under the crash workload: the task reconnects from its durable offset and no committed change is lost.
func TestMariaDBConnectionLoss(t *testing.T) {
	c := newMariaDBCase(t)
	c.run("CREATE TABLE crash (id INT PRIMARY KEY, version BIGINT NOT NULL)")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p := c.launchStreaming()
	work := startCrashWorkload(ctx, mariadbWorkload(c.dsn))
	kills := 0
	for range 5 {
		time.Sleep(time.Duration(500+rand.IntN(1000)) * time.Millisecond)
		res, err := c.db.Execute("SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%' AND USER = ?", testenv.MariaDBCaptureUser)
		if err != nil {
			t.Fatal(err)
		}
		for i := range res.Values {
			id, _ := res.GetInt(i, 0)
			if _, err := c.db.Execute(fmt.Sprintf("KILL CONNECTION %d", id)); err == nil {
				kills++
			}
		}
	}
	time.Sleep(time.Second)
	want := work.stop(t)
	got, dups := checkCrashDelivery(t, ctx, c.brokers, c.prefix+"."+c.dsn.DB+".crash", want)
	if kills == 0 {
		t.Error("no binlog connection was ever killed")
	}
	if !strings.Contains(p.log.String(), "restarting from the last recorded offset") {
		t.Errorf("the task never restarted after losing its connection:\n%s", tail(p.log.String(), 3000))
	}
	p.stop()
	t.Logf("%d binlog connections killed, %d committed changes, %d events, %d redelivered", kills, len(want), len(got), dups)
}

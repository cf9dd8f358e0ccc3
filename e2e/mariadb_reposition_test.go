package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
)

// TestMariaDBSetBinlogPosition moves a running stream with Debezium's set-binlog-position signal: by file
// and position through the signal table, by GTID set through the REST API. Each move goes back to before
// row 2, so row 2 is streamed again (once per move) and the signal that moved it, read again, is not acted
// on twice. A position the server does not have, or one inside an event group, is refused and the stream
// goes on where it was. A restart after the moves streams on from the durable offset, which the moves
// left past them.
func TestMariaDBSetBinlogPosition(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := newMariaDBBed(t, ctx, "CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL)", mariadbSignalTableDDL)
	conn := b.connector("mdb", map[string]string{"snapshot.mode": "no_data", "signal.data.collection": b.dsn.DB + ".debezium_signal", "signal.enabled.channels": "source,rest",
		"table.include.list": b.dsn.DB + ".t," + b.dsn.DB + ".debezium_signal"})
	worker := b.jsonWorker()
	p := b.start(worker, conn)
	defer func() { p.stop() }()
	topic := b.prefix + "." + b.dsn.DB + ".t"
	deliveries := func(id int) int {
		n := 0
		for _, r := range b.readAll(topic) {
			if strings.Contains(string(r.Value), fmt.Sprintf(`"after":{"id":%d,`, id)) {
				n++
			}
		}
		return n
	}
	waitDeliveries := func(id, want int) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); deliveries(id) != want; time.Sleep(200 * time.Millisecond) {
			if time.Now().After(deadline) || p.exited() {
				t.Fatalf("row %d was delivered %d times, want %d; log:\n%s", id, deliveries(id), want, tail(p.log.String(), 4000))
			}
		}
	}
	b.exec(b.db, "INSERT INTO t VALUES (1, 1)")
	waitDeliveries(1, 1)
	file, pos := masterStatus(t, b.db)
	gtids := queryOne(t, b.db, "SELECT @@gtid_binlog_pos")
	b.exec(b.db, "INSERT INTO t VALUES (2, 2)")
	b.exec(b.db, "INSERT INTO t VALUES (3, 3)")
	waitDeliveries(3, 1)

	moved := "streaming moved by a set-binlog-position signal"
	b.exec(b.db, fmt.Sprintf(`INSERT INTO debezium_signal VALUES ('move-1', 'set-binlog-position', '{"binlog_filename": "%s", "binlog_position": %d}')`, file, pos))
	waitDeliveries(2, 2)
	waitDeliveries(3, 2)
	if n := strings.Count(p.log.String(), moved); n != 1 {
		t.Fatalf("the stream moved %d times, want once (the signal, read again after the move, must not move it again); log:\n%s", n, tail(p.log.String(), 4000))
	}

	p.restAPI().expect("POST", "/connectors/mdb/signals", fmt.Sprintf(`{"id": "move-2", "type": "set-binlog-position", "data": {"gtid_set": "%s"}}`, gtids), 202)
	waitDeliveries(2, 3)

	refusals := []struct{ data, says string }{
		{`{"binlog_filename": "mariadb-bin.999999", "binlog_position": 4}`, "binlog file mariadb-bin.999999 is not on the server yet"},
		{fmt.Sprintf(`{"binlog_filename": "%s", "binlog_position": %d}`, file, pos+1), "is not where an event group starts"},
		{`{"gtid_set": "0-1-5", "binlog_filename": "mariadb-bin.000001"}`, "not both"},
	}
	for i, r := range refusals {
		p.restAPI().expect("POST", "/connectors/mdb/signals", fmt.Sprintf(`{"id": "refused-%d", "type": "set-binlog-position", "data": %s}`, i, r.data), 202)
		waitLog(t, p, r.says)
	}
	b.exec(b.db, "INSERT INTO t VALUES (4, 4)")
	waitDeliveries(4, 1)
	if n := strings.Count(p.log.String(), moved); n != 2 {
		t.Fatalf("the stream moved %d times, want 2; log:\n%s", n, tail(p.log.String(), 4000))
	}

	// The offset that moves were recorded in is behind row 4's: a restart streams on after row 4.
	p.stop()
	b.exec(b.db, "INSERT INTO t VALUES (5, 5)")
	p = b.start(worker, conn)
	waitDeliveries(5, 1)
	for id, want := range map[int]int{2: 3, 3: 3, 4: 1} {
		if got := deliveries(id); got != want {
			t.Errorf("after the restart, row %d was delivered %d times, want %d", id, got, want)
		}
	}
}

// masterStatus is the server's current binlog file and position.
func masterStatus(t *testing.T, conn *client.Conn) (string, int64) {
	t.Helper()
	res, err := conn.Execute("SHOW MASTER STATUS")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	file, err := res.GetString(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	pos, err := res.GetInt(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Clone(file), pos
}

// queryOne is the first column of the first row of q.
func queryOne(t *testing.T, conn *client.Conn, q string) string {
	t.Helper()
	res, err := conn.Execute(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer res.Close()
	v, err := res.GetString(0, 0)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return strings.Clone(v)
}

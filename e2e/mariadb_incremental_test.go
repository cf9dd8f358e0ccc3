package e2e

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/cdcd/cdcd/schema/javacompat"
)

// Incremental snapshots on the real MariaDB and Kafka, as incremental_test.go runs them on PostgreSQL:
// under concurrent changes, across a kill -9, paused, resumed and stopped through the signal file, the
// REST API and the signal table. Debezium's own bytes are held by the MariaDB incremental-snapshot and
// incremental-notifications goldens (TestMariaDBGoldens).

const mariadbSignalTableDDL = "CREATE TABLE debezium_signal (id VARCHAR(64) PRIMARY KEY, type VARCHAR(32) NOT NULL, data VARCHAR(2048) NULL)"

// mariadbSession is a testDB on MariaDB.
type mariadbSession struct{ conn *client.Conn }

func (s mariadbSession) exec(_ context.Context, sql string) error {
	_, err := s.conn.Execute(sql)
	return err
}

func (s mariadbSession) idValues(_ context.Context, sql string) (map[int]int64, error) {
	res, err := s.conn.Execute(sql)
	if err != nil {
		return nil, err
	}
	defer res.Close()
	m := make(map[int]int64, len(res.Values))
	for i := range res.Values {
		id, err := res.GetInt(i, 0)
		if err != nil {
			return nil, err
		}
		v, err := res.GetInt(i, 1)
		if err != nil {
			return nil, err
		}
		m[int(id)] = v
	}
	return m, nil
}

func (s mariadbSession) close() { s.conn.Close() }

// mariadbSessions opens sessions on the bed's database, for churn.
func (b *mariadbBed) sessions() func(context.Context) (testDB, error) {
	return func(ctx context.Context) (testDB, error) {
		conn, err := testenv.ConnectMariaDB(ctx, b.dsn, nil)
		if err != nil {
			return nil, err
		}
		return mariadbSession{conn}, nil
	}
}

// newMariaDBIncrementalBed is a bed with the signal table, which the capture user may write its
// watermarks into, and table (id INT PRIMARY KEY, v BIGINT) holding rows 1..rows with v = id.
func newMariaDBIncrementalBed(t *testing.T, ctx context.Context, table string, rows int, ddl ...string) *mariadbBed {
	t.Helper()
	b := newMariaDBBed(t, ctx, append([]string{mariadbSignalTableDDL,
		fmt.Sprintf("CREATE TABLE %s (id INT PRIMARY KEY, v BIGINT NOT NULL)", table)}, ddl...)...)
	grantee := fmt.Sprintf("'%s'@'%%'", testenv.MariaDBCaptureUser)
	signalTable := fmt.Sprintf("`%s`.debezium_signal", b.dsn.DB)
	b.exec(b.db, fmt.Sprintf("GRANT INSERT, DELETE ON %s TO %s", signalTable, grantee))
	// The server keeps a table's grant after the table is dropped: revoked before the database goes.
	t.Cleanup(func() { b.db.Execute(fmt.Sprintf("REVOKE INSERT, DELETE ON %s FROM %s", signalTable, grantee)) })
	for first := 1; first <= rows; first += 1000 {
		values := make([]string, 0, 1000)
		for id := first; id < first+1000 && id <= rows; id++ {
			values = append(values, fmt.Sprintf("(%d, %d)", id, id))
		}
		b.exec(b.db, fmt.Sprintf("INSERT INTO %s VALUES %s", table, strings.Join(values, ", ")))
	}
	return b
}

// incrementalConnector is the bed's connector with the signal table and chunks of chunk rows, taking signals
// from the signal table and the REST API; snapshot.mode no_data, so that only the incremental snapshot
// reads the tables' rows.
func (b *mariadbBed) incrementalConnector(chunk int, extra map[string]string) map[string]string {
	conn := b.connector("inc", map[string]string{"snapshot.mode": "no_data", "signal.data.collection": b.dsn.DB + ".debezium_signal",
		"signal.enabled.channels":         "source,rest",
		"incremental.snapshot.chunk.size": fmt.Sprint(chunk)})
	for k, v := range extra {
		conn[k] = v
	}
	return conn
}

// TestMariaDBIncrementalSnapshotUnderConcurrentChanges requests an incremental snapshot through the signal
// table while rows are updated, deleted and inserted all along: the table rebuilt from the topic equals
// the database's, so no stale chunk row overwrote a newer streamed change, and the rows the changes left
// alone were read by the snapshot.
func TestMariaDBIncrementalSnapshotUnderConcurrentChanges(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	// MariaDB reads a window in milliseconds: many small windows keep the snapshot running under the churn.
	const rows, chunk = 10000, 25
	b := newMariaDBIncrementalBed(t, ctx, "orders", rows)
	p := b.start(workerProps(b.brokers, filepath.Join(b.dir, "offsets.dat")), b.incrementalConnector(chunk, nil))

	stop := make(chan struct{})
	wait, err := churn(ctx, b.sessions(), "orders", rows, stop)
	if err != nil {
		t.Fatal(err)
	}
	b.exec(b.db, fmt.Sprintf(`INSERT INTO debezium_signal VALUES ('inc-1', 'execute-snapshot', '{"data-collections": ["%s\\\\.ord.*"]}')`, b.dsn.DB))
	waitLog(t, p, "incremental snapshot completed")
	close(stop)
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	topic := b.prefix + "." + b.dsn.DB + ".orders"
	got := waitTableMatches(t, ctx, b.broker, topic, tableRows(t, ctx, mariadbSession{b.db}, "orders"), p)
	if len(got.snapshot) < rows/2 {
		t.Fatalf("the incremental snapshot read %d rows of %d", len(got.snapshot), rows)
	}
	t.Logf("the incremental snapshot emitted %d rows; the others were superseded by streamed changes", len(got.snapshot))
	// The signal table's own records: the signal, then an open and a close watermark per window, the last
	// window finding the table done.
	sig := b.readAll(b.prefix + "." + b.dsn.DB + ".debezium_signal")
	opens, closes := 0, 0
	for _, rec := range sig {
		opens += strings.Count(string(rec.Value), `"type":"snapshot-window-open"`)
		closes += strings.Count(string(rec.Value), `"type":"snapshot-window-close"`)
	}
	if windows := (len(got.snapshot) + chunk - 1) / chunk; opens != closes || opens <= windows {
		t.Fatalf("%d records on the signal table's topic: %d open and %d close watermarks for %d snapshot rows", len(sig), opens, closes, len(got.snapshot))
	}
}

// TestMariaDBIncrementalSnapshotResumesAfterKill requests an incremental snapshot through the REST API
// (watermarks insert_delete), kills cdcd with SIGKILL in the middle of it and restarts it: the snapshot
// resumes from the offset's incremental_snapshot_* keys, every row arrives, and what is read twice is
// bounded by what the offset had not yet recorded.
func TestMariaDBIncrementalSnapshotResumesAfterKill(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	const rows, chunk, beforeKill = 6000, 50, 30
	b := newMariaDBIncrementalBed(t, ctx, "items", rows)
	release := b.holdWindowsAfter(beforeKill)
	worker := workerProps(b.brokers, filepath.Join(b.dir, "offsets.dat"))
	conn := b.incrementalConnector(chunk, map[string]string{"incremental.snapshot.watermarking.strategy": "insert_delete"})
	p := b.start(worker, conn)
	reply := p.restAPI().expect("POST", "/connectors/inc/signals", fmt.Sprintf(`{"type": "execute-snapshot", "data": {"data-collections": ["%s.items"]}}`, b.dsn.DB), 202)
	if !strings.Contains(reply, `"id":"rest-`) {
		t.Fatalf("the signal's reply %s names no id", reply)
	}
	topic := b.prefix + "." + b.dsn.DB + ".items"
	// The held window's open watermark is written when the one before it closes, before that one's rows go out.
	waitSnapshotRows(t, ctx, b.broker, topic, (beforeKill-1)*chunk, p)
	waitDurableChunk(t, worker["offset.storage.file.filename"], p)
	p.kill()
	release()
	if strings.Contains(p.log.String(), "incremental snapshot completed") {
		t.Fatal("the snapshot completed before the kill: nothing to resume")
	}
	maxAgain := deliveredPastDurable(t, worker["offset.storage.file.filename"], rebuildTable(t, b.readAll(topic)))
	p = b.start(worker, conn)
	waitLog(t, p, "incremental snapshot in progress; reading its next chunk")
	waitLog(t, p, "incremental snapshot completed")
	got := waitTableMatches(t, ctx, b.broker, topic, tableRows(t, ctx, mariadbSession{b.db}, "items"), p)
	checkResumed(t, got, rows, chunk, maxAgain)
	// insert_delete deletes each open watermark to close its window: only the window the kill
	// interrupted may have left its row behind, as Debezium's would.
	if left := tableRows(t, ctx, mariadbSession{b.db}, "(SELECT 0 AS id, COUNT(*) AS v FROM debezium_signal) AS n"); left[0] > 1 {
		t.Fatalf("%d watermarks left in the signal table", left[0])
	}
}

// holdWindowsAfter makes the incremental snapshot wait at the open watermark of its window after the
// first windows ones, until release is called: a trigger on the signal table counts the open watermarks
// (insert_delete deletes them) and makes the next one wait for a row lock this test holds, so that a kill
// lands in the middle of the snapshot however fast the server reads its chunks.
func (b *mariadbBed) holdWindowsAfter(windows int) (release func()) {
	b.t.Helper()
	for _, sql := range []string{"CREATE TABLE window_count (n INT NOT NULL)", "INSERT INTO window_count VALUES (0)",
		"CREATE TABLE window_gate (id INT PRIMARY KEY)", "INSERT INTO window_gate VALUES (1)",
		fmt.Sprintf(`CREATE TRIGGER hold_window BEFORE INSERT ON debezium_signal FOR EACH ROW BEGIN
	IF NEW.type = 'snapshot-window-open' THEN
		UPDATE window_count SET n = n + 1;
		IF (SELECT n FROM window_count) > %d THEN
			SELECT id INTO @held FROM window_gate WHERE id = 1 FOR UPDATE;
		END IF;
	END IF;
END`, windows)} {
		b.exec(b.db, sql)
	}
	gate := b.session()
	b.exec(gate, "BEGIN")
	b.exec(gate, "SELECT id FROM window_gate WHERE id = 1 FOR UPDATE")
	return func() { b.exec(gate, "COMMIT") }
}

// deliveredPastDurable counts the snapshot rows delivered with a key past the one the offsets file last
// recorded: what a resumed snapshot may read again, and nothing more.
func deliveredPastDurable(t *testing.T, offsetsFile string, delivered tableState) int {
	t.Helper()
	durable, n := durableChunkKey(t, offsetsFile), 0
	for id := range delivered.snapshot {
		if id > durable {
			n++
		}
	}
	return n
}

// waitDurableChunk waits until the offsets file records a chunk of an incremental snapshot, so that a kill
// leaves one to resume in the middle of the table.
func waitDurableChunk(t *testing.T, offsetsFile string, p *cdcdProcess) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); durableChunkKey(t, offsetsFile) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) || p.exited() {
			t.Fatalf("the offsets file records no chunk of the snapshot; log:\n%s", tail(p.log.String(), 4000))
		}
	}
}

// durableChunkKey is the integer key an incremental snapshot last recorded in the offsets file
// (incremental_snapshot_primary_key, a Java-serialised Object[]), 0 when it recorded none.
func durableChunkKey(t *testing.T, path string) int {
	t.Helper()
	store, err := offsets.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	key := 0
	for _, e := range store.Entries() {
		var v struct {
			PrimaryKey string `json:"incremental_snapshot_primary_key"`
		}
		if err := json.Unmarshal(e.Value, &v); err != nil || v.PrimaryKey == "" {
			continue
		}
		b, err := hex.DecodeString(v.PrimaryKey)
		if err != nil {
			t.Fatal(err)
		}
		vals, err := javacompat.DecodeObjectArray(b)
		if err == nil && vals == nil { // a snapshot that has read no chunk yet
			continue
		}
		if err != nil || len(vals) != 1 {
			t.Fatalf("incremental_snapshot_primary_key %s: %v %v", v.PrimaryKey, vals, err)
		}
		if n, ok := vals[0].(int32); ok {
			key = int(n)
		}
	}
	return key
}

// TestMariaDBIncrementalSnapshotSignals drives a snapshot through the signal file and the REST API:
// paused, it reads no further chunk while streaming goes on; resumed, it completes; a stop through the
// signal table ends a second one; the log channel tells of both; a set-binlog-position signal naming no
// binlog file is refused in the log.
func TestMariaDBIncrementalSnapshotSignals(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	const rows = 2000
	b := newMariaDBIncrementalBed(t, ctx, "slow", rows, "CREATE TABLE ticks (id INT PRIMARY KEY, v BIGINT NOT NULL)")
	signalFile := filepath.Join(t.TempDir(), "signals.txt")
	conn := b.incrementalConnector(20, map[string]string{"signal.enabled.channels": "source,file,rest", "signal.file": signalFile,
		"signal.poll.interval.ms": "100", "notification.enabled.channels": "log"})
	release := b.holdWindowsAfter(5)
	p := b.start(workerProps(b.brokers, filepath.Join(b.dir, "offsets.dat")), conn)
	api := p.restAPI()
	slowTopic := b.prefix + "." + b.dsn.DB + ".slow"
	snapshotRows := func() int {
		n := 0
		for _, times := range rebuildTable(t, b.readAll(slowTopic)).snapshot {
			n += times
		}
		return n
	}
	// tick commits a change of another table and waits until its event is in Kafka: the stream has passed
	// every watermark written before it.
	tickID := 0
	tick := func() {
		t.Helper()
		tickID++
		b.exec(b.db, fmt.Sprintf("INSERT INTO ticks VALUES (%d, 0)", tickID))
		b.read(b.prefix+"."+b.dsn.DB+".ticks", tickID)
	}
	writeSignal := func(line string) {
		t.Helper()
		if err := os.WriteFile(signalFile, []byte(line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	api.expect("POST", "/connectors/inc/signals", `{"id": "pos-1", "type": "set-binlog-position", "data": {"binlog_filename": "x", "binlog_position": 4}}`, 202)
	waitLog(t, p, `binlog_filename \"x\" is not a binlog file name`)
	writeSignal(fmt.Sprintf(`{"id": "file-1", "type": "execute-snapshot", "data": {"data-collections": ["%s.slow"]}}`, b.dsn.DB))
	waitLog(t, p, "incremental snapshot requested")
	pauseThenResume(t, p, release, writeSignal, tick, snapshotRows, rows)
	waitTableMatches(t, ctx, b.broker, slowTopic, tableRows(t, ctx, mariadbSession{b.db}, "slow"), p)
	waitLog(t, p, `type=TABLE_SCAN_COMPLETED`) // the log notification channel

	// A second snapshot, stopped through the signal table: it ends before reading the whole table.
	b.exec(b.db, fmt.Sprintf(`INSERT INTO debezium_signal VALUES ('inc-2', 'execute-snapshot', '{"data-collections": ["%s.slow"]}'),
		('stop-2', 'stop-snapshot', '{"data-collections": ["%s.slow"], "type": "incremental"}')`, b.dsn.DB, b.dsn.DB))
	waitLog(t, p, "incremental snapshot of tables stopped")
	waitLog(t, p, "type=ABORTED")
	tick()
	if n := snapshotRows(); n >= 2*rows {
		t.Fatalf("the stopped snapshot read the whole table again (%d snapshot rows)", n)
	}
	if strings.Count(p.log.String(), "incremental snapshot completed") != 1 {
		t.Fatalf("the stopped snapshot completed; log:\n%s", tail(p.log.String(), 4000))
	}
}

// TestMariaDBReadOnlyIncrementalSnapshot runs an incremental snapshot with read.only=true, requested
// through the REST API, for a connector whose user may not write anything (the test bed's capture
// grants) and has no signal table: the windows' watermarks are the server's GTID positions. Rows change
// all along, and the table rebuilt from the topic equals the database's, so no stale chunk row
// overwrote a newer streamed change.
func TestMariaDBReadOnlyIncrementalSnapshot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	const rows, chunk = 10000, 25
	b := newMariaDBBed(t, ctx, "CREATE TABLE ro (id INT PRIMARY KEY, v BIGINT NOT NULL)")
	for first := 1; first <= rows; first += 1000 {
		values := make([]string, 0, 1000)
		for id := first; id < first+1000; id++ {
			values = append(values, fmt.Sprintf("(%d, %d)", id, id))
		}
		b.exec(b.db, "INSERT INTO ro VALUES "+strings.Join(values, ", "))
	}
	conn := b.connector("ro", map[string]string{"snapshot.mode": "no_data", "read.only": "true", "signal.enabled.channels": "rest",
		"incremental.snapshot.chunk.size": fmt.Sprint(chunk)})
	p := b.start(workerProps(b.brokers, filepath.Join(b.dir, "offsets.dat")), conn)
	defer p.stop()
	stop := make(chan struct{})
	wait, err := churn(ctx, b.sessions(), "ro", rows, stop)
	if err != nil {
		t.Fatal(err)
	}
	p.restAPI().expect("POST", "/connectors/ro/signals", fmt.Sprintf(`{"id": "ro-1", "type": "execute-snapshot", "data": {"data-collections": ["%s.ro"]}}`, b.dsn.DB), 202)
	waitLog(t, p, "incremental snapshot completed")
	close(stop)
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	got := waitTableMatches(t, ctx, b.broker, b.prefix+"."+b.dsn.DB+".ro", tableRows(t, ctx, mariadbSession{b.db}, "ro"), p)
	if len(got.snapshot) < rows/2 {
		t.Fatalf("the read-only incremental snapshot read %d rows of %d", len(got.snapshot), rows)
	}
	t.Logf("the read-only incremental snapshot emitted %d rows; the others were superseded by streamed changes", len(got.snapshot))
}

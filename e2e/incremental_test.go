package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// Incremental snapshots on the real PostgreSQL and Kafka: requested through each signal channel, under
// concurrent changes, across a kill -9, paused, resumed and stopped. Debezium's own bytes are held by the
// incremental-snapshot golden (TestPostgresGoldens).

const signalTableDDL = `CREATE TABLE public.debezium_signal (id varchar(64) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048) NULL)`

// incrementalConnector is pgConnector for table with the signal table and chunks of chunk rows, taking
// signals from the signal table and the REST API; snapshot.mode no_data, so that only the incremental
// snapshot reads the table's rows.
func incrementalConnector(t testing.TB, dsn, prefix, table string, chunk int) map[string]string {
	conn := pgConnector(t, dsn, "inc", prefix, table)
	conn["snapshot.mode"] = "no_data"
	conn["signal.data.collection"] = "public.debezium_signal"
	conn["signal.enabled.channels"] = "source,rest"
	conn["incremental.snapshot.chunk.size"] = fmt.Sprint(chunk)
	return conn
}

// tableState is a table rebuilt from its topic: row id → the after image's v, and the ids an incremental
// snapshot read (op "r", source.snapshot "incremental") with how often.
type tableState struct {
	rows     map[int]int64
	snapshot map[int]int
}

func rebuildTable(t testing.TB, recs []capture.Record) tableState {
	t.Helper()
	s := tableState{rows: map[int]int64{}, snapshot: map[int]int{}}
	for _, rec := range recs {
		if rec.Value == nil {
			continue // a tombstone
		}
		var ev struct {
			Payload struct {
				Op     string `json:"op"`
				Before *struct {
					ID int `json:"id"`
				} `json:"before"`
				After *struct {
					ID int   `json:"id"`
					V  int64 `json:"v"`
				} `json:"after"`
				Source struct {
					Snapshot string `json:"snapshot"`
				} `json:"source"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(rec.Value, &ev); err != nil {
			t.Fatalf("%s offset %d: %v", rec.Topic, rec.Offset, err)
		}
		p := ev.Payload
		switch {
		case p.Op == "d" && p.Before != nil:
			delete(s.rows, p.Before.ID)
		case p.After != nil:
			s.rows[p.After.ID] = p.After.V
			if p.Op == "r" && p.Source.Snapshot == "incremental" {
				s.snapshot[p.After.ID]++
			}
		}
	}
	return s
}

// testDB is a session on the database under test, PostgreSQL's or MariaDB's: what churn and tableRows
// need of it. The statements they send are plain SQL both understand.
type testDB interface {
	exec(ctx context.Context, sql string) error
	// idValues runs a query of two integer columns (id, v) and returns its rows as id → v.
	idValues(ctx context.Context, sql string) (map[int]int64, error)
	close()
}

// pgSession is a testDB on PostgreSQL.
type pgSession struct{ conn *pgx.Conn }

func (s pgSession) exec(ctx context.Context, sql string) error {
	_, err := s.conn.Exec(ctx, sql)
	return err
}

func (s pgSession) idValues(ctx context.Context, sql string) (map[int]int64, error) {
	rows, err := s.conn.Query(ctx, sql)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[int]int64{}
	for rows.Next() {
		var id int
		var v int64
		if err := rows.Scan(&id, &v); err != nil {
			return nil, err
		}
		m[id] = v
	}
	return m, rows.Err()
}

func (s pgSession) close() { s.conn.Close(context.Background()) }

// pgSessions opens sessions on the PostgreSQL database dsn, for churn.
func pgSessions(dsn string) func(context.Context) (testDB, error) {
	return func(ctx context.Context) (testDB, error) {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return nil, err
		}
		return pgSession{conn}, nil
	}
}

// tableRows reads the table's rows as the test compares them: id → v.
func tableRows(t testing.TB, ctx context.Context, db testDB, table string) map[int]int64 {
	t.Helper()
	m, err := db.idValues(ctx, "SELECT id, v FROM "+table)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// waitTableMatches reads the topic until the rebuilt table equals the database's, and returns it.
func waitTableMatches(t testing.TB, ctx context.Context, broker *capture.Broker, topic string, want map[int]int64, p *cdcdProcess) tableState {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		recs, err := broker.Read(ctx, capture.Selection{Topics: []string{topic}})
		if err != nil {
			t.Fatal(err)
		}
		got := rebuildTable(t, recs)
		diff := rebuiltDiff(want, got.rows)
		if diff == "" {
			return got
		}
		if time.Now().After(deadline) || p.exited() {
			t.Fatalf("the table rebuilt from %s differs from the database: %s; log:\n%s", topic, diff, tail(p.log.String(), 6000))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func rebuiltDiff(want, got map[int]int64) string {
	asText := func(m map[int]int64) map[string]string {
		out := make(map[string]string, len(m))
		for id, v := range m {
			out[fmt.Sprint(id)] = fmt.Sprint(v)
		}
		return out
	}
	return strings.Join(stateDiff(asText(want), asText(got)), "; ")
}

// churn updates, deletes and inserts rows of table on a session of its own until stop is closed; ids
// above nextID are new.
func churn(ctx context.Context, connect func(context.Context) (testDB, error), table string, nextID int, stop <-chan struct{}) (func() error, error) {
	conn, err := connect(ctx)
	if err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	var runErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer conn.close()
		rng := rand.New(rand.NewPCG(1, 2))
		for {
			select {
			case <-stop:
				return
			default:
			}
			var err error
			switch n := rng.IntN(10); {
			case n < 6:
				err = conn.exec(ctx, fmt.Sprintf("UPDATE %s SET v = v + 1 WHERE id = %d", table, 1+rng.IntN(nextID)))
			case n < 8:
				err = conn.exec(ctx, fmt.Sprintf("DELETE FROM %s WHERE id = %d", table, 1+rng.IntN(nextID)))
			default:
				nextID++
				err = conn.exec(ctx, fmt.Sprintf("INSERT INTO %s VALUES (%d, 0)", table, nextID))
			}
			if err != nil {
				runErr = err
				return
			}
		}
	}()
	return func() error { wg.Wait(); return runErr }, nil
}

// TestIncrementalSnapshotUnderConcurrentChanges requests an incremental snapshot through the signal table
// while rows are updated, deleted and inserted all along: the table rebuilt from the topic equals the
// database's, so no stale chunk row overwrote a newer streamed change, and every row the changes left alone
// was read by the snapshot.
func TestIncrementalSnapshotUnderConcurrentChanges(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	const rows = 3000
	db := connectPostgres(t, ctx, dsn, signalTableDDL,
		"CREATE TABLE public.orders (id int PRIMARY KEY, v bigint NOT NULL)",
		fmt.Sprintf("INSERT INTO public.orders SELECT g, 0 FROM generate_series(1, %d) g", rows))
	conn := incrementalConnector(t, dsn, prefix, "public.orders", 100)
	p := startStandalone(t, t.TempDir(), workerProps(brokers, filepath.Join(t.TempDir(), "offsets.dat")), conn)
	waitSlotActive(t, ctx, db, conn["slot.name"], p)

	stop := make(chan struct{})
	wait, err := churn(ctx, pgSessions(dsn), "public.orders", rows, stop)
	if err != nil {
		t.Fatal(err)
	}
	execAll(t, ctx, db, `INSERT INTO public.debezium_signal VALUES ('inc-1', 'execute-snapshot', '{"data-collections": ["public\\.ord.*"]}')`)
	waitLog(t, p, "incremental snapshot completed")
	close(stop)
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	broker := newBroker(t, brokers)
	got := waitTableMatches(t, ctx, broker, prefix+".public.orders", tableRows(t, ctx, pgSession{db}, "public.orders"), p)
	if len(got.snapshot) < rows/2 {
		t.Fatalf("the incremental snapshot read %d rows of %d", len(got.snapshot), rows)
	}
	t.Logf("the incremental snapshot emitted %d rows; the others were superseded by streamed changes", len(got.snapshot))
	// The signal table's own records are on its topic, as Debezium writes them: the signal, then an open
	// and a close watermark per window, the last window finding the table done.
	for deadline := time.Now().Add(time.Minute); ; {
		sig, err := broker.Read(ctx, capture.Selection{Topics: []string{prefix + ".public.debezium_signal"}})
		if err != nil {
			t.Fatal(err)
		}
		opens, closes := 0, 0
		for _, rec := range sig {
			opens += strings.Count(string(rec.Value), `"type":"snapshot-window-open"`)
			closes += strings.Count(string(rec.Value), `"type":"snapshot-window-close"`)
		}
		if windows := (len(got.snapshot) + 99) / 100; opens == closes && opens > windows && len(sig) == 1+opens+closes {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d records on the signal table's topic: %d open and %d close watermarks for %d snapshot rows", len(sig), opens, closes, len(got.snapshot))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestIncrementalSnapshotResumesAfterKill requests an incremental snapshot through the REST API, kills
// cdcd with SIGKILL in the middle of it and restarts it: the snapshot resumes from the offset (Debezium's
// incremental_snapshot_* keys), every row arrives, and what is read twice is bounded by what the offset
// had not yet recorded.
func TestIncrementalSnapshotResumesAfterKill(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	const rows, chunk, beforeKill = 6000, 100, 15
	db := connectPostgres(t, ctx, dsn, signalTableDDL,
		"CREATE TABLE public.items (id int PRIMARY KEY, v bigint NOT NULL)",
		fmt.Sprintf("INSERT INTO public.items SELECT g, g FROM generate_series(1, %d) g", rows))
	conn := incrementalConnector(t, dsn, prefix, "public.items", chunk)
	worker := workerProps(brokers, filepath.Join(t.TempDir(), "offsets.dat"))
	files := writeStandalone(t, t.TempDir(), worker, conn)
	p := files.start()
	waitSlotActive(t, ctx, db, conn["slot.name"], p)
	release := holdPostgresWindowsAfter(t, ctx, dsn, db, beforeKill) // after the slot: creating one waits for the gate's transaction
	reply := p.restAPI().expect("POST", "/connectors/inc/signals", `{"type": "execute-snapshot", "data": {"data-collections": ["public.items"], "type": "INCREMENTAL"}}`, 202)
	if !strings.Contains(reply, `"id":"rest-`) {
		t.Fatalf("the signal's reply %s names no id", reply)
	}

	broker := newBroker(t, brokers)
	topic := prefix + ".public.items"
	// The held window's open watermark is written when the one before it closes, before that one's rows go out.
	waitSnapshotRows(t, ctx, broker, topic, (beforeKill-1)*chunk, p)
	waitDurableChunk(t, worker["offset.storage.file.filename"], p)
	p.kill()
	release()
	if strings.Contains(p.log.String(), "incremental snapshot completed") {
		t.Fatal("the snapshot completed before the kill: nothing to resume")
	}
	delivered, err := broker.Read(ctx, capture.Selection{Topics: []string{topic}})
	if err != nil {
		t.Fatal(err)
	}
	maxAgain := deliveredPastDurable(t, worker["offset.storage.file.filename"], rebuildTable(t, delivered))
	p = files.start()
	waitLog(t, p, "incremental snapshot in progress; reading its next chunk")
	waitLog(t, p, "incremental snapshot completed")
	got := waitTableMatches(t, ctx, broker, topic, tableRows(t, ctx, pgSession{db}, "public.items"), p)
	checkResumed(t, got, rows, chunk, maxAgain)
}

// holdPostgresWindowsAfter makes the incremental snapshot wait at the open watermark of its window after
// the first windows ones, until release is called: a trigger on the signal table makes that insert wait
// for a row lock this test holds, so that a kill lands in the middle of the snapshot however fast the
// machine reads its chunks.
func holdPostgresWindowsAfter(t *testing.T, ctx context.Context, dsn string, db *pgx.Conn, windows int) (release func()) {
	t.Helper()
	execAll(t, ctx, db, "CREATE TABLE public.window_gate (id int PRIMARY KEY)", "INSERT INTO public.window_gate VALUES (1)",
		fmt.Sprintf(`CREATE FUNCTION public.hold_window() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
	IF NEW.type = 'snapshot-window-open' AND (SELECT count(*) FROM public.debezium_signal WHERE type = 'snapshot-window-open') >= %d THEN
		PERFORM 1 FROM public.window_gate FOR UPDATE;
	END IF;
	RETURN NEW;
END $$`, windows),
		"CREATE TRIGGER hold_window BEFORE INSERT ON public.debezium_signal FOR EACH ROW EXECUTE FUNCTION public.hold_window()")
	gate := connectPostgres(t, ctx, dsn, "BEGIN", "SELECT 1 FROM public.window_gate FOR UPDATE")
	return func() { execAll(t, ctx, gate, "COMMIT") }
}

// waitSnapshotRows waits until topic holds n records; it holds only the snapshot's rows (no_data, no
// changes), so they are counted, not read.
func waitSnapshotRows(t *testing.T, ctx context.Context, broker *capture.Broker, topic string, n int, p *cdcdProcess) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if got, err := broker.Count(ctx, capture.Selection{Topics: []string{topic}}); err == nil && got >= int64(n) {
			return
		}
		if time.Now().After(deadline) || p.exited() {
			t.Fatalf("the snapshot did not get going; log:\n%s", tail(p.log.String(), 4000))
		}
	}
}

// checkResumed checks a snapshot of rows 1..rows killed and resumed: every row was read, and at most
// maxAgain were read twice.
func checkResumed(t *testing.T, got tableState, rows, chunk, maxAgain int) {
	t.Helper()
	again := 0
	for id := 1; id <= rows; id++ {
		switch n := got.snapshot[id]; {
		case n == 0:
			t.Fatalf("row %d was never read by the snapshot", id)
		case n > 1:
			again += n - 1
		}
	}
	t.Logf("after the kill, %d rows were read again (chunks of %d, at most %d)", again, chunk, maxAgain)
	if again > maxAgain {
		t.Fatalf("%d rows read twice, more than %d: the snapshot did not resume from its offset", again, maxAgain)
	}
}

// pauseThenResume pauses the running snapshot of rows rows through the REST API, checks that it reads no
// further chunk while the stream goes on (each tick commits a change elsewhere and waits for its event),
// then resumes it through the signal file and waits for it to complete. The snapshot is held at a window
// until the pause is asked for (release lets it go), so that it cannot finish first.
func pauseThenResume(t *testing.T, p *cdcdProcess, release func(), writeSignal func(string), tick func(), snapshotRows func() int, rows int) {
	t.Helper()
	p.restAPI().expect("POST", "/connectors/inc/signals", `{"id": "pause-1", "type": "pause-snapshot"}`, 202)
	release()
	waitLog(t, p, "incremental snapshot paused")
	tick()
	paused := snapshotRows()
	tick()
	tick()
	if n := snapshotRows(); n != paused {
		t.Fatalf("a paused snapshot went on reading: %d rows, then %d", paused, n)
	}
	if paused >= rows {
		t.Fatalf("the snapshot had finished (%d rows) before the pause", paused)
	}
	writeSignal(`{"id": "resume-1", "type": "resume-snapshot"}`)
	waitLog(t, p, "incremental snapshot resumed")
	waitLog(t, p, "incremental snapshot completed")
}

// TestIncrementalSnapshotSignals drives a snapshot through the signal file and the REST API: paused, it
// reads no further chunk while streaming goes on; resumed, it completes; a stop ends a second one; a log
// signal's message reaches the log; bad signals are answered or logged, never acted on.
func TestIncrementalSnapshotSignals(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	const rows = 2000
	db := connectPostgres(t, ctx, dsn, signalTableDDL,
		"CREATE TABLE public.slow (id int PRIMARY KEY, v bigint NOT NULL)",
		fmt.Sprintf("INSERT INTO public.slow SELECT g, g FROM generate_series(1, %d) g", rows),
		"CREATE TABLE public.ticks (id int PRIMARY KEY, v bigint NOT NULL)")
	conn := incrementalConnector(t, dsn, prefix, "public.slow,public.ticks", 20)
	signalFile := filepath.Join(t.TempDir(), "signals.txt")
	conn["signal.enabled.channels"] = "source,file,rest"
	conn["signal.file"] = signalFile
	conn["signal.poll.interval.ms"] = "100"
	p := startStandalone(t, t.TempDir(), workerProps(brokers, filepath.Join(t.TempDir(), "offsets.dat")), conn)
	waitSlotActive(t, ctx, db, conn["slot.name"], p)
	release := holdPostgresWindowsAfter(t, ctx, dsn, db, 5)
	api := p.restAPI()

	// Bad signals: refused by the REST API, or logged and skipped.
	api.expect("POST", "/connectors/inc/signals", `{"data": {}}`, 400)
	api.expect("POST", "/connectors/inc/signals", `{"type": "snapshot-window-open", "id": "x"}`, 400)
	api.expect("POST", "/connectors/nope/signals", `{"type": "log", "data": {"message": "x"}}`, 404)
	api.expect("POST", "/connectors/inc/signals", `{"id": "bad-1", "type": "execute-snapshot", "data": {"data-collections": []}}`, 202)
	waitLog(t, p, `names no table to snapshot`)
	api.expect("POST", "/connectors/inc/signals", `{"id": "log-1", "type": "log", "data": {"message": "hello from the operator"}}`, 202)
	waitLog(t, p, "hello from the operator")

	writeSignal := func(line string) {
		t.Helper()
		if err := os.WriteFile(signalFile, []byte(line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	broker := newBroker(t, brokers)
	snapshotRows := func() int {
		recs, err := broker.Read(ctx, capture.Selection{Topics: []string{prefix + ".public.slow"}})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, times := range rebuildTable(t, recs).snapshot {
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
		execAll(t, ctx, db, fmt.Sprintf("INSERT INTO public.ticks VALUES (%d, 0)", tickID))
		newEventReader(t, p.log.String, []string{prefix + ".public.ticks"}, kgo.SeedBrokers(brokers...)).waitFor(ctx, tickID)
	}

	writeSignal(`{"id": "file-1", "type": "execute-snapshot", "data": {"data-collections": ["public.slow"]}}`)
	waitLog(t, p, "incremental snapshot requested")
	pauseThenResume(t, p, release, writeSignal, tick, snapshotRows, rows)
	waitTableMatches(t, ctx, broker, prefix+".public.slow", tableRows(t, ctx, pgSession{db}, "public.slow"), p)

	// A second snapshot, stopped by the signal table: it ends before reading the whole table.
	execAll(t, ctx, db, `INSERT INTO public.debezium_signal VALUES ('inc-2', 'execute-snapshot', '{"data-collections": ["public.slow"]}')`,
		`INSERT INTO public.debezium_signal VALUES ('stop-2', 'stop-snapshot', '{"data-collections": ["public.slow"], "type": "incremental"}')`)
	waitLog(t, p, "incremental snapshot of tables stopped")
	tick()
	if n := snapshotRows(); n >= 2*rows {
		t.Fatalf("the stopped snapshot read the whole table again (%d snapshot rows)", n)
	}
	if strings.Count(p.log.String(), "incremental snapshot completed") != 1 {
		t.Fatalf("the stopped snapshot completed; log:\n%s", tail(p.log.String(), 4000))
	}
}

// TestIncrementalSnapshotHandoverWithDebezium hands one incremental snapshot back and forth between
// Kafka Connect + Debezium 3.6.1 and cdcd on the same standalone offsets file: Debezium starts it and is
// stopped in the middle; cdcd resumes it from Debezium's offset (incremental_snapshot_* keys, Java
// serialisation) and pauses on a signal; Debezium resumes it from cdcd's offset and completes it. Every row
// is read, and neither resumption starts the table again from its first key.
func TestIncrementalSnapshotHandoverWithDebezium(t *testing.T) {
	if os.Getenv("CDCD_E2E") == "" {
		t.Skip("set CDCD_E2E=1 (make test does) to run the hand-over with the real Connect worker")
	}
	java, lib, plugins := connectInstall(t)
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	const rows, chunk = 6000, 50
	db := connectPostgres(t, ctx, dsn, signalTableDDL,
		"CREATE TABLE public.shared (id int PRIMARY KEY, v bigint NOT NULL)",
		fmt.Sprintf("INSERT INTO public.shared SELECT g, g FROM generate_series(1, %d) g", rows))
	dir := t.TempDir()
	offsetFile := filepath.Join(dir, "offsets.dat")
	worker := workerProps(brokers, offsetFile)
	worker["listeners"] = fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	worker["plugin.path"] = plugins
	conn := incrementalConnector(t, dsn, prefix, "public.shared", chunk)
	files := writeStandalone(t, dir, worker, conn)
	broker := newBroker(t, brokers)
	topic := prefix + ".public.shared"

	// snapshotRows lists, in topic order, the ids of the snapshot rows written by writer ("cdcd" or
	// "Debezium", told apart by source.version).
	snapshotRows := func() map[string][]int {
		t.Helper()
		recs, err := broker.Read(ctx, capture.Selection{Topics: []string{topic}})
		if err != nil && !errors.Is(err, capture.ErrNoTopic) {
			t.Fatal(err)
		}
		return incrementalRowsByWriter(recs)
	}
	waitRows := func(what string, done func(map[string][]int) bool, exited func() bool) map[string][]int {
		t.Helper()
		return waitIncrementalRows(t, what, snapshotRows, done, exited)
	}
	incrementalKey := func() string {
		t.Helper()
		raw, err := os.ReadFile(offsetFile)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(raw), "incremental_snapshot_primary_key") {
			t.Fatalf("the offsets file holds no incremental snapshot in progress")
		}
		return string(raw)
	}

	// 1. Debezium starts the snapshot and is stopped after a tenth of the table.
	debezium := startConnectWorker(t, java, lib, files.worker, files.connectors[0], filepath.Join(dir, "connect-1.log"))
	debezium.waitRunning(worker["listeners"], conn["name"])
	waitSlotActive(t, ctx, db, conn["slot.name"], nil)
	execAll(t, ctx, db, `INSERT INTO public.debezium_signal VALUES ('handover-1', 'execute-snapshot', '{"data-collections": ["public.shared"]}')`)
	waitRows("Debezium's first leg", func(m map[string][]int) bool { return len(m["Debezium"]) >= rows/10 }, debezium.exited)
	debezium.stop()
	incrementalKey()
	first := snapshotRows()
	debeziumMax := slices.Max(first["Debezium"])
	if debeziumMax >= rows {
		t.Fatal("Debezium completed the snapshot before it was stopped")
	}

	// 2. cdcd resumes from Debezium's offset; a pause signal, written while nothing runs, stops it again.
	execAll(t, ctx, db, `INSERT INTO public.debezium_signal VALUES ('handover-pause', 'pause-snapshot', NULL)`)
	p := files.start()
	waitLog(t, p, "incremental snapshot in progress; reading its next chunk")
	waitLog(t, p, "incremental snapshot paused")
	got := waitRows("cdcd's leg", func(m map[string][]int) bool { return len(m["cdcd"]) > 0 }, p.exited)
	if firstCdcd := got["cdcd"][0]; firstCdcd == 1 || firstCdcd > debeziumMax+1 {
		t.Fatalf("cdcd resumed at key %d; Debezium had read up to %d (of %d rows in its first %d)", firstCdcd, debeziumMax, rows, len(first["Debezium"]))
	}
	p.stop()
	incrementalKey()

	// 3. Debezium resumes from cdcd's offset and completes the snapshot.
	debezium = startConnectWorker(t, java, lib, files.worker, files.connectors[0], filepath.Join(dir, "connect-2.log"))
	debezium.waitRunning(worker["listeners"], conn["name"])
	final := waitRows("Debezium's last leg", func(m map[string][]int) bool {
		ids := m["Debezium"]
		return len(ids) > 0 && slices.Max(ids) == rows
	}, debezium.exited)
	debezium.stop()
	checkHandoverRows(t, rows, first, got, final)
}

// TestBlockingSnapshot asks for a blocking snapshot through the REST API while rows change all along:
// every row of the table at the snapshot arrives as a snapshot row (source.snapshot not "incremental"), the
// stream goes on afterwards, and the table rebuilt from the topic equals the database's. A kill -9 in the
// middle of a second, larger one resumes it from the offset (snapshot BLOCKING) before streaming on.
func TestBlockingSnapshot(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	const rows = 50000
	db := connectPostgres(t, ctx, dsn, signalTableDDL,
		"CREATE TABLE public.blk (id int PRIMARY KEY, v bigint NOT NULL)",
		fmt.Sprintf("INSERT INTO public.blk SELECT g, 0 FROM generate_series(1, %d) g", rows))
	conn := incrementalConnector(t, dsn, prefix, "public.blk", 100)
	conn["snapshot.fetch.size"] = "200"
	offsetsFile := filepath.Join(t.TempDir(), "offsets.dat")
	worker := workerProps(brokers, offsetsFile)
	// Flushed often, so that the kill usually lands while an offset of the snapshot is durable.
	worker["offset.flush.interval.ms"] = "50"
	files := writeStandalone(t, t.TempDir(), worker, conn)
	p := files.start()
	waitSlotActive(t, ctx, db, conn["slot.name"], p)
	broker := newBroker(t, brokers)
	topic := prefix + ".public.blk"

	stop := make(chan struct{})
	wait, err := churn(ctx, pgSessions(dsn), "public.blk", rows, stop)
	if err != nil {
		t.Fatal(err)
	}
	p.restAPI().expect("POST", "/connectors/inc/signals", `{"id": "blk-1", "type": "execute-snapshot", "data": {"data-collections": ["public.blk"], "type": "blocking"}}`, 202)
	// Killed once the durable offset says BLOCKING (a signal sent through the REST API lives only in the
	// process until then, in Debezium too): the restart must finish the snapshot from that offset.
	inProgress := func() bool {
		stored, err := os.ReadFile(offsetsFile)
		return err == nil && strings.Contains(string(stored), `"snapshot":"BLOCKING"`) && !strings.Contains(string(stored), `"snapshot_completed":true`)
	}
	finished := `msg="snapshot finished" connector=inc kind=BLOCKING`
	resume := true
	for deadline := time.Now().Add(2 * time.Minute); !inProgress(); {
		if strings.Contains(p.log.String(), finished) {
			// Done before an offset of it was durable. The process is not killed then: until an offset of
			// the snapshot is durable, the signal lives only in the process, and a kill would lose it whole.
			resume = false
			break
		}
		if time.Now().After(deadline) || p.exited() {
			t.Fatalf("no offset of the blocking snapshot became durable; log:\n%s", tail(p.log.String(), 4000))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !resume {
		t.Log("the blocking snapshot finished before an offset of it was durable; not killed")
	} else {
		p.kill()
		resumes := inProgress()
		p = files.start()
		if resumes {
			waitLog(t, p, "kind=BLOCKING") // the snapshot started line: resumed from the offset
			waitLog(t, p, "resumed=true")
			waitLog(t, p, finished)
		} else {
			// Offsets are made durable in order: one past the snapshot's follows the snapshot's last.
			t.Log("the offsets flushed before the kill recorded the snapshot's end; the restart had nothing to resume")
		}
	}
	close(stop)
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	waitTableMatches(t, ctx, broker, topic, tableRows(t, ctx, pgSession{db}, "public.blk"), p)
	recs, err := broker.Read(ctx, capture.Selection{Topics: []string{topic}})
	if err != nil {
		t.Fatal(err)
	}
	snapshotRows := map[int]bool{}
	for _, rec := range recs {
		var ev struct {
			Payload struct {
				Op    string `json:"op"`
				After struct {
					ID int `json:"id"`
				} `json:"after"`
				Source struct {
					Snapshot string `json:"snapshot"`
				} `json:"source"`
			} `json:"payload"`
		}
		if json.Unmarshal(rec.Value, &ev) == nil && ev.Payload.Op == "r" && ev.Payload.Source.Snapshot != "incremental" {
			snapshotRows[ev.Payload.After.ID] = true
		}
	}
	if len(snapshotRows) < rows/2 {
		t.Fatalf("the blocking snapshot delivered %d of about %d rows", len(snapshotRows), rows)
	}
}

// TestBlockingSnapshotStreamsWhatCommitsBeforeIt deletes rows that Kafka already holds in a transaction that
// commits after the stream paused for a blocking snapshot but before the snapshot's view (the snapshot's
// temporary slot waits for the transaction): the view no longer has the rows, so only the streamed deletes
// can remove them from the topic. They must not be dropped as already held by the snapshot.
func TestBlockingSnapshotStreamsWhatCommitsBeforeIt(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // beyond waitTableMatches' own bound
	defer cancel()
	db := connectPostgres(t, ctx, dsn, signalTableDDL,
		"CREATE TABLE public.blk (id int PRIMARY KEY, v bigint NOT NULL)",
		"INSERT INTO public.blk SELECT g, 0 FROM generate_series(1, 100) g")
	conn := incrementalConnector(t, dsn, prefix, "public.blk", 100)
	files := writeStandalone(t, t.TempDir(), workerProps(brokers, filepath.Join(t.TempDir(), "offsets.dat")), conn)
	p := files.start()
	defer p.stop()
	waitSlotActive(t, ctx, db, conn["slot.name"], p)
	broker := newBroker(t, brokers)
	topic := prefix + ".public.blk"
	execAll(t, ctx, db, "UPDATE public.blk SET v = 1 WHERE id <= 10")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		// Read fails while the topic does not exist yet.
		if recs, err := broker.Read(ctx, capture.Selection{Topics: []string{topic}}); err == nil && len(rebuildTable(t, recs).rows) == 10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the updates of rows 1-10 were not streamed; log:\n%s", tail(p.log.String(), 4000))
		}
	}
	deleter := connectPostgres(t, ctx, dsn)
	tx, err := deleter.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "DELETE FROM public.blk WHERE id <= 5"); err != nil {
		t.Fatal(err)
	}
	p.restAPI().expect("POST", "/connectors/inc/signals", `{"id": "blk-1", "type": "execute-snapshot", "data": {"data-collections": ["public.blk"], "type": "blocking"}}`, 202)
	// The snapshot's temporary slot waits for the open transaction: commit it only then.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		var waiting int
		if err := db.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'transactionid' AND NOT granted").Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		if time.Now().After(deadline) || p.exited() {
			t.Fatalf("the blocking snapshot never waited for the open transaction; log:\n%s", tail(p.log.String(), 4000))
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	waitLog(t, p, `msg="snapshot finished" connector=inc kind=BLOCKING`)
	waitTableMatches(t, ctx, broker, topic, tableRows(t, ctx, pgSession{db}, "public.blk"), p)
}

// incrementalRowsByWriter lists, in topic order, the ids of the incremental snapshot rows in recs by writer
// ("cdcd" or "Debezium", told apart by source.version), for the hand-overs between the two.
func incrementalRowsByWriter(recs []capture.Record) map[string][]int {
	byWriter := map[string][]int{}
	for _, rec := range recs {
		var ev struct {
			Payload struct {
				Op    string `json:"op"`
				After struct {
					ID int `json:"id"`
				} `json:"after"`
				Source struct {
					Version  string `json:"version"`
					Snapshot string `json:"snapshot"`
				} `json:"source"`
			} `json:"payload"`
		}
		if json.Unmarshal(rec.Value, &ev) != nil || ev.Payload.Op != "r" || ev.Payload.Source.Snapshot != "incremental" {
			continue
		}
		writer := "cdcd"
		if strings.HasSuffix(ev.Payload.Source.Version, ".Final") {
			writer = "Debezium"
		}
		byWriter[writer] = append(byWriter[writer], ev.Payload.After.ID)
	}
	return byWriter
}

// waitIncrementalRows reads the rows by writer until done says they are all there, failing the test after
// 3 minutes or once the writer running exited.
func waitIncrementalRows(t *testing.T, what string, read func() map[string][]int, done func(map[string][]int) bool, exited func() bool) map[string][]int {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		got := read()
		if done(got) {
			return got
		}
		if time.Now().After(deadline) || exited() {
			t.Fatalf("%s: snapshot rows %d by Debezium, %d by cdcd", what, len(got["Debezium"]), len(got["cdcd"]))
		}
	}
}

// checkHandoverRows checks the rows of a Debezium → cdcd → Debezium hand-over of one incremental snapshot
// (by writer, as incrementalRowsByWriter lists them): first after Debezium's first leg, got after cdcd's,
// final at the end. Debezium's second leg resumed past what it had read itself and no later than the key
// after cdcd's last, and every one of the rows was read by someone.
func checkHandoverRows(t *testing.T, rows int, first, got, final map[string][]int) {
	t.Helper()
	debeziumMax, cdcdMax := slices.Max(first["Debezium"]), slices.Max(got["cdcd"])
	second := final["Debezium"][len(first["Debezium"]):]
	if len(second) == 0 || second[0] <= debeziumMax || second[0] > cdcdMax+1 {
		t.Fatalf("Debezium resumed cdcd's snapshot at key %v; it had read up to %d itself, cdcd up to %d", second[:min(1, len(second))], debeziumMax, cdcdMax)
	}
	seen := map[int]bool{}
	for _, ids := range final {
		for _, id := range ids {
			seen[id] = true
		}
	}
	for id := 1; id <= rows; id++ {
		if !seen[id] {
			t.Fatalf("row %d was never read by the snapshot", id)
		}
	}
	t.Logf("Debezium read %d rows (up to key %d), cdcd resumed at key %d and read %d (up to %d), Debezium resumed at key %d",
		len(first["Debezium"]), debeziumMax, got["cdcd"][0], len(got["cdcd"]), cdcdMax, second[0])
}

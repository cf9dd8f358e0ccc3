package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// parallelTables is the bed of the parallel snapshot tests: four tables of parallelRows rows each, large
// enough that a table's SELECT is still running on the server while its rows are handed over.
const (
	parallelTables = 4
	parallelRows   = 80000
	parallelHot    = 300      // the keys the workload updates again and again
	parallelMarker = 99999999 // the key of the row written last, to know the stream has caught up
)

// TestMariaDBParallelSnapshotIsConsistent snapshots four tables with snapshot.max.threads=3 while a
// workload updates, inserts and deletes rows of all of them, and proves that:
//   - the tables were read on three connections at once, never more (the server's processlist shows three
//     SELECTs of the snapshot running together);
//   - each table's snapshot rows are exactly the table at the snapshot's binlog position: per key, every
//     streamed change after them starts from the state they (or the change before) left, so no change is
//     missing between a table's read and the stream, and none the read already holds comes again;
//   - every topic, replayed, equals its table once the workload stops.
func TestMariaDBParallelSnapshotIsConsistent(t *testing.T) {
	c := newParallelCase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	work := startParallelWorkload(t, c.dsn, true)
	readers := watchSnapshotReaders(t, c.dsn)

	p := c.launch()
	waitForLog(t, p, "snapshot done", 5*time.Minute)
	most, seen := readers.stop()
	work.await(200) // the stream carries on under the workload
	work.stop(t)
	t.Logf("at most %d snapshot SELECTs ran at once: %v", most, seen)
	if most != 3 {
		t.Errorf("at most %d snapshot SELECTs ran at once (tables %v), want 3 with snapshot.max.threads=3", most, seen)
	}
	if !strings.Contains(p.log.String(), "snapshot reads tables in parallel") {
		t.Errorf("no log line of the parallel reading:\n%s", tail(p.log.String(), 3000))
	}
	c.checkTopicsEqualTables(ctx, true)
	p.stop()
}

// TestMariaDBParallelSnapshotResumesAfterKill kills cdcd with SIGKILL in the middle of a parallel
// snapshot (snapshot.max.threads=3), once its durable offset says some tables are done and others are not,
// under a workload that goes on while it is down; the restarted task resumes the snapshot, does not read
// the finished tables again, and every topic, replayed, ends equal to its table.
func TestMariaDBParallelSnapshotResumesAfterKill(t *testing.T) {
	c := newParallelCase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	// Deletes too: a row the interrupted run delivered and that is deleted before the resumed snapshot reads
	// its table again must not stay in Kafka (covered.go).
	work := startParallelWorkload(t, c.dsn, true)

	p := c.launch()
	key, err := offsets.Key(c.conn["name"], map[string]any{"server": c.prefix})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(4 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if done, total := snapshotTablesDone(c.offsetFile, key); done > 0 && done < total {
			break
		}
		if time.Now().After(deadline) || p.exited() || strings.Contains(p.log.String(), "snapshot done") {
			t.Fatalf("the durable offset never recorded some tables done and others not:\n%s", tail(p.log.String(), 3000))
		}
	}
	p.kill()
	work.await(100) // changes while cdcd is down
	p = c.launch()
	waitForLog(t, p, "snapshot done", 5*time.Minute)
	work.await(100)
	work.stop(t)
	log := p.log.String()
	if !strings.Contains(log, "resuming an interrupted snapshot") || strings.Contains(log, "tables_done=0 ") {
		t.Errorf("the second run did not resume the snapshot with some tables done:\n%s", tail(log, 3000))
	}
	c.checkTopicsEqualTables(ctx, false)
	p.stop()
}

// parallelCase is a MariaDB case with the parallel snapshot's tables and snapshot.max.threads=3.
type parallelCase struct{ *mariadbCase }

func newParallelCase(t *testing.T) parallelCase {
	c := newMariaDBCase(t)
	for i := 1; i <= parallelTables; i++ {
		c.run(fmt.Sprintf("CREATE TABLE p%d (id INT PRIMARY KEY, v INT NOT NULL, pad VARCHAR(200) NOT NULL)", i))
		c.run(fmt.Sprintf("INSERT INTO p%d SELECT seq, 0, REPEAT('x', 200) FROM seq_1_to_%d", i, parallelRows))
	}
	c.conn["snapshot.max.threads"] = "3"
	c.conn["table.include.list"] = c.dsn.DB + `\.p[0-9]+`
	return parallelCase{c}
}

// checkTopicsEqualTables writes a marker row to every table, waits for each in its topic, and compares each
// topic, replayed key by key, with its table. strict also checks every change's before-image against the
// state the key's previous event left (no crash: nothing may be redelivered).
func (c parallelCase) checkTopicsEqualTables(ctx context.Context, strict bool) {
	t := c.t
	for i := 1; i <= parallelTables; i++ {
		c.run(fmt.Sprintf("INSERT INTO p%d VALUES (%d, 0, 'end')", i, parallelMarker))
	}
	for i := 1; i <= parallelTables; i++ {
		topic := fmt.Sprintf("%s.%s.p%d", c.prefix, c.dsn.DB, i)
		waitFor(t, ctx, c.broker, capture.Selection{Topics: []string{topic}}, fmt.Sprintf(`"id":%d`, parallelMarker))
		recs, err := c.broker.Read(ctx, capture.Selection{Topics: []string{topic}})
		if err != nil {
			t.Fatal(err)
		}
		state, reads, problems := replayKeyed(t, recs)
		if strict {
			for _, pr := range problems[:min(5, len(problems))] {
				t.Errorf("table p%d: %s", i, pr)
			}
		}
		res, err := c.db.Execute(fmt.Sprintf("SELECT id, v FROM p%d", i))
		if err != nil {
			t.Fatal(err)
		}
		want := map[int]int{}
		for r := range res.Values {
			id, _ := res.GetInt(r, 0)
			v, _ := res.GetInt(r, 1)
			want[int(id)] = int(v)
		}
		res.Close()
		diff := 0
		for id, v := range want {
			if got, ok := state[id]; !ok || got != v {
				if diff++; diff <= 5 {
					t.Errorf("table p%d key %d: v=%d in the table, %d (present %v) in Kafka", i, id, v, got, ok)
				}
			}
		}
		for id := range state {
			if _, ok := want[id]; !ok {
				if diff++; diff <= 5 {
					t.Errorf("table p%d key %d: in Kafka, not in the table", i, id)
				}
			}
		}
		t.Logf("table p%d: %d rows, %d snapshot reads, %d events, %d keys differ, %d before-images off", i, len(want), reads, len(recs), diff, len(problems))
	}
}

// replayKeyed follows each key's events in topic order and returns the last v per key (deleted keys
// removed), the snapshot reads, and every change whose before-image is not the state the key's previous
// event left (or that creates a key that exists, or deletes one that does not).
func replayKeyed(t *testing.T, recs []capture.Record) (state map[int]int, reads int, problems []string) {
	t.Helper()
	state = map[int]int{}
	for _, r := range recs {
		if r.Value == nil {
			continue // a tombstone
		}
		var env struct {
			Payload struct {
				Op     string               `json:"op"`
				Before *struct{ ID, V int } `json:"before"`
				After  *struct{ ID, V int } `json:"after"`
				Source struct {
					File string
					Pos  int64
				} `json:"source"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(r.Value, &env); err != nil {
			t.Fatal(err)
		}
		pl := env.Payload
		at := fmt.Sprintf("%s:%d", pl.Source.File, pl.Source.Pos)
		switch pl.Op {
		case "r":
			reads++
			state[pl.After.ID] = pl.After.V
		case "c":
			if v, ok := state[pl.After.ID]; ok {
				problems = append(problems, fmt.Sprintf("key %d: created at %s, but it was there at v=%d", pl.After.ID, at, v))
			}
			state[pl.After.ID] = pl.After.V
		case "u":
			if v, ok := state[pl.After.ID]; !ok || v != pl.Before.V {
				problems = append(problems, fmt.Sprintf("key %d: updated from v=%d at %s, but the key was at v=%d (present %v)", pl.After.ID, pl.Before.V, at, v, ok))
			}
			state[pl.After.ID] = pl.After.V
		case "d":
			if v, ok := state[pl.Before.ID]; !ok || v != pl.Before.V {
				problems = append(problems, fmt.Sprintf("key %d: deleted from v=%d at %s, but the key was at v=%d (present %v)", pl.Before.ID, pl.Before.V, at, v, ok))
			}
			delete(state, pl.Before.ID)
		}
	}
	return state, reads, problems
}

// parallelWorkload writes to the parallel tables in small autocommitted statements until stopped: updates
// of the hot keys (v+1), inserts of new keys and, with deletes, deletes of existing ones.
type parallelWorkload struct {
	committed atomic.Int64
	cancel    context.CancelFunc
	done      chan error
}

func startParallelWorkload(t *testing.T, dsn testenv.MySQLDSN, deletes bool) *parallelWorkload {
	t.Helper()
	conn, err := client.Connect(dsn.Addr, dsn.User, dsn.Password, dsn.DB)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &parallelWorkload{cancel: cancel, done: make(chan error, 1)}
	t.Cleanup(func() { cancel(); <-w.done })
	go func() {
		defer conn.Close()
		next := map[int]int{}
		for ctx.Err() == nil {
			table := 1 + rand.IntN(parallelTables)
			var sql string
			switch n := rand.IntN(100); {
			case n < 60:
				sql = fmt.Sprintf("UPDATE p%d SET v = v + 1 WHERE id = %d", table, 1+rand.IntN(parallelHot))
			case n < 85 || !deletes:
				next[table]++
				sql = fmt.Sprintf("INSERT INTO p%d VALUES (%d, 0, 'new')", table, parallelRows+next[table])
			default:
				sql = fmt.Sprintf("DELETE FROM p%d WHERE id = %d", table, parallelHot+1+rand.IntN(parallelRows-parallelHot))
			}
			if _, err := conn.Execute(sql); err != nil {
				w.done <- fmt.Errorf("%s: %w", sql, err)
				return
			}
			w.committed.Add(1)
		}
		w.done <- nil
	}()
	return w
}

// await waits until n more statements have committed.
func (w *parallelWorkload) await(n int64) {
	for target := w.committed.Load() + n; w.committed.Load() < target; time.Sleep(5 * time.Millisecond) {
		select {
		case err := <-w.done:
			w.done <- err
			return
		default:
		}
	}
}

// stop ends the workload and fails the test if it failed.
func (w *parallelWorkload) stop(t *testing.T) {
	t.Helper()
	w.cancel()
	err := <-w.done
	w.done <- nil // for the cleanup
	if err != nil {
		t.Fatalf("workload: %v", err)
	}
	t.Logf("workload: %d statements committed", w.committed.Load())
}

// snapshotReaders polls the server's processlist for the snapshot's SELECTs of the bed's database.
type snapshotReaders struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	most   int
	seen   map[string]bool
}

func watchSnapshotReaders(t *testing.T, dsn testenv.MySQLDSN) *snapshotReaders {
	t.Helper()
	conn, err := client.Connect(dsn.Addr, dsn.User, dsn.Password, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &snapshotReaders{cancel: cancel, done: make(chan struct{}), seen: map[string]bool{}}
	t.Cleanup(func() { w.stop() })
	go func() {
		defer close(w.done)
		defer conn.Close()
		like := "SELECT % FROM `" + dsn.DB + "`.%" // the snapshot names the columns it reads
		for ctx.Err() == nil {
			res, err := conn.Execute("SELECT INFO FROM information_schema.PROCESSLIST WHERE USER = ? AND INFO LIKE ?", testenv.MariaDBCaptureUser, like)
			if err != nil {
				return
			}
			running := map[string]bool{}
			for i := range res.Values {
				info, _ := res.GetString(i, 0)
				running[strings.Clone(info)] = true
			}
			res.Close()
			w.mu.Lock()
			w.most = max(w.most, len(running))
			for q := range running {
				w.seen[q] = true
			}
			w.mu.Unlock()
			time.Sleep(10 * time.Millisecond) // the poll's pace, not a wait for anything
		}
	}()
	return w
}

// stop ends the polling and returns the most SELECTs seen at once and every one seen.
func (w *snapshotReaders) stop() (int, []string) {
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	var seen []string
	for q := range w.seen {
		seen = append(seen, q)
	}
	return w.most, seen
}

// waitForLog waits until cdcd's log contains text, failing if cdcd exits first.
func waitForLog(t *testing.T, p *cdcdProcess, text string, within time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(within); !strings.Contains(p.log.String(), text); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) || p.exited() {
			t.Fatalf("cdcd's log never said %q:\n%s", text, tail(p.log.String(), 3000))
		}
	}
}

// snapshotTablesDone reads the offsets file: how many of the snapshot's tables its progress has done.
func snapshotTablesDone(path string, key []byte) (done, total int) {
	if progress := storedProgress(path, key); progress != nil {
		return progress.DoneCount(), len(progress.Tables)
	}
	return 0, 0
}

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/snapshot"
)

// TestMariaDBSnapshotResumesTableByTable kills cdcd in the middle of an initial snapshot of four tables,
// changes rows of every table while it is down, and restarts it: the tables the first run finished are not
// read again, the others are read in a new snapshot, and per key the events are consistent — every update's
// before-image is the state the previous event left, so no change a re-read table already holds is streamed
// again on top of it — and end in the database's state.
func TestMariaDBSnapshotResumesTableByTable(t *testing.T) {
	c := newMariaDBCase(t)
	const tablesN, rows = 4, 60000
	for i := 1; i <= tablesN; i++ {
		c.run(fmt.Sprintf("CREATE TABLE s%d (id INT PRIMARY KEY, v INT NOT NULL, pad VARCHAR(100) NOT NULL)", i))
		c.run(fmt.Sprintf("INSERT INTO s%d SELECT seq, 0, REPEAT('x', 100) FROM seq_1_to_%d", i, rows))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	broker := c.broker
	topic := func(i int) string { return fmt.Sprintf("%s.%s.s%d", c.prefix, c.dsn.DB, i) }

	p := c.launch()
	// Kill once the durable offset says the first table is done.
	key, err := offsets.Key(c.conn["name"], map[string]any{"server": c.prefix})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); !firstTableDone(c.offsetFile, key); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) || p.exited() {
			t.Fatalf("the durable offset never recorded the first table as done:\n%s", tail(p.log.String(), 3000))
		}
	}
	p.kill()
	for i := 1; i <= tablesN; i++ {
		c.run(fmt.Sprintf("UPDATE s%d SET v = 1 WHERE id <= 10", i))
	}
	p = c.launch()
	waitFor(t, ctx, broker, capture.Selection{Prefix: c.prefix}, `"snapshot":"last"`)
	for i := 1; i <= tablesN; i++ {
		c.run(fmt.Sprintf("UPDATE s%d SET v = 2 WHERE id <= 5", i))
	}
	for i := 1; i <= tablesN; i++ {
		waitFor(t, ctx, broker, capture.Selection{Topics: []string{topic(i)}}, `"after":{"id":5,"v":2`)
	}
	log := p.log.String()
	p.stop()
	if !strings.Contains(log, "resuming an interrupted snapshot") || strings.Contains(log, "tables_done=0 ") {
		t.Errorf("the second run did not resume the snapshot with the first table done:\n%s", tail(log, 3000))
	}

	for i := 1; i <= tablesN; i++ {
		recs, err := broker.Read(ctx, capture.Selection{Topics: []string{topic(i)}})
		if err != nil {
			t.Fatal(err)
		}
		state, reads, problems := replayKeyed(t, recs)
		if i == 1 && reads != rows {
			t.Errorf("table s1, finished before the crash, has %d snapshot reads, want %d (it was read again)", reads, rows)
		}
		if len(state) != rows {
			t.Errorf("table s%d: %d keys in Kafka, want %d", i, len(state), rows)
		}
		for id := 1; id <= 10; id++ {
			want := 1
			if id <= 5 {
				want = 2
			}
			if state[id] != want {
				t.Errorf("table s%d key %d ends at v=%d in Kafka, the database has %d", i, id, state[id], want)
			}
		}
		for _, pr := range problems[:min(5, len(problems))] {
			t.Errorf("table s%d: %s", i, pr)
		}
	}
}

// firstTableDone reads the offsets file: is the snapshot in progress with its first table done?
func firstTableDone(path string, key []byte) bool {
	progress := storedProgress(path, key)
	return progress != nil && len(progress.Tables) > 0 && progress.Tables[0].Done
}

// storedProgress is the snapshot progress of the offset stored under key in the offsets file at path, nil
// when there is none (yet).
func storedProgress(path string, key []byte) *snapshot.Progress {
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
		return nil
	}
	text, _ := fields.Map()[snapshot.ProgressKey].(string)
	progress, err := snapshot.DecodeProgress(text)
	if err != nil {
		return nil
	}
	return progress
}

// TestMariaDBSnapshotResumeDeliversDeletes kills cdcd while its initial snapshot has delivered part of a
// table, deletes rows it had delivered, deletes and re-inserts one, and moves one to another key while it is
// down, and restarts it: the table is read again in a newer snapshot, which no longer has those rows, so the
// stream, which drops the table's changes the newer snapshot holds, must still deliver the deletes of the
// keys that are gone; the re-inserted row and the moved one end as the database has them.
func TestMariaDBSnapshotResumeDeliversDeletes(t *testing.T) {
	c := newMariaDBCase(t)
	const tablesN, rows = 3, 60000
	for i := 1; i <= tablesN; i++ {
		c.run(fmt.Sprintf("CREATE TABLE d%d (id INT PRIMARY KEY, v INT NOT NULL, pad VARCHAR(100) NOT NULL)", i))
		c.run(fmt.Sprintf("INSERT INTO d%d SELECT seq, 0, REPEAT('x', 100) FROM seq_1_to_%d", i, rows))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	topic := func(i int) string { return fmt.Sprintf("%s.%s.d%d", c.prefix, c.dsn.DB, i) }

	// Kill once the first table is done and the second's first rows are in Kafka, before it is done.
	p := c.launch()
	key, err := offsets.Key(c.conn["name"], map[string]any{"server": c.prefix})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if firstTableDone(c.offsetFile, key) {
			if n, err := c.broker.Count(ctx, capture.Selection{Topics: []string{topic(2)}}); err == nil && n >= 100 {
				break
			}
		}
		if time.Now().After(deadline) || p.exited() {
			t.Fatalf("the snapshot never had its first table done and the second begun:\n%s", tail(p.log.String(), 3000))
		}
	}
	p.kill()
	if progress := storedProgress(c.offsetFile, key); progress == nil || len(progress.Tables) < 2 || progress.Tables[1].Done {
		t.Fatalf("the kill came after the second table was done (progress %+v): nothing to prove", progress)
	}
	for i := 1; i <= tablesN; i++ {
		c.run(fmt.Sprintf("DELETE FROM d%d WHERE id <= 10", i))
		c.run(fmt.Sprintf("DELETE FROM d%d WHERE id = 11", i))
		c.run(fmt.Sprintf("INSERT INTO d%d VALUES (11, 7, 'back')", i))
		c.run(fmt.Sprintf("UPDATE d%d SET id = %d WHERE id = 12", i, rows+100))
	}
	p = c.launch()
	waitFor(t, ctx, c.broker, capture.Selection{Prefix: c.prefix}, `"snapshot":"last"`)
	for i := 1; i <= tablesN; i++ {
		c.run(fmt.Sprintf("UPDATE d%d SET v = 2 WHERE id = 13", i))
	}
	for i := 1; i <= tablesN; i++ {
		waitFor(t, ctx, c.broker, capture.Selection{Topics: []string{topic(i)}}, `"after":{"id":13,"v":2`)
	}
	log := p.log.String()
	p.stop()
	if !strings.Contains(log, "resuming an interrupted snapshot") {
		t.Errorf("the second run did not resume the snapshot:\n%s", tail(log, 3000))
	}
	for i := 1; i <= tablesN; i++ {
		recs, err := c.broker.Read(ctx, capture.Selection{Topics: []string{topic(i)}})
		if err != nil {
			t.Fatal(err)
		}
		state, _, _ := replayKeyed(t, recs) // deletes of keys never delivered are expected: not problems here
		for id := 1; id <= 10; id++ {
			if v, ok := state[id]; ok {
				t.Errorf("table d%d: key %d, deleted while cdcd was down, is still in Kafka (v=%d)", i, id, v)
			}
		}
		if v, ok := state[12]; ok {
			t.Errorf("table d%d: key 12, moved to %d while cdcd was down, is still in Kafka (v=%d)", i, rows+100, v)
		}
		if state[11] != 7 || state[rows+100] != 0 || state[13] != 2 {
			t.Errorf("table d%d: keys 11, %d and 13 end at %d, %d and %d in Kafka; the database has 7, 0 and 2", i, rows+100, state[11], state[rows+100], state[13])
		}
		if len(state) != rows-10 {
			t.Errorf("table d%d: %d keys in Kafka, the database has %d", i, len(state), rows-10)
		}
	}
}

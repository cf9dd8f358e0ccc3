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

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMariaDBBlockingSnapshot asks for a blocking snapshot through the REST API while rows change all
// along: every row of the table arrives as a snapshot row (source.snapshot not "incremental"), the stream
// goes on afterwards, and the table rebuilt from the topic equals the database's. A kill -9 while an offset
// of the snapshot is durable resumes it from that offset (snapshot BLOCKING) before streaming on. Debezium's
// bytes are held by the MariaDB blocking-snapshot golden.
func TestMariaDBBlockingSnapshot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	const rows = 50000
	b := newMariaDBIncrementalBed(t, ctx, "blk", rows)
	offsetsFile := filepath.Join(b.dir, "offsets.dat")
	worker := workerProps(b.brokers, offsetsFile)
	// Flushed often, so that the kill usually lands while an offset of the snapshot is durable.
	worker["offset.flush.interval.ms"] = "50"
	conn := b.incrementalConnector(100, nil)
	p := b.start(worker, conn)
	defer func() { p.stop() }()
	topic := b.prefix + "." + b.dsn.DB + ".blk"

	stop := make(chan struct{})
	wait, err := churn(ctx, b.sessions(), "blk", rows, stop)
	if err != nil {
		t.Fatal(err)
	}
	p.restAPI().expect("POST", "/connectors/inc/signals", fmt.Sprintf(`{"id": "blk-1", "type": "execute-snapshot", "data": {"data-collections": ["%s.blk"], "type": "blocking"}}`, b.dsn.DB), 202)
	inProgress := func() bool {
		stored, err := os.ReadFile(offsetsFile)
		return err == nil && strings.Contains(string(stored), `"snapshot":"BLOCKING"`)
	}
	finished := `msg="snapshot finished" connector=inc kind=BLOCKING`
	resume := true
	for deadline := time.Now().Add(2 * time.Minute); !inProgress(); {
		if strings.Contains(p.log.String(), finished) {
			// Done before an offset of it was durable: the signal lives only in the process until then, and
			// a kill would lose it whole, so there is nothing to resume.
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
		p = b.start(worker, conn)
		if resumes {
			waitLog(t, p, "kind=BLOCKING")
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
	waitTableMatches(t, ctx, b.broker, topic, tableRows(t, ctx, mariadbSession{b.db}, "blk"), p)
	snapshotRows := map[int]bool{}
	for _, rec := range b.readAll(topic) {
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

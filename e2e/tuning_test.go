package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestMaxBatchSizeSplitsATransaction: with max.batch.size=3, a transaction of ten rows is handed to the
// producer in parts, and every row still reaches Kafka once, in insert order, with the next transaction
// after it; the tuning keys cdcd does without are accepted with their INFO line.
func TestMaxBatchSizeSplitsATransaction(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	db := connectPostgres(t, ctx, dsn, `CREATE TABLE tuned (id bigint PRIMARY KEY)`)
	dir := t.TempDir()
	workerPath, connPath := filepath.Join(dir, "worker.properties"), filepath.Join(dir, "pg.properties")
	writeProperties(t, workerPath, workerProps(brokers, filepath.Join(dir, "offsets.dat")))
	conn := pgConnector(t, dsn, "tuned", prefix, "public.tuned")
	conn["max.batch.size"], conn["max.queue.size"], conn["poll.interval.ms"] = "3", "10", "100"
	writeProperties(t, connPath, conn)
	p := startCdcd(t, workerPath, connPath)
	waitSlotActive(t, ctx, db, conn["slot.name"], p)
	if _, err := db.Exec(ctx, `INSERT INTO tuned SELECT generate_series(1, 10)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO tuned VALUES (11)`); err != nil {
		t.Fatal(err)
	}
	seen, err := consumeIDs(ctx, brokers, prefix+".public.tuned", 11, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	p.stop()
	if seen.distinct != 11 || seen.outOfOrder > 0 || seen.records != 11 {
		t.Errorf("%d of 11 rows in %d records, %d out of order; want each once, in order; log:\n%s", seen.distinct, seen.records, seen.outOfOrder, tail(p.log.String(), 4000))
	}
	if !strings.Contains(p.log.String(), "poll.interval.ms=100 changes nothing in cdcd") {
		t.Errorf("no INFO line for poll.interval.ms; log:\n%s", tail(p.log.String(), 4000))
	}
}

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// largeTxHWMBudgetKB bounds cdcd's peak RSS while it streams one transaction far larger than memory: the
// reader splits it into batches and the pipeline holds a bounded number of them.
const largeTxHWMBudgetKB = 128 << 10

// TestLargeTransaction streams one transaction of about 1 GB (CDCD_LARGETX_ROWS rows of 1 KiB, default
// 1,000,000) while logical_decoding_work_mem is 64kB, so PostgreSQL spills it to disk and sends it only at
// commit. Every row must arrive in insert order, and cdcd's peak RSS must stay within budget.
func TestLargeTransaction(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	admin := testenv.Postgres(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	rows := int64(1_000_000)
	if s := os.Getenv("CDCD_LARGETX_ROWS"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 {
			t.Fatalf("CDCD_LARGETX_ROWS=%q is not a positive number", s)
		}
		rows = n
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	alterSystem(t, admin, "logical_decoding_work_mem", "64kB")
	// The topic holds gigabytes: unlike other tests' topics, it goes at cleanup.
	t.Cleanup(func() {
		broker, err := capture.NewBroker(brokers)
		if err != nil {
			t.Errorf("deleting the topic: %v", err)
			return
		}
		defer broker.Close()
		if _, err := broker.DeleteTopics(context.Background(), capture.Selection{Prefix: prefix}); err != nil {
			t.Errorf("deleting the topic: %v", err)
		}
	})

	db := connectPostgres(t, ctx, dsn, `CREATE TABLE largetx (id bigint PRIMARY KEY, payload text NOT NULL)`)
	dir := t.TempDir()
	workerPath, connPath := filepath.Join(dir, "worker.properties"), filepath.Join(dir, "pg.properties")
	writeProperties(t, workerPath, workerProps(brokers, filepath.Join(dir, "offsets.dat")))
	conn := pgConnector(t, dsn, "largetx", prefix, "public.largetx")
	writeProperties(t, connPath, conn)
	p := startCdcd(t, workerPath, connPath)
	waitSlotActive(t, ctx, db, conn["slot.name"], p)
	idleKB := procStatusKB(p.cmd.Process.Pid, "VmRSS")

	began := time.Now()
	// md5 text repeated: 1 KiB of incompressible-looking text, stored inline (below the TOAST threshold).
	if _, err := db.Exec(ctx, `INSERT INTO largetx SELECT g, repeat(md5(g::text), 32) FROM generate_series(1, $1::bigint) g`, rows); err != nil {
		t.Fatal(err)
	}
	committed := time.Since(began)
	var tableBytes int64
	if err := db.QueryRow(ctx, `SELECT pg_total_relation_size('largetx')`).Scan(&tableBytes); err != nil {
		t.Fatal(err)
	}
	t.Logf("committed %d rows (%d MiB on disk) in one transaction in %s", rows, tableBytes>>20, committed.Round(time.Second))

	seen, err := consumeIDs(ctx, brokers, prefix+".public.largetx", rows, 20*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	delivered := time.Since(began)
	hwmKB := procStatusKB(p.cmd.Process.Pid, "VmHWM")
	if p.exited() {
		t.Fatalf("cdcd exited; log:\n%s", tail(p.log.String(), 4000))
	}
	p.stop()

	if seen.distinct != rows {
		t.Errorf("%d of %d rows reached Kafka", seen.distinct, rows)
	}
	if seen.outOfOrder > 0 {
		t.Errorf("%d rows arrived out of insert order", seen.outOfOrder)
	}
	if restarts := logLines(p.log.String(), "connector task failed", "replication connection lost"); len(restarts) > 0 {
		t.Errorf("cdcd restarted during the transaction:\n%s", strings.Join(restarts, "\n"))
	}
	if hwmKB > largeTxHWMBudgetKB {
		t.Errorf("cdcd's peak RSS (VmHWM) was %d MiB, over the %d MiB budget", hwmKB>>10, largeTxHWMBudgetKB>>10)
	}
	t.Logf("large transaction: %d rows, %d records read; commit %s, commit→all in Kafka %s, total %s; cdcd RSS idle %d MiB, VmHWM %d MiB",
		rows, seen.records, committed.Round(time.Second), (delivered - committed).Round(time.Second), delivered.Round(time.Second), idleKB>>10, hwmKB>>10)
}

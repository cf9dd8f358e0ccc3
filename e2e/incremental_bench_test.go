package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestMeasureIncrementalSnapshot measures an incremental snapshot of the same table, requested through the
// signal table with Debezium's default chunk size, by cdcd and by Kafka Connect + Debezium 3.6.1, one after
// the other on the test bed, and reports rows per second from the signal's commit to the table's last row
// in Kafka. A measurement, not a check: it runs only with CDCD_MEASURE_INCREMENTAL set to the row count
// (make bench-incremental), and asserts nothing about the times.
func TestMeasureIncrementalSnapshot(t *testing.T) {
	rows, _ := strconv.Atoi(os.Getenv("CDCD_MEASURE_INCREMENTAL"))
	if rows <= 0 {
		t.Skip("set CDCD_MEASURE_INCREMENTAL=<rows> to measure incremental snapshots beside Debezium")
	}
	java, lib, plugins := connectInstall(t)
	brokers := testenv.Kafka(t)
	broker := newBroker(t, brokers)
	measure := func(name string, start func(t *testing.T, worker, conn map[string]string, dir string) (exited func() bool)) float64 {
		var rate float64
		t.Run(name, func(t *testing.T) {
			dsn := testenv.NewPostgresDB(t)
			prefix := testenv.NewTopicPrefix(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
			defer cancel()
			db := connectPostgres(t, ctx, dsn, signalTableDDL,
				"CREATE TABLE public.big (id int PRIMARY KEY, v bigint NOT NULL, note text NOT NULL)",
				fmt.Sprintf("INSERT INTO public.big SELECT g, g, repeat('x', 200) FROM generate_series(1, %d) g", rows))
			conn := pgConnector(t, dsn, "measure", prefix, "public.big")
			conn["snapshot.mode"] = "no_data"
			conn["signal.data.collection"] = "public.debezium_signal"
			dir := t.TempDir()
			worker := workerProps(brokers, filepath.Join(dir, "offsets.dat"))
			worker["listeners"] = fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
			worker["plugin.path"] = plugins
			exited := start(t, worker, conn, dir)
			waitSlotActive(t, ctx, db, conn["slot.name"], nil)
			began := time.Now()
			execAll(t, ctx, db, `INSERT INTO public.debezium_signal VALUES ('measure', 'execute-snapshot', '{"data-collections": ["public.big"]}')`)
			topic := prefix + ".public.big"
			for {
				n, err := broker.Count(ctx, capture.Selection{Topics: []string{topic}})
				if err == nil && n >= int64(rows) {
					break
				}
				if exited() || ctx.Err() != nil {
					t.Fatalf("%s: the snapshot did not finish: %d records, %v", name, n, err)
				}
				time.Sleep(100 * time.Millisecond)
			}
			took := time.Since(began)
			rate = float64(rows) / took.Seconds()
			t.Logf("%s: %d rows in %v: %.0f rows/s", name, rows, took.Round(time.Millisecond), rate)
		})
		return rate
	}
	cdcd := measure("cdcd", func(t *testing.T, worker, conn map[string]string, dir string) func() bool {
		return startStandalone(t, dir, worker, conn).exited
	})
	debezium := measure("Debezium", func(t *testing.T, worker, conn map[string]string, dir string) func() bool {
		files := writeStandalone(t, dir, worker, conn)
		w := startConnectWorker(t, java, lib, files.worker, files.connectors[0], filepath.Join(dir, "connect.log"))
		w.waitRunning(worker["listeners"], conn["name"])
		return w.exited
	})
	if cdcd > 0 && debezium > 0 {
		t.Logf("incremental snapshot of %d rows (chunks of 1024): cdcd %.0f rows/s, Debezium %.0f rows/s: %.2f×", rows, cdcd, debezium, cdcd/debezium)
	}
}

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMariaDBIncrementalSnapshotHandoverWithDebezium hands one incremental snapshot back and forth between
// Kafka Connect + Debezium's MariaDbConnector and cdcd on the same standalone offsets file and schema
// history topic: Debezium starts it and is stopped in the middle; cdcd resumes it from Debezium's offset
// (incremental_snapshot_* keys, Java serialisation) and pauses on a signal; Debezium resumes it from cdcd's
// offset and completes it. Every row is read, and neither resumption starts the table again from its first
// key.
func TestMariaDBIncrementalSnapshotHandoverWithDebezium(t *testing.T) {
	if os.Getenv("CDCD_E2E") == "" {
		t.Skip("set CDCD_E2E=1 (make test does) to run the hand-over with the real Connect worker")
	}
	java, lib, plugins := connectInstall(t)
	plugins = filepath.Join(filepath.Dir(plugins), "plugins-mariadb")
	if _, err := os.Stat(filepath.Join(plugins, "debezium-connector-mariadb")); err != nil {
		t.Skipf("this test needs Debezium's MariaDB plugin (%v): run `CDCD_CONNECT_INSTANCE=mariadb e2e/debezium/connect.sh install`", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	const rows, chunk = 20000, 50
	b := newMariaDBIncrementalBed(t, ctx, "shared", rows)
	dir := t.TempDir()
	offsetFile := filepath.Join(dir, "offsets.dat")
	worker := workerProps(b.brokers, offsetFile)
	worker["listeners"] = fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	worker["plugin.path"] = plugins
	worker["plugin.discovery"] = "service_load" // as connect.sh's mariadb instance: a start in seconds
	conn := b.incrementalConnector(chunk, map[string]string{"table.include.list": b.dsn.DB + ".shared," + b.dsn.DB + ".debezium_signal",
		// The shared server holds other tests' databases, whose structure neither connector needs.
		"schema.history.internal.store.only.captured.databases.ddl": "true"})
	files := writeStandalone(t, dir, worker, conn)
	topic := b.prefix + "." + b.dsn.DB + ".shared"

	snapshotRows := func() map[string][]int { return incrementalRowsByWriter(b.readAll(topic)) }
	waitRows := func(what string, done func(map[string][]int) bool, exited func() bool) map[string][]int {
		t.Helper()
		return waitIncrementalRows(t, what, snapshotRows, done, exited)
	}
	incrementalKey := func() {
		t.Helper()
		raw, err := os.ReadFile(offsetFile)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(raw), "incremental_snapshot_primary_key") {
			t.Fatalf("the offsets file holds no incremental snapshot in progress")
		}
	}

	// 1. Debezium takes its schema-only snapshot, starts the incremental one, and is stopped after a tenth.
	debezium := startConnectWorker(t, java, lib, files.worker, files.connectors[0], filepath.Join(dir, "connect-1.log"))
	debezium.waitRunning(worker["listeners"], conn["name"])
	for deadline := time.Now().Add(2 * time.Minute); !b.schemaChangeContains("CREATE TABLE"); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) || debezium.exited() {
			t.Fatalf("Debezium recorded no CREATE TABLE on %s", b.prefix)
		}
	}
	b.exec(b.db, fmt.Sprintf(`INSERT INTO debezium_signal VALUES ('handover-1', 'execute-snapshot', '{"data-collections": ["%s.shared"]}')`, b.dsn.DB))
	waitRows("Debezium's first leg", func(m map[string][]int) bool { return len(m["Debezium"]) >= rows/10 }, debezium.exited)
	debezium.stop()
	incrementalKey()
	first := snapshotRows()
	debeziumMax := slices.Max(first["Debezium"])
	if debeziumMax >= rows {
		t.Fatal("Debezium completed the snapshot before it was stopped")
	}

	// 2. cdcd resumes from Debezium's offset; a pause signal, written while nothing runs, stops it again.
	b.exec(b.db, `INSERT INTO debezium_signal VALUES ('handover-pause', 'pause-snapshot', NULL)`)
	p := files.start()
	waitLog(t, p, "incremental snapshot in progress; reading its next chunk")
	waitLog(t, p, "incremental snapshot paused")
	got := waitRows("cdcd's leg", func(m map[string][]int) bool { return len(m["cdcd"]) > 0 }, p.exited)
	if firstCdcd := got["cdcd"][0]; firstCdcd == 1 || firstCdcd > debeziumMax+1 {
		t.Fatalf("cdcd resumed at key %d; Debezium had read up to %d (of %d rows in its first %d)", firstCdcd, debeziumMax, rows, len(first["Debezium"]))
	}
	p.stop()
	incrementalKey()

	// 3. Debezium resumes from cdcd's offset and history and completes the snapshot.
	b.exec(b.db, `INSERT INTO debezium_signal VALUES ('handover-resume', 'resume-snapshot', NULL)`)
	debezium = startConnectWorker(t, java, lib, files.worker, files.connectors[0], filepath.Join(dir, "connect-2.log"))
	debezium.waitRunning(worker["listeners"], conn["name"])
	final := waitRows("Debezium's last leg", func(m map[string][]int) bool {
		ids := m["Debezium"]
		return len(ids) > 0 && slices.Max(ids) == rows
	}, debezium.exited)
	debezium.stop()
	checkHandoverRows(t, rows, first, got, final)
}

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestSlotCreationSaysWhatItWaitsFor holds a write transaction open while cdcd creates its slot: creating
// a logical slot waits for it, and cdcd logs, every 10 s, the transactions it waits for — this one's pid
// among them — shows the same in the task's status trace while it is RUNNING, and creates the slot once
// it commits.
func TestSlotCreationSaysWhatItWaitsFor(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db := connectPostgres(t, ctx, dsn, "CREATE TABLE public.t (id int PRIMARY KEY)")
	blocker := connectPostgres(t, ctx, dsn)
	var pid int
	if err := blocker.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	tx, err := blocker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO public.t VALUES (1)"); err != nil { // a transaction id of its own
		t.Fatal(err)
	}
	conn := pgConnector(t, dsn, "slotwait", prefix, "public.t")
	p := startStandalone(t, t.TempDir(), workerProps(brokers, filepath.Join(t.TempDir(), "offsets.dat")), conn)
	waitLog(t, p, "creating a replication slot waits for these transactions to end")
	waitLog(t, p, fmt.Sprintf("pid %d (database %s", pid, conn["database.dbname"]))
	// The task's status says it too, while it is RUNNING: GET /connectors/{name}/status's trace.
	status := p.restAPI().expect("GET", "/connectors/slotwait/status", "", 200)
	if !strings.Contains(status, `"state":"RUNNING"`) || !strings.Contains(status, "waiting: creating replication slot") ||
		!strings.Contains(status, fmt.Sprintf("pid %d", pid)) {
		t.Fatalf("the task's status does not say what it waits for: %s", status)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	waitSlotActive(t, ctx, db, conn["slot.name"], p)
	for deadline := time.Now().Add(time.Minute); strings.Contains(p.restAPI().expect("GET", "/connectors/slotwait/status", "", 200), "waiting:"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the task's status still says it waits after the slot was created")
		}
	}
}

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestDistributedFailover runs three cdcd workers in one group with three connectors on one table under
// a continuous workload, kills the worker that runs the first connector with SIGKILL, and proves that its
// connectors restart on the survivors from the offsets in the offset topic and lose nothing, that the
// connectors were spread over the workers, and that no connector ever had two owners: no surviving
// worker took a task another still held (status topic), no task found its slot held by another
// walsender, and no slot alternated between walsenders.
func TestDistributedFailover(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	db := createCrashTable(t, ctx, dsn)

	topics := clusterTopicsOf(prefix)
	var workers []*cdcdWorker
	for range 3 {
		workers = append(workers, startCdcdDistributed(t, distributedProps(brokers, prefix, topics, freePort(t))))
	}
	var names, slots []string
	for i := range 3 {
		name := fmt.Sprintf("fail%d", i)
		cfg := pgConnector(t, dsn, name, fmt.Sprintf("%s-%d", prefix, i), "public.crash")
		createConnector(t, workers[i].url, cfg) // through followers too: forwarded to the leader
		names, slots = append(names, name), append(slots, cfg["slot.name"])
	}
	owners := map[string]bool{}
	for _, name := range names {
		owners[taskOwner(t, workers[0].url, name)] = true
	}
	if len(owners) < 2 {
		t.Errorf("three connectors on three workers all ran on %v", owners)
	}
	for _, slot := range slots {
		waitSlotActive(t, ctx, db, slot, nil)
	}

	work := startCrashWorkload(ctx, pgWorkload(ctx, dsn))
	stopMonitor, monitorDone := make(chan struct{}), make(chan []string, 1)
	go func() { monitorDone <- watchSlotOwners(ctx, dsn, slots, stopMonitor) }()

	time.Sleep(2 * time.Second)
	victimID := taskOwner(t, workers[0].url, names[0])
	var survivors []*cdcdWorker
	for _, w := range workers {
		if w.id == victimID {
			w.kill()
		} else {
			survivors = append(survivors, w)
		}
	}
	killedAt := time.Now()
	newOwner := taskOwner(t, survivors[0].url, names[0], victimID)
	t.Logf("%s moved from %s to %s in %s", names[0], victimID, newOwner, time.Since(killedAt).Round(100*time.Millisecond))
	time.Sleep(2 * time.Second)
	want := work.stop(t)
	for i := range names {
		taskOwner(t, survivors[0].url, names[i], victimID)
		got, dups := checkCrashDelivery(t, ctx, brokers, fmt.Sprintf("%s-%d.public.crash", prefix, i), want)
		t.Logf("%s: %d committed changes, %d events, %d redelivered", names[i], len(want), len(got), dups)
	}
	close(stopMonitor)
	if bad := <-monitorDone; len(bad) > 0 {
		t.Errorf("a slot alternated between readers: %v", bad)
	}
	if bad := doubleOwners(readStatusTopic(t, brokers, topics.status), []string{victimID}); len(bad) > 0 {
		t.Errorf("a task had two owners: %v", bad)
	}
	for _, w := range survivors {
		if log := w.log.String(); strings.Contains(log, "is active for PID") {
			t.Errorf("worker %s found a slot still held by another reader", w.id)
		}
		w.stop()
	}
}

// watchSlotOwners samples each slot's active walsender every 20 ms until stop, and reports a slot that
// went back to a walsender it had before another one: two readers taking the slot in turns, the mark of
// a connector with two owners. (PostgreSQL lets one walsender at a time hold a slot, so a second owner
// shows as such alternation, or as a task failing with "is active for PID", which the test also checks.)
func watchSlotOwners(ctx context.Context, dsn string, slots []string, stop <-chan struct{}) []string {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return []string{err.Error()}
	}
	defer conn.Close(context.Background())
	seen := map[string][]int32{} // slot → its walsenders' pids in order of appearance
	var bad []string
	for {
		select {
		case <-stop:
			return bad
		case <-time.After(20 * time.Millisecond):
		}
		rows, err := conn.Query(ctx, `SELECT slot_name, active_pid FROM pg_replication_slots WHERE slot_name = ANY($1) AND active_pid IS NOT NULL`, slots)
		if err != nil {
			continue
		}
		for rows.Next() {
			var slot string
			var pid int32
			if rows.Scan(&slot, &pid) != nil {
				continue
			}
			pids := seen[slot]
			switch idx := slices.Index(pids, pid); {
			case idx < 0:
				seen[slot] = append(pids, pid)
			case idx < len(pids)-1:
				bad = append(bad, fmt.Sprintf("slot %s went back to walsender %d after %v", slot, pid, pids[idx+1:]))
				seen[slot] = append(pids, pid)
			}
		}
		rows.Close()
	}
}

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// outageRSSBudgetKB bounds cdcd's resident memory while Kafka is down: the pipeline holds at most the
// sink's byte budget plus MaxPendingBatches batches, whatever the length of the outage.
const outageRSSBudgetKB = 160 << 10

// TestKafkaOutageKeepsReplicationConnection stops Kafka for more than three wal_sender_timeouts under a
// continuous insert workload. cdcd must keep its walsender (the slot's active_pid never changes), keep its
// memory bounded, and deliver every committed row once Kafka is back.
//
// While the pipeline is full the reader does not read the replication connection, so it never sees the
// walsender's reply requests: only its own status updates keep the connection alive, and they must come
// more often than wal_sender_timeout even when status.update.interval.ms (Debezium's default: 10 s) is longer.
func TestKafkaOutageKeepsReplicationConnection(t *testing.T) {
	admin := testenv.Postgres(t)
	testenv.Kafka(t)
	alterSystem(t, admin, "wal_sender_timeout", "5s")
	ensureKafkaRunsAtCleanup(t)
	const walSenderTimeout = 5 * time.Second
	t.Run("status updates every 200ms", func(t *testing.T) { kafkaOutage(t, walSenderTimeout, "200") })
	t.Run("status.update.interval.ms default above wal_sender_timeout", func(t *testing.T) { kafkaOutage(t, walSenderTimeout, "") })
}

// kafkaOutage runs one outage with the given status.update.interval.ms ("" for the default).
func kafkaOutage(t *testing.T, walSenderTimeout time.Duration, statusInterval string) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	db := connectPostgres(t, ctx, dsn, `CREATE TABLE outage (id bigint PRIMARY KEY, payload text NOT NULL)`)
	dir := t.TempDir()
	workerPath, connPath := filepath.Join(dir, "worker.properties"), filepath.Join(dir, "pg.properties")
	writeProperties(t, workerPath, workerProps(brokers, filepath.Join(dir, "offsets.dat")))
	conn := pgConnector(t, dsn, "outage", prefix, "public.outage")
	conn["status.update.interval.ms"] = statusInterval
	if statusInterval == "" {
		delete(conn, "status.update.interval.ms")
	}
	writeProperties(t, connPath, conn)
	p := startCdcd(t, workerPath, connPath)
	// The slot is active while the connector creates it, on the walsender of the creating connection, and
	// again once the streaming connection's START_REPLICATION took it: only after "streaming" is it the
	// walsender that must survive the outage. (Sampling from the first "active" saw the slot free for a
	// moment between the two, and was this test's flake.)
	waitLog(t, p, "msg=streaming")
	waitSlotActive(t, ctx, db, conn["slot.name"], p)

	work := startInsertWorkload(ctx, t, dsn)
	mon := startSlotMonitor(ctx, t, dsn, conn["slot.name"], p.cmd.Process.Pid)

	time.Sleep(3 * time.Second)
	beforeOutage := work.committed.Load()
	outage := 4 * walSenderTimeout
	t.Logf("stopping Kafka for %s (wal_sender_timeout %s) after %d committed rows", outage, walSenderTimeout, beforeOutage)
	services(t, "stop", "kafka")
	stoppedAt := time.Now()
	time.Sleep(outage)
	services(t, "start", "kafka")
	t.Logf("Kafka back after %s; %d rows committed during the outage", time.Since(stoppedAt).Round(time.Second), work.committed.Load()-beforeOutage)
	time.Sleep(3 * time.Second)
	inserted := work.stop(t)

	topic := prefix + ".public.outage"
	seen, err := consumeIDs(ctx, brokers, topic, inserted, 3*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	samples := mon.stop()
	if p.exited() {
		t.Fatalf("cdcd exited; log:\n%s", tail(p.log.String(), 4000))
	}
	p.stop()

	if seen.distinct != inserted {
		t.Errorf("%d of %d committed rows reached %s", seen.distinct, inserted, topic)
	}
	if pids := samples.distinctPIDs(); len(pids) != 1 || samples.inactive > 0 {
		t.Errorf("the walsender did not survive the outage: active_pid took values %v and was null in %d of %d samples", pids, samples.inactive, samples.count)
	}
	if restarts := logLines(p.log.String(), "connector task failed", "replication connection lost"); len(restarts) > 0 {
		t.Errorf("cdcd restarted its task or its replication connection during the outage:\n%s", strings.Join(restarts, "\n"))
	}
	if samples.maxRSSKB > outageRSSBudgetKB {
		t.Errorf("cdcd's RSS reached %d MiB during the outage, over the %d MiB budget", samples.maxRSSKB>>10, outageRSSBudgetKB>>10)
	}
	if warnings := logLines(p.log.String(), "level=WARN", "level=ERROR"); len(warnings) > 0 {
		t.Logf("cdcd logged %d warnings/errors, e.g.:\n%s", len(warnings), strings.Join(warnings[:min(5, len(warnings))], "\n"))
	}
	t.Logf("cdcd RSS every 2s (MiB): %v", samples.rssMiBEvery2s)
	t.Logf("outage test: %d rows inserted, %d distinct ids in Kafka (%d records), %d slot samples, active_pid %v, RSS max %d MiB (first %d MiB)",
		inserted, seen.distinct, seen.records, samples.count, samples.distinctPIDs(), samples.maxRSSKB>>10, samples.firstRSSKB>>10)
}

// alterSystem sets a server parameter with ALTER SYSTEM and reloads; at cleanup it restores what
// postgresql.auto.conf said before (or removes the entry) and reloads again.
func alterSystem(t *testing.T, adminDSN, name, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var previous *string
	err = conn.QueryRow(ctx, `SELECT setting FROM pg_file_settings WHERE name = $1 AND sourcefile LIKE '%postgresql.auto.conf' AND applied`, name).Scan(&previous)
	if err != nil && err != pgx.ErrNoRows {
		t.Fatal(err)
	}
	set := func(ctx context.Context, conn *pgx.Conn, v *string) error {
		stmt := "ALTER SYSTEM RESET " + name
		if v != nil {
			stmt = fmt.Sprintf("ALTER SYSTEM SET %s = '%s'", name, strings.ReplaceAll(*v, "'", "''"))
		}
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return err
		}
		_, err := conn.Exec(ctx, "SELECT pg_reload_conf()")
		return err
	}
	if err := set(ctx, conn, &value); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, adminDSN)
		if err != nil {
			t.Errorf("restoring %s: %v", name, err)
			return
		}
		defer conn.Close(context.Background())
		if err := set(ctx, conn, previous); err != nil {
			t.Errorf("restoring %s: %v", name, err)
		}
	})
	// pg_reload_conf only signals the postmaster; wait until new sessions see the value.
	for range 50 {
		var got string
		if err := conn.QueryRow(ctx, "SELECT setting FROM pg_file_settings WHERE name = $1 AND applied ORDER BY seqno DESC LIMIT 1", name).Scan(&got); err == nil && got == value {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// services runs e2e/services.sh (the test's working directory is e2e/).
func services(t *testing.T, action, service string) {
	t.Helper()
	out, err := exec.Command("./services.sh", action, service).CombinedOutput()
	if err != nil {
		t.Fatalf("services.sh %s %s: %v\n%s", action, service, err, out)
	}
}

// ensureKafkaRunsAtCleanup starts Kafka again when t ends, whatever happened: other tests share it.
func ensureKafkaRunsAtCleanup(t *testing.T) {
	t.Cleanup(func() {
		if out, err := exec.Command("./services.sh", "start", "kafka").CombinedOutput(); err != nil {
			t.Errorf("restarting Kafka at cleanup: %v\n%s", err, out)
		}
	})
}

// insertWorkload inserts rows with ids 1, 2, 3… one transaction each, until stopped.
type insertWorkload struct {
	committed atomic.Int64
	quit      chan struct{}
	done      chan error
}

func startInsertWorkload(ctx context.Context, t *testing.T, dsn string) *insertWorkload {
	t.Helper()
	w := &insertWorkload{quit: make(chan struct{}), done: make(chan error, 1)}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer conn.Close(context.Background())
		for id := int64(1); ; id++ {
			select {
			case <-w.quit:
				w.done <- nil
				return
			case <-time.After(2 * time.Millisecond):
			}
			if _, err := conn.Exec(ctx, "INSERT INTO outage VALUES ($1, repeat('x', 200))", id); err != nil {
				w.done <- fmt.Errorf("insert %d: %w", id, err)
				return
			}
			w.committed.Store(id)
		}
	}()
	return w
}

// stop ends the workload and returns how many rows it committed.
func (w *insertWorkload) stop(t *testing.T) int64 {
	t.Helper()
	close(w.quit)
	if err := <-w.done; err != nil {
		t.Fatalf("workload: %v", err)
	}
	return w.committed.Load()
}

// slotSamples is what a slotMonitor saw.
type slotSamples struct {
	count, inactive      int
	pids                 map[int32]int // active_pid → samples
	firstRSSKB, maxRSSKB int64
	rssMiBEvery2s        []int64 // for the log: does RSS plateau while Kafka is down?
}

func (s slotSamples) distinctPIDs() []int32 {
	var out []int32
	for pid := range s.pids {
		out = append(out, pid)
	}
	return out
}

// slotMonitor samples the slot's active_pid and cdcd's VmRSS every 200 ms.
type slotMonitor struct {
	quit chan struct{}
	done chan slotSamples
}

func startSlotMonitor(ctx context.Context, t *testing.T, dsn, slot string, cdcdPID int) *slotMonitor {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	m := &slotMonitor{quit: make(chan struct{}), done: make(chan slotSamples, 1)}
	go func() {
		defer conn.Close(context.Background())
		s := slotSamples{pids: map[int32]int{}}
		for {
			var pid *int32
			if err := conn.QueryRow(ctx, "SELECT active_pid FROM pg_replication_slots WHERE slot_name = $1", slot).Scan(&pid); err == nil {
				s.count++
				if pid == nil {
					s.inactive++
				} else {
					s.pids[*pid]++
				}
			}
			if rss := procStatusKB(cdcdPID, "VmRSS"); rss > 0 {
				if s.firstRSSKB == 0 {
					s.firstRSSKB = rss
				}
				s.maxRSSKB = max(s.maxRSSKB, rss)
				if s.count%10 == 1 {
					s.rssMiBEvery2s = append(s.rssMiBEvery2s, rss>>10)
				}
			}
			select {
			case <-m.quit:
				m.done <- s
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return m
}

func (m *slotMonitor) stop() slotSamples {
	close(m.quit)
	return <-m.done
}

// procStatusKB reads a kB field (VmRSS, VmHWM) of /proc/PID/status; 0 if the process is gone.
func procStatusKB(pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), field+":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		return n
	}
	return 0
}

// logLines returns the lines of log containing any of substrings.
func logLines(log string, substrings ...string) []string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		for _, s := range substrings {
			if strings.Contains(line, s) {
				out = append(out, line)
				break
			}
		}
	}
	return out
}

// idsSeen summarises a topic of insert events whose rows have ids 1…n.
type idsSeen struct {
	records, distinct int64
	// outOfOrder counts first appearances that did not follow the previous new id (a transaction's rows must
	// arrive in insert order; redelivered duplicates are set aside).
	outOfOrder int64
}

// consumeIDs reads topic from its start until it has seen every id in 1…want or timeout passes. The id is
// the value's after.id, found without decoding the (large) JSON document.
func consumeIDs(ctx context.Context, brokers []string, topic string, want int64, timeout time.Duration) (idsSeen, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxBytes(64<<20))
	if err != nil {
		return idsSeen{}, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var s idsSeen
	seen := make([]bool, want+1)
	var lastNew int64
	marker := []byte(`"after":{"id":`)
	for s.distinct < want {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return s, nil // the caller reports what is missing
		}
		var fetchErr error
		fetches.EachError(func(_ string, _ int32, err error) { fetchErr = err })
		if fetchErr != nil {
			return s, fmt.Errorf("consuming %s: %w", topic, fetchErr)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			s.records++
			i := bytes.Index(r.Value, marker)
			if i < 0 {
				return
			}
			rest := r.Value[i+len(marker):]
			end := bytes.IndexAny(rest, ",}")
			id, err := strconv.ParseInt(string(rest[:max(end, 0)]), 10, 64)
			if err != nil || id < 1 || id > want || seen[id] {
				return
			}
			seen[id] = true
			s.distinct++
			if id != lastNew+1 {
				s.outOfOrder++
			}
			lastNew = id
		})
	}
	return s, nil
}

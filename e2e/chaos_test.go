package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// The chaos suite: a service crashes (or the offsets disk fills up) under a continuous insert/update/delete workload and is restarted,
// again and again, while cdcd runs. Afterwards the table rebuilt from Kafka must equal the database's
// (nothing lost, every row with its last value), per key the changes must be in commit order once
// redelivered ones are set aside, and cdcd must have recovered by itself. Each fault reports its rows
// lost (0, or the test fails), its duplicates and its recovery time: from the service's restart to the
// first change written after it reaching Kafka.
//
// `make chaos` runs every fault CDCD_CHAOS_FAULTS times (default 3); `make test` runs each once, but the
// Kafka crash.

// chaosTable is the workload's table in both databases.
const chaosTable = "chaos"

// chaosFaults is how many times each fault strikes: CDCD_CHAOS_FAULTS, or 1.
func chaosFaults() int {
	if n, err := strconv.Atoi(os.Getenv("CDCD_CHAOS_FAULTS")); err == nil && n > 0 {
		return n
	}
	return 1
}

// TestChaosPostgresCrash stops PostgreSQL with `-m immediate` (SIGQUIT: no checkpoint, every backend and
// walsender killed) and restarts it.
func TestChaosPostgresCrash(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	run, _, _ := startPostgresChaos(t, ctx, filepath.Join(t.TempDir(), "offsets.dat"), nil)
	t.Cleanup(func() { services(t, "start", "postgres") }) // first of the cleanups: the others need the server
	run.name, run.fault = "postgres -m immediate", func() { services(t, "crash", "postgres"); services(t, "start", "postgres") }
	runChaos(t, ctx, run)
}

// startPostgresChaos runs cdcd standalone on a new database's chaos table, with its offsets in offsetFile,
// and returns the run without its name and fault, the setup connection and the connector config. With a
// partition, cdcd runs in its namespace, linked to the database and Kafka.
func startPostgresChaos(t *testing.T, ctx context.Context, offsetFile string, part *netPartition) (chaosRun, *pgx.Conn, map[string]string) {
	t.Helper()
	netns := ""
	if part != nil {
		netns = part.ns
	}
	return preparePostgresChaos(t, ctx, func(brokers []string, conn map[string]string) *cdcdProcess {
		return writeStandalone(t, t.TempDir(), workerProps(brokers, offsetFile), conn).startIn(netns)
	})
}

// preparePostgresChaos makes the chaos table and its connector, which launch runs, and returns once the
// connector streams.
func preparePostgresChaos(t *testing.T, ctx context.Context, launch func(brokers []string, conn map[string]string) *cdcdProcess) (chaosRun, *pgx.Conn, map[string]string) {
	t.Helper()
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	db := connectPostgres(t, ctx, dsn, "CREATE TABLE chaos (id int PRIMARY KEY, v bigint NOT NULL)", "ALTER TABLE chaos REPLICA IDENTITY FULL")
	conn := pgConnector(t, dsn, "chaos", prefix, "public.chaos")
	p := launch(brokers, conn)
	waitSlotActive(t, ctx, db, conn["slot.name"], p)
	return chaosRun{
		workload: &pgChaosDB{ctx: ctx, dsn: dsn}, probe: &pgChaosDB{ctx: ctx, dsn: dsn},
		brokers: brokers, topic: prefix + ".public.chaos", p: p,
		// A new connection: the setup's may have died with the server.
		dbRows: func() map[int]int64 { return tableRows(t, ctx, pgSession{connectPostgres(t, ctx, dsn)}, chaosTable) },
	}, db, conn
}

// TestChaosMariaDBCrash kills the MariaDB server with SIGKILL and restarts it.
func TestChaosMariaDBCrash(t *testing.T) { chaosBinlogServerCrash(t, mariadbServer) }

// TestChaosMySQLCrash kills the MySQL server with SIGKILL and restarts it.
func TestChaosMySQLCrash(t *testing.T) { chaosBinlogServerCrash(t, mysqlServer) }

// chaosBinlogServerCrash kills server with SIGKILL and restarts it, under load. The server is started
// again when the test ends, whatever happened, once the bed (which skips the test where the services
// are off) stands.
func chaosBinlogServerCrash(t *testing.T, server binlogServer) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	b := newBinlogBed(t, ctx, server, "CREATE TABLE chaos (id INT PRIMARY KEY, v BIGINT NOT NULL)")
	t.Cleanup(func() { services(t, "start", server.name) })
	p := b.start(workerProps(b.brokers, filepath.Join(b.dir, "offsets.dat")), b.connector("chaos", nil))
	runChaos(t, ctx, chaosRun{
		name: server.name + " SIGKILL", fault: func() { services(t, "crash", server.name); services(t, "start", server.name) },
		workload: &mariadbChaosDB{dsn: b.dsn}, probe: &mariadbChaosDB{dsn: b.dsn},
		brokers: b.brokers, topic: b.prefix + "." + b.dsn.DB + "." + chaosTable, p: p,
		dbRows: func() map[int]int64 { return tableRows(t, ctx, mariadbSession{b.session()}, chaosTable) },
	})
}

// TestChaosKafkaCrash kills the broker with SIGKILL (unflushed log segments and all) and restarts it.
//
// Only in `make chaos`: after a SIGKILL the broker recovers every partition of the shared test bed, which on
// a loaded 2-core machine took more than three minutes once (38 s on a quiet one); the Kafka outage test
// covers a broker restart in `make test`.
func TestChaosKafkaCrash(t *testing.T) {
	if os.Getenv("CDCD_CHAOS_FAULTS") == "" {
		t.Skip("the broker's crash recovery is long on the shared test bed: run it with make chaos")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ensureKafkaRunsAtCleanup(t)
	run, _, _ := startPostgresChaos(t, ctx, filepath.Join(t.TempDir(), "offsets.dat"), nil)
	run.name, run.fault = "kafka SIGKILL", func() { services(t, "crash", "kafka"); services(t, "start", "kafka") }
	runChaos(t, ctx, run)
}

// TestChaosKafkaCrashExactlyOnce is TestChaosKafkaCrash with a distributed worker delivering exactly once
// (exactly.once.source.support=enabled): besides nothing lost, a read_committed consumer sees no change
// twice across the broker's crashes.
func TestChaosKafkaCrashExactlyOnce(t *testing.T) {
	if os.Getenv("CDCD_CHAOS_FAULTS") == "" {
		t.Skip("the broker's crash recovery is long on the shared test bed: run it with make chaos")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	ensureKafkaRunsAtCleanup(t)
	run, _, _ := preparePostgresChaos(t, ctx, func(brokers []string, conn map[string]string) *cdcdProcess {
		props := distributedProps(brokers, conn["topic.prefix"], clusterTopicsOf(conn["topic.prefix"]), freePort(t))
		props["exactly.once.source.support"] = "enabled"
		w := startCdcdDistributed(t, props)
		conn["exactly.once.support"] = "required"
		createConnector(t, w.url, conn)
		return w.cdcdProcess
	})
	run.name, run.exactlyOnce = "kafka SIGKILL, exactly-once", true
	run.fault = func() { services(t, "crash", "kafka"); services(t, "start", "kafka") }
	runChaos(t, ctx, run)
}

// partitionLength is how long a partition lasts: CDCD_PARTITION_SECONDS, or 75 s, longer than every
// timeout on either side (Kafka's request.timeout.ms of 30 s, the servers' wal_sender_timeout and
// net_write_timeout of 60 s).
func partitionLength() time.Duration {
	if n, err := strconv.Atoi(os.Getenv("CDCD_PARTITION_SECONDS")); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return 75 * time.Second
}

// partitionFault cuts cdcd off from the service at addr for partitionLength, then heals the link. during
// runs while the link is cut, given the time it heals at.
func partitionFault(part *netPartition, addr string, during func(healAt time.Time)) func() {
	return func() {
		part.cut(addr)
		healAt := time.Now().Add(partitionLength())
		during(healAt)
		time.Sleep(time.Until(healAt)) // the fault itself: its length is all there is to wait for
		part.heal(addr)
	}
}

// noticedBefore fails t unless cdcd logs one of the lines marked by markers (again) before healAt: it found
// out about the partition by itself, instead of waiting on a connection that is gone.
func noticedBefore(t *testing.T, p *cdcdProcess, healAt time.Time, markers ...string) {
	t.Helper()
	count := func() (n int) {
		for _, m := range markers {
			n += strings.Count(p.log.String(), m)
		}
		return n
	}
	for before := count(); count() == before; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(healAt) {
			t.Fatalf("cdcd logged none of %q while the network was cut for %s: it did not notice the partition", markers, partitionLength())
		}
	}
}

// TestChaosPartitionKafka cuts the network between cdcd and Kafka under the workload, for longer than every
// timeout, and heals it: the producer's requests time out and are retried, the in-flight bound stops the
// reading, and the slot is never confirmed past the durable offset.
func TestChaosPartitionKafka(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	kafka := testenv.Kafka(t)[0]
	part := newNetPartition(t, kafka, postgresAddr(t))
	offsetFile := filepath.Join(t.TempDir(), "offsets.dat")
	run, db, conn := startPostgresChaos(t, ctx, offsetFile, part)
	run.name, run.fault = "partition from kafka", partitionFault(part, kafka, func(healAt time.Time) {
		slotStaysBehindDurable(t, ctx, db, conn, offsetFile, healAt, "while Kafka was cut off")
	})
	runChaos(t, ctx, run)
}

// TestChaosPartitionPostgres cuts the network between cdcd and PostgreSQL (the replication connection and
// the query connection alike) for longer than every timeout, and heals it. cdcd must find out while the
// link is cut (the server's status updates go unacknowledged: source.UnackedTimeout), not at the heal.
func TestChaosPartitionPostgres(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	pg := postgresAddr(t)
	part := newNetPartition(t, testenv.Kafka(t)[0], pg)
	run, _, _ := startPostgresChaos(t, ctx, filepath.Join(t.TempDir(), "offsets.dat"), part)
	run.name, run.fault = "partition from postgres", partitionFault(part, pg, func(healAt time.Time) {
		noticedBefore(t, run.p, healAt, "replication connection lost", "connector task failed")
	})
	runChaos(t, ctx, run)
}

// TestChaosPartitionMariaDB cuts the network between cdcd and MariaDB (the binlog connection and the query
// connections) for longer than every timeout, and heals it; the binlog's missing heartbeats tell cdcd.
func TestChaosPartitionMariaDB(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	b := newMariaDBBed(t, ctx, "CREATE TABLE chaos (id INT PRIMARY KEY, v BIGINT NOT NULL)")
	part := newNetPartition(t, b.brokers[0], b.dsn.Addr)
	b.netns = part.ns
	p := b.start(workerProps(b.brokers, filepath.Join(b.dir, "offsets.dat")), b.connector("chaos", nil))
	runChaos(t, ctx, chaosRun{
		name: "partition from mariadb",
		fault: partitionFault(part, b.dsn.Addr, func(healAt time.Time) {
			noticedBefore(t, p, healAt, "connector task failed")
		}),
		workload: &mariadbChaosDB{dsn: b.dsn}, probe: &mariadbChaosDB{dsn: b.dsn},
		brokers: b.brokers, topic: b.prefix + "." + b.dsn.DB + "." + chaosTable, p: p,
		dbRows: func() map[int]int64 { return tableRows(t, ctx, mariadbSession{b.session()}, chaosTable) },
	})
}

// postgresAddr is host:port of the test bed's PostgreSQL.
func postgresAddr(t *testing.T) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
}

// chaosRun is one fault under the workload.
type chaosRun struct {
	name            string
	fault           func() // crashes the service and returns once it is restarted
	workload, probe chaosDB
	brokers         []string
	topic           string
	p               *cdcdProcess
	dbRows          func() map[int]int64 // the table as the database holds it at the end
	faults          int                  // how many times fault strikes; 0: chaosFaults()
	exactlyOnce     bool                 // a duplicate fails the run
}

// probeIDs are the probes' row ids: above any id the workload uses.
const probeIDs = 1 << 30

func runChaos(t *testing.T, ctx context.Context, r chaosRun) {
	work := startChaosWorkload(r.workload)
	seen := newIDWatcher(t, r.brokers, r.topic)
	var recoveries []time.Duration
	faults := r.faults
	if faults == 0 {
		faults = chaosFaults()
	}
	for i := range faults {
		time.Sleep(time.Duration(500+rand.IntN(1500)) * time.Millisecond) // a random moment of the workload
		r.fault()
		restarted := time.Now()
		id := probeIDs + i
		for deadline := time.Now().Add(2 * time.Minute); r.probe.exec(fmt.Sprintf("INSERT INTO chaos VALUES (%d, %d)", id, i)) != nil; time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the database took no write within 2 minutes of its restart", r.name)
			}
		}
		seen.wait(ctx, id, r.p)
		recoveries = append(recoveries, time.Since(restarted))
		t.Logf("%s %d/%d: cdcd delivered a change written after the restart %s after it", r.name, i+1, faults, recoveries[i].Round(10*time.Millisecond))
	}
	commits, failures := work.stop()
	broker := newBroker(t, r.brokers)
	got := waitTableMatches(t, ctx, broker, r.topic, r.dbRows(), r.p) // nothing lost: fails the test otherwise
	recs, err := broker.Read(ctx, capture.Selection{Topics: []string{r.topic}})
	if err != nil {
		t.Fatal(err)
	}
	dups, disorder := chaosDuplicates(t, recs)
	if r.exactlyOnce && dups > 0 {
		t.Errorf("%s: %d changes read committed twice, want each once", r.name, dups)
	}
	if len(disorder) > 0 {
		t.Errorf("%s: per-key order violated %d times, e.g. %v", r.name, len(disorder), disorder[:min(5, len(disorder))])
	}
	t.Logf("chaos %s: faults=%d transactions=%d failed=%d rows=%d lost=0 duplicates=%d recovery max=%s mean=%s",
		r.name, len(recoveries), commits, failures, len(got.rows), dups, slices.Max(recoveries).Round(10*time.Millisecond),
		meanDuration(recoveries).Round(10*time.Millisecond))
}

func meanDuration(ds []time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}

// chaosDuplicates counts the change events that repeat an earlier one (the same operation leaving a row
// at the same version: versions are unique), and lists the keys whose first-seen changes are not in
// version order.
func chaosDuplicates(t *testing.T, recs []capture.Record) (int, []string) {
	t.Helper()
	type change struct {
		op string
		id int
		v  int64
	}
	seen := map[change]bool{}
	last := map[int]int64{}
	dups := 0
	var disorder []string
	for _, rec := range recs {
		if rec.Value == nil {
			continue
		}
		var ev struct {
			Payload struct {
				Op     string `json:"op"`
				Before *struct {
					ID int   `json:"id"`
					V  int64 `json:"v"`
				} `json:"before"`
				After *struct {
					ID int   `json:"id"`
					V  int64 `json:"v"`
				} `json:"after"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(rec.Value, &ev); err != nil {
			t.Fatalf("%s offset %d: %v", rec.Topic, rec.Offset, err)
		}
		c := change{op: ev.Payload.Op}
		switch {
		case ev.Payload.After != nil:
			c.id, c.v = ev.Payload.After.ID, ev.Payload.After.V
		case ev.Payload.Before != nil:
			c.id, c.v = ev.Payload.Before.ID, ev.Payload.Before.V
		default:
			continue
		}
		if seen[c] {
			dups++
			continue
		}
		seen[c] = true
		if prev, ok := last[c.id]; ok && c.v < prev {
			disorder = append(disorder, fmt.Sprintf("id %d: v %d after %d", c.id, c.v, prev))
		}
		last[c.id] = c.v
	}
	return dups, disorder
}

// chaosDB runs the workload's transactions.
type chaosDB interface {
	// exec runs stmts in one transaction. After an error it drops its connection and the next call
	// connects again; the transaction may or may not have committed (a crash during COMMIT).
	exec(stmts ...string) error
}

type pgChaosDB struct {
	ctx  context.Context
	dsn  string
	conn *pgx.Conn
}

func (d *pgChaosDB) exec(stmts ...string) (err error) {
	if d.conn == nil {
		if d.conn, err = pgx.Connect(d.ctx, d.dsn); err != nil {
			return err
		}
	}
	defer func() {
		if err != nil {
			d.conn.Close(context.Background())
			d.conn = nil
		}
	}()
	tx, err := d.conn.Begin(d.ctx)
	if err != nil {
		return err
	}
	for _, s := range stmts {
		if _, err := tx.Exec(d.ctx, s); err != nil {
			return err
		}
	}
	return tx.Commit(d.ctx)
}

type mariadbChaosDB struct {
	dsn  testenv.MySQLDSN
	conn *client.Conn
}

func (d *mariadbChaosDB) exec(stmts ...string) (err error) {
	if d.conn == nil {
		if d.conn, err = client.Connect(d.dsn.Addr, d.dsn.User, d.dsn.Password, d.dsn.DB); err != nil {
			return err
		}
	}
	defer func() {
		if err != nil {
			d.conn.Close()
			d.conn = nil
		}
	}()
	if err := d.conn.Begin(); err != nil {
		return err
	}
	for _, s := range stmts {
		if _, err := d.conn.Execute(s); err != nil {
			return err
		}
	}
	return d.conn.Commit()
}

// chaosWorkload commits small transactions of inserts, updates and deletes on chaos (id, v), with v
// unique and increasing, through every fault: a failed transaction is retried as a new one on a new
// connection. The rows a transaction of unknown outcome touched are never touched again, so what the
// database holds stays the only truth the check needs.
type chaosWorkload struct {
	stopped  chan struct{}
	done     chan struct{}
	mu       sync.Mutex
	commits  int
	failures int
}

func startChaosWorkload(db chaosDB) *chaosWorkload {
	w := &chaosWorkload{stopped: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		var known []int // rows known to exist, touched only by committed transactions
		nextID, v := 1, int64(0)
		for {
			select {
			case <-w.stopped:
				return
			default:
			}
			var stmts []string
			var back, touched []int // back: the rows that exist once the transaction commits
			for range 1 + rand.IntN(3) {
				v++
				switch n := rand.IntN(10); {
				case len(known) < 20 || n < 3:
					stmts = append(stmts, fmt.Sprintf("INSERT INTO chaos VALUES (%d, %d)", nextID, v))
					back = append(back, nextID)
					nextID++
				default:
					i := rand.IntN(len(known))
					id := known[i]
					if slices.Contains(touched, id) {
						continue
					}
					touched = append(touched, id)
					if n < 9 {
						stmts = append(stmts, fmt.Sprintf("UPDATE chaos SET v = %d WHERE id = %d", v, id))
						back = append(back, id)
					} else {
						stmts = append(stmts, fmt.Sprintf("DELETE FROM chaos WHERE id = %d", id))
					}
					known = slices.Delete(known, i, i+1) // back below, unless deleted or uncertain
				}
			}
			err := db.exec(stmts...)
			w.mu.Lock()
			if err != nil {
				w.failures++
			} else {
				w.commits++
			}
			w.mu.Unlock()
			if err != nil {
				time.Sleep(100 * time.Millisecond) // the service is down; try again shortly
				continue
			}
			known = append(known, back...)
		}
	}()
	return w
}

// stop ends the workload and returns how many transactions committed and how many failed.
func (w *chaosWorkload) stop() (commits, failures int) {
	close(w.stopped)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.commits, w.failures
}

// idWatcher tails a topic and remembers the row ids its change events carry.
type idWatcher struct {
	t       *testing.T
	cl      *kgo.Client
	ids     map[int]bool
	brokers []string
	topic   string
}

func newIDWatcher(t *testing.T, brokers []string, topic string) *idWatcher {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &idWatcher{t: t, cl: cl, ids: map[int]bool{}, brokers: brokers, topic: topic}
}

// wait polls until an event of row id arrived, for up to 3 minutes.
func (w *idWatcher) wait(ctx context.Context, id int, p *cdcdProcess) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	for !w.ids[id] {
		fetches := w.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			w.t.Fatalf("no event of row %d within 3 minutes (%s); cdcd log:\n%s", id, w.inTopic(id), tail(p.log.String(), 6000))
		}
		fetches.EachRecord(func(rec *kgo.Record) {
			if id, ok := eventRowID(rec.Value); ok {
				w.ids[id] = true
			}
		})
	}
}

// eventRowID is the id of the row after the change a JSON event with schemas carries.
func eventRowID(value []byte) (int, bool) {
	var ev struct {
		Payload struct {
			After *struct {
				ID int `json:"id"`
			} `json:"after"`
		} `json:"payload"`
	}
	if json.Unmarshal(value, &ev) != nil || ev.Payload.After == nil {
		return 0, false
	}
	return ev.Payload.After.ID, true
}

// inTopic says whether a fresh consumer finds an event of row id in the topic: whether cdcd did not deliver
// it, or the watcher's own consumer did not recover from the fault.
func (w *idWatcher) inTopic(id int) string {
	broker, err := capture.NewBroker(w.brokers)
	if err != nil {
		return "a fresh consumer could not connect: " + err.Error()
	}
	defer broker.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	recs, err := broker.Read(ctx, capture.Selection{Topics: []string{w.topic}})
	if err != nil {
		return "a fresh consumer could not read the topic: " + err.Error()
	}
	for _, r := range recs {
		if got, ok := eventRowID(r.Value); ok && got == id {
			return fmt.Sprintf("it is in the topic at offset %d: the watcher's consumer did not recover", r.Offset)
		}
	}
	return fmt.Sprintf("not in the topic's %d committed records either: cdcd did not deliver it", len(recs))
}

// TestChaosOffsetsDiskFull fills the file system of the offsets file (a small tmpfs) under the workload
// and frees it a few seconds later. While offsets cannot be written nothing is released: the slot's
// confirmed_flush_lsn never passes the durable offset. Once there is room again cdcd recovers by itself.
func TestChaosOffsetsDiskFull(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	small := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", small).CombinedOutput(); err != nil {
		t.Fatalf("mounting a 1 MiB tmpfs for the offsets (the test bed runs as root): %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", small).Run() }) // after cdcd stopped (cleanups run last first)
	offsetFile := filepath.Join(small, "offsets.dat")
	run, db, conn := startPostgresChaos(t, ctx, offsetFile, nil)
	filler := filepath.Join(small, "filler")
	run.name = "offsets disk full"
	run.fault = func() {
		fillFileSystem(t, filler)
		waitLog(t, run.p, "no space left on device")
		slotStaysBehindDurable(t, ctx, db, conn, offsetFile, time.Now().Add(3*time.Second), "with the offsets disk full")
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
	}
	runChaos(t, ctx, run)
}

// slotStaysBehindDurable samples the connector's slot until the given time: its confirmed_flush_lsn must never
// pass the offset durable in offsetFile. A sample that cannot be taken (the server down) is skipped.
func slotStaysBehindDurable(t *testing.T, ctx context.Context, db *pgx.Conn, conn map[string]string, offsetFile string, until time.Time, while string) {
	t.Helper()
	offsetKey, err := offsets.Key(conn["name"], map[string]any{"server": conn["topic.prefix"]})
	if err != nil {
		t.Fatal(err)
	}
	for ; time.Now().Before(until); time.Sleep(100 * time.Millisecond) {
		var confirmed *string
		if err := db.QueryRow(ctx, "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1", conn["slot.name"]).Scan(&confirmed); err != nil || confirmed == nil {
			continue
		}
		slotLSN, _ := pglogrepl.ParseLSN(*confirmed)
		if durable := durableLSN(offsetFile, offsetKey); durable != 0 && uint64(slotLSN) > durable {
			t.Errorf("%s, confirmed_flush_lsn %s passed the durable offset %s", while, slotLSN, pglogrepl.LSN(durable))
		}
	}
}

// fillFileSystem writes path until its file system has no room left.
func fillFileSystem(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 64<<10)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}

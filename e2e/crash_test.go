package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// pgConnector is a connector config for the test database dsn: one table, its own slot and publication.
func pgConnector(t testing.TB, dsn, name, prefix, table string) map[string]string {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	slot := strings.ToLower(strings.NewReplacer("-", "_", ".", "_").Replace(prefix))
	props := map[string]string{
		"name":                        name,
		"connector.class":             "io.debezium.connector.postgresql.PostgresConnector",
		"plugin.name":                 "pgoutput",
		"database.hostname":           cfg.Host,
		"database.port":               fmt.Sprint(cfg.Port),
		"database.user":               cfg.User,
		"database.password":           cfg.Password,
		"database.dbname":             cfg.Database,
		"topic.prefix":                prefix,
		"slot.name":                   slot,
		"publication.name":            slot,
		"publication.autocreate.mode": "filtered",
		"status.update.interval.ms":   "200",
		"slot.retry.delay.ms":         "500",
	}
	if table != "" {
		props["table.include.list"] = table
	}
	return props
}

// workerProps is a standalone worker writing JSON with schemas and flushing offsets often.
func workerProps(brokers []string, offsetFile string) map[string]string {
	return map[string]string{
		"bootstrap.servers":            strings.Join(brokers, ","),
		"key.converter":                "org.apache.kafka.connect.json.JsonConverter",
		"value.converter":              "org.apache.kafka.connect.json.JsonConverter",
		"offset.storage.file.filename": offsetFile,
		"offset.flush.interval.ms":     "200",
		"listeners":                    "http://127.0.0.1:0",
	}
}

// committedChange is one change the workload saw commit.
type committedChange struct {
	id      int
	op      string // c, u, d
	version int64  // unique, increasing in commit order
}

// kafkaChange is one change event read back from Kafka.
type kafkaChange struct {
	id      int
	op      string
	version int64
	// position is the change's place in the database log: the PostgreSQL LSN, or binlog file:pos/row.
	position string
}

// TestCrashSafety kills cdcd with SIGKILL at random moments under a continuous insert/update/delete
// workload, restarts it each time, and then proves from Kafka that every committed change arrived, that per
// key the changes appear in commit order once redelivered ones are set aside, and that the slot's
// confirmed_flush_lsn never passed the durable offset.
func TestCrashSafety(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	crashes, timeout := 8, 10*time.Minute // make soak: CDCD_SOAK_KILLS, with time for each
	if n, err := strconv.Atoi(os.Getenv("CDCD_SOAK_KILLS")); err == nil && n > 0 {
		crashes, timeout = n, time.Duration(n)*10*time.Second+5*time.Minute
	}
	// The workload, the monitor and every wait share this bound.
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	db := createCrashTable(t, ctx, dsn)

	dir := t.TempDir()
	offsetFile := filepath.Join(dir, "offsets.dat")
	workerPath, connPath := filepath.Join(dir, "worker.properties"), filepath.Join(dir, "pg.properties")
	writeProperties(t, workerPath, workerProps(brokers, offsetFile))
	conn := pgConnector(t, dsn, "crash", prefix, "public.crash")
	writeProperties(t, connPath, conn)

	p := startCdcd(t, workerPath, connPath)
	waitSlotActive(t, ctx, db, conn["slot.name"], p)

	work := startCrashWorkload(ctx, pgWorkload(ctx, dsn))
	// The monitor: the slot's confirmed_flush_lsn must never pass the durable offset. The slot is read
	// first; the offset only grows, so slot(t1) ≤ offset(t1) ≤ offset(t2) must hold.
	offsetKey, err := offsets.Key("crash", map[string]any{"server": prefix})
	if err != nil {
		t.Fatal(err)
	}
	var violations []string
	var checks int
	stopMonitor := make(chan struct{})
	monitorDone := make(chan struct{})
	go func() {
		defer close(monitorDone)
		mconn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			violations = append(violations, err.Error())
			return
		}
		defer mconn.Close(context.Background())
		for {
			select {
			case <-stopMonitor:
				return
			case <-time.After(20 * time.Millisecond):
			}
			var confirmed *string
			if err := mconn.QueryRow(ctx, "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1", conn["slot.name"]).Scan(&confirmed); err != nil || confirmed == nil {
				continue
			}
			slotLSN, _ := pglogrepl.ParseLSN(*confirmed)
			durable := durableLSN(offsetFile, offsetKey)
			checks++
			// Before the first offset is written the slot stands at its creation point, which the first
			// offset will cover: only compare once an offset exists.
			if durable != 0 && uint64(slotLSN) > durable {
				violations = append(violations, fmt.Sprintf("confirmed_flush_lsn %s > durable offset %s", slotLSN, pglogrepl.LSN(durable)))
			}
		}
	}()

	var recoveries []time.Duration // from each restart until the slot streams again
	for i := range crashes {
		time.Sleep(time.Duration(300+rand.IntN(1500)) * time.Millisecond)
		p.kill()
		time.Sleep(time.Duration(rand.IntN(300)) * time.Millisecond)
		restarted := time.Now()
		p = startCdcd(t, workerPath, connPath)
		waitSlotActive(t, ctx, db, conn["slot.name"], p)
		recoveries = append(recoveries, time.Since(restarted))
		t.Logf("crash %d/%d done", i+1, crashes)
	}
	slices.Sort(recoveries)
	time.Sleep(time.Second)
	want := work.stop(t)
	got, dups := checkCrashDelivery(t, ctx, brokers, prefix+".public.crash", want)
	p.stop()
	close(stopMonitor)
	<-monitorDone
	if len(violations) > 0 {
		t.Errorf("confirmed_flush_lsn passed the durable offset %d times, e.g. %v", len(violations), violations[:min(5, len(violations))])
	}
	if checks == 0 {
		t.Error("the slot/offset monitor never ran a check")
	}
	t.Logf("crash test: %d crashes, %d committed changes, %d events in Kafka, %d redelivered duplicates set aside, %d slot/offset checks; restart to streaming: median %v, max %v",
		crashes, len(want), len(got), dups, checks, recoveries[len(recoveries)/2].Round(time.Millisecond), recoveries[len(recoveries)-1].Round(time.Millisecond))
}

// createCrashTable creates the crash workload's table (id, version) in dsn's database, with REPLICA IDENTITY
// FULL so deletes carry the version they removed, and returns a connection closed when t ends.
func createCrashTable(t *testing.T, ctx context.Context, dsn string) *pgx.Conn {
	t.Helper()
	db, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(context.Background()) })
	if _, err := db.Exec(ctx, `CREATE TABLE crash (id int PRIMARY KEY, version bigint NOT NULL); ALTER TABLE crash REPLICA IDENTITY FULL`); err != nil {
		t.Fatal(err)
	}
	return db
}

// crashWorkload runs small transactions of random inserts, updates and deletes on table crash (id, version)
// and records each change once its transaction committed.
type crashWorkload struct {
	mu        sync.Mutex
	committed []committedChange
	stopWork  chan struct{}
	workDone  chan error
}

// workloadTx is one transaction of the workload, in the database's own dialect.
type workloadTx interface {
	insert(id int, version int64) error
	update(id int, version int64) error
	delete(id int) error
	commit() error
}

// startCrashWorkload runs the workload until stop; begin opens a transaction.
func startCrashWorkload(ctx context.Context, begin func() (workloadTx, error)) *crashWorkload {
	w := &crashWorkload{stopWork: make(chan struct{}), workDone: make(chan error, 1)}
	go func() { w.workDone <- w.run(ctx, begin) }()
	return w
}

func (w *crashWorkload) run(ctx context.Context, begin func() (workloadTx, error)) error {
	var version int64
	exists := map[int]bool{}
	for {
		select {
		case <-w.stopWork:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		tx, err := begin()
		if err != nil {
			return err
		}
		var changes []committedChange
		next := maps.Clone(exists)
		for range 1 + rand.IntN(4) {
			id := 1 + rand.IntN(100)
			version++
			var op string
			switch {
			case !next[id]:
				op, err = "c", tx.insert(id, version)
				next[id] = true
			case rand.IntN(10) < 8:
				op, err = "u", tx.update(id, version)
			default:
				op, err = "d", tx.delete(id)
				next[id] = false
			}
			if err != nil {
				return err
			}
			changes = append(changes, committedChange{id, op, version})
		}
		if err := tx.commit(); err != nil {
			return err
		}
		exists = next
		w.mu.Lock()
		w.committed = append(w.committed, changes...)
		w.mu.Unlock()
		time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
	}
}

// stop ends the workload and returns the committed changes in commit order.
func (w *crashWorkload) stop(t testing.TB) []committedChange {
	t.Helper()
	close(w.stopWork)
	if err := <-w.workDone; err != nil {
		t.Fatalf("workload: %v", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.committed
}

// pgWorkload opens the PostgreSQL workload's transactions.
func pgWorkload(ctx context.Context, dsn string) func() (workloadTx, error) {
	var conn *pgx.Conn
	return func() (workloadTx, error) {
		if conn == nil {
			c, err := pgx.Connect(ctx, dsn)
			if err != nil {
				return nil, err
			}
			conn = c
		}
		tx, err := conn.Begin(ctx)
		return pgTx{ctx, tx}, err
	}
}

type pgTx struct {
	ctx context.Context
	tx  pgx.Tx
}

func (p pgTx) insert(id int, v int64) error {
	_, err := p.tx.Exec(p.ctx, "INSERT INTO crash VALUES ($1, $2)", id, v)
	return err
}

func (p pgTx) update(id int, v int64) error {
	_, err := p.tx.Exec(p.ctx, "UPDATE crash SET version = $2 WHERE id = $1", id, v)
	return err
}

func (p pgTx) delete(id int) error {
	_, err := p.tx.Exec(p.ctx, "DELETE FROM crash WHERE id = $1", id)
	return err
}

func (p pgTx) commit() error { return p.tx.Commit(p.ctx) }

// checkCrashDelivery waits until every committed change is in topic (or gives up), then reports missing
// changes and per-key order violations once redelivered events are set aside. It returns the events read
// and how many were redeliveries.
func checkCrashDelivery(t *testing.T, ctx context.Context, brokers []string, topic string, want []committedChange) ([]kafkaChange, int) {
	t.Helper()
	broker, err := capture.NewBroker(brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	var got []kafkaChange
	deadline := time.Now().Add(2 * time.Minute)
	for {
		recs, err := broker.Read(ctx, capture.Selection{Topics: []string{topic}})
		if err != nil {
			t.Fatal(err)
		}
		got = parseChanges(t, recs)
		if len(missingChanges(want, got)) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	if missing := missingChanges(want, got); len(missing) > 0 {
		t.Errorf("%d of %d committed changes never reached Kafka, e.g. %+v", len(missing), len(want), missing[:min(5, len(missing))])
	}
	unique, dups := setAsideRedelivered(got)
	if bad := orderViolations(unique); len(bad) > 0 {
		t.Errorf("per-key order violated %d times, e.g. %v", len(bad), bad[:min(5, len(bad))])
	}
	return got, dups
}

// durableLSN reads the resume LSN of the offsets file now; 0 when there is none yet.
func durableLSN(path string, key []byte) uint64 {
	store, err := offsets.OpenFile(path)
	if err != nil {
		return 0
	}
	raw, ok := store.Get(key)
	if !ok {
		return 0
	}
	return offsetLSN(raw)
}

// offsetLSN is the resume LSN of a Debezium PostgreSQL offset value; 0 when it has none.
func offsetLSN(raw []byte) uint64 {
	fields, err := offsets.DecodeValue(raw)
	if err != nil {
		return 0
	}
	m := fields.Map()
	for _, k := range []string{"lsn_commit", "lsn_proc", "lsn"} {
		if v, ok := m[k]; ok {
			switch n := v.(type) {
			case int64:
				return uint64(n)
			case json.Number:
				i, _ := n.Int64()
				return uint64(i)
			}
		}
	}
	return 0
}

func parseChanges(t testing.TB, recs []capture.Record) []kafkaChange {
	t.Helper()
	var out []kafkaChange
	for _, r := range recs {
		if r.Value == nil {
			continue // tombstone
		}
		var env struct {
			Payload struct {
				Op     string `json:"op"`
				Before *struct {
					ID      int   `json:"id"`
					Version int64 `json:"version"`
				} `json:"before"`
				After *struct {
					ID      int   `json:"id"`
					Version int64 `json:"version"`
				} `json:"after"`
				Source struct {
					LSN  int64  `json:"lsn"`
					File string `json:"file"`
					Pos  int64  `json:"pos"`
					Row  int    `json:"row"`
				} `json:"source"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(r.Value, &env); err != nil {
			t.Fatalf("record %s@%d: %v", r.Topic, r.Offset, err)
		}
		pl := env.Payload
		c := kafkaChange{op: pl.Op, position: fmt.Sprintf("%d %s:%d/%d", pl.Source.LSN, pl.Source.File, pl.Source.Pos, pl.Source.Row)}
		switch {
		case pl.Op == "d" && pl.Before != nil:
			c.id, c.version = pl.Before.ID, pl.Before.Version
		case pl.After != nil:
			c.id, c.version = pl.After.ID, pl.After.Version
		default:
			t.Fatalf("record %s@%d has op %q without a row", r.Topic, r.Offset, pl.Op)
		}
		out = append(out, c)
	}
	return out
}

// missingChanges lists committed changes absent from Kafka. A delete carries the version of the row it
// removed, so deletes are matched by key and the version they removed.
func missingChanges(want []committedChange, got []kafkaChange) []committedChange {
	seen := map[string]bool{}
	for _, g := range got {
		if g.op == "d" {
			seen[fmt.Sprintf("d/%d", g.id)+fmt.Sprintf("/after%d", g.version)] = true
			continue
		}
		seen[fmt.Sprintf("%s/%d/%d", g.op, g.id, g.version)] = true
	}
	lastVersion := map[int]int64{}
	var missing []committedChange
	for _, w := range want {
		key := fmt.Sprintf("%s/%d/%d", w.op, w.id, w.version)
		if w.op == "d" {
			key = fmt.Sprintf("d/%d/after%d", w.id, lastVersion[w.id])
		} else {
			lastVersion[w.id] = w.version
		}
		if !seen[key] {
			missing = append(missing, w)
		}
	}
	return missing
}

// setAsideRedelivered drops events whose (key, source position, op) was already seen: what a restart
// delivered again. It returns the rest in order and how many were set aside.
func setAsideRedelivered(got []kafkaChange) ([]kafkaChange, int) {
	seen := map[string]bool{}
	var out []kafkaChange
	for _, g := range got {
		k := fmt.Sprintf("%d/%s/%s", g.id, g.position, g.op)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, g)
	}
	return out, len(got) - len(out)
}

// orderViolations checks that per key, versions never go backwards (a delete repeats the version it removed).
func orderViolations(changes []kafkaChange) []string {
	last := map[int]int64{}
	var bad []string
	for _, c := range changes {
		if c.version < last[c.id] || (c.op != "d" && c.version == last[c.id]) {
			bad = append(bad, fmt.Sprintf("key %d: %s v%d after v%d", c.id, c.op, c.version, last[c.id]))
		}
		last[c.id] = c.version
	}
	return bad
}

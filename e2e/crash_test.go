package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
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
	lsn     int64
}

// TestCrashSafety kills cdcd with SIGKILL at random moments under a continuous insert/update/delete
// workload, restarts it each time, and then proves from Kafka that every committed change arrived, that per
// key the changes appear in commit order once redelivered ones are set aside, and that the slot's
// confirmed_flush_lsn never passed the durable offset.
func TestCrashSafety(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	db, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	if _, err := db.Exec(ctx, `CREATE TABLE crash (id int PRIMARY KEY, version bigint NOT NULL); ALTER TABLE crash REPLICA IDENTITY FULL`); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	offsetFile := filepath.Join(dir, "offsets.dat")
	workerPath, connPath := filepath.Join(dir, "worker.properties"), filepath.Join(dir, "pg.properties")
	writeProperties(t, workerPath, workerProps(brokers, offsetFile))
	conn := pgConnector(t, dsn, "crash", prefix, "public.crash")
	writeProperties(t, connPath, conn)

	p := startCdcd(t, workerPath, connPath)
	waitSlotActive(t, ctx, db, conn["slot.name"], p)

	// The workload: small transactions of random inserts, updates and deletes, recorded once committed.
	var (
		mu        sync.Mutex
		committed []committedChange
		version   atomic.Int64
		stopWork  = make(chan struct{})
		workDone  = make(chan error, 1)
	)
	go func() {
		wconn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			workDone <- err
			return
		}
		defer wconn.Close(context.Background())
		exists := map[int]bool{}
		for {
			select {
			case <-stopWork:
				workDone <- nil
				return
			default:
			}
			tx, err := wconn.Begin(ctx)
			if err != nil {
				workDone <- err
				return
			}
			var changes []committedChange
			next := map[int]bool{}
			for k, v := range exists {
				next[k] = v
			}
			for range 1 + rand.IntN(4) {
				id := 1 + rand.IntN(100)
				v := version.Add(1)
				var sql, op string
				switch {
				case !next[id]:
					sql, op = "INSERT INTO crash VALUES ($1, $2)", "c"
					next[id] = true
				case rand.IntN(10) < 8:
					sql, op = "UPDATE crash SET version = $2 WHERE id = $1", "u"
				default:
					sql, op = "DELETE FROM crash WHERE id = $1 AND $2 > 0", "d"
					next[id] = false
				}
				if _, err := tx.Exec(ctx, sql, id, v); err != nil {
					workDone <- err
					return
				}
				changes = append(changes, committedChange{id, op, v})
			}
			if err := tx.Commit(ctx); err != nil {
				workDone <- err
				return
			}
			exists = next
			mu.Lock()
			committed = append(committed, changes...)
			mu.Unlock()
			time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
		}
	}()

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

	const crashes = 8
	for i := range crashes {
		time.Sleep(time.Duration(300+rand.IntN(1500)) * time.Millisecond)
		p.kill()
		time.Sleep(time.Duration(rand.IntN(300)) * time.Millisecond)
		p = startCdcd(t, workerPath, connPath)
		waitSlotActive(t, ctx, db, conn["slot.name"], p)
		t.Logf("crash %d/%d done", i+1, crashes)
	}
	time.Sleep(time.Second)
	close(stopWork)
	if err := <-workDone; err != nil {
		t.Fatalf("workload: %v", err)
	}

	broker, err := capture.NewBroker(brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	topic := prefix + ".public.crash"
	mu.Lock()
	want := committed
	mu.Unlock()

	// Wait until every committed change is in Kafka (or give up and report what is missing).
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
	p.stop()
	close(stopMonitor)
	<-monitorDone

	if missing := missingChanges(want, got); len(missing) > 0 {
		t.Errorf("%d of %d committed changes never reached Kafka, e.g. %+v", len(missing), len(want), missing[:min(5, len(missing))])
	}
	unique, dups := setAsideRedelivered(got)
	if bad := orderViolations(unique); len(bad) > 0 {
		t.Errorf("per-key order violated %d times, e.g. %v", len(bad), bad[:min(5, len(bad))])
	}
	if len(violations) > 0 {
		t.Errorf("confirmed_flush_lsn passed the durable offset %d times, e.g. %v", len(violations), violations[:min(5, len(violations))])
	}
	if checks == 0 {
		t.Error("the slot/offset monitor never ran a check")
	}
	t.Logf("crash test: %d crashes, %d committed changes, %d events in Kafka, %d redelivered duplicates set aside, %d slot/offset checks",
		crashes, len(want), len(got), dups, checks)
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
					LSN int64 `json:"lsn"`
				} `json:"source"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(r.Value, &env); err != nil {
			t.Fatalf("record %s@%d: %v", r.Topic, r.Offset, err)
		}
		pl := env.Payload
		c := kafkaChange{op: pl.Op, lsn: pl.Source.LSN}
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
		k := fmt.Sprintf("%d/%d/%s", g.id, g.lsn, g.op)
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

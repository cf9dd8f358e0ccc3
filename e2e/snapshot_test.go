package e2e

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/cdcd/cdcd/snapshot"
)

// The snapshot tests run cdcd against a database of their own and rebuild, from what reached Kafka, the
// state of every table: applying each key's r/c/u/d events and tombstones in order must give exactly what
// SELECT returns. Records are written without schemas, so large topics stay cheap to read back.

const snapConnectorName = "snap"

// snapshotBed is one test's database, topics, offsets file and cdcd configuration.
type snapshotBed struct {
	t                    *testing.T
	ctx                  context.Context
	db                   *pgx.Conn
	broker               *capture.Broker
	prefix, slot         string
	offsetFile           string
	offsetKey            []byte
	workerPath, connPath string
	conn                 map[string]string // the connector's properties; rewrite them with writeConnector
}

// newSnapshotBed prepares a database capturing all its tables with snapshot.mode=mode plus extra
// connector properties. Nothing runs until start.
func newSnapshotBed(t *testing.T, ctx context.Context, mode string, extra map[string]string) *snapshotBed {
	t.Helper()
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	db, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(context.Background()) })
	broker, err := capture.NewBroker(brokers)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(broker.Close)
	dir := t.TempDir()
	b := &snapshotBed{t: t, ctx: ctx, db: db, broker: broker, prefix: prefix,
		offsetFile: filepath.Join(dir, "offsets.dat"),
		workerPath: filepath.Join(dir, "worker.properties"), connPath: filepath.Join(dir, "pg.properties")}
	if b.offsetKey, err = offsets.Key(snapConnectorName, map[string]any{"server": prefix}); err != nil {
		t.Fatal(err)
	}
	worker := workerProps(brokers, b.offsetFile)
	worker["key.converter.schemas.enable"] = "false"
	worker["value.converter.schemas.enable"] = "false"
	writeProperties(t, b.workerPath, worker)
	b.conn = pgConnector(t, dsn, snapConnectorName, prefix, "")
	b.conn["snapshot.mode"] = mode
	maps.Copy(b.conn, extra)
	b.slot = b.conn["slot.name"]
	b.writeConnector()
	return b
}

func (b *snapshotBed) writeConnector() { writeProperties(b.t, b.connPath, b.conn) }

func (b *snapshotBed) start() *cdcdProcess { return startCdcd(b.t, b.workerPath, b.connPath) }

func (b *snapshotBed) exec(sql string, args ...any) {
	b.t.Helper()
	if _, err := b.db.Exec(b.ctx, sql, args...); err != nil {
		b.t.Fatalf("%s: %v", sql, err)
	}
}

// offset returns the connector's durable offset, nil before the first.
func (b *snapshotBed) offset() map[string]any {
	store, err := offsets.OpenFile(b.offsetFile)
	if err != nil {
		return nil
	}
	raw, ok := store.Get(b.offsetKey)
	if !ok {
		return nil
	}
	fields, err := offsets.DecodeValue(raw)
	if err != nil {
		b.t.Fatalf("offset %s: %v", raw, err)
	}
	return fields.Map()
}

// progress is the snapshot progress in the durable offset, empty when there is none.
func (b *snapshotBed) progress() *snapshot.Progress { return progressOf(b.t, b.offset()) }

// progressOf is the snapshot progress in an offset, empty when there is none.
func progressOf(t *testing.T, off map[string]any) *snapshot.Progress {
	s, _ := off[snapshot.ProgressKey].(string)
	if s == "" {
		return &snapshot.Progress{}
	}
	p, err := snapshot.DecodeProgress(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// waitOffset polls the durable offset until cond holds, failing if cdcd exits first.
func (b *snapshotBed) waitOffset(p *cdcdProcess, what string, cond func(off map[string]any) bool) map[string]any {
	b.t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		if off := b.offset(); off != nil && cond(off) {
			return off
		}
		if p.exited() {
			b.t.Fatalf("cdcd exited while waiting for %s; log:\n%s", what, tail(p.log.String(), 6000))
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.t.Fatalf("no %s within 3 minutes; offset %v; log:\n%s", what, b.offset(), tail(p.log.String(), 6000))
	return nil
}

// fence waits until everything committed so far is in Kafka: it commits a logical decoding message and
// waits for an offset at or past it, which the pipeline writes only once Kafka acknowledged every record
// before it. It needs a streaming cdcd.
func (b *snapshotBed) fence(p *cdcdProcess) {
	b.t.Helper()
	// A slot being created is active before it has its consistent point, and a fence committed before that
	// point is never streamed: wait for the point (confirmed_flush_lsn) too.
	for {
		waitSlotActive(b.t, b.ctx, b.db, b.slot, p)
		var confirmed *string
		if err := b.db.QueryRow(b.ctx, "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1", b.slot).Scan(&confirmed); err != nil {
			b.t.Fatal(err)
		}
		if confirmed != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	var lsnText string
	if err := b.db.QueryRow(b.ctx, "SELECT pg_logical_emit_message(true, 'cdcd-fence', '')::text").Scan(&lsnText); err != nil {
		b.t.Fatal(err)
	}
	fenceLSN, err := pglogrepl.ParseLSN(lsnText)
	if err != nil {
		b.t.Fatal(err)
	}
	b.waitOffset(p, "an offset past the fence at "+lsnText, func(off map[string]any) bool {
		return offsetInt(off, "lsn_commit") >= int64(fenceLSN)
	})
}

// waitLog waits until cdcd's log contains text.
func waitLog(t *testing.T, p *cdcdProcess, text string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(p.log.String(), text) {
		if time.Now().After(deadline) || p.exited() {
			t.Fatalf("cdcd never logged %q; log:\n%s", text, tail(p.log.String(), 4000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// snapshotRunning reports whether the offset was written by a snapshot that has not finished.
func snapshotRunning(off map[string]any) bool {
	s, _ := off["snapshot"].(string)
	last, _ := off["last_snapshot_record"].(bool)
	done, _ := off["snapshot_completed"].(bool)
	return s != "" && !last && !done
}

func offsetInt(off map[string]any, key string) int64 {
	switch n := off[key].(type) {
	case int64:
		return n
	case json.Number:
		i, _ := n.Int64()
		return i
	}
	return 0
}

// snapEvent is one record of a table topic, decoded. Keys and rows stay the JSON the converter wrote
// (compact, columns in table order), which is what row_to_json writes for the same rows.
type snapEvent struct {
	table  string // the table's name (schema public)
	key    string // the key's JSON; "null" for a table without primary key
	op     string // r, c, u, d; "" for a tombstone
	after  string // the after image's JSON, "null" when absent
	marker string // source.snapshot
	runID  string // the __debezium.context.runId header: which cdcd run wrote it
}

// events reads every table topic of the bed, in topic and offset order.
func (b *snapshotBed) events() []snapEvent {
	b.t.Helper()
	recs, err := b.broker.Read(b.ctx, capture.Selection{Prefix: b.prefix})
	if err != nil {
		b.t.Fatal(err)
	}
	tablePrefix := b.prefix + ".public."
	out := make([]snapEvent, 0, len(recs))
	for _, r := range recs {
		table, ok := strings.CutPrefix(r.Topic, tablePrefix)
		if !ok {
			continue // the message topic of the fences
		}
		ev := snapEvent{table: table, key: "null", after: "null"}
		if r.Key != nil {
			ev.key = string(r.Key)
		}
		for _, h := range r.Headers {
			if h.Key == "__debezium.context.runId" {
				ev.runID = string(h.Value)
			}
		}
		if r.Value != nil {
			var env struct {
				Op     string          `json:"op"`
				After  json.RawMessage `json:"after"`
				Source struct {
					Snapshot string `json:"snapshot"`
				} `json:"source"`
			}
			if err := json.Unmarshal(r.Value, &env); err != nil {
				b.t.Fatalf("value of %s@%d: %v", r.Topic, r.Offset, err)
			}
			ev.op, ev.marker = env.Op, env.Source.Snapshot
			if env.After != nil {
				ev.after = string(env.After)
			}
		}
		out = append(out, ev)
	}
	return out
}

// replayTable rebuilds a keyed table from its events: key → row.
func replayTable(events []snapEvent, table string) map[string]string {
	state := map[string]string{}
	for _, ev := range events {
		if ev.table != table {
			continue
		}
		switch ev.op {
		case "r", "c", "u":
			state[ev.key] = ev.after
		default: // d and tombstones
			delete(state, ev.key)
		}
	}
	return state
}

// tableState reads a table as key → row JSON, as the events carry them (keyCols make the key).
func (b *snapshotBed) tableState(table string, keyCols ...string) map[string]string {
	b.t.Helper()
	cols := make([]string, len(keyCols))
	for i, c := range keyCols {
		cols[i] = "t." + pgx.Identifier{c}.Sanitize()
	}
	sql := fmt.Sprintf("SELECT row_to_json(k)::text, row_to_json(t)::text FROM %s t, LATERAL (SELECT %s) k",
		pgx.Identifier{table}.Sanitize(), strings.Join(cols, ", "))
	rows, err := b.db.Query(b.ctx, sql)
	if err != nil {
		b.t.Fatal(err)
	}
	defer rows.Close()
	state := map[string]string{}
	var key, row string
	_, err = pgx.ForEachRow(rows, []any{&key, &row}, func() error {
		state[key] = row
		return nil
	})
	if err != nil {
		b.t.Fatal(err)
	}
	return state
}

// stateDiff lists how got differs from want (at most 10 lines).
func stateDiff(want, got map[string]string) []string {
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if got[k] != want[k] {
			diffs = append(diffs, fmt.Sprintf("key %s: Kafka has %s, the table %s", k, orMissing(got, k), want[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("key %s: Kafka has %s, the table has no such row", k, got[k]))
		}
	}
	if len(diffs) > 10 {
		diffs = append(diffs[:10], fmt.Sprintf("… %d differences in all", len(diffs)))
	}
	return diffs
}

func orMissing(m map[string]string, k string) string {
	if v, ok := m[k]; ok {
		return v
	}
	return "nothing"
}

// assertTableMatches fails t unless replaying the table's events gives the table.
func (b *snapshotBed) assertTableMatches(events []snapEvent, table string, keyCols ...string) {
	b.t.Helper()
	if diffs := stateDiff(b.tableState(table, keyCols...), replayTable(events, table)); len(diffs) > 0 {
		b.t.Errorf("%s rebuilt from Kafka differs from the table:\n%s", table, strings.Join(diffs, "\n"))
	}
}

// opKeys lists, per op, the keys of a table's events in order ("r" → [{"id":1}, …]).
func opKeys(events []snapEvent, table string) map[string][]string {
	out := map[string][]string{}
	for _, ev := range events {
		if ev.table == table {
			out[ev.op] = append(out[ev.op], ev.key)
		}
	}
	return out
}

// idKeys renders ids as the keys of a table keyed by id.
func idKeys(ids ...int) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = fmt.Sprintf(`{"id":%d}`, id)
	}
	return out
}

// runsOf lists the distinct run ids of a table's events of op, in order of appearance.
func runsOf(events []snapEvent, table, op string) []string {
	var runs []string
	for _, ev := range events {
		if ev.table == table && ev.op == op && !slices.Contains(runs, ev.runID) {
			runs = append(runs, ev.runID)
		}
	}
	return runs
}

// runIDTime is when a run began: a run id is a version 7 UUID, whose first 48 bits are Unix milliseconds.
func runIDTime(id string) (time.Time, error) {
	raw, err := hex.DecodeString(strings.ReplaceAll(id, "-", "")[:12])
	if err != nil || len(raw) != 6 {
		return time.Time{}, fmt.Errorf("run id %q is not a UUID: %v", id, err)
	}
	var ms int64
	for _, c := range raw {
		ms = ms<<8 | int64(c)
	}
	return time.UnixMilli(ms), nil
}

// createItems creates items(id, v) with rows 1…n.
func (b *snapshotBed) createItems(n int) {
	b.t.Helper()
	b.exec("CREATE TABLE items (id int PRIMARY KEY, v text NOT NULL)")
	b.exec("INSERT INTO items SELECT g, 'seed ' || g FROM generate_series(1, $1) g", n)
}

// TestSnapshotModes runs each snapshot.mode through a first start, a restart and, where it matters, a
// slot lost while cdcd was stopped.
func TestSnapshotModes(t *testing.T) {
	t.Run("initial", testSnapshotInitial)
	t.Run("initial_only", testSnapshotInitialOnly)
	t.Run("no_data", testSnapshotNoData)
	t.Run("always", testSnapshotAlways)
	t.Run("when_needed", testSnapshotWhenNeeded)
}

// initial: a snapshot, then streaming; a restart after the snapshot finished streams on without a new one.
func testSnapshotInitial(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := newSnapshotBed(t, ctx, "initial", nil)
	b.createItems(5)
	p := b.start()
	b.fence(p)
	b.exec("INSERT INTO items VALUES (6, 'streamed')")
	b.fence(p)
	p.stop()
	b.exec("INSERT INTO items VALUES (7, 'while stopped')")
	p = b.start()
	b.exec("INSERT INTO items VALUES (8, 'after restart')")
	b.fence(p)

	evs := b.events()
	ops := opKeys(evs, "items")
	if want := idKeys(1, 2, 3, 4, 5); !slices.Equal(ops["r"], want) {
		t.Errorf("snapshot rows: got %v, want %v once each (a restart after the snapshot must not snapshot again)", ops["r"], want)
	}
	if want := idKeys(6, 7, 8); !slices.Equal(ops["c"], want) {
		t.Errorf("streamed inserts: got %v, want %v", ops["c"], want)
	}
	if runs := runsOf(evs, "items", "c"); len(runs) != 2 {
		t.Errorf("streamed inserts came from runs %v, want two runs", runs)
	}
	b.assertTableMatches(evs, "items", "id")
}

// initial_only: a snapshot and nothing else; a later insert never reaches Kafka, even across a restart.
func testSnapshotInitialOnly(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := newSnapshotBed(t, ctx, "initial_only", nil)
	b.createItems(5)
	p := b.start()
	b.waitOffset(p, "the end of the snapshot", func(off map[string]any) bool { return !snapshotRunning(off) })
	b.exec("INSERT INTO items VALUES (6, 'never streamed')")
	waitLog(t, p, "nothing is streamed")
	p.stop()
	p = b.start()
	b.exec("INSERT INTO items VALUES (7, 'never streamed either')")
	time.Sleep(2 * time.Second) // there is nothing to wait for: give a wrongly streaming cdcd the chance
	var walsenders int
	if err := b.db.QueryRow(ctx, "SELECT count(*) FROM pg_stat_replication WHERE application_name = $1", "cdcd-"+snapConnectorName).Scan(&walsenders); err != nil {
		t.Fatal(err)
	}
	if walsenders != 0 {
		t.Errorf("%d walsenders serve cdcd in snapshot.mode=initial_only", walsenders)
	}
	p.stop()

	ops := opKeys(b.events(), "items")
	if want := idKeys(1, 2, 3, 4, 5); !slices.Equal(ops["r"], want) {
		t.Errorf("snapshot rows: got %v, want %v once each", ops["r"], want)
	}
	if len(ops["c"]) > 0 {
		t.Errorf("snapshot.mode=initial_only streamed inserts %v", ops["c"])
	}
	var slotExists bool
	if err := b.db.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1)", b.slot).Scan(&slotExists); err != nil {
		t.Fatal(err)
	}
	t.Logf("initial_only: replication slot %s left behind: %v", b.slot, slotExists)
}

// no_data: streaming only, not a single snapshot row.
func testSnapshotNoData(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := newSnapshotBed(t, ctx, "no_data", nil)
	b.createItems(5)
	p := b.start()
	waitSlotActive(t, ctx, b.db, b.slot, p)
	b.exec("INSERT INTO items VALUES (6, 'streamed')")
	b.exec("UPDATE items SET v = 'updated' WHERE id = 1")
	b.fence(p)
	p.stop()
	ops := opKeys(b.events(), "items")
	if len(ops["r"]) > 0 {
		t.Errorf("snapshot.mode=no_data read rows %v", ops["r"])
	}
	if !slices.Equal(ops["c"], idKeys(6)) || !slices.Equal(ops["u"], idKeys(1)) {
		t.Errorf("streamed changes: got %v, want an insert of 6 and an update of 1", ops)
	}
}

// always: every start snapshots again, also with a slot and an offset; the changes made while cdcd was
// stopped are in the new snapshot and must not also be streamed.
func testSnapshotAlways(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := newSnapshotBed(t, ctx, "always", nil)
	b.createItems(5)
	p := b.start()
	b.fence(p)
	b.exec("INSERT INTO items VALUES (6, 'streamed')")
	b.fence(p)
	p.stop()
	b.exec("INSERT INTO items VALUES (7, 'while stopped')")
	b.exec("UPDATE items SET v = 'updated while stopped' WHERE id = 1")
	p = b.start()
	b.fence(p)
	b.exec("INSERT INTO items VALUES (8, 'after the second snapshot')")
	b.exec("UPDATE items SET v = 'updated after the second snapshot' WHERE id = 2")
	b.fence(p)
	p.stop()

	evs := b.events()
	rRuns := runsOf(evs, "items", "r")
	if len(rRuns) != 2 {
		t.Fatalf("snapshot rows came from runs %v, want two snapshots", rRuns)
	}
	var second []string
	for _, ev := range evs {
		if ev.table == "items" && ev.op == "r" && ev.runID == rRuns[1] {
			second = append(second, ev.key)
			if ev.key == `{"id":1}` && !strings.Contains(ev.after, "updated while stopped") {
				t.Errorf("the second snapshot has row 1 as %s", ev.after)
			}
		}
	}
	if want := idKeys(1, 2, 3, 4, 5, 6, 7); !slices.Equal(second, want) {
		t.Errorf("second snapshot: got %v, want %v", second, want)
	}
	ops := opKeys(evs, "items")
	if want := idKeys(6, 8); !slices.Equal(ops["c"], want) {
		t.Errorf("streamed inserts: got %v, want %v (7 is in the second snapshot and must not be streamed too)", ops["c"], want)
	}
	if want := idKeys(2); !slices.Equal(ops["u"], want) {
		t.Errorf("streamed updates: got %v, want %v (the update of 1 is in the second snapshot)", ops["u"], want)
	}
	b.assertTableMatches(evs, "items", "id")
}

// when_needed: a restart with a usable offset streams on; after the slot was dropped while cdcd was
// stopped, cdcd takes a new snapshot where snapshot.mode=initial refuses to start.
func testSnapshotWhenNeeded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := newSnapshotBed(t, ctx, "when_needed", nil)
	b.createItems(5)
	p := b.start()
	b.fence(p)
	p.stop()
	p = b.start()
	b.exec("INSERT INTO items VALUES (6, 'streamed')")
	b.fence(p)
	p.stop()
	if runs := runsOf(b.events(), "items", "r"); len(runs) != 1 {
		t.Errorf("snapshot rows came from runs %v before the slot was dropped, want one snapshot", runs)
	}

	b.exec("SELECT pg_drop_replication_slot($1)", b.slot)
	b.exec("INSERT INTO items VALUES (7, 'while the slot was gone')")
	b.conn["snapshot.mode"] = "initial"
	b.writeConnector()
	p = b.start()
	waitLog(t, p, "is gone")
	p.kill()

	b.conn["snapshot.mode"] = "when_needed"
	b.writeConnector()
	p = b.start()
	b.fence(p)
	waitLog(t, p, "taking a new snapshot")
	b.exec("INSERT INTO items VALUES (8, 'after the new snapshot')")
	b.fence(p)
	p.stop()

	evs := b.events()
	rRuns := runsOf(evs, "items", "r")
	if len(rRuns) != 2 {
		t.Fatalf("snapshot rows came from runs %v, want a second snapshot after the slot was lost", rRuns)
	}
	var second []string
	for _, ev := range evs {
		if ev.table == "items" && ev.op == "r" && ev.runID == rRuns[1] {
			second = append(second, ev.key)
		}
	}
	if want := idKeys(1, 2, 3, 4, 5, 6, 7); !slices.Equal(second, want) {
		t.Errorf("snapshot after the slot was lost: got %v, want %v", second, want)
	}
	if want := idKeys(6, 8); !slices.Equal(opKeys(evs, "items")["c"], want) {
		t.Errorf("streamed inserts: got %v, want %v", opKeys(evs, "items")["c"], want)
	}
	b.assertTableMatches(evs, "items", "id")
}

// TestSnapshotMarkers checks source.snapshot across a multi-table snapshot read in chunks of two rows:
// first for the first row of all, first_in_data_collection and last_in_data_collection for each later
// table's first and last rows (a one-row table's row is its last), true between, and "last" for the
// snapshot's very last record even when an empty table follows it.
func TestSnapshotMarkers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := newSnapshotBed(t, ctx, "initial", map[string]string{"snapshot.fetch.size": "2"})
	sizes := map[string]int{"a": 3, "b": 1, "c": 2, "d": 0}
	for _, name := range slices.Sorted(maps.Keys(sizes)) {
		b.exec(fmt.Sprintf("CREATE TABLE %s (id int PRIMARY KEY); INSERT INTO %[1]s SELECT generate_series(1, %d)", name, sizes[name]))
	}
	p := b.start()
	b.fence(p)
	p.stop()
	want := map[string][]string{
		"a": {"first", "true", "last_in_data_collection"},
		"b": {"last_in_data_collection"},
		"c": {"first_in_data_collection", "last"},
	}
	got := map[string][]string{}
	for _, ev := range b.events() {
		got[ev.table] = append(got[ev.table], ev.marker)
	}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("snapshot markers per table: got %v, want %v", got, want)
	}
}

// writeWorkload runs random single-statement transactions against tables (id int PRIMARY KEY, v text):
// inserts of new ids from firstNewID up, updates of seed or inserted rows, and deletes, which with keepSeed
// remove inserted rows only, so that every seed row survives.
type writeWorkload struct {
	commits atomic.Int64
	quit    chan struct{}
	done    chan error
}

func startWriteWorkload(ctx context.Context, t *testing.T, dsn string, tables []string, seedRows map[string]int, firstNewID int, keepSeed bool) *writeWorkload {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	w := &writeWorkload{quit: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		defer conn.Close(context.Background())
		inserted := map[string][]int{}
		next := firstNewID
		for seq := 0; ; seq++ {
			select {
			case <-w.quit:
				w.done <- nil
				return
			default:
			}
			table := tables[rand.IntN(len(tables))]
			ident := pgx.Identifier{table}.Sanitize()
			var sql string
			var args []any
			switch n := rand.IntN(10); {
			case n < 4:
				sql, args = "INSERT INTO "+ident+" VALUES ($1, $2)", []any{next, fmt.Sprintf("insert %d", seq)}
				inserted[table] = append(inserted[table], next)
				next++
			case n < 8 || len(inserted[table]) == 0 && keepSeed:
				id := 1 + rand.IntN(max(seedRows[table], 1))
				if ins := inserted[table]; len(ins) > 0 && rand.IntN(2) == 0 {
					id = ins[rand.IntN(len(ins))]
				}
				sql, args = "UPDATE "+ident+" SET v = $2 WHERE id = $1", []any{id, fmt.Sprintf("update %d", seq)}
			default:
				var id int
				if ins := inserted[table]; len(ins) > 0 && (keepSeed || rand.IntN(2) == 0) {
					i := rand.IntN(len(ins))
					id = ins[i]
					inserted[table] = slices.Delete(ins, i, i+1)
				} else {
					id = 1 + rand.IntN(max(seedRows[table], 1))
				}
				sql, args = "DELETE FROM "+ident+" WHERE id = $1", []any{id}
			}
			if _, err := conn.Exec(ctx, sql, args...); err != nil {
				w.done <- fmt.Errorf("%s %v: %w", sql, args, err)
				return
			}
			w.commits.Add(1)
			time.Sleep(time.Millisecond) // enough writes to overlap every phase, few enough to stream quickly
		}
	}()
	return w
}

func (w *writeWorkload) stop(t *testing.T) int64 {
	t.Helper()
	close(w.quit)
	if err := <-w.done; err != nil {
		t.Fatalf("workload: %v", err)
	}
	return w.commits.Load()
}

// TestSnapshotConcurrentWrites snapshots 200k rows in chunks of 1000 while inserts, updates and deletes
// run; the table rebuilt from Kafka must equal the table, and no row may arrive both as a snapshot row and
// as a streamed insert.
func TestSnapshotConcurrentWrites(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const rows = 200_000
	b := newSnapshotBed(t, ctx, "initial", map[string]string{"snapshot.fetch.size": "1000"})
	b.exec("CREATE TABLE big (id int PRIMARY KEY, v text NOT NULL)")
	b.exec("INSERT INTO big SELECT g, 'seed ' || g FROM generate_series(1, $1) g", rows)
	p := b.start()
	work := startWriteWorkload(ctx, t, dsnOf(b), []string{"big"}, map[string]int{"big": rows}, rows+1, false)
	began := time.Now()
	b.waitOffset(p, "a snapshot offset", func(off map[string]any) bool { return off["snapshot"] != nil })
	duringSnapshot := work.commits.Load()
	b.waitOffset(p, "the end of the snapshot", func(off map[string]any) bool { return !snapshotRunning(off) })
	duringSnapshot = work.commits.Load() - duringSnapshot
	took := time.Since(began)
	time.Sleep(500 * time.Millisecond) // some writes after the snapshot too
	commits := work.stop(t)
	b.fence(p)
	p.stop()
	if duringSnapshot == 0 {
		t.Fatal("no write committed while the snapshot ran: the test proves nothing")
	}
	evs := b.events()
	b.assertTableMatches(evs, "big", "id")
	snapshotted := map[string]bool{}
	for _, k := range opKeys(evs, "big")["r"] {
		snapshotted[k] = true
	}
	var both []string
	for _, k := range opKeys(evs, "big")["c"] {
		if snapshotted[k] {
			both = append(both, k)
		}
	}
	if len(both) > 0 {
		t.Errorf("%d rows arrived both as snapshot rows and as streamed inserts, e.g. %v", len(both), both[:min(5, len(both))])
	}
	ops := opKeys(evs, "big")
	t.Logf("concurrent writes: %d rows, snapshot took %s (%d writes committed while it ran, %d in all); events r=%d c=%d u=%d d=%d",
		rows, took.Round(time.Millisecond), duringSnapshot, commits, len(ops["r"]), len(ops["c"]), len(ops["u"]), len(ops["d"]))
}

// dsnOf is the bed's database connection string.
func dsnOf(b *snapshotBed) string { return b.db.Config().ConnString() }

// TestSnapshotTakesNoLongLocks updates a row of the table being snapshotted from another connection while
// the snapshot holds its read lock on it: the update must go through. (That the update then reaches Kafka
// is TestSnapshotConcurrentWrites' business.)
func TestSnapshotTakesNoLongLocks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const rows = 200_000
	b := newSnapshotBed(t, ctx, "initial", map[string]string{"snapshot.fetch.size": "1000"})
	b.exec("CREATE TABLE big (id int PRIMARY KEY, v text NOT NULL)")
	b.exec("INSERT INTO big SELECT g, 'seed ' || g FROM generate_series(1, $1) g", rows)
	p := b.start()

	// The snapshot's transaction holds AccessShareLock on big from its first read to its commit.
	const snapshotLock = `SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.relation = 'big'::regclass AND l.granted AND a.application_name = $1 AND a.backend_type = 'client backend'`
	holdsLock := func() bool {
		var n int
		if err := b.db.QueryRow(ctx, snapshotLock, "cdcd-"+snapConnectorName).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	}
	for !holdsLock() {
		if p.exited() || ctx.Err() != nil {
			t.Fatalf("the snapshot never locked big; log:\n%s", tail(p.log.String(), 4000))
		}
		time.Sleep(10 * time.Millisecond)
	}
	updateCtx, cancelUpdate := context.WithTimeout(ctx, time.Minute)
	defer cancelUpdate()
	if _, err := b.db.Exec(updateCtx, "UPDATE big SET v = 'updated during the snapshot' WHERE id = $1", rows); err != nil {
		t.Fatalf("an UPDATE during the snapshot did not complete: %v", err)
	}
	if !holdsLock() {
		t.Log("the snapshot had finished by the time the UPDATE returned: the UPDATE may not have overlapped it")
	}
}

// crashTable is one table of the crash test.
type crashTable struct {
	name    string
	rows    int
	keyCols []string // nil: no primary key
	written bool     // the workload writes to it
}

// TestSnapshotCrashResume kills cdcd with SIGKILL several times during the snapshot of 23 tables while a
// workload writes to some of them, restarting it each time. Afterwards: every seed row arrived as a
// snapshot row; no run read a table that the durable offset of the crash before it called done, nor a key
// of a half-read table at or before its last acknowledged key; streaming works; every table rebuilt from
// Kafka equals the table. It runs with tables read one at a time, and two at a time.
func TestSnapshotCrashResume(t *testing.T) {
	for _, threads := range []int{1, 2} {
		t.Run(fmt.Sprintf("threads=%d", threads), func(t *testing.T) { snapshotCrashResume(t, threads) })
	}
}

func snapshotCrashResume(t *testing.T, threads int) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := newSnapshotBed(t, ctx, "initial", map[string]string{"snapshot.fetch.size": "1000", "snapshot.max.threads": strconv.Itoa(threads),
		"publication.autocreate.mode": "all_tables"}) // a filtered publication is altered at every start, which waits for the gate
	sizes := []int{0, 1, 5, 0, 100, 2500, 3001, 10, 999, 100_000, 1000, 1001, 0, 7000, 5000, 50, 4000, 3000, 1, 12000, 300, 2000}
	var tables []crashTable
	for i, n := range sizes {
		ct := crashTable{name: fmt.Sprintf("t%02d", i), rows: n, keyCols: []string{"id"}, written: i%3 == 0 || n == 100_000}
		switch i {
		case 14: // no primary key: read whole again after an interruption
			ct.keyCols, ct.written = nil, false
			b.exec(fmt.Sprintf("CREATE TABLE %s (id int NOT NULL, v text NOT NULL); ALTER TABLE %[1]s REPLICA IDENTITY FULL", ct.name))
		case 17: // a composite key: resumes after a (number, text) pair
			ct.keyCols, ct.written = []string{"a", "b"}, false
			b.exec(fmt.Sprintf("CREATE TABLE %s (a int, b text, v text NOT NULL, PRIMARY KEY (a, b))", ct.name))
		default:
			b.exec(fmt.Sprintf("CREATE TABLE %s (id int PRIMARY KEY, v text NOT NULL)", ct.name))
		}
		if ct.name == "t17" {
			b.exec(fmt.Sprintf("INSERT INTO %s SELECT g / 7, 'k' || lpad((g %% 7)::text, 3, '0'), 'seed ' || g FROM generate_series(1, %d) g", ct.name, n))
		} else if n > 0 {
			b.exec(fmt.Sprintf("INSERT INTO %s SELECT g, 'seed ' || g FROM generate_series(1, %d) g", ct.name, n))
		}
		tables = append(tables, ct)
	}
	// The gate is read last (tables are read in name order); while the test holds it, the snapshot cannot
	// end, so a kill aimed at any point of t00–t21 lands inside the snapshot however fast the machine reads.
	// It has no index: reading the catalog calls pg_get_indexdef, which waits for the gate too. The test
	// can take the gate only once the run's snapshot has started (see holdTable), so two pad tables, one
	// per reading thread, stand between any resume point and the gate.
	for _, pad := range []string{"tzx_pad", "tzy_pad"} {
		b.exec(fmt.Sprintf("CREATE TABLE %s (id int PRIMARY KEY, v text NOT NULL); INSERT INTO %[1]s SELECT g, 'seed ' || g FROM generate_series(1, 25000) g", pad))
		tables = append(tables, crashTable{name: pad, rows: 25000, keyCols: []string{"id"}})
	}
	b.exec("CREATE TABLE tzz_gate (id int NOT NULL, v text NOT NULL); ALTER TABLE tzz_gate REPLICA IDENTITY FULL; INSERT INTO tzz_gate VALUES (1, 'seed 1')")
	tables = append(tables, crashTable{name: "tzz_gate", rows: 1})
	var written []string
	seedRows := map[string]int{}
	for _, ct := range tables {
		seedRows[ct.name] = ct.rows
		if ct.written {
			written = append(written, ct.name)
		}
	}
	work := startWriteWorkload(ctx, t, dsnOf(b), written, seedRows, 1_000_000, true)

	// The kills land at random points of the whole snapshot: run k is killed once the durable progress
	// holds target[k] rows and at least one offset of its own, except the second run, which is killed right
	// after it starts. The run after the last kill finishes the snapshot.
	const kills = 6
	totalRows := 0
	for _, n := range sizes {
		totalRows += n
	}
	// Half the targets are uniform over the rows (most land in the large table), half uniform over the
	// tables with rows (most land in small ones).
	targets := make([]int64, kills)
	for i := range targets {
		if i%2 == 0 {
			targets[i] = int64(rand.IntN(totalRows))
			continue
		}
		var nonEmpty []int
		for j, n := range sizes {
			if n > 0 {
				nonEmpty = append(nonEmpty, j)
			}
		}
		j := nonEmpty[rand.IntN(len(nonEmpty))]
		before := 0
		for _, n := range sizes[:j] {
			before += n
		}
		targets[i] = int64(before + rand.IntN(sizes[j]))
	}
	slices.Sort(targets)
	var crashes []*snapshot.Progress // the durable progress at each crash: what the next run resumes from
	var runStarts []time.Time
	var p *cdcdProcess
	for {
		if len(crashes) == kills {
			runStarts = append(runStarts, time.Now())
			p = b.start()
			break
		}
		runStarts = append(runStarts, time.Now())
		p = b.start()
		waitLog(t, p, "snapshot started")
		releaseGate, gated := holdTable(t, ctx, dsnOf(b), "tzz_gate")
		// Taking the gate proves nothing once the run has read it: a resumed run whose pads were done reads
		// the gate at once, and its snapshot may end (releasing the gate) before the lock is asked for.
		if gated && strings.Contains(p.log.String(), "table=public.tzz_gate") {
			t.Logf("the gate was taken after the run had read it")
			releaseGate()
			releaseGate, gated = func() {}, false
		}
		startProgress := b.progress().Encode()
		if len(crashes) == 1 {
			time.Sleep(300 * time.Millisecond)
		} else {
			off := b.waitOffset(p, "snapshot progress", func(off map[string]any) bool {
				prog := progressOf(t, off)
				return !snapshotRunning(off) || prog.Encode() != startProgress && progressRows(prog) >= targets[len(crashes)]
			})
			if !snapshotRunning(off) {
				if gated {
					t.Fatalf("the snapshot completed although the gate table was held; offset: %v", withoutProgress(off))
				}
				releaseGate()
				break
			}
		}
		p.kill()
		releaseGate()
		crashes = append(crashes, b.progress())
		t.Logf("crash %d: durable progress %s", len(crashes), describeProgress(crashes[len(crashes)-1]))
	}
	if len(crashes) < 2 {
		t.Fatalf("only %d crashes landed inside the snapshot: the gate was not taken in time", len(crashes))
	}
	// One more crash as soon as the snapshot is complete, most likely before streaming recorded an offset:
	// the restart must still stream exactly what the snapshot's epochs do not hold.
	b.waitOffset(p, "the end of the snapshot", func(off map[string]any) bool { return !snapshotRunning(off) })
	p.kill()
	t.Logf("killed once more right after the snapshot completed; offset then: %v", withoutProgress(b.offset()))
	runStarts = append(runStarts, time.Now())
	p = b.start()
	time.Sleep(500 * time.Millisecond)
	commits := work.stop(t)
	b.fence(p)
	p.stop()

	evs := b.events()
	// Which run wrote each run id: the one that started last before the id's time.
	runOf := map[string]int{}
	for _, ev := range evs {
		if _, ok := runOf[ev.runID]; ok || ev.runID == "" {
			continue
		}
		at, err := runIDTime(ev.runID)
		if err != nil {
			t.Fatal(err)
		}
		runOf[ev.runID] = sort.Search(len(runStarts), func(i int) bool { return runStarts[i].After(at) }) - 1
	}

	// rPerRun[table][run] counts snapshot rows. rereads[run] counts the rows of keyed tables that an
	// earlier run had delivered already; the keyless table is read whole again by design.
	rPerRun := map[string]map[int]int{}
	firstRun := map[string]int{} // table/key → first run that read it
	rereads := make([]int, len(runStarts))
	keylessRereads := 0
	for _, ev := range evs {
		if ev.op != "r" {
			continue
		}
		run := runOf[ev.runID]
		if rPerRun[ev.table] == nil {
			rPerRun[ev.table] = map[int]int{}
		}
		rPerRun[ev.table][run]++
		id := ev.table + ev.key
		if ev.key == "null" {
			id = ev.table + ev.after
		}
		switch first, ok := firstRun[id]; {
		case !ok:
			firstRun[id] = run
		case run != first && ev.key == "null":
			keylessRereads++
		case run != first:
			rereads[run]++
		}
		// A run after crash k must not read what crash k's durable progress has delivered.
		for k := 0; k < run && k < len(crashes); k++ {
			tp := crashes[k].Table("public." + ev.table)
			if tp == nil {
				continue
			}
			if tp.Done {
				t.Errorf("run %d read %s row %s although the durable offset of crash %d had the table done", run, ev.table, ev.key, k+1)
			} else if tp.LastKey != nil && keyAtMost(t, ev, tp.LastKey) {
				t.Errorf("run %d read %s row %s although the durable offset of crash %d had delivered up to %v", run, ev.table, ev.key, k+1, tp.LastKey)
			}
		}
	}
	// Every seed row arrived as a snapshot row; the tables rebuilt from Kafka equal the tables.
	for _, ct := range tables {
		if ct.keyCols == nil {
			seen := map[string]bool{}
			for _, ev := range evs {
				if ev.table == ct.name && ev.op == "r" {
					seen[ev.after] = true
				}
			}
			for row := range maps.Values(b.tableState(ct.name, "id", "v")) {
				if !seen[row] {
					t.Errorf("%s row %s never arrived as a snapshot row", ct.name, row)
				}
			}
			continue
		}
		seen := map[string]bool{}
		for _, k := range opKeys(evs, ct.name)["r"] {
			seen[k] = true
		}
		missing := 0
		for k := range b.tableState(ct.name, ct.keyCols...) {
			if !seen[k] && isSeedKey(k, ct) {
				missing++
			}
		}
		if missing > 0 {
			t.Errorf("%s: %d seed rows never arrived as snapshot rows", ct.name, missing)
		}
		b.assertTableMatches(evs, ct.name, ct.keyCols...)
	}
	var perTable []string
	for _, ct := range tables {
		perTable = append(perTable, fmt.Sprintf("%s(%d):%v", ct.name, ct.rows, rPerRun[ct.name]))
	}
	t.Logf("crash resume: %d crashes, %d workload commits; keyed rows read again per run (run 0 is the first; chunks of 1000): %v; keyless rows read again: %d",
		len(crashes), commits, rereads, keylessRereads)
	t.Logf("snapshot rows per table per run: %s", strings.Join(perTable, " "))
}

// holdTable locks table against reads until release is called: a snapshot that reaches it waits. An
// ACCESS EXCLUSIVE lock takes a transaction id, and creating a slot waits for every transaction with one, so
// the lock is taken only once the run's snapshot has started. It reports false (and holds nothing) when
// the snapshot reached the table first: its transaction keeps the table until the snapshot ends.
func holdTable(t *testing.T, ctx context.Context, dsn, table string) (release func(), held bool) {
	t.Helper()
	// A killed run's backend may hold the table a moment longer, until it notices its client is gone.
	gate := connectPostgres(t, ctx, dsn, "BEGIN", "SET LOCAL lock_timeout = '2s'")
	if _, err := gate.Exec(ctx, "LOCK TABLE "+table+" IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Logf("the gate %s was not taken (the snapshot reached it first): %v", table, err)
		gate.Close(ctx)
		return func() {}, false
	}
	return func() { execAll(t, ctx, gate, "ROLLBACK"); gate.Close(ctx) }, true
}

// isSeedKey reports whether a key (JSON) belongs to a seed row of a table keyed by id.
func isSeedKey(key string, ct crashTable) bool {
	var k struct{ ID *int }
	if json.Unmarshal([]byte(key), &k) != nil || k.ID == nil {
		return true // a composite key: every row is a seed row
	}
	return *k.ID <= ct.rows
}

// keyAtMost reports whether an event's key is at or before bound in the table's key order. The crash
// test's keys are an int id, or an (int, zero-padded text) pair whose text orders bytewise.
func keyAtMost(t *testing.T, ev snapEvent, bound []string) bool {
	t.Helper()
	var key map[string]any
	if err := json.Unmarshal([]byte(ev.key), &key); err != nil {
		t.Fatal(err)
	}
	if id, ok := key["id"].(float64); ok {
		b, err := strconv.Atoi(bound[0])
		if err != nil {
			t.Fatalf("bound %v of %s: %v", bound, ev.table, err)
		}
		return int(id) <= b
	}
	a, _ := key["a"].(float64)
	bA, err := strconv.Atoi(bound[0])
	if err != nil {
		t.Fatalf("bound %v of %s: %v", bound, ev.table, err)
	}
	if int(a) != bA {
		return int(a) < bA
	}
	s, _ := key["b"].(string)
	return s <= bound[1]
}

// withoutProgress is an offset for the log, its progress field reduced to its length.
func withoutProgress(off map[string]any) map[string]any {
	out := maps.Clone(off)
	if p, ok := out[snapshot.ProgressKey].(string); ok {
		out[snapshot.ProgressKey] = fmt.Sprintf("(%d bytes)", len(p))
	}
	return out
}

// progressRows is how many rows the progress has delivered in all.
func progressRows(p *snapshot.Progress) int64 {
	var n int64
	for _, tp := range p.Tables {
		n += tp.Rows
	}
	return n
}

// describeProgress summarises progress for the log: done tables and the tables under way.
func describeProgress(p *snapshot.Progress) string {
	done := 0
	var open []string
	for _, tp := range p.Tables {
		switch {
		case tp.Done:
			done++
		case tp.Rows > 0:
			open = append(open, fmt.Sprintf("%s at %v (%d rows, %d epochs)", tp.ID, tp.LastKey, tp.Rows, len(tp.Epochs)))
		}
	}
	return fmt.Sprintf("%d of %d tables done; under way: %v", done, len(p.Tables), open)
}

package incremental

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/source/notify"
	"github.com/cdcd/cdcd/source/signal"
	"github.com/cdcd/cdcd/source/signal/sqlfilter"
)

// fakeDB is a database of int-keyed tables with a signal table that records the watermarks written.
type fakeDB struct {
	tables     map[string][]int32 // table → its keys, ascending
	watermarks []signal.Signal    // written, in order
	deleted    []string
}

func (db *fakeDB) Tables(context.Context) ([]string, error) {
	var out []string
	for t := range db.tables {
		out = append(out, t)
	}
	slices.Sort(out) // as the readers list them
	return out, nil
}

func (db *fakeDB) WriteWatermark(_ context.Context, id, kind, data string) error {
	db.watermarks = append(db.watermarks, signal.Signal{ID: id, Type: kind, Data: data})
	return nil
}

func (db *fakeDB) DeleteWatermark(_ context.Context, id string) error {
	db.deleted = append(db.deleted, id)
	return nil
}

func (db *fakeDB) MaxKey(_ context.Context, c Collection) ([]any, error) {
	keys := db.tables[c.ID]
	if len(keys) == 0 {
		return nil, nil
	}
	return []any{keys[len(keys)-1]}, nil
}

func (db *fakeDB) ReadChunk(_ context.Context, c Collection, after, max []any, limit int) ([]Row, error) {
	var rows []Row
	for _, k := range db.tables[c.ID] {
		if (after != nil && k <= after[0].(int32)) || k > max[0].(int32) || len(rows) == limit {
			continue
		}
		rows = append(rows, Row{KeyText: fmt.Sprint(k), JavaKey: []any{k}, Value: k})
	}
	return rows, nil
}

// lastWatermark is the last watermark of kind the runner wrote.
func (db *fakeDB) lastWatermark(t *testing.T, kind string) signal.Signal {
	t.Helper()
	for i := len(db.watermarks) - 1; i >= 0; i-- {
		if db.watermarks[i].Type == kind {
			return db.watermarks[i]
		}
	}
	t.Fatalf("no %s watermark written", kind)
	return signal.Signal{}
}

// fakeProgress records the metrics calls.
type fakeProgress struct{ calls []string }

func (p *fakeProgress) Start(tables int, rows int64) {
	p.calls = append(p.calls, fmt.Sprintf("start %d", tables))
}
func (p *fakeProgress) Progress(done int, rows int64, _ float64) {
	p.calls = append(p.calls, fmt.Sprintf("progress %d %d", done, rows))
}
func (p *fakeProgress) TableRows(table string, rows int64) {
	p.calls = append(p.calls, fmt.Sprintf("rows %s %d", table, rows))
}
func (p *fakeProgress) Stop()              { p.calls = append(p.calls, "stop") }
func (p *fakeProgress) Paused(paused bool) { p.calls = append(p.calls, fmt.Sprint("paused ", paused)) }

func newRunner(db *fakeDB, notes *[]string) *Runner {
	return &Runner{Config: signal.Config{Table: "public.sig", ChunkSize: 3}, DB: db, Log: slog.New(slog.DiscardHandler),
		Notify: func(n notify.Notification) { *notes = append(*notes, n.Type+" "+n.Data["data_collections"]) },
		Now:    time.Now, LogicalName: "pg1"}
}

func keys(rows []Row) []int32 {
	out := make([]int32, len(rows))
	for i, r := range rows {
		out[i] = r.Value.(int32)
	}
	return out
}

// window delivers the open and close watermarks of the window in flight, with changes of keys streamed
// inside it, and returns the rows the close emits.
func window(t *testing.T, r *Runner, db *fakeDB, table string, streamed ...int32) []int32 {
	t.Helper()
	ctx := context.Background()
	open := db.lastWatermark(t, signal.OpenWindow)
	if _, err := r.Signal(ctx, open); err != nil {
		t.Fatal(err)
	}
	if schemaName, name, _ := strings.Cut(table, "."); len(streamed) > 0 && !r.Deduping(schemaName, name) {
		t.Fatalf("a change of %s inside its open window is not asked for its key", table)
	}
	for _, k := range streamed {
		r.Dedupe(table, fmt.Sprint(k))
	}
	rows, err := r.Signal(ctx, db.lastWatermark(t, signal.CloseWindow))
	if err != nil {
		t.Fatal(err)
	}
	return keys(rows)
}

func TestIncrementalSnapshotWindows(t *testing.T) {
	db := &fakeDB{tables: map[string][]int32{"public.a": {1, 2, 3, 4, 5, 6, 7}, "public.empty": nil}}
	var notes []string
	r := newRunner(db, &notes)
	progress := &fakeProgress{}
	r.Metrics = progress
	ctx := context.Background()
	if _, err := r.Signal(ctx, signal.Signal{ID: "s1", Type: signal.ExecuteSnapshot, Data: `{"data-collections": ["public.a", "public.empty"]}`}); err != nil {
		t.Fatal(err)
	}
	// A change streamed before the window opens does not drop the row: the chunk's row is newer.
	if r.Deduping("public", "a") {
		t.Fatal("a change before the window opened is asked for its key")
	}
	r.Dedupe("public.a", "1")
	if got := window(t, r, db, "public.a", 2); !reflect.DeepEqual(got, []int32{1, 3}) {
		t.Fatalf("first window emitted %v, want 1 and 3 (2 changed inside the window)", got)
	}
	if off := r.Offset(); off == nil || !strings.Contains(off.Collections, `"public.a"`) {
		t.Fatalf("offset while running: %+v", off)
	}
	// A watermark replayed from before (another chunk id) is ignored.
	if rows, err := r.Signal(ctx, signal.Signal{ID: "0000-close", Type: signal.CloseWindow}); err != nil || rows != nil {
		t.Fatalf("a stale close watermark emitted %v, %v", rows, err)
	}
	if got := window(t, r, db, "public.a"); !reflect.DeepEqual(got, []int32{4, 5, 6}) {
		t.Fatalf("second window emitted %v", got)
	}
	if got := window(t, r, db, "public.a"); !reflect.DeepEqual(got, []int32{7}) {
		t.Fatalf("third window emitted %v", got)
	}
	// The fourth window finds public.a done and the empty table empty: the snapshot completes.
	if got := window(t, r, db, "public.a"); len(got) != 0 {
		t.Fatalf("the last window emitted %v", got)
	}
	if r.Offset() != nil {
		t.Fatalf("a completed snapshot leaves %+v in the offset", r.Offset())
	}
	want := []string{"STARTED public.a,public.empty", "IN_PROGRESS public.a,public.empty", "IN_PROGRESS public.a,public.empty",
		"IN_PROGRESS public.a,public.empty", "TABLE_SCAN_COMPLETED public.a,public.empty", "TABLE_SCAN_COMPLETED public.empty", "COMPLETED "}
	if !reflect.DeepEqual(notes, want) {
		t.Fatalf("notifications\n%q\nwant\n%q", notes, want)
	}
	if got, want := strings.Join(progress.calls, "|"), "start 2|rows public.a 3|progress 0 3|rows public.a 6|progress 0 6|rows public.a 7|progress 0 7|"+
		"rows public.a 7|progress 0 7|rows public.empty 0|progress 1 7|progress 2 7|stop"; got != want {
		t.Fatalf("metrics\n%s\nwant\n%s", got, want)
	}
	if n := len(db.watermarks); n != 8 {
		t.Fatalf("%d watermarks, want an open and a close for each of 4 windows", n)
	}
	// The same signal again (after a reconnection) is not acted on twice.
	if _, err := r.Signal(ctx, signal.Signal{ID: "s1", Type: signal.ExecuteSnapshot, Data: `{"data-collections": ["public.a"]}`}); err != nil || r.snap != nil {
		t.Fatalf("a repeated signal started a snapshot: %v", err)
	}
}

// TestIncrementalSnapshotResumesFromItsOffset writes the offset mid-snapshot and resumes a new runner from
// it: the next chunk starts after the last row emitted, the largest key is kept.
func TestIncrementalSnapshotResumesFromItsOffset(t *testing.T) {
	db := &fakeDB{tables: map[string][]int32{"public.a": {1, 2, 3, 4, 5, 6, 7}}}
	var notes []string
	r := newRunner(db, &notes)
	ctx := context.Background()
	if _, err := r.Signal(ctx, signal.Signal{ID: "s1", Type: signal.ExecuteSnapshot, Data: `{"data-collections": ["public.a"], "additional-conditions": [{"data-collection": "public.a", "filter": "k > 0"}]}`}); err != nil {
		t.Fatal(err)
	}
	window(t, r, db, "public.a")
	off := *r.Offset()
	fields := map[string]any{}
	for _, f := range off.Fields() {
		fields[f.Name] = f.Value
	}
	parsed := ParseOffset(fields)
	if !reflect.DeepEqual(*parsed, off) {
		t.Fatalf("offset %+v read back as %+v", off, *parsed)
	}
	if !strings.Contains(off.Collections, `"incremental_snapshot_collections_additional_condition":"(k \u003e 0)"`) || *off.CorrelationID != "s1" {
		t.Fatalf("offset %+v", off)
	}
	resumed := newRunner(db, &notes)
	if err := resumed.Resume(parsed); err != nil {
		t.Fatal(err)
	}
	if err := resumed.Resumed(ctx); err != nil {
		t.Fatal(err)
	}
	if got := window(t, resumed, db, "public.a"); !reflect.DeepEqual(got, []int32{4, 5, 6}) {
		t.Fatalf("the resumed snapshot emitted %v, want the chunk after key 3", got)
	}
	// A lost connection reverts the window in flight: the next chunk is read anew from the last row sent.
	resumed.Revert()
	if err := resumed.Resumed(ctx); err != nil {
		t.Fatal(err)
	}
	if got := window(t, resumed, db, "public.a"); !reflect.DeepEqual(got, []int32{7}) {
		t.Fatalf("after a revert %v", got)
	}
	if err := resumed.Resume(&Offset{Collections: `[{"incremental_snapshot_collections_id":"a.b"}]`, PrimaryKey: "zz"}); err == nil ||
		!strings.Contains(err.Error(), "incremental_snapshot_primary_key") {
		t.Fatalf("an undecodable key: %v", err)
	}
}

func TestIncrementalSnapshotPauseResumeStop(t *testing.T) {
	db := &fakeDB{tables: map[string][]int32{"public.a": {1, 2, 3, 4, 5, 6, 7}, "public.b": {1, 2}}}
	var notes []string
	r := newRunner(db, &notes)
	progress := &fakeProgress{}
	r.Metrics = progress
	ctx := context.Background()
	r.Signal(ctx, signal.Signal{ID: "s1", Type: signal.ExecuteSnapshot, Data: `{"data-collections": ["public\\.[ab]"]}`})
	r.Signal(ctx, signal.Signal{ID: "p1", Type: signal.PauseSnapshot})
	written := len(db.watermarks)
	window(t, r, db, "public.a") // the window in flight still closes
	if len(db.watermarks) != written {
		t.Fatal("a paused snapshot opened another window")
	}
	r.Signal(ctx, signal.Signal{ID: "r1", Type: signal.ResumeSnapshot})
	if len(db.watermarks) != written+2 {
		t.Fatal("resume did not read the next chunk")
	}
	r.Signal(ctx, signal.Signal{ID: "x1", Type: signal.StopSnapshot, Data: `{"data-collections": ["public.a"], "type": "incremental"}`})
	if got := window(t, r, db, "public.a"); len(got) != 0 {
		t.Fatalf("a stopped table's window emitted %v", got)
	}
	// The window's close read public.b.
	if got := window(t, r, db, "public.b"); !reflect.DeepEqual(got, []int32{1, 2}) {
		t.Fatalf("after the stop, public.b emitted %v", got)
	}
	if calls := strings.Join(progress.calls, "|"); !strings.Contains(calls, "paused true") || !strings.Contains(calls, "paused false") {
		t.Errorf("the metrics did not see the pause and the resume: %s", calls)
	}
	joined := strings.Join(notes, "|")
	for _, want := range []string{"PAUSED public.a,public.b", "RESUMED public.a,public.b", "ABORTED public.a"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no %q notification in %q", want, notes)
		}
	}
}

func TestIncrementalSnapshotInsertDelete(t *testing.T) {
	db := &fakeDB{tables: map[string][]int32{"public.a": {1}}}
	var notes []string
	r := newRunner(db, &notes)
	r.Config.DeleteWatermarks = true
	r.Signal(context.Background(), signal.Signal{ID: "s1", Type: signal.ExecuteSnapshot, Data: `{"data-collections": ["public.a"]}`})
	open := db.lastWatermark(t, signal.OpenWindow)
	if len(db.deleted) != 1 || db.deleted[0] != open.ID {
		t.Fatalf("insert_delete deleted %v, want the open watermark %s", db.deleted, open.ID)
	}
	for _, w := range db.watermarks {
		if w.Type == signal.CloseWindow {
			t.Fatal("insert_delete wrote a close watermark")
		}
	}
}

func TestJavaInstant(t *testing.T) {
	for in, want := range map[time.Time]string{
		time.Date(2026, 12, 2, 2, 27, 26, 501803191, time.UTC):          "2026-12-02T02:27:26.501803191Z",
		time.Date(2026, 12, 2, 2, 27, 26, 500000000, time.UTC):          "2026-12-02T02:27:26.500Z",
		time.Date(2026, 12, 2, 2, 27, 26, 501803000, time.UTC):          "2026-12-02T02:27:26.501803Z",
		time.Date(2026, 12, 2, 2, 27, 26, 0, time.FixedZone("x", 3600)): "2026-12-02T01:27:26Z",
	} {
		if got := JavaInstant(in); got != want {
			t.Errorf("JavaInstant(%v) = %s, want %s", in, got, want)
		}
	}
}

// TestIncrementalSnapshotKafkaSignals: a Kafka signal may have no id (Debezium's documented message has
// none): the snapshot runs with no correlation id (null in the offset, random notification ids, as in
// Debezium); and a Kafka signal is acted on each time it arrives, id or not, since the channel's
// committed offset is what keeps it from being read twice.
func TestIncrementalSnapshotKafkaSignals(t *testing.T) {
	db := &fakeDB{tables: map[string][]int32{"public.a": {1, 2, 3, 4, 5, 6, 7}}}
	var notes []string
	r := newRunner(db, &notes)
	ctx := context.Background()
	exec := signal.Signal{Type: signal.ExecuteSnapshot, Data: `{"data-collections": ["public.a"]}`, Channel: signal.ChannelKafka}
	if _, err := r.Signal(ctx, exec); err != nil {
		t.Fatal(err)
	}
	window(t, r, db, "public.a")
	off := r.Offset()
	if off == nil || off.CorrelationID != nil {
		t.Fatalf("offset %+v, want a running snapshot without a correlation id", off)
	}
	for _, f := range off.Fields() {
		if f.Name == "incremental_snapshot_correlation_id" && f.Value != nil {
			t.Fatalf("incremental_snapshot_correlation_id = %v, want null as Debezium writes it", f.Value)
		}
	}
	pause := signal.Signal{ID: "p", Type: signal.PauseSnapshot, Channel: signal.ChannelKafka}
	resume := signal.Signal{ID: "p", Type: signal.ResumeSnapshot, Channel: signal.ChannelKafka}
	for _, s := range []signal.Signal{pause, resume, pause} {
		if _, err := r.Signal(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Count(strings.Join(notes, "|"), notify.Paused); got != 2 {
		t.Fatalf("notifications %q: the second Kafka pause with the same id was not acted on", notes)
	}
	// The other channels keep their per-run de-duplication by id.
	r2 := newRunner(db, &notes)
	logSig := signal.Signal{ID: "l", Type: signal.Log, Data: `{"message":"m"}`}
	if _, err := r2.Signal(ctx, logSig); err != nil {
		t.Fatal(err)
	}
	if !r2.Seen.First("x") || r2.Seen.First("l") {
		t.Fatal("a source signal's id is not remembered")
	}
}

// TestIncrementalSnapshotRefusesAFilterThatIsNotACondition: a signal of any channel whose filter calls a
// function outside the allowlist, holds a statement separator or a subquery is refused whole: no window
// opens, no query reaches the database, and a blocking one is not handed to the reader.
func TestIncrementalSnapshotRefusesAFilterThatIsNotACondition(t *testing.T) {
	db := &fakeDB{tables: map[string][]int32{"public.a": {1, 2, 3}}}
	var notes []string
	r := newRunner(db, &notes)
	r.Config.Dialect = sqlfilter.PostgreSQL
	blocking := 0
	r.Blocking = func(context.Context, []string, map[string]string) error { blocking++; return nil }
	for i, filter := range []string{"pg_sleep(1e6) IS NULL", "1=1; DROP TABLE x", "k IN (SELECT 1)"} {
		for _, kind := range []string{"incremental", "blocking"} {
			data := fmt.Sprintf(`{"data-collections": ["public.a"], "type": %q, "additional-conditions": [{"data-collection": "public.a", "filter": %q}]}`, kind, filter)
			sig := signal.Signal{ID: fmt.Sprint(kind, i), Type: signal.ExecuteSnapshot, Data: data, Channel: signal.ChannelKafka}
			if _, err := r.Signal(context.Background(), sig); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(db.watermarks) != 0 || blocking != 0 || r.Offset() != nil || len(notes) != 0 {
		t.Fatalf("a refused filter started a snapshot: watermarks %v, blocking %d, offset %+v, notifications %v", db.watermarks, blocking, r.Offset(), notes)
	}
}

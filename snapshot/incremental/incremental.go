// Package incremental runs Debezium's incremental snapshots (DBLog) for any reader: a table is read in
// key order, one chunk at a time, while streaming goes on. Each chunk is read between two watermark rows
// written into the signal table (a window); the SELECT sees the table somewhere between them, so a change
// the stream delivers inside the window may be newer than the chunk's row of the same key, and that row is
// dropped: the streamed change wins. When the stream reaches the close watermark, the chunk's remaining
// rows are emitted (op "r", source.snapshot "incremental") and the next chunk is read.
//
// The Runner belongs to the reader's goroutine, which owns the database connections: nothing here is safe
// for concurrent use, and the queries run between two stream messages, as in Debezium. Memory is one
// chunk. What is database-specific — the SQL, the rows' conversion, the events — is the reader's, behind
// Database.
//
// The progress lives in the offset under Debezium's keys (Offset), so that after a crash the snapshot
// resumes after the last key whose row is durable (at most the rows after the last durable offset are read
// again), and Debezium resumes cdcd's snapshots and cdcd Debezium's.
package incremental

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/cdcd/cdcd/schema/javacompat"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/notify"
	"github.com/cdcd/cdcd/source/signal"
)

// Collection is one table a snapshot has still to read, as the offset lists it.
type Collection struct {
	ID           string  `json:"incremental_snapshot_collections_id"` // schema.table (MySQL: database.table)
	Condition    *string `json:"incremental_snapshot_collections_additional_condition"`
	SurrogateKey *string `json:"incremental_snapshot_collections_surrogate_key"`
}

// Row is a chunk row: its event key's identity (KeyText, which a streamed change of the same row has too),
// its chunking key as the Java objects Debezium's offsets hold, and the reader's own representation of it.
type Row struct {
	KeyText string
	JavaKey []any
	Value   any
	dropped bool // a change streamed inside the window superseded it
}

// Database is what a reader lends the Runner. Every method runs on the reader's goroutine.
type Database interface {
	// Tables lists the captured tables, as signals name them.
	Tables(ctx context.Context) ([]string, error)
	// WriteWatermark inserts a row (id, kind, data) into the signal table; DeleteWatermark deletes the
	// row id (incremental.snapshot.watermarking.strategy=insert_delete).
	WriteWatermark(ctx context.Context, id, kind, data string) error
	DeleteWatermark(ctx context.Context, id string) error
	// MaxKey is the table's largest chunking key under the collection's condition; nil for an empty table.
	MaxKey(ctx context.Context, c Collection) ([]any, error)
	// ReadChunk reads at most limit rows of the collection's table with a chunking key above after (nil:
	// from the start) and at most max, in key order.
	ReadChunk(ctx context.Context, c Collection, after, max []any, limit int) ([]Row, error)
}

// ErrNoChunkKey is returned by ReadChunk for a table without a primary key and surrogate key.
var ErrNoChunkKey = errors.New("the table has no primary key; name a column to chunk by with surrogate-key")

// Runner runs the signals and the incremental snapshot of one reader.
type Runner struct {
	Config      signal.Config
	DB          Database
	Log         *slog.Logger
	Notify      func(notify.Notification) // sends a notification on the connector's channels
	Now         func() time.Time
	LogicalName string // topic.prefix
	// Metrics, when set, follows the snapshot as Debezium's snapshot metrics do for incremental
	// snapshots (SnapshotRunning, TotalTableCount, RemainingTableCount, RowsScanned…).
	Metrics Progress
	// Blocking, when set, takes an execute-snapshot of type blocking: the reader pauses streaming, reads
	// the tables (with their additional conditions, by table) and streams on. It may only note the request
	// for the reader's loop to run at the next transaction boundary. nil: blocking snapshots are refused.
	Blocking func(ctx context.Context, tables []string, conditions map[string]string) error
	// Reposition, when set, takes a set-binlog-position signal's data: the reader checks it, and moves its
	// stream there at the next transaction boundary. It logs and ignores data it cannot act on, as other
	// signals' bad data is; an error fails the stream. nil: the signal is not this connector's.
	Reposition func(ctx context.Context, data string, log *slog.Logger) error
	// Seen, when set, holds the ids of the signals acted on, shared with the runners of the reader's
	// earlier streams (a stream that moved reads signals again); nil: the runner's own.
	Seen *signal.Seen

	snap *snapshot // nil when none runs
	off  *Offset   // snap's progress as the offsets record it, encoded when it changes
}

// Progress is what the Runner reports to the reader's snapshot metrics (source/metrics.Snapshot). Its
// methods are called on the reader's goroutine.
type Progress interface {
	Start(tables int, rows int64)
	Progress(tablesDone int, rows int64, remaining float64)
	TableRows(table string, rows int64)
	Paused(paused bool)
	Stop()
}

// report tells the metrics how far the snapshot got.
func (r *Runner) report() {
	if r.Metrics == nil || r.snap == nil {
		return
	}
	s := r.snap
	if s.running() {
		r.Metrics.TableRows(s.current().ID, s.scanned)
	}
	r.Metrics.Progress(s.tablesDone, s.rowsRead, -1)
	if !s.running() {
		r.Metrics.Stop()
	}
}

// snapshot is a running incremental snapshot (Debezium's IncrementalSnapshotContext).
type snapshot struct {
	collections   []Collection // the table being read first
	correlationID *string
	lastSent      []any // the chunking key of the last row emitted: where a restart resumes
	chunkEnd      []any // the chunking key the next chunk starts after; nil: the table's start
	maxKey        []any // the table's largest key when its first chunk was read; nil: not read yet
	paused        bool
	scanned       int64 // rows the current table's chunks returned (total_rows_scanned)
	// For the metrics, in this run: tables finished, rows read.
	tablesDone int
	rowsRead   int64

	chunkID    string // the watermarks' id prefix of the window in flight; "" when none
	windowOpen bool
	openedAt   time.Time
	window     []Row
	byKey      map[string]int
}

func (s *snapshot) running() bool { return s != nil && len(s.collections) > 0 }

func (s *snapshot) current() Collection { return s.collections[0] }

// nextTable moves to the next table: the current one is done (or stopped). A window in flight stays
// open, empty: its close watermark reads the next chunk.
func (s *snapshot) nextTable() {
	s.collections = s.collections[1:]
	s.lastSent, s.chunkEnd, s.maxKey, s.scanned = nil, nil, nil, 0
	s.window, s.byKey = nil, nil
}

// Offset is a running snapshot's part of the offset, encoded as Debezium stores it.
type Offset struct {
	Collections   string // incremental_snapshot_collections: JSON list of Collection
	PrimaryKey    string // incremental_snapshot_primary_key: hex of the serialised last key sent
	MaximumKey    string // incremental_snapshot_maximum_key: hex of the serialised largest key
	CorrelationID *string
}

// Fields are the offset's entries in the order Debezium's IncrementalSnapshotContext.store puts them.
func (o *Offset) Fields() []source.OffsetField {
	if o == nil {
		return nil
	}
	var correlation any
	if o.CorrelationID != nil {
		correlation = *o.CorrelationID
	}
	return []source.OffsetField{{Name: "incremental_snapshot_primary_key", Value: o.PrimaryKey},
		{Name: "incremental_snapshot_maximum_key", Value: o.MaximumKey},
		{Name: "incremental_snapshot_collections", Value: o.Collections},
		{Name: "incremental_snapshot_correlation_id", Value: correlation}}
}

// ParseOffset reads the incremental snapshot's keys of a stored offset; nil when it has none.
func ParseOffset(m map[string]any) *Offset {
	cols, ok := m["incremental_snapshot_collections"].(string)
	if !ok {
		return nil
	}
	o := &Offset{Collections: cols}
	o.PrimaryKey, _ = m["incremental_snapshot_primary_key"].(string)
	o.MaximumKey, _ = m["incremental_snapshot_maximum_key"].(string)
	if id, ok := m["incremental_snapshot_correlation_id"].(string); ok {
		o.CorrelationID = &id
	}
	return o
}

// Offset is the running snapshot's progress for the offsets of the commits that follow; nil when none runs.
// A nil Runner (a reader built without signals, as in tests) runs nothing: Offset, Revert and Dedupe
// accept it.
func (r *Runner) Offset() *Offset {
	if r == nil {
		return nil
	}
	return r.off
}

// Resume restores a snapshot from a stored offset: the next chunk starts after the last key sent
// (Debezium's init: chunkEndPosition = the stored primary key).
func (r *Runner) Resume(o *Offset) error {
	if o == nil || o.Collections == "" {
		return nil
	}
	s := &snapshot{correlationID: o.CorrelationID}
	if err := json.Unmarshal([]byte(o.Collections), &s.collections); err != nil {
		return fmt.Errorf("offset key incremental_snapshot_collections %q: %w", o.Collections, err)
	}
	var err error
	if s.chunkEnd, err = decodeJavaKey("incremental_snapshot_primary_key", o.PrimaryKey); err != nil {
		return err
	}
	if s.maxKey, err = decodeJavaKey("incremental_snapshot_maximum_key", o.MaximumKey); err != nil {
		return err
	}
	if s.running() {
		s.lastSent = s.chunkEnd
		r.snap, r.off = s, o
	}
	return nil
}

func decodeJavaKey(key, text string) ([]any, error) {
	if text == "" {
		return nil, nil
	}
	b, err := hex.DecodeString(text)
	if err != nil {
		return nil, fmt.Errorf("offset key %s: %w", key, err)
	}
	vals, err := javacompat.DecodeObjectArray(b)
	if err != nil {
		return nil, fmt.Errorf("offset key %s: %w", key, err)
	}
	return vals, nil
}

// record encodes the snapshot's progress for the offsets.
func (r *Runner) record() error {
	s := r.snap
	if !s.running() {
		r.snap, r.off = nil, nil
		return nil
	}
	cols, err := json.Marshal(s.collections)
	if err != nil {
		return err
	}
	pk, err := javacompat.AppendObjectArray(nil, s.lastSent)
	if err != nil {
		return fmt.Errorf("recording the incremental snapshot's last key: %w", err)
	}
	mk, err := javacompat.AppendObjectArray(nil, s.maxKey)
	if err != nil {
		return fmt.Errorf("recording the incremental snapshot's largest key: %w", err)
	}
	r.off = &Offset{Collections: string(cols), PrimaryKey: hex.EncodeToString(pk), MaximumKey: hex.EncodeToString(mk), CorrelationID: s.correlationID}
	return nil
}

// Revert forgets the window in flight after the stream's connection was lost: the stream restarts from
// the durable position, and the next chunk starts after the last row handed to the pipeline.
func (r *Runner) Revert() {
	if r == nil {
		return
	}
	if s := r.snap; s != nil {
		s.chunkEnd = s.lastSent
		s.chunkID, s.windowOpen, s.window, s.byKey = "", false, nil, nil
	}
}

// Resumed reads the next chunk of a snapshot that has no window in flight: one resumed from the offset
// or reverted after a lost connection. The reader calls it when its stream (re)starts.
func (r *Runner) Resumed(ctx context.Context) error {
	s := r.snap
	if !s.running() || s.paused || s.chunkID != "" {
		return nil
	}
	r.Log.Info("incremental snapshot in progress; reading its next chunk", "table", s.current().ID)
	return r.readChunk(ctx)
}

// Deduping reports whether a change of schemaName.table streams inside an open window of that table, so
// that the reader must pass its key to Dedupe. It is asked for every streamed change, so it costs nothing
// while no window is open: only then is a key rendered with KeyText.
func (r *Runner) Deduping(schemaName, table string) bool {
	if r == nil || r.snap == nil || !r.snap.windowOpen || r.snap.window == nil {
		return false
	}
	return r.snap.current().ID == schemaName+"."+table
}

// Dedupe drops the window's row of a change of table streamed inside the window (keyText: the change's
// event key, as Row.KeyText renders it).
func (r *Runner) Dedupe(table, keyText string) {
	if r == nil {
		return
	}
	s := r.snap
	if s == nil || !s.windowOpen || s.window == nil || s.current().ID != table {
		return
	}
	if i, ok := s.byKey[keyText]; ok {
		s.window[i].dropped = true
	}
}

// Signal acts on one signal from any channel. It returns the chunk rows to emit, in key order, when sig
// closes a window: the reader emits them before the close watermark's own event, as Debezium processes a
// signal before dispatching its record. A signal that cannot be carried out is logged with its id and
// dropped, as Debezium does: a wrong signal must not stop the stream. An error is the database's.
func (r *Runner) Signal(ctx context.Context, sig signal.Signal) (rows []Row, err error) {
	log := r.Log.With("signal", sig.ID, "type", sig.Type)
	defer func() {
		if err == nil {
			err = r.record()
		}
	}()
	s := r.snap
	switch sig.Type {
	case signal.OpenWindow:
		if s != nil && s.chunkID != "" && strings.HasPrefix(sig.ID, s.chunkID) {
			s.windowOpen = true
		}
		return nil, nil
	case signal.CloseWindow:
		if s == nil || s.chunkID == "" || !strings.HasPrefix(sig.ID, s.chunkID) {
			return nil, nil // a watermark replayed after a restart, or of a snapshot since stopped
		}
		rows = r.takeWindow()
		return rows, r.readChunk(ctx)
	}
	// A Kafka signal is acted on each time it is read, as Debezium does: the consumer's committed offset
	// keeps it from being read twice, and it may have no id.
	if r.Seen == nil {
		r.Seen = &signal.Seen{}
	}
	if sig.Channel != signal.ChannelKafka && !r.Seen.First(sig.ID) {
		log.Info("signal already acted on in this run; ignored")
		return nil, nil
	}
	switch sig.Type {
	case signal.Log:
		msg, err := signal.LogMessage(sig.Data)
		if err != nil {
			log.Warn("signal ignored", "error", err)
			return nil, nil
		}
		log.Info(msg)
	case signal.ExecuteSnapshot:
		return nil, r.execute(ctx, sig, log)
	case signal.StopSnapshot:
		req, err := signal.ParseSnapshotRequest(sig.Data, true)
		if err != nil || req.Type != signal.Incremental {
			log.Warn("signal ignored", "error", err, "snapshot type", req.Type)
			return nil, nil
		}
		r.stop(req, log)
	case signal.PauseSnapshot:
		if s.running() && !s.paused {
			s.paused = true
			log.Info("incremental snapshot paused")
			if r.Metrics != nil {
				r.Metrics.Paused(true)
			}
			r.notify(notify.Paused, map[string]string{"data_collections": ""})
		}
	case signal.ResumeSnapshot:
		if s.running() && s.paused {
			s.paused = false
			log.Info("incremental snapshot resumed")
			if r.Metrics != nil {
				r.Metrics.Paused(false)
			}
			r.notify(notify.Resumed, map[string]string{"data_collections": ""})
			if s.chunkID == "" {
				return nil, r.readChunk(ctx)
			}
		}
	case signal.SetBinlogPosition:
		if r.Reposition == nil {
			log.Warn("signal ignored: set-binlog-position is the MySQL and MariaDB connectors' signal; this connector streams no binlog")
			return nil, nil
		}
		return nil, r.Reposition(ctx, sig.Data, log)
	default:
		log.Warn("signal of an unknown type ignored; the types are execute-snapshot, stop-snapshot, pause-snapshot, resume-snapshot, log and, on MySQL and MariaDB, set-binlog-position")
	}
	return nil, nil
}

func (r *Runner) execute(ctx context.Context, sig signal.Signal, log *slog.Logger) error {
	req, err := signal.ParseSnapshotRequest(sig.Data, false)
	if err != nil {
		log.Warn("signal ignored", "error", err)
		return nil
	}
	if err := req.CheckFilters(r.Config.Dialect); err != nil {
		log.Warn("signal refused: its additional-conditions hold a filter that is not a condition over the table's columns", "error", err)
		return nil
	}
	if req.Type == signal.Blocking && r.Blocking == nil {
		log.Warn(`signal ignored: this connector does not run blocking snapshots yet; send the same signal with "type": "incremental"`)
		return nil
	}
	if req.Type != signal.Blocking && r.Config.Table == "" && !r.Config.ReadOnly {
		log.Warn("signal ignored: an incremental snapshot writes its watermarks into the signal table; set signal.data.collection")
		return nil
	}
	known, err := r.DB.Tables(ctx)
	if err != nil {
		return fmt.Errorf("listing the captured tables for signal %s: %w", sig.ID, err)
	}
	tables, unknown, err := req.Expand(known)
	if err != nil {
		log.Warn("signal ignored", "error", err)
		return nil
	}
	if len(unknown) > 0 {
		log.Warn("data-collections that name no captured table are skipped", "data-collections", unknown)
	}
	if len(tables) == 0 {
		return nil
	}
	if req.Type == signal.Blocking {
		conditions := map[string]string{}
		for _, t := range tables {
			if cond := req.ConditionFor(t); cond != "" {
				conditions[t] = cond
			}
		}
		log.Info("blocking snapshot requested", "tables", tables)
		return r.Blocking(ctx, tables, conditions)
	}
	start := !r.snap.running()
	if start {
		r.snap = &snapshot{}
	}
	for _, t := range tables {
		c := Collection{ID: t}
		if cond := req.ConditionFor(t); cond != "" {
			c.Condition = ptr("(" + cond + ")")
		}
		if req.SurrogateKey != "" {
			c.SurrogateKey = ptr(req.SurrogateKey)
		}
		r.snap.collections = append(r.snap.collections, c)
	}
	r.snap.correlationID = nil // a signal without an id (a Kafka one may have none) correlates nothing, as in Debezium
	if sig.ID != "" {
		r.snap.correlationID = ptr(sig.ID)
	}
	log.Info("incremental snapshot requested", "tables", tables, "chunk size", r.Config.ChunkSize)
	if !start {
		return nil
	}
	r.notify(notify.Started, map[string]string{"data_collections": ""})
	if r.Metrics != nil {
		r.Metrics.Start(len(r.snap.collections), 0)
	}
	return r.readChunk(ctx)
}

func ptr[T any](v T) *T { return &v }

// stop removes tables from the snapshot as Debezium's stop-snapshot does: the others leave the list, then
// the current table ends (and with it, maybe, the snapshot); its window's rows are dropped, and the
// window's close reads the next table.
func (r *Runner) stop(req signal.SnapshotRequest, log *slog.Logger) {
	s := r.snap
	if !s.running() {
		return
	}
	ids := make([]string, len(s.collections))
	for i, c := range s.collections {
		ids[i] = c.ID
	}
	stop := ids
	if len(req.DataCollections) > 0 {
		stop, _, _ = req.Expand(ids)
	}
	current := s.current().ID
	s.collections = slices.DeleteFunc(s.collections, func(c Collection) bool { return c.ID != current && slices.Contains(stop, c.ID) })
	if slices.Contains(stop, current) {
		s.nextTable()
		r.report() // a snapshot left without tables stopped short: aborted
		if !s.running() {
			r.notify(notify.Completed, map[string]string{})
		}
	}
	log.Info("incremental snapshot of tables stopped", "tables", stop)
	r.notify(notify.Aborted, map[string]string{"data_collections": strings.Join(stop, ",")})
}

// takeWindow closes the window: the rows no streamed change superseded, and the next chunk starts after
// the window's last row, whether or not it was superseded.
func (r *Runner) takeWindow() []Row {
	s := r.snap
	s.windowOpen = false
	if n := len(s.window); n > 0 {
		s.chunkEnd = s.window[n-1].JavaKey
	}
	rows := slices.DeleteFunc(s.window, func(row Row) bool { return row.dropped })
	if len(rows) > 0 {
		s.lastSent = s.chunkEnd
	}
	s.window, s.byKey, s.chunkID = nil, nil, ""
	return rows
}

// readChunk opens the next window: it writes the open watermark, reads the next chunk of the current
// table (moving on when one is done), and writes the close watermark. With no table left the snapshot is
// complete.
func (r *Runner) readChunk(ctx context.Context) error {
	s := r.snap
	if !s.running() || s.paused {
		return nil
	}
	s.chunkID = uuid.NewString()
	s.openedAt = r.Now()
	if err := r.DB.WriteWatermark(ctx, s.chunkID+"-open", signal.OpenWindow, fmt.Sprintf(`{"openWindowTimestamp": "%s"}`, JavaInstant(s.openedAt))); err != nil {
		return err
	}
	for s.running() {
		rows, err := r.readChunkRows(ctx)
		if err != nil {
			// A table that cannot be read is skipped, as Debezium does after an SQL error: the snapshot
			// of the others goes on, and the log says which one and why.
			r.Log.Warn("incremental snapshot of a table skipped", "table", s.current().ID, "error", err)
			status := "SQL_EXCEPTION"
			if errors.Is(err, ErrNoChunkKey) {
				status = "NO_PRIMARY_KEY"
			}
			r.tableDone(status)
			continue
		}
		if rows > 0 {
			r.notify(notify.InProgress, map[string]string{"data_collections": "",
				"current_collection_in_progress": s.current().ID, "maximum_key": KeyString(s.maxKey),
				"last_processed_key": KeyString(s.window[len(s.window)-1].JavaKey)})
			break
		}
		status := "SUCCEEDED"
		if s.maxKey == nil {
			status = "EMPTY"
		}
		r.tableDone(status)
	}
	id := s.chunkID
	if !s.running() {
		// Debezium closes the last, empty window too; nothing waits for it any more.
		r.Log.Info("incremental snapshot completed")
	}
	if r.Config.DeleteWatermarks {
		return r.DB.DeleteWatermark(ctx, id+"-open")
	}
	closing := fmt.Sprintf(`{"openWindowTimestamp": "%s", "closeWindowTimestamp": "%s"}`, JavaInstant(s.openedAt), JavaInstant(r.Now()))
	return r.DB.WriteWatermark(ctx, id+"-close", signal.CloseWindow, closing)
}

// readChunkRows reads the next chunk of the current table into the window and returns how many rows it
// holds; 0 means the table is done.
func (r *Runner) readChunkRows(ctx context.Context) (int, error) {
	s := r.snap
	c := s.current()
	if s.maxKey == nil {
		var err error
		if s.maxKey, err = r.DB.MaxKey(ctx, c); err != nil {
			return 0, err
		}
		if s.maxKey == nil {
			return 0, nil // an empty table
		}
		r.Log.Info("incremental snapshot of table started", "table", c.ID, "until key", KeyString(s.maxKey))
	}
	rows, err := r.DB.ReadChunk(ctx, c, s.chunkEnd, s.maxKey, r.Config.ChunkSize)
	if err != nil {
		return 0, err
	}
	s.window, s.byKey = rows, make(map[string]int, len(rows))
	for i, row := range rows {
		s.byKey[row.KeyText] = i
	}
	s.scanned += int64(len(rows))
	s.rowsRead += int64(len(rows))
	r.report()
	return len(rows), nil
}

// tableDone ends the current table with Debezium's completion status (SUCCEEDED, EMPTY, NO_PRIMARY_KEY,
// SQL_EXCEPTION) and, after the last table, the snapshot.
func (r *Runner) tableDone(status string) {
	s := r.snap
	r.Log.Info("incremental snapshot of table finished", "table", s.current().ID, "rows", s.scanned, "status", status)
	r.notify(notify.TableScanCompleted, map[string]string{"data_collections": "",
		"scanned_collection": s.current().ID, "total_rows_scanned": strconv.FormatInt(s.scanned, 10), "status": status})
	s.nextTable()
	s.tablesDone++
	r.report()
	if !s.running() {
		r.notify(notify.Completed, map[string]string{})
	}
}

// notify sends an incremental snapshot notification: its id is the signal's (the correlation id); a
// data_collections entry left empty lists the tables still to read.
func (r *Runner) notify(status string, data map[string]string) {
	s := r.snap
	n := notify.Notification{AggregateType: notify.IncrementalSnapshot, Type: status, Data: data}
	if s != nil && s.correlationID != nil {
		n.ID = *s.correlationID
	}
	if list, listed := data["data_collections"]; listed && list == "" && s != nil {
		ids := make([]string, len(s.collections))
		for i, c := range s.collections {
			ids[i] = c.ID
		}
		data["data_collections"] = strings.Join(ids, ",")
	}
	r.Notify(n)
}

// KeyString renders a chunking key as Debezium's notifications do: its values joined by commas.
func KeyString(key []any) string {
	parts := make([]string, len(key))
	for i, v := range key {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ",")
}

// JavaInstant prints t as java.time.Instant.toString does: UTC, nanoseconds with trailing zero groups cut.
func JavaInstant(t time.Time) string {
	t = t.UTC()
	out := t.Format("2006-01-02T15:04:05")
	if ns := t.Nanosecond(); ns != 0 {
		frac := fmt.Sprintf("%09d", ns)
		for strings.HasSuffix(frac, "000") {
			frac = frac[:len(frac)-3]
		}
		out += "." + frac
	}
	return out + "Z"
}

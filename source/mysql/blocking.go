package mysql

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/snapshot"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/mysql/tables"
)

// A blocking snapshot (execute-snapshot with "type": "blocking"). At the next transaction boundary the
// stream opens the snapshot's consistent view under snapshot.locking.mode's lock, reading the binlog
// position P it sees and the tables' structure; it streams on up to P, then stops and closes its binlog
// connection, and the tables are read in that view, as the initial snapshot reads them (source.snapshot
// markers, the offset's snapshot BLOCKING with cdcd's progress); streaming resumes at P. The rows thus
// follow every change before P and precede every change after it: nothing is dropped, doubled or seen out
// of order. As Debezium's, the snapshot records the tables' structure again first (DROP TABLE IF EXISTS and
// CREATE TABLE in the schema history and on the schema change topic), and its rows carry the stream's
// position. Debezium pauses at whatever event its streaming thread is at, and replays what it had read
// after the snapshot's view.
//
// From its request until it ends, every offset the stream records says snapshot BLOCKING with the tables
// still to read, so a crash before or during it takes it up again with those tables.

// blockingRequest is a blocking snapshot the stream is to run.
type blockingRequest struct {
	tables     []string          // db.table
	conditions map[string]string // additional-conditions by table
	prev       *snapshot.Progress
	view       *blockingView // nil until opened
}

// blockingView is a blocking snapshot's consistent read view, open on its own connection: the binlog
// position it sees and the tables' structure there. With snapshot.max.threads above 1, more connections
// hold the same view (joinSnapshot), to read tables in parallel, as Debezium's blocking snapshots do.
type blockingView struct {
	conn    *client.Conn
	joined  []*client.Conn
	pos     Offset
	ids     []tables.ID
	creates []string
}

// close ends the view, if one was opened.
func (req *blockingRequest) close() {
	if req.view != nil {
		req.view.conn.Close()
		closeAll(req.view.joined)
		req.view = nil
	}
}

// pending is the progress the offsets record while the snapshot has not read its tables yet.
func (req *blockingRequest) pending() *snapshot.Progress {
	p := &snapshot.Progress{}
	for _, t := range req.tables {
		if req.prev != nil {
			if tp := req.prev.Table(t); tp != nil {
				p.Tables = append(p.Tables, *tp)
				continue
			}
		}
		p.Tables = append(p.Tables, snapshot.TableProgress{ID: t})
	}
	return p
}

// requestBlocking notes a blocking snapshot for the stream loop (incremental.Runner.Blocking).
func (st *stream) requestBlocking(_ context.Context, tables []string, conditions map[string]string) error {
	if st.blocking != nil {
		st.r.log.Warn("a blocking snapshot is already waiting to run; this one is ignored", "tables", tables)
		return nil
	}
	st.blocking = &blockingRequest{tables: tables, conditions: conditions}
	return nil
}

// blockingPause ends a stream for a blocking snapshot: Run reads its tables, then streams on from what it
// returns.
type blockingPause struct {
	req  *blockingRequest
	from Offset // the last boundary handed over, at the view's position
}

func (p *blockingPause) Error() string {
	return fmt.Sprintf("the stream stopped at %s for a blocking snapshot", p.from)
}

// betweenTransactions does at a transaction boundary what signals asked for: the read-only snapshot
// windows the stream has passed; a move (set-binlog-position) or a blocking snapshot, each of which ends
// the stream, for Run to act on.
func (st *stream) betweenTransactions() error {
	if err := st.passWatermarks(); err != nil {
		return err
	}
	if err := st.moveIfAsked(); err != nil {
		return err
	}
	return st.blockingStep()
}

// blockingStep opens a requested blocking snapshot's view, and ends the stream once it has read every
// event before the view's position.
func (st *stream) blockingStep() error {
	req := st.blocking
	if req == nil || st.inTx {
		return nil
	}
	if req.view == nil {
		view, err := st.r.openBlocking(st.ctx, req.tables)
		if err != nil {
			return st.errorf(st.lastEnd, "opening the blocking snapshot: %w", err)
		}
		req.view = view
		st.r.log.Info("blocking snapshot: streaming on to its position", "position", view.pos.String(), "streaming_at", st.committed.String(), "tables", req.tables)
	}
	if binlogSequence(st.file, st.lastEnd) < binlogSequence(req.view.pos.File, req.view.pos.Pos) {
		return nil
	}
	from := st.committed
	from.Snapshot, from.SnapshotProgress = "", ""
	from.Incremental = st.inc.Offset() // a running incremental snapshot goes on afterwards
	st.blocking = nil                  // Run owns it now
	st.r.log.Info("streaming stops for a blocking snapshot", "position", from.String(), "tables", req.tables)
	return &blockingPause{req: req, from: from}
}

// resumedBlocking is the blocking snapshot an offset was written in: its tables, to read those not done.
func resumedBlocking(o Offset) (*blockingRequest, error) {
	prev, err := snapshot.DecodeProgress(o.SnapshotProgress)
	if err != nil {
		return nil, fatal(fmt.Errorf("the offset was written during a blocking snapshot, but its progress (%s) is unreadable: %w; remove %s and snapshot from the offset (PATCH /connectors/{name}/offsets on a stopped connector) to stream on without it", snapshot.ProgressKey, err, snapshot.ProgressKey))
	}
	req := &blockingRequest{prev: prev}
	for _, t := range prev.Tables {
		req.tables = append(req.tables, t.ID)
	}
	return req, nil
}

// openBlocking opens a blocking snapshot's view on a connection of its own: under the lock, the position
// and the structure of the tables among names (db.table), sorted; one dropped since the signal is left out.
func (r *Reader) openBlocking(ctx context.Context, names []string) (view *blockingView, err error) {
	conn, err := r.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			conn.Close()
			if view != nil {
				closeAll(view.joined)
			}
		}
	}()
	pos, unlock, err := r.beginSnapshot(conn)
	defer unlock() //nolint:errcheck // the connection closes on failure
	if err != nil {
		return nil, err
	}
	view = &blockingView{conn: conn, pos: pos}
	for _, name := range slices.Sorted(slices.Values(names)) {
		db, table, _ := strings.Cut(name, ".")
		res, err := conn.Execute(fmt.Sprintf("SHOW CREATE TABLE %s.%s", quoteIdent(db), quoteIdent(table)))
		if err != nil {
			r.log.Warn("a table of the blocking snapshot cannot be read; it is left out", "table", name, "error", err)
			continue
		}
		create, err := res.GetString(0, 1)
		create = strings.Clone(create)
		res.Close()
		if err != nil {
			return nil, fmt.Errorf("reading the structure of %s: %w", name, err)
		}
		view.ids, view.creates = append(view.ids, tables.ID{Database: db, Table: table}), append(view.creates, create)
	}
	if view.joined, err = r.joinSnapshot(ctx, conn, min(r.cfg.SnapshotThreads, len(view.ids))-1); err != nil {
		return nil, err
	}
	if err := unlock(); err != nil {
		return nil, fmt.Errorf("releasing the global read lock: %w", err)
	}
	return view, nil
}

// blockingSnapshot reads a paused stream's blocking snapshot and returns the offset streaming resumes
// from. Its batches all record pause.from with the snapshot's progress, so a crash resumes the snapshot.
func (r *Reader) blockingSnapshot(ctx context.Context, pause *blockingPause, out chan<- source.Batch) (Offset, error) {
	req, from := pause.req, pause.from
	defer req.close()
	view := req.view
	if err := r.recordTables(ctx, view, out); err != nil {
		return Offset{}, fmt.Errorf("blocking snapshot: %w", err)
	}
	progress := &snapshot.Progress{}
	for _, id := range view.ids {
		name := id.Database + "." + id.Table
		if req.prev != nil {
			if t := req.prev.Table(name); t != nil && t.Done {
				progress.Tables = append(progress.Tables, *t)
				continue
			}
		}
		progress.Tables = append(progress.Tables, snapshot.TableProgress{ID: name, Epochs: []snapshot.Epoch{{Position: binlogSequence(view.pos.File, view.pos.Pos)}}})
	}
	r.log.Info("snapshot started", "kind", blockingSnapshot, "tables", len(progress.Tables), "position", view.pos.String(), "streaming_from", from.String(), "resumed", req.prev != nil)
	kind := snapshotKind{name: blockingSnapshot, conditions: req.conditions,
		at: sourceBlock{serverID: from.ServerID, file: from.File, pos: from.Pos, thread: -1}}
	streamFrom, err := r.readRows(ctx, append([]*client.Conn{view.conn}, view.joined...), kind, from, progress, out)
	if err != nil {
		return Offset{}, fmt.Errorf("blocking snapshot: %w", err)
	}
	if _, err := view.conn.Execute("COMMIT"); err != nil {
		return Offset{}, fmt.Errorf("blocking snapshot: ending the snapshot transaction: %w", err)
	}
	r.log.Info("snapshot finished", "kind", blockingSnapshot, "tables", len(progress.Tables), "streaming_from", streamFrom.String())
	return streamFrom, nil
}

// recordTables records the view's tables' structure, as Debezium's blocking snapshot does: DROP TABLE IF
// EXISTS of each, then each one's CREATE TABLE, in the schema history (under the offset of an initial
// snapshot, as Debezium writes them) and on the schema change topic.
func (r *Reader) recordTables(ctx context.Context, view *blockingView, out chan<- source.Batch) error {
	pos := view.pos
	at := Offset{File: pos.File, Pos: pos.Pos, GTIDs: pos.GTIDs, TsSec: pos.TsSec, Snapshot: initialSnapshot}
	block := sourceBlock{ts: r.now(), snapshot: schema.SnapshotTrue, file: pos.File, pos: pos.Pos, thread: -1}
	var statements []ddlStatement
	for _, id := range view.ids {
		statements = append(statements, ddlStatement{id.Database, fmt.Sprintf("DROP TABLE IF EXISTS %s.%s", quoteIdent(id.Database), quoteIdent(id.Table))})
	}
	for i, id := range view.ids {
		statements = append(statements, ddlStatement{id.Database, view.creates[i]})
	}
	var events []source.Event
	for _, s := range statements {
		evs, err := r.applyDDL(ctx, s.database, s.stmt, at, block)
		if err != nil {
			return err
		}
		events = append(events, evs...)
	}
	if len(events) == 0 {
		return nil
	}
	select {
	case out <- source.Batch{Events: events}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

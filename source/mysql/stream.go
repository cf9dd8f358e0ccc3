package mysql

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/google/uuid"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/snapshot"
	"github.com/cdcd/cdcd/snapshot/incremental"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/mysql/tables"
	"github.com/cdcd/cdcd/source/mysql/types"
	"github.com/cdcd/cdcd/source/props"
)

// maxTxEvents bounds the events one batch holds: a larger transaction is delivered in parts, and only its
// last part carries an offset, so nothing of it is recorded until all of it is delivered.
const maxTxEvents = 8192

// binlogPosition is a batch's source.Position: the offset it records.
type binlogPosition struct{ Offset }

// stream turns binlog events into batches. One goroutine owns it and its replication connection.
type stream struct {
	r   *Reader
	ctx context.Context
	out chan<- source.Batch

	file     string          // the binlog file being read
	gtids    gomysql.GTIDSet // the completed GTID set, nil without GTIDs
	serverID int64
	ts       time.Time // the current event's binlog time
	prevTs   time.Time // the binlog time of the event before it (txTime)

	// The current transaction.
	inTx     bool
	txStart  int64  // position of its first event (GTID or BEGIN)
	txGTID   string // its GTID, "" without
	txEvents int64  // its events handled so far, the GTID/BEGIN event included (Debezium's event count)
	// commitTime is MySQL's original commit time of the transaction, zero when the server gives none.
	commitTime time.Time
	// filteredSource: the transaction's GTID source is left out by gtid.source.includes/excludes, so its
	// row changes are not emitted (gtid.source.filter.dml.events); it still advances the position.
	filteredSource bool
	thread         int64
	query          string // the rows query (include.query), "" when unknown
	pending        []source.Event

	// skipEvents/skipRows resume a transaction Debezium had delivered in part (its offset's event and row).
	skipEvents int64
	skipRows   int64

	// committed is the offset of the last transaction boundary: what a heartbeat records.
	committed     Offset
	lastHeartbeat time.Time

	// lastEnd is the end of the last event handled: where a failure to read the next one is reported.
	lastEnd int64

	// checkedMap is the last table map event whose column names checkColumns compared.
	checkedMap *replication.TableMapEvent

	// covered is a resumed snapshot's progress while streaming has not passed the position of every table
	// it read: changes of a table read later than they were committed are already in its rows.
	covered *snapshot.Progress

	// txm is provide.transaction.metadata, nil when off; txEndFields are the offset keys of the END record
	// just written, for the commit's offset (see txmeta.go).
	txm         *source.TxMonitor
	txEndFields []source.OffsetField

	// moveTo is where a set-binlog-position signal moves the stream at the next transaction boundary, and
	// blocking the blocking snapshot to run there (blocking.go).
	moveTo   *Offset
	blocking *blockingRequest

	// watermarks are a read-only incremental snapshot's windows still to pass (readonly.go).
	watermarks []gtidWatermark

	// inc runs the signals and the incremental snapshot (incremental.go); sql is its query connection,
	// nil until a snapshot needs one, last used at sqlUsed.
	inc     *incremental.Runner
	sql     *client.Conn
	sqlUsed time.Time
}

// newStream starts reading at start.
func (r *Reader) newStream(ctx context.Context, out chan<- source.Batch, start Offset) (*stream, error) {
	st := &stream{r: r, ctx: ctx, out: out, file: start.File, serverID: start.ServerID, thread: -1,
		skipEvents: start.Events, skipRows: start.Rows, committed: start, lastEnd: start.Pos, lastHeartbeat: r.now()}
	if r.cfg.ProvideTxMetadata {
		st.txm = source.NewTxMonitor(r.cfg.Topics.TransactionTopic(), start.Transaction.list())
	}
	if err := st.newIncremental(start); err != nil {
		return nil, err
	}
	if start.Snapshot == blockingSnapshot { // the offset of a blocking snapshot not finished: take it up again
		req, err := resumedBlocking(start)
		if err != nil {
			return nil, err
		}
		st.blocking = req
	}
	if start.Snapshot == "" && start.SnapshotProgress != "" {
		p, err := snapshot.DecodeProgress(start.SnapshotProgress)
		if err != nil {
			return nil, err
		}
		st.covered = p
	}
	if start.GTIDs != "" {
		set, err := r.cfg.parseGTIDSet(start.GTIDs)
		if err != nil {
			return nil, fmt.Errorf("the stored offset's gtids %q: %w", start.GTIDs, err)
		}
		// The offsets written from here on carry the filtered set, as Debezium's do.
		st.gtids = r.cfg.restartGTIDs(set)
		if kept := st.gtids.String(); kept != set.String() {
			r.log.Info("resuming from the stored GTID set without the sources gtid.source.includes/excludes leave out", "gtids", set.String(), "resume_gtids", kept)
		}
	}
	return st, nil
}

func (c *Config) parseGTIDSet(s string) (gomysql.GTIDSet, error) {
	if c.Flavor == types.MariaDB {
		return gomysql.ParseMariadbGTIDSet(s)
	}
	return gomysql.ParseMysqlGTIDSet(s)
}

// restartGTIDs is the GTID set a restart resumes from, as Debezium's filterGtidSet makes it: the offset's
// set without the sources gtid.source.includes/excludes leave out, so that the server sends an excluded
// source's transactions from where it has them rather than the offset's old position of it. Without a
// filter it is set unchanged.
func (c *Config) restartGTIDs(set gomysql.GTIDSet) gomysql.GTIDSet {
	keep := c.gtidSourceFilter()
	if keep == nil || set == nil {
		return set
	}
	out := set.Clone()
	switch s := out.(type) {
	case *gomysql.MariadbGTIDSet:
		maps.DeleteFunc(s.Sets, func(_ uint32, g *gomysql.MariadbGTID) bool {
			return !keep(fmt.Sprintf("%d-%d", g.DomainID, g.ServerID))
		})
	case *gomysql.MysqlGTIDSet:
		maps.DeleteFunc(*s, func(uuid uuid.UUID, _ map[gomysql.Tag]gomysql.IntervalSlice) bool { return !keep(uuid.String()) })
	}
	return out
}

// handle processes one binlog event.
func (st *stream) handle(ctx context.Context, ev *replication.BinlogEvent) error {
	h := ev.Header
	if h.Timestamp != 0 {
		st.prevTs, st.ts = st.ts, time.Unix(int64(h.Timestamp), 0)
	}
	if h.LogPos != 0 {
		st.r.metrics.Binlog(int64(h.LogPos), st.gtids != nil)
	}
	if h.ServerID != 0 {
		st.serverID = int64(h.ServerID)
	}
	pos := int64(h.LogPos) - int64(h.EventSize) // this event's own position
	st.lastEnd = int64(h.LogPos)
	if payload, ok := ev.Event.(*replication.TransactionPayloadEvent); ok {
		return st.payload(ctx, payload, pos, int64(h.LogPos))
	}
	if done, err := st.dispatch(ctx, ev.Event, ev.Header.EventType, pos, int64(h.LogPos)); done || err != nil {
		return err
	}
	st.countEvent()
	return nil
}

// payload handles a TRANSACTION_PAYLOAD event (binlog_transaction_compression=ON): the transaction's
// events after its GTID event, compressed, which go-mysql has decoded. Each is handled as it would be
// uncompressed, but with the payload's header, as Debezium does: its rows carry the payload event's
// position, the commit inside it records the payload's end, and the payload counts as one event of the
// transaction (Debezium counts only the events the binlog client delivers). The inner events' own
// positions are go-mysql's stand-ins (the decompressed buffer has none).
func (st *stream) payload(ctx context.Context, e *replication.TransactionPayloadEvent, pos, end int64) error {
	for _, inner := range e.Events {
		if _, ok := inner.Event.(*replication.TransactionPayloadEvent); ok {
			return fatal(st.errorf(pos, "a transaction payload event nested in another: the binlog is malformed"))
		}
		done, err := st.dispatch(ctx, inner.Event, inner.Header.EventType, pos, end)
		if err != nil {
			return err
		}
		if done && !st.inTx {
			return nil // the transaction committed inside the payload
		}
	}
	st.countEvent()
	return nil
}

// countEvent counts the event just handled as one of the open transaction's, or as one a resumed
// transaction had delivered already.
func (st *stream) countEvent() {
	st.txEvents++
	if st.skipEvents > 0 && st.inTx {
		st.skipEvents--
		st.r.metrics.SkippedEvent()
	}
}

// dispatch handles the binlog event e of type typ at pos, ending at end. done reports that the event
// ended its statement or transaction (a commit, a DDL statement), and so is not counted as one of the
// transaction's events.
func (st *stream) dispatch(ctx context.Context, e replication.Event, typ replication.EventType, pos, end int64) (done bool, err error) {
	switch e := e.(type) {
	case *replication.RotateEvent:
		st.file = string(e.NextLogName)
		return true, nil
	case *replication.MariadbGTIDEvent:
		st.begin(pos, fmt.Sprintf("%d-%d-%d", e.GTID.DomainID, e.GTID.ServerID, e.GTID.SequenceNumber))
		st.filteredSource = !st.r.cfg.includesGTIDSource(fmt.Sprintf("%d-%d", e.GTID.DomainID, e.GTID.ServerID))
		st.txBegin() // MariaDB's GTID event stands for BEGIN
	case *replication.GTIDEvent:
		if err := st.gtidEvent(e, pos); err != nil {
			return false, err
		}
	case *replication.GtidTaggedLogEvent:
		if err := st.gtidEvent(&e.GTIDEvent, pos); err != nil {
			return false, err
		}
	case *replication.QueryEvent:
		q := strings.TrimSpace(string(e.Query))
		switch {
		case strings.EqualFold(q, "BEGIN"):
			if !st.inTx {
				st.begin(pos, "")
			}
			// Debezium knows the thread only from a BEGIN query (MySQL without GTIDs sends one; MariaDB's
			// GTID event carries none) and forgets it at the commit.
			st.thread = int64(e.SlaveProxyID)
			st.txBegin()
		case strings.EqualFold(q, "COMMIT"):
			st.txEnd()
			return true, st.commit(ctx, end)
		case strings.EqualFold(q, "ROLLBACK"):
			st.r.metrics.RolledBack()
			fallthrough // handled as before: the statement goes to the schema history's parser, which ignores it
		default:
			if err := st.ddl(ctx, string(e.Schema), q, pos); err != nil {
				return false, err
			}
			return true, st.commit(ctx, end) // a DDL statement commits implicitly
		}
	case *replication.MariadbAnnotateRowsEvent:
		st.query = string(e.Query)
	case *replication.RowsQueryEvent:
		st.query = string(e.Query)
	case *replication.RowsEvent:
		if err := st.rows(typ, e, pos); err != nil {
			return false, err
		}
	case *replication.XIDEvent:
		st.txEnd()
		return true, st.commit(ctx, end)
	}
	return false, nil
}

// gtidEvent starts the transaction of a MySQL GTID event, tagged (GTID_TAGGED_LOG, MySQL 8.3+:
// uuid:tag:n) or not.
func (st *stream) gtidEvent(e *replication.GTIDEvent, pos int64) error {
	next, err := e.GTIDNext()
	if err != nil {
		return st.errorf(pos, "decoding a GTID event: %w", err)
	}
	st.begin(pos, next.String())
	uuid, _, _ := strings.Cut(next.String(), ":")
	st.filteredSource = !st.r.cfg.includesGTIDSource(uuid)
	if e.OriginalCommitTimestamp > 0 {
		// MySQL 8.0.1+: Debezium takes the source times from the original commit time, to the microsecond
		// (source.ts_us; ts_ms its milliseconds, ts_ns its microseconds in nanoseconds).
		st.commitTime = e.OriginalCommitTime()
	}
	return nil
}

// begin starts a transaction at pos.
func (st *stream) begin(pos int64, gtid string) {
	st.inTx, st.txStart, st.txEvents, st.query, st.commitTime, st.filteredSource = true, pos, 0, "", time.Time{}, false
	if gtid != "" {
		st.txGTID = gtid
	}
}

// rows turns a rows event into change events. Rows of tables outside the filters, and rows a resumed
// transaction already delivered, are passed over.
func (st *stream) rows(typ replication.EventType, e *replication.RowsEvent, pos int64) error {
	if st.skipEvents > 0 || st.filteredSource {
		return nil
	}
	skipRows := st.skipRows
	st.skipRows = 0
	id := tables.ID{Database: string(e.Table.Schema), Table: string(e.Table.Table)}
	if !st.r.cfg.Filter.IncludeTable(id.Database, id.Table) {
		return nil
	}
	signals := st.r.cfg.signalTable(id)
	covered := false
	if st.covered != nil && !signals { // the snapshot does not read the signal table: its changes all stream
		// Tables are read whole in one snapshot (one epoch: ParseOffset refuses more), so the key is never
		// asked for. A covered change is dropped but for the deletes coveredChange streams (covered.go).
		covered, _ = st.covered.Covered(id.Database+"."+id.Table, binlogSequence(st.file, st.txStart), nil)
	}
	ts, err := st.r.tableSchema(id)
	if err != nil {
		return st.errorf(pos, "%w", err)
	}
	if ts == nil {
		return st.errorf(pos, "a change of table %s.%s, whose structure the schema history does not know: the history topic %s misses its CREATE TABLE (restore it, or take a new snapshot with snapshot.mode=recovery or when_needed)",
			id.Database, id.Table, st.r.cfg.HistoryTopic)
	}
	if err := st.checkColumns(ts, e.Table); err != nil {
		return fatal(st.errorf(pos, "%w", err)) // a restart reads the same history
	}
	var op byte
	step := 1
	switch typ {
	case replication.WRITE_ROWS_EVENTv0, replication.WRITE_ROWS_EVENTv1, replication.WRITE_ROWS_EVENTv2,
		replication.MARIADB_WRITE_ROWS_COMPRESSED_EVENT_V1:
		op = 'c'
	case replication.UPDATE_ROWS_EVENTv0, replication.UPDATE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv2,
		replication.MARIADB_UPDATE_ROWS_COMPRESSED_EVENT_V1,
		replication.PARTIAL_UPDATE_ROWS_EVENT: // its after images made whole at decoding (partialjson.go)
		op, step = 'u', 2
	case replication.DELETE_ROWS_EVENTv0, replication.DELETE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv2,
		replication.MARIADB_DELETE_ROWS_COMPRESSED_EVENT_V1:
		op = 'd'
	default:
		return st.errorf(pos, "a rows event of type %s, which cdcd does not know", typ)
	}
	if st.r.cfg.SkippedOps[op] || covered && op == 'c' {
		return nil
	}
	now := st.r.now()
	for i := 0; i+step <= len(e.Rows); i += step {
		rowIndex := int64(i / step)
		if rowIndex < skipRows {
			continue
		}
		blk := sourceBlock{ts: st.eventTime(), db: id.Database, table: id.Table,
			serverID: st.serverID, gtid: st.txGTID, file: st.file, pos: pos, row: int32(rowIndex), thread: st.thread, query: st.query}
		src := st.r.cfg.sourceStruct(st.r.sourceSchema, blk)
		st.r.metrics.Event(op)
		first, err := ts.rowStruct(e.Rows[i], st.r.cfg.Modes.FromBinlog)
		if err != nil {
			if err := st.unprocessable(pos, id, rowIndex, err); err != nil {
				return err
			}
			continue
		}
		if covered {
			var after *schema.Struct
			if op == 'u' {
				if after, err = ts.rowStruct(e.Rows[i+1], st.r.cfg.Modes.FromBinlog); err != nil {
					if err := st.unprocessable(pos, id, rowIndex, err); err != nil {
						return err
					}
					continue
				}
			}
			if err := st.coveredChange(ts, e.Rows[i], first, after, src, now); err != nil {
				return st.errorf(pos, "%w", err)
			}
			continue
		}
		if signals {
			if err := st.sourceSignal(op, first, blk); err != nil {
				return err
			}
		}
		// A change streamed inside an incremental snapshot's window supersedes the chunk's row of its key.
		st.dedupe(ts, ts.keyOf(first))
		switch op {
		case 'c':
			st.emit(ts.event(ts.keyOf(first), ts.envelopeValue(schema.OpCreate, nil, first, src, now)))
		case 'd':
			st.emitDelete(ts, ts.keyOf(first), first, src, now)
		case 'u':
			after, err := ts.rowStruct(e.Rows[i+1], st.r.cfg.Modes.FromBinlog)
			if err != nil {
				if err := st.unprocessable(pos, id, rowIndex, err); err != nil {
					return err
				}
				continue
			}
			st.dedupe(ts, ts.keyOf(after)) // a key change: the new key's row is superseded too
			st.update(ts, first, after, src, now)
		}
	}
	return nil
}

// unprocessable applies event.processing.failure.handling.mode to a row change that cannot be turned into
// an event (a value cdcd cannot convert), as Debezium's EventDispatcher does: fail (the default) stops the
// task (a fatal error) with the change's binlog position; warn logs the table and position and skips the row; skip
// (and its old name ignore) skips it with a debug line. The event's other rows go out.
func (st *stream) unprocessable(pos int64, id tables.ID, row int64, err error) error {
	if props.SkipUnprocessable(st.r.cfg.EventFailureMode, st.r.log,
		"table", id.Database+"."+id.Table, "file", st.file, "pos", pos, "row", row, "gtid", st.txGTID, "error", err) {
		return nil
	}
	// Fatal: a restart would read the same row and fail the same way.
	return source.Fatal(st.errorf(pos, "row %d of %s.%s (event.processing.failure.handling.mode=warn or skip would skip it): %w", row, id.Database, id.Table, err))
}

// eventTime is the source time of the current event: MySQL's original commit time where the server
// records it, else the binlog header's time (whole seconds).
func (st *stream) eventTime() time.Time {
	if !st.commitTime.IsZero() {
		return st.commitTime
	}
	return st.ts
}

// checkColumns compares the structure the schema history gives a table with the column names the server
// sends along with its rows (binlog_row_metadata=FULL; nothing to compare without it): rows decoded with
// the wrong structure would be silently wrong events, so a mismatch stops the stream. Each table map event
// is checked once.
func (st *stream) checkColumns(ts *tableSchema, m *replication.TableMapEvent) error {
	if len(m.ColumnName) == 0 || st.checkedMap == m {
		return nil
	}
	names := make([]string, len(ts.table.Columns))
	for i, c := range ts.table.Columns {
		names[i] = c.Name
	}
	for i, n := range m.ColumnName {
		if i >= len(names) || !strings.EqualFold(names[i], string(n)) {
			server := make([]string, len(m.ColumnName))
			for j, n := range m.ColumnName {
				server[j] = string(n)
			}
			return fmt.Errorf("table %s.%s has columns (%s) in the binlog but (%s) in the schema history %s: the history missed a DDL statement; rebuild it with snapshot.mode=recovery if the table has not changed since the stored offset, or take a new snapshot",
				ts.id.Database, ts.id.Table, strings.Join(server, ", "), strings.Join(names, ", "), st.r.cfg.HistoryTopic)
		}
	}
	st.checkedMap = m
	return nil
}

// update emits an update, or, when the primary key changed, what Debezium emits for a key change: a delete
// of the old key carrying __debezium.newkey, its tombstone, and a create of the new key carrying
// __debezium.oldkey.
func (st *stream) update(ts *tableSchema, before, after, src *schema.Struct, now time.Time) {
	oldKey, newKey := ts.keyOf(before), ts.keyOf(after)
	if ts.key == nil || sameKey(oldKey, newKey) {
		st.emit(ts.event(newKey, ts.envelopeValue(schema.OpUpdate, before, after, src, now)))
		return
	}
	newKeyHeader := source.Header{Key: "__debezium.newkey", Schema: ts.key, Value: newKey}
	st.emit(ts.event(oldKey, ts.envelopeValue(schema.OpDelete, before, nil, src, now), newKeyHeader))
	if st.r.cfg.TombstonesOnDelete {
		st.emit(ts.event(oldKey, nil, newKeyHeader))
	}
	st.emit(ts.event(newKey, ts.envelopeValue(schema.OpCreate, nil, after, src, now),
		source.Header{Key: "__debezium.oldkey", Schema: ts.key, Value: oldKey}))
}

// emit adds an event to the transaction, delivering a part when the transaction grows too large.
func (st *stream) emit(ev source.Event) {
	st.txEvent(&ev)
	st.pending = append(st.pending, ev)
	if len(st.pending) >= maxTxEvents {
		st.send(source.Batch{Events: st.pending})
		st.pending = nil
	}
}

// send hands a batch to the pipeline. It blocks while the pipeline is full: that is the backpressure that
// stops binlog reading. A cancelled context drops the batch, which is then not recorded either.
func (st *stream) send(b source.Batch) {
	select {
	case st.out <- b:
	case <-st.ctx.Done():
	}
}

// commit ends the transaction whose last event ends at end: its events go out in one batch with the
// offset that resumes after it.
func (st *stream) commit(ctx context.Context, end int64) error {
	if st.txGTID != "" && st.gtids != nil {
		if err := st.gtids.Update(st.txGTID); err != nil {
			return st.errorf(end, "updating the GTID set %s with %s: %w", st.gtids, st.txGTID, err)
		}
	}
	off := Offset{File: st.file, Pos: end, ServerID: st.serverID, TsSec: st.ts.Unix(), Transaction: st.txOffset(), Incremental: st.inc.Offset()}
	if st.gtids != nil {
		off.GTIDs = st.gtids.String()
	}
	if st.covered != nil {
		if binlogSequence(st.file, end) >= st.covered.MaxPosition() {
			st.covered = nil
		} else {
			off.SnapshotProgress = st.covered.Encode() // a restart must keep dropping what the snapshot holds
		}
	}
	if st.blocking != nil { // a restart must take up the blocking snapshot (blocking.go)
		off.Snapshot, off.SnapshotProgress = blockingSnapshot, st.blocking.pending().Encode()
	}
	st.send(source.Batch{Events: st.pending, Offset: off.Fields(), Position: binlogPosition{off}})
	st.pending, st.committed = nil, off
	if st.txm != nil {
		st.committed.Transaction = newTxOffset(st.txm.OffsetFields()) // a heartbeat after a commit holds none
	}
	st.r.metrics.Committed(st.eventTime(), st.r.now())
	st.inTx, st.txGTID, st.txEvents, st.query, st.skipEvents, st.skipRows, st.thread = false, "", 0, "", 0, 0, -1
	return ctx.Err()
}

// heartbeat emits a heartbeat record (heartbeat.interval.ms) when the interval has passed since the last one
// and no transaction is open, recording the last transaction boundary's offset: on a quiet or filtered
// binlog, the offset still advances. Each heartbeat first runs heartbeat.action.query on the query
// connection, as Debezium's; a failure of it fails the stream.
func (st *stream) heartbeat() error {
	interval := st.r.cfg.HeartbeatInterval
	now := st.r.now()
	if interval <= 0 || st.inTx || now.Sub(st.lastHeartbeat) < interval {
		return nil
	}
	st.lastHeartbeat = now
	if q := st.r.cfg.HeartbeatQuery; q != "" {
		conn, err := incDB{st}.conn(st.ctx)
		if err == nil {
			_, err = conn.Execute(q)
		}
		if err != nil {
			st.closeSQL()
			return fmt.Errorf("heartbeat.action.query failed: %w", err)
		}
	}
	ev := source.HeartbeatEvent(st.r.cfg.Topics.HeartbeatTopic(), st.r.cfg.TopicPrefix, now)
	st.send(source.Batch{Events: []source.Event{ev}, Offset: st.committed.Fields(), Position: binlogPosition{st.committed}})
	return nil
}

// streamError is a failure at a binlog position: the position is in the message, so the operator knows
// where the connector stopped.
type streamError struct {
	Position string
	Err      error
}

func (e *streamError) Error() string {
	return fmt.Sprintf("at binlog position %s: %v", e.Position, e.Err)
}
func (e *streamError) Unwrap() error { return e.Err }

func (st *stream) errorf(pos int64, format string, args ...any) error {
	p := fmt.Sprintf("%s:%d", st.file, pos)
	if st.txGTID != "" {
		p += " (GTID " + st.txGTID + ")"
	}
	return &streamError{Position: p, Err: fmt.Errorf(format, args...)}
}

// sameKey reports whether two key structs hold equal values.
func sameKey(a, b *schema.Struct) bool {
	if a == nil || b == nil {
		return a == b
	}
	return reflect.DeepEqual(a.Values, b.Values)
}

// ddl applies a DDL statement of the binlog; its schema change events belong to the statement's own
// (implicitly committed) transaction.
func (st *stream) ddl(ctx context.Context, database, stmt string, pos int64) error {
	// The history position is where a restart would resume: this transaction's start, with its events so
	// far to skip, and the GTID set before it, as Debezium records it.
	at := Offset{File: st.file, Pos: st.txStart, Events: st.txEvents, ServerID: st.serverID, TsSec: st.ts.Unix()}
	if st.txm != nil {
		at.Transaction = newTxOffset(st.txm.OffsetFields()) // MariaDB's DDL transaction is open: its GTID began it
	}
	if st.gtids != nil {
		at.GTIDs = st.gtids.String()
	}
	evs, err := st.r.applyDDL(ctx, database, stmt, at, sourceBlock{ts: st.eventTime(), db: database, serverID: st.serverID,
		gtid: st.txGTID, file: st.file, pos: pos, thread: st.thread})
	if err != nil {
		return err
	}
	for _, ev := range evs {
		st.emit(ev)
	}
	return nil
}

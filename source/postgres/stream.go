package postgres

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/snapshot"
	"github.com/cdcd/cdcd/snapshot/incremental"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/metrics"
	"github.com/cdcd/cdcd/source/props"
)

// streamState turns pgoutput messages into batches of Debezium events. It belongs to the reader goroutine.
type streamState struct {
	cfg    *Config
	sql    *pgx.Conn
	log    *slog.Logger
	tables *tableCache
	now    func() time.Time

	// The open transaction.
	inTx       bool
	xid        uint32
	commitTime time.Time
	finalLSN   LSN // the commit's LSN, known from BEGIN
	events     []source.Event
	// xmin is the slot's catalog_xmin read at the BEGIN (xmin.fetch.interval.ms; 0: not shown).
	xmin     int64
	slotXmin slotXmin

	// covered is a finished snapshot's progress while streaming has not yet passed every table's snapshot
	// position: changes the snapshot already holds are dropped, so nothing is doubled.
	covered *snapshot.Progress

	// lastCommit is the end LSN of the last transaction read (Debezium's lastCommitLsn): the first element of
	// source.sequence and, once delivered, the resume point.
	lastCommit LSN
	// skipBelow is set while replaying the first transaction after a Debezium offset written inside it:
	// changes below it were delivered already.
	skipBelow LSN

	ready []source.Batch

	// source is the source block template of sourceKey (see sourceInfo).
	source    *schema.Struct
	sourceKey sourceKey

	rows rowDecoder // decodes inserts, updates and deletes without copying

	txm *source.TxMonitor // provide.transaction.metadata; nil when off (see txmeta.go)

	inc *incremental.Runner // signals and the incremental snapshot (incremental.go)
	// blocking is a blocking snapshot waiting for the next transaction boundary (blocking.go).
	blocking *blockingRequest
	// syncWatermarks: the SQL session flushes its commits (incremental.go's WriteWatermark).
	syncWatermarks bool
	// watermarks are a read-only incremental snapshot's window bounds still to pass, and delivered the
	// last transactions streamed, which a low watermark must see (readonly.go).
	watermarks []readOnlyWatermark
	delivered  recentXids
	// boundary is the highest transaction boundary the stream has recorded an offset at besides lastCommit:
	// where its connection started, or an idle batch (idle.go). The reader moves it.
	boundary LSN

	metrics *metrics.Stream
}

func newStreamState(cfg *Config, sql *pgx.Conn, start *Offset, headers []source.Header, log *slog.Logger) *streamState {
	st := &streamState{cfg: cfg, sql: sql, log: log, tables: newTableCache(cfg, sql, headers, log), now: time.Now,
		metrics: metrics.NewStream(cfg.Name)}
	st.inc = st.newIncremental()
	st.slotXmin.every = cfg.XminFetchInterval
	if cfg.ProvideTxMetadata {
		var restored []source.OffsetField
		if start != nil {
			restored = start.Transaction
		}
		st.txm = source.NewTxMonitor(cfg.Topics.TransactionTopic(), restored)
	}
	if start != nil {
		st.lastCommit = start.LastCommit
		st.xid = uint32(start.TxID)
		st.commitTime = time.UnixMicro(start.TsUsec)
		st.skipBelow = start.skipThrough()
		if start.SnapshotProgress != "" && !start.SnapshotInProgress() {
			if p, err := snapshot.DecodeProgress(start.SnapshotProgress); err == nil {
				st.coverFrom(p, start.ResumeLSN())
			} else {
				log.Warn("ignoring unreadable snapshot progress in the offset; changes the snapshot holds may be delivered twice", "error", err)
			}
		}
	}
	return st
}

// coverFrom makes the stream drop changes a snapshot holds; needed only when the snapshot is newer than
// where streaming starts (it was taken while the slot already existed).
func (st *streamState) coverFrom(p *snapshot.Progress, streamStart LSN) {
	if p != nil && p.MaxPosition() > uint64(streamStart) {
		st.covered = p
	}
}

// resetAfterReconnect forgets what a lost connection left half read; the new connection sends it again.
func (st *streamState) resetAfterReconnect() {
	st.inTx, st.events, st.ready = false, nil, nil
	st.inc.Revert() // the next chunk is read anew once the stream runs again
	st.watermarks = nil
	if st.txm != nil {
		st.txm.Reset() // the transaction comes again from its BEGIN
	}
}

// handle decodes one XLogData message. Errors here are fatal: they mean a malformed message or data cdcd
// cannot represent, which a new connection would send again from the same position.
func (st *streamState) handle(ctx context.Context, xld pglogrepl.XLogData) error {
	lsn := xld.WALStart
	row, msg, err := st.rows.decodeWAL(xld.WALData)
	if err != nil {
		return err
	}
	switch m := msg.(type) {
	case nil:
		return st.change(ctx, lsn, row.relation, row.op, row.old, row.oldKind, row.new)
	case *pglogrepl.BeginMessage:
		// A read-only snapshot's window opens or closes before the first change of a transaction its
		// watermark's snapshot does not see.
		if err := st.passWatermarks(ctx, streamPoint{begin: true, xid: m.Xid, at: lsn}); err != nil {
			return fmt.Errorf("BEGIN of transaction %d @ %s: %w", m.Xid, lsn, err)
		}
		st.inTx, st.xid, st.commitTime, st.finalLSN, st.events = true, m.Xid, m.CommitTime, m.FinalLSN, st.events[:0]
		if st.xmin, err = st.slotXmin.at(ctx, st.sql, st.cfg, st.now()); err != nil {
			return fmt.Errorf("BEGIN of transaction %d @ %s: %w", m.Xid, lsn, err)
		}
		st.txBegin(lsn)
	case *pglogrepl.CommitMessage:
		st.commit(m.TransactionEndLSN)
		return st.passWatermarks(ctx, streamPoint{at: m.TransactionEndLSN})
	case *pglogrepl.RelationMessage:
		return st.tables.relation(ctx, m)
	case *pglogrepl.TypeMessage, *pglogrepl.OriginMessage:
		// Types come from the catalog; origins are not tracked yet (source.origin stays null).
	case *pglogrepl.TruncateMessage:
		return st.truncate(lsn, m)
	case *pglogrepl.LogicalDecodingMessage:
		return st.message(lsn, m)
	}
	return nil
}

// commit closes the transaction into a batch whose offset is the commit: the only kind of offset cdcd
// records. Transactions without captured changes still yield an (empty) batch, so their commit is recorded
// and the slot moves on even when no captured table changes.
func (st *streamState) commit(end LSN) {
	st.metrics.Committed(st.commitTime, st.now())
	st.lastCommit = end
	st.delivered.add(st.xid)
	st.skipBelow = 0
	off := st.boundaryOffset(end, "COMMIT")
	off.Transaction = st.txEnd(end)
	if st.covered != nil {
		if uint64(end) >= st.covered.MaxPosition() {
			st.covered = nil
		} else {
			off.SnapshotProgress = st.covered.Encode() // a restart must keep dropping what the snapshot holds
		}
	}
	st.ready = append(st.ready, source.Batch{Events: st.events, Offset: off.Fields(), Position: lsnPosition(end)})
	st.events, st.inTx = nil, false
}

// emit appends events of the open transaction; a transaction larger than one batch is handed over in parts
// that carry no offset, so memory stays bounded by the pipeline's capacity, not by the transaction's size.
func (st *streamState) emit(evs ...source.Event) {
	for i := range evs {
		st.txEvent(&evs[i])
	}
	st.appendEvents(evs...)
}

// appendEvents is emit without the transaction metadata: for incremental snapshot rows and notifications,
// which Debezium dispatches past its transaction monitor (no transaction block, not counted).
func (st *streamState) appendEvents(evs ...source.Event) {
	st.events = append(st.events, evs...)
	if len(st.events) >= maxBatchEvents {
		st.ready = append(st.ready, source.Batch{Events: st.events})
		st.events = nil
	}
}

// sourceInfo builds the source block for a change at lsn. All its fields but the position are the same
// for every change of one table in one transaction, so they are built (and boxed into interface values)
// once, and each change copies that template and sets sequence and lsn: a third of the allocations per
// change otherwise.
func (st *streamState) sourceInfo(lsn LSN, schemaName, table string, withTx bool) *schema.Struct {
	key := sourceKey{schemaName: schemaName, table: table, withTx: withTx, xid: st.xid,
		commitMicros: st.commitTime.UnixMicro(), lastCommit: st.lastCommit, xmin: st.xmin}
	if st.source == nil || st.sourceKey != key {
		st.source = newSource(st.cfg, st.commitTime, st.lastCommit, 0, schemaName, table)
		if withTx {
			st.source.Set("txId", int64(st.xid))
		}
		if st.xmin != 0 {
			st.source.Set("xmin", st.xmin)
		}
		st.sourceKey = key
	}
	src := &schema.Struct{Schema: st.source.Schema, Values: slices.Clone(st.source.Values)}
	return src.Set("sequence", sequence(st.lastCommit, lsn)).Set("lsn", int64(lsn))
}

// sourceKey is what a source block depends on besides the change's position.
type sourceKey struct {
	schemaName, table string
	withTx            bool
	xid               uint32
	commitMicros      int64 // the commit time as the source block carries it
	lastCommit        LSN
	xmin              int64
}

// newSource fills the fields every PostgreSQL source block has: the change's time ts and position lsn,
// and lastCommit for source.sequence. Callers add txId and the snapshot marker where they apply.
func newSource(cfg *Config, ts time.Time, lastCommit, lsn LSN, schemaName, table string) *schema.Struct {
	return schema.NewStruct(schema.PostgresSourceSchema()).
		Set("version", source.Version).
		Set("connector", "postgresql").
		Set("name", cfg.TopicPrefix).
		Set("ts_ms", ts.UnixMilli()).
		Set("db", cfg.DBName).
		Set("sequence", sequence(lastCommit, lsn)).
		Set("ts_us", ts.UnixMicro()).
		Set("ts_ns", ts.UnixMicro()*1000).
		Set("schema", schemaName).
		Set("table", table).
		Set("lsn", int64(lsn))
}

// boundaryOffset is the offset cdcd records at a transaction boundary at lsn: resume there, nothing of the
// transaction left to skip.
func (st *streamState) boundaryOffset(lsn LSN, messageType string) Offset {
	return Offset{LSN: lsn, LastProcessed: lsn, LastCommit: lsn, TxID: int64(st.xid), Xmin: st.xmin, TsUsec: st.commitTime.UnixMicro(), MessageType: messageType,
		Incremental: st.inc.Offset()}
}

// sequence is Debezium's source.sequence: a JSON list of the last commit LSN and this change's LSN as
// decimal strings, null for an unknown commit.
func sequence(lastCommit, lsn LSN) string {
	var buf [48]byte // two 20-digit numbers and the punctuation: one allocation, the string
	b := append(buf[:0], '[')
	if lastCommit != 0 {
		b = append(strconv.AppendUint(append(b, '"'), uint64(lastCommit), 10), '"')
	} else {
		b = append(b, "null"...)
	}
	b = append(strconv.AppendUint(append(b, ',', '"'), uint64(lsn), 10), '"', ']')
	return string(b)
}

// envelope builds a change event's value.
func (st *streamState) envelope(t *table, op string, before, after *schema.Struct, src *schema.Struct) *schema.Struct {
	env := schema.NewStruct(t.envelope)
	now := st.now()
	env.Set("source", src).Set("op", op).
		Set("ts_ms", now.UnixMilli()).Set("ts_us", now.UnixMicro()).Set("ts_ns", now.UnixNano())
	if before != nil {
		env.Set("before", before)
	}
	if after != nil {
		env.Set("after", after)
	}
	return env
}

// change turns an insert, update or delete into events.
// unprocessable applies event.processing.failure.handling.mode to a change that cannot be turned into an
// event (a value cdcd cannot convert), as Debezium's EventDispatcher does: fail (the default) stops the
// task (a fatal error) naming the change's position; warn logs the change's table and position and skips it; skip (and
// its old name ignore) skips it with a debug line. A skipped change is lost to Kafka for good: the
// transaction's other changes go out, and its commit moves the position past it.
func (st *streamState) unprocessable(lsn LSN, t *table, err error) error {
	if !props.SkipUnprocessable(st.cfg.EventFailureMode, st.log, "table", t.schemaName+"."+t.name, "lsn", lsn.String(), "txId", st.xid, "error", err) {
		// Fatal: a restart would read the same change and fail the same way.
		return source.Fatal(fmt.Errorf("processing the change at LSN %s (event.processing.failure.handling.mode=warn or skip would skip it): %w", lsn, err))
	}
	st.metrics.Filtered()
	return nil
}

func (st *streamState) change(ctx context.Context, lsn LSN, relID uint32, op byte, oldTuple *pglogrepl.TupleData, oldKind uint8, newTuple *pglogrepl.TupleData) error {
	if lsn < st.skipBelow {
		return nil
	}
	t, err := st.tables.get(relID)
	if err != nil {
		return err
	}
	if t == nil || st.cfg.SkippedOps[op] {
		st.metrics.Filtered()
		return nil
	}
	if st.covered != nil {
		keyTuple := newTuple
		if keyTuple == nil {
			keyTuple = oldTuple
		}
		drop, err := st.covered.Covered(t.schemaName+"."+t.name, uint64(st.finalLSN), func(bound []string) (bool, error) {
			return st.tables.keyAtMost(t, keyTuple, bound)
		})
		if err != nil || drop {
			return err
		}
	}
	var before, after *schema.Struct
	if oldTuple != nil {
		if before, err = t.row(oldTuple, nil, streamed); err != nil {
			return st.unprocessable(lsn, t, fmt.Errorf("%s.%s old row: %w", t.schemaName, t.name, err))
		}
	}
	if newTuple != nil {
		if after, err = t.row(newTuple, before, streamed); err != nil {
			return st.unprocessable(lsn, t, fmt.Errorf("%s.%s new row: %w", t.schemaName, t.name, err))
		}
	}
	src := st.sourceInfo(lsn, t.schemaName, t.name, true)
	if st.signalTable(t) {
		row := after
		if op == 'd' {
			row = before
		}
		if err := st.sourceSignal(ctx, op, row, src); err != nil {
			return err
		}
	}
	st.dedupe(t, t.key(before))
	st.dedupe(t, t.key(after))
	st.metrics.Event(op)
	switch op {
	case 'c':
		st.emit(t.event(t.key(after), st.envelope(t, "c", nil, after, src)))
	case 'u':
		newKey := t.key(after)
		if before != nil && oldKind != 0 && t.keySchema != nil {
			if oldKey := t.key(before); !keysEqual(oldKey, newKey) {
				st.keyChange(t, oldKey, newKey, before, after, src)
				return nil
			}
		}
		// Under REPLICA IDENTITY DEFAULT an unchanged key sends no old tuple and before stays null.
		st.emit(t.event(newKey, st.envelope(t, "u", before, after, src)))
	case 'd':
		key := t.key(before)
		st.emit(t.event(key, st.envelope(t, "d", before, nil, src)))
		if st.cfg.TombstonesOnDelete {
			st.emit(t.event(key, nil))
		}
	}
	return nil
}

// keyChange emits a primary-key update as Debezium does: a delete of the old key carrying the new key in
// the __debezium.newkey header, its tombstone, and a create of the new key carrying __debezium.oldkey.
func (st *streamState) keyChange(t *table, oldKey, newKey *schema.Struct, before, after *schema.Struct, src *schema.Struct) {
	newKeyHeader := source.Header{Key: "__debezium.newkey", Schema: t.keySchema, Value: newKey}
	st.emit(t.event(oldKey, st.envelope(t, "d", before, nil, src), newKeyHeader))
	if st.cfg.TombstonesOnDelete {
		st.emit(t.event(oldKey, nil, newKeyHeader))
	}
	st.emit(t.event(newKey, st.envelope(t, "c", nil, after, src), source.Header{Key: "__debezium.oldkey", Schema: t.keySchema, Value: oldKey}))
}

// truncate emits one op "t" event per captured table, with a null key, unless truncates are skipped (the
// default, skipped.operations=t).
func (st *streamState) truncate(lsn LSN, m *pglogrepl.TruncateMessage) error {
	if st.cfg.SkippedOps['t'] {
		return nil
	}
	for _, relID := range m.RelationIDs {
		t, err := st.tables.get(relID)
		if err != nil {
			return err
		}
		if t == nil {
			continue
		}
		src := st.sourceInfo(lsn, t.schemaName, t.name, true)
		st.metrics.Event('t')
		ev := t.event(nil, st.envelope(t, "t", nil, nil, src))
		st.emit(ev)
	}
	return nil
}

// message emits a logical decoding message (op "m") on <prefix>.message. A non-transactional message is
// its own transaction: it is recorded at once, as Debezium does.
func (st *streamState) message(lsn LSN, m *pglogrepl.LogicalDecodingMessage) error {
	if lsn < st.skipBelow || !st.cfg.includesMessage(m.Prefix) {
		return nil
	}
	keySchema, valueSchema := schema.PostgresMessageKeySchema(), st.tables.messageValueSchema()
	key := schema.NewStruct(keySchema).Set("prefix", m.Prefix)
	// The content aliases the connection's receive buffer, which the next message overwrites.
	content, err := st.tables.messageContent(bytes.Clone(m.Content))
	if err != nil {
		return err
	}
	if !m.Transactional {
		// A non-transactional message is its own commit (Debezium's commitMessage runs before it is
		// dispatched): it is the last commit of its own source.sequence and of the events after it. It has no
		// commit time, so its source time stays the last commit's, as in Debezium's SourceInfo.
		st.lastCommit = lsn
		if st.commitTime.IsZero() { // nothing committed since the start: no time to keep
			st.commitTime = st.now()
		}
	}
	src := st.sourceInfo(lsn, "", "", m.Transactional)
	body := schema.NewStruct(valueSchema.Field("message")).Set("prefix", m.Prefix).Set("content", content)
	now := st.now()
	value := schema.NewStruct(valueSchema).Set("op", "m").Set("ts_ms", now.UnixMilli()).Set("source", src).Set("message", body)
	st.metrics.Event('m')
	ev := source.Event{Topic: st.cfg.Topics.MessageTopic(), KeySchema: keySchema, Key: key, ValueSchema: valueSchema, Value: value}
	if m.Transactional {
		st.emit(ev)
		return nil
	}
	off := st.boundaryOffset(lsn, "MESSAGE")
	st.ready = append(st.ready, source.Batch{Events: []source.Event{ev}, Offset: off.Fields(), Position: lsnPosition(lsn)})
	return nil
}

// heartbeat emits a heartbeat record carrying the last commit's offset, and runs heartbeat.action.query.
// Only between transactions: a heartbeat inside one would record a position inside it.
func (st *streamState) heartbeat(ctx context.Context) error {
	if st.cfg.HeartbeatQuery != "" {
		if _, err := st.sql.Exec(ctx, st.cfg.HeartbeatQuery); err != nil {
			return fmt.Errorf("heartbeat.action.query failed: %w", err)
		}
	}
	if st.inTx || st.lastCommit == 0 {
		return nil
	}
	ev := source.HeartbeatEvent(st.cfg.Topics.HeartbeatTopic(), st.cfg.TopicPrefix, st.now())
	off := st.boundaryOffset(st.lastCommit, "COMMIT")
	st.ready = append(st.ready, source.Batch{Events: []source.Event{ev}, Offset: off.Fields(), Position: lsnPosition(st.lastCommit)})
	return nil
}

package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cdcd/cdcd/schema/javacompat"
	"github.com/cdcd/cdcd/source/notify"
	"github.com/cdcd/cdcd/source/props"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/snapshot"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/metrics"
	"github.com/cdcd/cdcd/source/postgres/catalog"
	"github.com/cdcd/cdcd/source/signal"
	"github.com/cdcd/cdcd/source/signal/sqlfilter"
)

// exportedSnapshot is a snapshot exported by CREATE_REPLICATION_SLOT: it shows exactly the transactions
// that committed before the slot's consistent point. The exporting replication connection must stay open
// and idle until a transaction has imported the snapshot.
type exportedSnapshot struct {
	conn     *pgconn.PgConn
	name     string
	position LSN
}

// exportSnapshot creates slot (temporary: dropped when conn closes) with an exported snapshot.
func (r *Reader) exportSnapshot(ctx context.Context, slot string, temporary bool) (*exportedSnapshot, error) {
	conn, err := r.cfg.connectReplication(ctx)
	if err != nil {
		return nil, fmt.Errorf("replication connection to %s: %w", r.cfg.addr(), err)
	}
	stopWatch := r.watchSlotCreation(ctx, slot)
	res, err := pglogrepl.CreateReplicationSlot(ctx, conn, slot, "pgoutput", pglogrepl.CreateReplicationSlotOptions{Temporary: temporary, Mode: pglogrepl.LogicalReplication, SnapshotAction: r.cfg.slotOptions("export", !temporary)})
	stopWatch()
	if err != nil {
		conn.Close(context.Background())
		return nil, slotCreateError(slot, err)
	}
	lsn, err := pglogrepl.ParseLSN(res.ConsistentPoint)
	if err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("slot %q consistent point %q: %w", slot, res.ConsistentPoint, err)
	}
	return &exportedSnapshot{conn: conn, name: res.SnapshotName, position: lsn}, nil
}

// snapshotRun reads the captured tables in one exported snapshot, in key order and in chunks, and hands
// their rows to the pipeline as op "r" events. Every batch carries the snapshot's progress in its offset, so
// a crash resumes after the last acknowledged chunk. prev is the stored progress of an interrupted snapshot.
type snapshotRun struct {
	r        *Reader
	kind     snapshotKind
	out      chan<- source.Batch
	conn     *pgx.Conn
	exp      *exportedSnapshot
	txID     int64
	started  time.Time
	streamAt LSN // where streaming starts afterwards: the position snapshot batches stand for

	// hand hands the rows to the pipeline: tables are read on several connections at once
	// (snapshot.max.threads), and batches go out one at a time, each with the progress it completes.
	hand     *snapshot.Handover
	progress *snapshot.Progress // what the rows handed over so far cover; hand's, changed under its turn

	// Progress reporting: rows handed over in this run against PostgreSQL's estimate of the whole. Changed
	// before the readers start and then only under hand's turn (send).
	rowsRead, rowsBefore, rowsEstimate int64
	lastReport                         time.Time
	metrics                            *metrics.Snapshot

	// tableIDs are the tables the snapshot reads, as its notifications list them.
	tableIDs []string
}

// notify queues an initial snapshot notification (random id) behind the rows read so far.
func (s *snapshotRun) notify(ctx context.Context, status string, data map[string]string) error {
	ev, ok := s.r.cfg.Notify.Send(notify.Notification{AggregateType: notify.InitialSnapshot, Type: status, Data: data}, s.r.cfg.TopicPrefix, time.Now(), s.r.log)
	if !ok {
		return nil
	}
	return s.hand.Add(ctx, snapshot.Item{Event: ev, Notice: true})
}

// selectOverride is the user's SELECT for table id (schema.table) and the table as
// snapshot.select.statement.overrides lists it, looked up as Debezium does: database.schema.table first,
// then schema.table. Only the initial snapshot runs them: Debezium's blocking snapshots read
// additional-conditions instead.
func (s *snapshotRun) selectOverride(id string) (listedAs, sql string) {
	if s.kind.name != initialSnapshotName {
		return "", ""
	}
	for _, key := range []string{s.r.cfg.DBName + "." + id, id} {
		if sql, ok := s.r.cfg.SnapshotSelects[key]; ok {
			return key, sql
		}
	}
	return "", ""
}

// overrideColumns is props.OverrideColumns for this driver's result: a returned column the table does not
// have fails the snapshot (fatal: a restart runs the same statement).
func overrideColumns(fields []pgconn.FieldDescription, info *catalog.Table, listedAs string) (func([][]byte) [][]byte, error) {
	returned := make([]string, len(fields))
	for i, f := range fields {
		returned[i] = f.Name
	}
	arrange, err := props.OverrideColumns[[]byte](returned, info.ColumnNames(), listedAs, info.Schema+"."+info.Name)
	if err != nil {
		return nil, source.Fatal(err)
	}
	return arrange, nil
}

// snapshotKind is which snapshot runs: the initial one (snapshot.mode) or a blocking one a signal asked for.
type snapshotKind struct {
	name       string                              // the offset's snapshot value: INITIAL or BLOCKING
	include    func(schemaName, table string) bool // the tables it reads
	conditions map[string]string                   // schema.table → a WHERE condition (additional-conditions)
}

// initialSnapshotName is the initial snapshot's snapshotKind.name.
const initialSnapshotName = "INITIAL"

// initialSnapshot is the snapshot snapshot.mode takes: the captured tables, or those of
// snapshot.include.collection.list.
func (r *Reader) initialSnapshot() snapshotKind {
	return snapshotKind{name: initialSnapshotName, include: r.includeInSnapshot}
}

// snapshot runs a snapshot and returns its progress, which tells the stream what the snapshot covers.
func (r *Reader) snapshot(ctx context.Context, out chan<- source.Batch, exp *exportedSnapshot, streamAt LSN, prev *snapshot.Progress, kind snapshotKind) (*snapshot.Progress, error) {
	// Every reading connection imports the exported snapshot before the exporting connection goes (which
	// drops a temporary slot; a connector's own slot stays): they all see the same database state.
	conns, err := r.importSnapshot(ctx, exp, max(1, r.cfg.SnapshotThreads))
	exp.conn.Close(context.Background())
	defer func() {
		for _, c := range conns {
			c.Close(context.Background())
		}
	}()
	if err != nil {
		return nil, err
	}
	conn := conns[0]
	run := &snapshotRun{r: r, kind: kind, out: out, conn: conn, exp: exp, started: time.Now(), streamAt: streamAt, metrics: metrics.NewSnapshot(r.cfg.Name)}
	// A standby has no transaction ids of its own to hand out: its snapshot rows carry txId 0, as Debezium's.
	if err := conn.QueryRow(ctx, "SELECT CASE WHEN pg_is_in_recovery() THEN 0 ELSE txid_current() END").Scan(&run.txID); err != nil {
		return nil, fmt.Errorf("snapshot transaction id: %w", err)
	}
	tables, err := catalog.LoadAll(ctx, conn, kind.include)
	if err != nil {
		return nil, fmt.Errorf("listing the tables to snapshot: %w", err)
	}
	for _, t := range tables {
		r.enums.Pin(t)
	}
	slices.SortFunc(tables, func(a, b *catalog.Table) int {
		return strings.Compare(a.Schema+"."+a.Name, b.Schema+"."+b.Name)
	})
	run.progress = planProgress(prev, tables, uint64(exp.position), uint64(streamAt))
	run.hand = snapshot.NewHandover(run.progress, maxBatchEvents, run.send)
	run.startReport(ctx, tables)
	defer run.metrics.Stop()
	for _, t := range tables {
		run.tableIDs = append(run.tableIDs, t.Schema+"."+t.Name)
	}
	if err := run.notify(ctx, notify.Started, nil); err != nil {
		return nil, err
	}
	r.log.Info("snapshot started", "kind", kind.name, "tables", len(run.progress.Tables), "rows_estimated", run.rowsEstimate, "threads", len(conns), "position", exp.position.String(), "resumed", prev != nil)

	byID := make(map[string]*catalog.Table, len(tables))
	for _, t := range tables {
		byID[t.Schema+"."+t.Name] = t
	}
	var jobs []tableJob
	for _, tp := range run.progress.Tables {
		if tp.Done {
			continue
		}
		if info := byID[tp.ID]; info != nil {
			jobs = append(jobs, tableJob{info: info, progress: tp})
			continue
		}
		id := tp.ID // dropped since the snapshot began
		if err := run.hand.Add(ctx, snapshot.Item{Advance: func(p *snapshot.Progress) { p.Table(id).Done = true }}); err != nil {
			return nil, err
		}
	}
	// Debezium marks the first row of the first table "first" and the last of the last table "last" only
	// when it reads one table at a time.
	if len(conns) == 1 && len(jobs) > 0 {
		jobs[0].firstTable = prev == nil
		jobs[len(jobs)-1].lastTable = true
	}
	if err := snapshot.ReadTables(ctx, conns, jobs, func(j tableJob) string { return j.progress.ID }, run.table); err != nil {
		return nil, err
	}
	if err := run.notify(ctx, notify.Completed, nil); err != nil {
		return nil, err
	}
	if err := run.hand.Finish(ctx); err != nil {
		return nil, err
	}
	for _, c := range conns {
		if _, err := c.Exec(ctx, "COMMIT"); err != nil {
			return nil, fmt.Errorf("ending the snapshot transaction: %w", err)
		}
	}
	r.log.Info("snapshot finished", "kind", kind.name, "tables", len(run.progress.Tables), "rows", run.rowsBefore+run.rowsRead, "took", time.Since(run.started).Round(time.Millisecond))
	return run.progress, nil
}

// importSnapshot opens n connections, each in a read-only REPEATABLE READ transaction showing the exported
// snapshot (read-only as Debezium's snapshot transaction is: a snapshot only reads).
func (r *Reader) importSnapshot(ctx context.Context, exp *exportedSnapshot, n int) ([]*pgx.Conn, error) {
	var conns []*pgx.Conn
	for range n {
		conn, err := r.connectSQL(ctx)
		if err != nil {
			return conns, err
		}
		conns = append(conns, conn)
		_, err = conn.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
		if err == nil {
			_, err = conn.Exec(ctx, fmt.Sprintf("SET TRANSACTION SNAPSHOT '%s'", exp.name))
		}
		if err != nil {
			return conns, fmt.Errorf("importing snapshot %s: %w", exp.name, err)
		}
	}
	return conns, nil
}

// boundStatements limits the statements that follow in conn's transaction to timeout (none for 0) and
// returns what sets the limit back to what it was.
func boundStatements(ctx context.Context, conn *pgx.Conn, timeout time.Duration) (unbound func() error, err error) {
	if timeout <= 0 {
		return func() error { return nil }, nil
	}
	var was string
	if err := conn.QueryRow(ctx, "SELECT current_setting('statement_timeout')").Scan(&was); err != nil {
		return nil, err
	}
	set := func(value string) error {
		_, err := conn.Exec(ctx, "SELECT set_config('statement_timeout', $1, true)", value)
		return err
	}
	if err := set(strconv.FormatInt(timeout.Milliseconds(), 10)); err != nil {
		return nil, err
	}
	return func() error { return set(was) }, nil
}

// tableJob is one table still to read.
type tableJob struct {
	info                  *catalog.Table
	progress              snapshot.TableProgress
	firstTable, lastTable bool
}

// includeInSnapshot selects the captured tables the snapshot reads (snapshot.include.collection.list).
func (r *Reader) includeInSnapshot(schemaName, table string) bool {
	if !r.cfg.Filter.IncludeTable(schemaName, table) {
		return false
	}
	return len(r.cfg.SnapshotTables) == 0 || props.AnyMatch(r.cfg.SnapshotTables, schemaName+"."+table)
}

// planProgress starts a snapshot's progress, or continues prev: every unfinished table gets a new epoch,
// which covers the rows after its last delivered key. A new snapshot's epoch is its position: streamed
// changes that committed before it are already in the rows read. A resumed snapshot's new epoch is
// streamAt instead, so that no streamed change of those rows is dropped: the interrupted run may have
// delivered rows beyond its durable progress, and dropping their later deletes or updates would leave them
// stale in Kafka. The price is that changes between streamAt and the new snapshot can arrive twice.
func planProgress(prev *snapshot.Progress, tables []*catalog.Table, position, streamAt uint64) *snapshot.Progress {
	var p *snapshot.Progress
	if prev != nil {
		position = streamAt
	}
	if prev == nil {
		p = &snapshot.Progress{}
		for _, t := range tables {
			p.Tables = append(p.Tables, snapshot.TableProgress{ID: t.Schema + "." + t.Name})
		}
	} else {
		p = prev.Clone()
	}
	for i := range p.Tables {
		tp := &p.Tables[i]
		if tp.Done {
			continue
		}
		if n := len(tp.Epochs); n > 0 && tp.LastKey != nil {
			tp.Epochs[n-1].UpTo = tp.LastKey
		} else {
			tp.Epochs = nil // nothing of the table was delivered: it is read whole in this epoch
		}
		tp.Epochs = append(tp.Epochs, snapshot.Epoch{Position: position})
	}
	return p
}

// table reads one table in key order, chunk by chunk, resuming after its last delivered key. A table
// without a primary key is read in one pass and, after an interruption, read again from its start.
// Each table holds its newest row back until the next one (or the table's end) says whether it is the
// table's last, which decides its marker.
func (s *snapshotRun) table(ctx context.Context, conn *pgx.Conn, job tableJob) (err error) {
	info, tp := job.info, job.progress
	t, err := newTable(s.r.cfg, info, catalogColumns(info), s.r.headers, s.r.log)
	if err != nil {
		return err
	}
	id := tp.ID
	cols := make([]string, len(info.Columns))
	for i, c := range info.Columns {
		cols[i] = pgx.Identifier{c.Name}.Sanitize()
	}
	keyIdx := make([]int, len(info.PrimaryKey))
	keyCols := make([]string, len(info.PrimaryKey))
	for i, k := range info.PrimaryKey {
		keyCols[i] = pgx.Identifier{k}.Sanitize()
		keyIdx[i] = slices.IndexFunc(info.Columns, func(c catalog.Column) bool { return c.Name == k })
	}
	from := pgx.Identifier{info.Schema, info.Name}.Sanitize()
	// A table with the user's SELECT is read in one pass, as one without a key: the statement is run as
	// written, and a resumed snapshot runs it again from the start.
	overrideKey, override := s.selectOverride(id)
	chunked := len(keyCols) > 0 && override == ""
	lastKey, rows := tp.LastKey, tp.Rows
	if !chunked {
		lastKey, rows = nil, 0
	}
	resumed := lastKey != nil
	// Debezium lists the tables of a table's start in its HashSet's order, of its end sorted.
	if err := s.notify(ctx, notify.InProgress, map[string]string{"current_collection_in_progress": id,
		"data_collections": strings.Join(javacompat.HashMapOrder(s.tableIDs), ",")}); err != nil {
		return err
	}
	// A blocking snapshot's additional condition came with a signal: it runs as sqlfilter prints it, its
	// statements bounded by snapshot.query.timeout.ms as an incremental snapshot's are.
	condition := ""
	if cond := s.kind.conditions[id]; cond != "" {
		if condition, err = sqlfilter.Render(cond, sqlfilter.PostgreSQL, info.ColumnNames()); err != nil {
			return fmt.Errorf("additional-conditions of %s: %w", id, err)
		}
		var unbound func() error
		if unbound, err = boundStatements(ctx, conn, s.r.cfg.Signals.QueryTimeout); err != nil {
			return fmt.Errorf("limiting the reads of %s to %s: %w", id, signal.QueryTimeoutKey, err)
		}
		defer func() {
			if unboundErr := unbound(); err == nil && unboundErr != nil {
				err = fmt.Errorf("lifting the limit of %s on the snapshot's reads: %w", signal.QueryTimeoutKey, unboundErr)
			}
		}()
	}
	var held *snapshot.Item // the newest row, its marker not yet final
	heldFirst := false      // held is the table's first row
	for {
		sql := "SELECT " + strings.Join(cols, ", ") + " FROM " + from
		var params [][]byte
		var where []string
		if condition != "" {
			where = append(where, condition)
		}
		if chunked && lastKey != nil {
			ph := make([]string, len(lastKey))
			for i := range lastKey {
				ph[i] = fmt.Sprintf("$%d", i+1)
				params = append(params, []byte(lastKey[i]))
			}
			where = append(where, "("+strings.Join(keyCols, ", ")+") > ("+strings.Join(ph, ", ")+")")
		}
		if len(where) > 0 {
			sql += " WHERE " + strings.Join(where, " AND ")
		}
		if chunked {
			sql += fmt.Sprintf(" ORDER BY %s LIMIT %d", strings.Join(keyCols, ", "), s.r.cfg.SnapshotFetchSize)
		}
		if override != "" {
			sql, params = override, nil
		}
		rr := conn.PgConn().ExecParams(ctx, sql, params, nil, nil, nil)
		var arrange func([][]byte) [][]byte // an override's columns in the table's order
		if override != "" {
			if arrange, err = overrideColumns(rr.FieldDescriptions(), info, overrideKey); err != nil {
				rr.Close()
				return err
			}
		}
		n := 0
		for rr.NextRow() {
			values := rr.Values()
			if arrange != nil {
				values = arrange(values)
			}
			var key []string
			if chunked {
				key = make([]string, len(keyIdx))
				for i, ki := range keyIdx {
					key[i] = string(values[ki])
				}
				lastKey = key
			}
			n++
			row, err := t.row(textTuple(values), nil, snapshotted)
			if err != nil {
				// The row's own failure: the next chunk still starts after its key.
				position := fmt.Sprintf("LSN %s, row %d of the table's snapshot", s.streamAt, rows+1)
				if err := snapshot.UnconvertibleRow(s.r.cfg.EventFailureMode, s.r.log, id, info.PrimaryKey, position, err); err != nil {
					rr.Close()
					return err
				}
				continue
			}
			rows++
			count := rows
			if held != nil {
				if err := s.hand.Add(ctx, *held); err != nil {
					rr.Close()
					return err
				}
			}
			heldFirst = rows == 1 && !resumed
			src := s.sourceInfo(t, snapshot.RowMarker(job.firstTable, job.lastTable, heldFirst, false))
			held = &snapshot.Item{
				Event:  t.event(t.key(row), s.envelope(t, row, src)),
				Source: src,
				Advance: func(p *snapshot.Progress) {
					tp := p.Table(id)
					tp.LastKey, tp.Rows = key, count
				},
			}
		}
		if _, err := rr.Close(); err != nil {
			if override != "" {
				return fmt.Errorf("reading %s with %s.%s: %w", from, props.SelectOverridesKey, overrideKey, err)
			}
			return fmt.Errorf("reading %s: %w", from, err)
		}
		if !chunked || n < s.r.cfg.SnapshotFetchSize {
			break
		}
		if err := s.hand.Flush(ctx); err != nil {
			return err
		}
	}
	if held != nil {
		held.Source.Set("snapshot", string(snapshot.RowMarker(job.firstTable, job.lastTable, heldFirst, true)))
		if err := s.hand.Add(ctx, *held); err != nil {
			return err
		}
	}
	if err := s.hand.Add(ctx, snapshot.Item{Advance: func(p *snapshot.Progress) { p.Table(id).Done = true }}); err != nil {
		return err
	}
	if err := s.notify(ctx, notify.TableScanCompleted, map[string]string{"scanned_collection": id,
		"data_collections": strings.Join(s.tableIDs, ","), "total_rows_scanned": strconv.FormatInt(rows, 10), "status": "SUCCEEDED"}); err != nil {
		return err
	}
	s.r.log.Info("snapshot of table finished", "table", id, "rows", rows)
	return nil
}

// textTuple is a query result row in the stream's tuple form, copied: the result reader reuses its buffers.
func textTuple(values [][]byte) *pglogrepl.TupleData {
	tuple := &pglogrepl.TupleData{Columns: make([]*pglogrepl.TupleDataColumn, len(values))}
	for i, v := range values {
		col := &pglogrepl.TupleDataColumn{DataType: pglogrepl.TupleDataTypeNull}
		if v != nil {
			col.DataType, col.Data = pglogrepl.TupleDataTypeText, append([]byte(nil), v...)
		}
		tuple.Columns[i] = col
	}
	return tuple
}

// send hands one batch to the pipeline, its offset recording the progress it completes (the Handover's
// send: one batch at a time, under its turn).
func (s *snapshotRun) send(ctx context.Context, b snapshot.Handed) error {
	off := Offset{
		LSN: s.streamAt, TxID: s.txID, TsUsec: s.started.UnixMicro(),
		Snapshot: s.kind.name, LastSnapshotRecord: b.Final, SnapshotCompleted: b.Final,
		SnapshotProgress: b.Progress.Encode(),
	}
	// The final offset of an initial snapshot keeps the progress while streaming still has to drop changes
	// the snapshot holds, so a crash before streaming records an offset does not deliver them twice. A
	// blocking snapshot's stream drops nothing (blocking.go).
	if b.Final && (s.kind.name != initialSnapshotName || b.Progress.MaxPosition() <= uint64(s.streamAt)) {
		off.SnapshotProgress = ""
	}
	s.rowsRead = b.Rows
	s.report(b.Final)
	select {
	case s.out <- source.Batch{Events: b.Events, Offset: off.Fields(), Position: lsnPosition(s.streamAt)}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sourceInfo is the source block of a snapshot row: the snapshot's position, transaction and start time.
func (s *snapshotRun) sourceInfo(t *table, marker snapshot.Marker) *schema.Struct {
	return newSource(s.r.cfg, s.started, 0, s.exp.position, t.schemaName, t.name).
		Set("snapshot", string(marker)).
		Set("txId", s.txID)
}

// envelope is a snapshot row's value: op "r" with only an after image.
func (s *snapshotRun) envelope(t *table, row, src *schema.Struct) *schema.Struct {
	now := time.Now()
	return schema.NewStruct(t.envelope).Set("after", row).Set("source", src).Set("op", "r").
		Set("ts_ms", now.UnixMilli()).Set("ts_us", now.UnixMicro()).Set("ts_ns", now.UnixNano())
}

// startReport sets the snapshot's metrics at its start: the tables, the rows a resumed snapshot already
// delivered, and PostgreSQL's estimate of all rows (pg_class.reltuples), from which the time left follows.
func (s *snapshotRun) startReport(ctx context.Context, tables []*catalog.Table) {
	oids := make([]uint32, 0, len(tables))
	for _, t := range tables {
		if tp := s.progress.Table(t.Schema + "." + t.Name); tp != nil && !tp.Done {
			oids = append(oids, t.OID)
		}
	}
	for _, tp := range s.progress.Tables {
		s.rowsBefore += tp.Rows
	}
	var estimate int64
	// An estimate only: a failure leaves it at zero and the time left unknown.
	_ = s.conn.QueryRow(ctx, "SELECT coalesce(sum(greatest(reltuples, 0)), 0)::bigint FROM pg_class WHERE oid = ANY($1)", oids).Scan(&estimate)
	s.rowsEstimate = s.rowsBefore + estimate
	s.lastReport = time.Now()
	s.metrics.Start(len(s.progress.Tables), s.rowsEstimate)
	s.report(false)
}

// report updates the progress metrics, and logs progress every ten seconds. Callers hold hand's turn (or
// run before the readers start).
func (s *snapshotRun) report(final bool) {
	tablesDone := s.progress.DoneCount()
	scanned := s.rowsBefore + s.rowsRead
	elapsed := time.Since(s.started).Seconds()
	var remaining float64
	rate := float64(s.rowsRead) / max(elapsed, 0.001)
	if !final && rate > 0 && s.rowsEstimate > scanned {
		remaining = float64(s.rowsEstimate-scanned) / rate
	}
	s.metrics.Progress(tablesDone, scanned, remaining)
	for _, tp := range s.progress.Tables {
		s.metrics.TableRows(tp.ID, tp.Rows)
	}
	if !final && time.Since(s.lastReport) >= 10*time.Second {
		s.lastReport = time.Now()
		s.r.log.Info("snapshot progress", "tables_done", tablesDone, "tables", len(s.progress.Tables), "rows", scanned,
			"rows_per_second", int64(rate), "remaining", (time.Duration(remaining) * time.Second).String())
	}
}

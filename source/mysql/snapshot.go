package mysql

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/javacompat"
	"github.com/cdcd/cdcd/snapshot"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/metrics"
	"github.com/cdcd/cdcd/source/mysql/ddl"
	"github.com/cdcd/cdcd/source/mysql/tables"
	"github.com/cdcd/cdcd/source/mysql/types"
	"github.com/cdcd/cdcd/source/notify"
	"github.com/cdcd/cdcd/source/props"
	"github.com/cdcd/cdcd/source/signal/sqlfilter"
)

// snapshotBatchRows is how many snapshot rows one batch holds.
const snapshotBatchRows = 1024

// snapshot takes a consistent snapshot (BinlogSnapshotChangeEventSource with snapshot.locking.mode): under
// a global read lock it opens a consistent-snapshot transaction, reads the binlog position and every
// captured database's structure (recorded in the schema history), releases the lock (minimal), and then,
// withData, reads the captured tables' rows inside that transaction. It returns the offset streaming
// starts from: the snapshot's own position, so nothing between them is lost or repeated.
//
// resumed is the offset of an interrupted snapshot: the tables it finished are not read again, the others
// are read in this newer snapshot, and streaming starts from the first snapshot's position; the returned
// offset then carries the progress, so the stream drops the changes of re-read tables that this snapshot
// already holds.
//
// With snapshot.max.threads above 1, tables are read on that many connections at once (at most one per
// table to read): the others open their consistent-snapshot transactions while conn still holds the
// global read lock, so all of them see the database exactly at the snapshot's binlog position.
func (r *Reader) snapshot(ctx context.Context, conn *client.Conn, out chan<- source.Batch, withData bool, resumed *Offset) (Offset, error) {
	pos, unlock, err := r.beginSnapshot(conn)
	defer unlock() //nolint:errcheck // the connection closes anyway on failure paths
	if err != nil {
		return Offset{}, err
	}
	if withData {
		pos.Snapshot = initialSnapshot
	}
	// Without rows, the structure's batch is the snapshot's last and records where streaming starts: under
	// exactly-once its schema change records would otherwise wait in an open transaction for the first
	// change streamed, which on an idle database never comes before transaction.timeout.ms aborts it.
	var structureDone *Offset
	if !withData {
		done := pos
		done.Snapshot = ""
		structureDone = &done
	}
	captured, err := r.readStructure(ctx, conn, pos, out, structureDone)
	if err != nil {
		return Offset{}, err
	}
	var progress *snapshot.Progress
	readers := []*client.Conn{conn}
	defer func() { closeAll(readers[1:]) }()
	if withData {
		progress = r.planProgress(captured, pos, resumed)
		joined, err := r.joinSnapshot(ctx, conn, min(r.cfg.SnapshotThreads, progress.Pending())-1)
		if err != nil {
			return Offset{}, err
		}
		readers = append(readers, joined...)
	}
	if r.cfg.LockingMode == "minimal" {
		if err := unlock(); err != nil {
			return Offset{}, fmt.Errorf("releasing the snapshot's global read lock: %w", err)
		}
	}
	streamFrom := pos
	if !withData {
		streamFrom.Snapshot = ""
	} else {
		if resumed != nil {
			streamFrom.File, streamFrom.Pos, streamFrom.GTIDs = resumed.File, resumed.Pos, resumed.GTIDs
		}
		kind := snapshotKind{name: initialSnapshot, at: sourceBlock{file: pos.File, pos: pos.Pos, thread: -1}}
		if streamFrom, err = r.readRows(ctx, readers, kind, streamFrom, progress, out); err != nil {
			return Offset{}, err
		}
	}
	if _, err := conn.Execute("COMMIT"); err != nil {
		return Offset{}, fmt.Errorf("ending the snapshot transaction: %w", err)
	}
	r.log.Info("snapshot done", "position", pos.String(), "streaming_from", streamFrom.String(), "tables", len(captured), "with_data", withData)
	return streamFrom, nil
}

// beginSnapshot opens a consistent-snapshot transaction on conn under the global read lock
// snapshot.locking.mode asks for, and reads the binlog position the transaction sees. unlock releases the
// lock (after the structure is read under it, for minimal; at the end, for extended); it is safe to call
// again, and on a failure.
func (r *Reader) beginSnapshot(conn *client.Conn) (pos Offset, unlock func() error, err error) {
	locked := false
	unlock = func() error {
		if !locked {
			return nil
		}
		locked = false
		_, err := conn.Execute("UNLOCK TABLES")
		return err
	}
	if r.cfg.LockingMode != "none" {
		if _, err := conn.Execute("FLUSH TABLES WITH READ LOCK"); err != nil {
			return Offset{}, unlock, fatal(fmt.Errorf("the snapshot's global read lock (FLUSH TABLES WITH READ LOCK) was refused: %w; grant RELOAD to %s, or set snapshot.locking.mode=none if no DDL runs during the snapshot", err, r.cfg.User))
		}
		locked = true
	}
	for _, q := range append(types.SnapshotSession(), "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ", "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY") {
		if _, err := conn.Execute(q); err != nil {
			return Offset{}, unlock, fmt.Errorf("starting the snapshot (%s): %w", q, err)
		}
	}
	pos, err = r.currentPosition(conn)
	if err != nil || locked {
		return pos, unlock, err
	}
	pos, err = r.positionOfSnapshot(conn, pos)
	return pos, unlock, err
}

// positionOfSnapshot corrects the binlog position read after an unlocked snapshot's transaction began
// (snapshot.locking.mode=none): a transaction that committed in between is not in the snapshot, and
// streaming from the later position would never deliver it. MariaDB tells the position the consistent
// snapshot sees (Binlog_snapshot_file and _position) and the GTID position there (BINLOG_GTID_POS), so
// streaming starts exactly where the snapshot's view ends. MySQL tells neither: there the position stays
// as read, as Debezium's is, and snapshot.locking.mode=minimal is what makes it exact.
func (r *Reader) positionOfSnapshot(conn *client.Conn, read Offset) (Offset, error) {
	at, err := r.snapshotPosition(conn)
	if err != nil || at == "" || at == fmt.Sprintf("%s:%d", read.File, read.Pos) {
		return read, err
	}
	file, position, _ := strings.Cut(at, ":")
	filePos, err := strconv.ParseUint(position, 10, 32)
	if err != nil || file == "" {
		return read, fmt.Errorf("the snapshot transaction's binlog position %q is unreadable: %w", at, err)
	}
	gtids, err := queryString(conn, fmt.Sprintf("SELECT BINLOG_GTID_POS(%s, %d)", sqlString(file), filePos))
	if err != nil {
		return read, fmt.Errorf("reading the GTID position at the snapshot's binlog position %s: %w", at, err)
	}
	r.log.Info("a transaction committed while the unlocked snapshot began; streaming starts at the snapshot's own position",
		"read", read.String(), "snapshot_at", at)
	read.File, read.Pos, read.GTIDs = file, int64(filePos), gtids
	return read, nil
}

// joinSnapshot opens n more connections, each in a consistent-snapshot transaction, for reading tables in
// parallel (snapshot.max.threads). Call it while main, which beginSnapshot opened, holds the global read
// lock: no transaction can commit meanwhile, so every one of them sees what main sees, the database at the
// snapshot's binlog position. MariaDB tells each transaction's position (binlog_snapshot_file and
// _position), and a connection whose differs from main's is refused rather than read. On failure the
// connections opened so far are closed.
func (r *Reader) joinSnapshot(ctx context.Context, main *client.Conn, n int) (joined []*client.Conn, err error) {
	if n <= 0 {
		return nil, nil
	}
	defer func() {
		if err != nil {
			closeAll(joined)
			joined = nil
		}
	}()
	want, err := r.snapshotPosition(main)
	if err != nil {
		return nil, err
	}
	for i := range n {
		conn, err := r.connect(ctx)
		if err != nil {
			return joined, err
		}
		joined = append(joined, conn)
		for _, q := range append(types.SnapshotSession(), "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ", "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY") {
			if _, err := conn.Execute(q); err != nil {
				return joined, fmt.Errorf("starting snapshot connection %d of snapshot.max.threads=%d (%s): %w", i+2, r.cfg.SnapshotThreads, q, err)
			}
		}
		got, err := r.snapshotPosition(conn)
		if err != nil {
			return joined, err
		}
		if got != want {
			return joined, fmt.Errorf("snapshot connection %d of snapshot.max.threads=%d sees the binlog at %s, the snapshot at %s: the global read lock did not hold commits back; set snapshot.max.threads=1", i+2, r.cfg.SnapshotThreads, got, want)
		}
	}
	return joined, nil
}

// snapshotPosition is the binlog position conn's consistent-snapshot transaction sees, as MariaDB reports
// it (file:position); "" on MySQL, which does not.
func (r *Reader) snapshotPosition(conn *client.Conn) (string, error) {
	if r.cfg.Flavor != types.MariaDB {
		return "", nil
	}
	res, err := conn.Execute("SHOW SESSION STATUS WHERE Variable_name IN ('Binlog_snapshot_file', 'Binlog_snapshot_position')")
	if err != nil {
		return "", fmt.Errorf("reading the snapshot transaction's binlog position: %w", err)
	}
	defer res.Close()
	var file, position string
	for i := range res.Values {
		name, _ := res.GetString(i, 0)
		value, _ := res.GetString(i, 1)
		if strings.EqualFold(name, "Binlog_snapshot_file") {
			file = strings.Clone(value)
		} else {
			position = strings.Clone(value)
		}
	}
	return file + ":" + position, nil
}

// closeAll closes conns.
func closeAll(conns []*client.Conn) {
	for _, c := range conns {
		c.Close()
	}
}

// planProgress lists the tables the snapshot reads (those of snapshot.include.collection.list, if set), each
// read at pos; of a resumed snapshot, the tables it
// finished keep their earlier position and are not read again.
func (r *Reader) planProgress(captured []tables.ID, pos Offset, resumed *Offset) *snapshot.Progress {
	var prev *snapshot.Progress
	if resumed != nil && resumed.SnapshotProgress != "" {
		p, err := snapshot.DecodeProgress(resumed.SnapshotProgress)
		if err != nil {
			r.log.Warn("the interrupted snapshot's progress is unreadable; reading every table again", "error", err)
		}
		prev = p
	}
	progress := &snapshot.Progress{}
	done := 0
	for _, id := range captured {
		name := id.Database + "." + id.Table
		if len(r.cfg.SnapshotTables) > 0 && !props.AnyMatch(r.cfg.SnapshotTables, name) {
			continue // snapshot.include.collection.list: streamed from pos, no rows read
		}
		if prev != nil {
			if t := prev.Table(name); t != nil && t.Done {
				progress.Tables = append(progress.Tables, *t)
				done++
				continue
			}
		}
		progress.Tables = append(progress.Tables, snapshot.TableProgress{ID: name, Epochs: []snapshot.Epoch{{Position: binlogSequence(pos.File, pos.Pos)}}})
	}
	if resumed != nil {
		r.log.Info("resuming an interrupted snapshot", "tables_done", done, "tables", len(captured), "streaming_from", resumed.String())
	}
	return progress
}

// currentPosition reads the binlog position and the executed GTID set.
func (r *Reader) currentPosition(conn *client.Conn) (Offset, error) {
	stmt := BinlogStatusStatement(conn.GetServerVersion())
	res, err := conn.Execute(stmt)
	if err != nil {
		return Offset{}, fmt.Errorf("reading the binlog position (%s; needs REPLICATION CLIENT): %w", stmt, err)
	}
	defer res.Close() // recycles the buffer GetString's strings share: clone what outlives it
	if len(res.Values) == 0 {
		return Offset{}, fatal(fmt.Errorf("%s returned nothing: the server's binlog is off; start it with log_bin", stmt))
	}
	file, _ := res.GetString(0, 0)
	filePos, err := res.GetInt(0, 1)
	if err != nil {
		return Offset{}, fmt.Errorf("reading the binlog position: %w", err)
	}
	o := Offset{File: strings.Clone(file), Pos: filePos, TsSec: r.now().Unix()}
	if r.cfg.Flavor == types.MariaDB {
		o.GTIDs, err = queryString(conn, "SELECT @@GLOBAL.gtid_binlog_pos")
		if err != nil {
			return Offset{}, err
		}
	} else if gtids, err := res.GetString(0, 4); err == nil {
		o.GTIDs = strings.ReplaceAll(strings.Clone(gtids), "\n", "")
	}
	return o, nil
}

// serverStructure is what a snapshot records of the server: its character set, and each captured database
// with its character set and its tables' CREATE TABLE statements (tables sorted by name).
type serverStructure struct {
	charset, collation string
	databases          []databaseStructure
}

type databaseStructure struct {
	name, charset, collation string
	tables, creates          []string
}

// readServerStructure reads the server's structure, as the snapshot's first phase does under its lock.
func (r *Reader) readServerStructure(conn *client.Conn) (serverStructure, error) {
	var s serverStructure
	var err error
	if s.charset, err = queryString(conn, "SELECT @@GLOBAL.character_set_server"); err != nil {
		return s, err
	}
	if s.collation, err = queryString(conn, "SELECT @@GLOBAL.collation_server"); err != nil {
		return s, err
	}
	dbs, err := queryColumn(conn, "SHOW DATABASES")
	if err != nil {
		return s, err
	}
	for _, name := range dbs {
		if !r.cfg.recordsDatabase(name) {
			continue
		}
		d := databaseStructure{name: name}
		if d.tables, err = queryColumn(conn, fmt.Sprintf("SHOW FULL TABLES IN %s WHERE Table_type = 'BASE TABLE'", quoteIdent(name))); err != nil {
			return s, err
		}
		if r.cfg.StoreOnlyCapturedTables {
			d.tables = slices.DeleteFunc(d.tables, func(t string) bool { return !r.cfg.Filter.IncludeTable(name, t) })
		}
		slices.Sort(d.tables)
		res, err := conn.Execute("SELECT DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", name)
		if err != nil {
			return s, fmt.Errorf("reading database %s's character set: %w", name, err)
		}
		if len(res.Values) > 0 {
			charset, _ := res.GetString(0, 0)
			collation, _ := res.GetString(0, 1)
			d.charset, d.collation = strings.Clone(charset), strings.Clone(collation)
		}
		res.Close()
		for _, t := range d.tables {
			res, err := conn.Execute(fmt.Sprintf("SHOW CREATE TABLE %s.%s", quoteIdent(name), quoteIdent(t)))
			if err != nil {
				return s, fmt.Errorf("reading the structure of %s.%s (SHOW CREATE TABLE; grant SELECT on it to %s): %w", name, t, r.cfg.User, err)
			}
			create, err := res.GetString(0, 1)
			if err != nil {
				return s, fmt.Errorf("reading the structure of %s.%s: %w", name, t, err)
			}
			d.creates = append(d.creates, strings.Clone(create))
			res.Close()
		}
		s.databases = append(s.databases, d)
	}
	return s, nil
}

// ddlStatement is one statement a snapshot records, with its database ("" for a server-level one).
type ddlStatement struct{ database, stmt string }

// statements lists what Debezium's snapshot records in the schema history, in its order: SET
// character_set_server, DROP TABLE IF EXISTS of every table, then per database DROP DATABASE IF EXISTS,
// CREATE DATABASE, USE and each table's CREATE TABLE.
func (s serverStructure) statements() []ddlStatement {
	out := []ddlStatement{{"", fmt.Sprintf("SET character_set_server=%s, collation_server=%s", s.charset, s.collation)}}
	for _, d := range s.databases {
		for _, t := range d.tables {
			out = append(out, ddlStatement{d.name, fmt.Sprintf("DROP TABLE IF EXISTS %s.%s", quoteIdent(d.name), quoteIdent(t))})
		}
	}
	for _, d := range s.databases {
		create := "CREATE DATABASE " + quoteIdent(d.name)
		if d.charset != "" {
			create += " CHARSET " + d.charset + " COLLATE " + d.collation
		}
		out = append(out, ddlStatement{d.name, "DROP DATABASE IF EXISTS " + quoteIdent(d.name)}, ddlStatement{d.name, create},
			ddlStatement{d.name, "USE " + quoteIdent(d.name)})
		for _, c := range d.creates {
			out = append(out, ddlStatement{d.name, c})
		}
	}
	return out
}

// captured lists the captured tables in snapshot reading order.
func (r *Reader) captured(s serverStructure) []tables.ID {
	var ids []tables.ID
	for _, d := range s.databases {
		for _, t := range d.tables {
			if r.cfg.Filter.IncludeTable(d.name, t) {
				ids = append(ids, tables.ID{Database: d.name, Table: t})
			}
		}
	}
	return ids
}

// readStructure records the captured databases' structure in the schema history at pos, as Debezium's
// snapshot does, starting a fresh catalog, and, when out is not nil and include.schema.changes is on, emits
// the schema change events in a batch that records done (nil: no offset; batches recording the snapshot's
// progress follow). It returns the captured tables in reading order.
func (r *Reader) readStructure(ctx context.Context, conn *client.Conn, pos Offset, out chan<- source.Batch, done *Offset) ([]tables.ID, error) {
	s, err := r.readServerStructure(conn)
	if err != nil {
		return nil, err
	}
	r.catalog = ddl.NewCatalog(r.cfg.Flavor)
	r.schemas = map[tables.ID]*tableSchema{}
	var events []source.Event
	for _, st := range s.statements() {
		evs, err := r.applyDDL(ctx, st.database, st.stmt, pos, sourceBlock{ts: r.now(), snapshot: schema.SnapshotTrue, file: pos.File, pos: pos.Pos, thread: -1})
		if err != nil {
			return nil, err
		}
		events = append(events, evs...)
	}
	if out != nil && len(events) > 0 {
		b := source.Batch{Events: events}
		if done != nil {
			b.Offset, b.Position = done.Fields(), binlogPosition{*done}
		}
		select {
		case out <- b:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return r.captured(s), nil
}

// CurrentSchemas builds the key and envelope schemas every captured table's next events would carry, from
// the tables as they are now (what the schema registry pre-flight check compares).
func CurrentSchemas(ctx context.Context, cfg *Config, log *slog.Logger) ([]source.TableSchemas, error) {
	captured := *cfg
	captured.StoreOnlyCapturedDatabases = true // other databases' structure does not matter here
	r := NewReader(&captured, nil, log)
	conn, err := r.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	s, err := r.readServerStructure(conn)
	if err != nil {
		return nil, err
	}
	r.catalog = ddl.NewCatalog(cfg.Flavor)
	for _, st := range s.statements() {
		if _, err := r.catalog.Apply(st.database, st.stmt); err != nil {
			return nil, fmt.Errorf("the structure of database %s: %w", st.database, err)
		}
	}
	var out []source.TableSchemas
	for _, id := range r.captured(s) {
		ts, err := r.tableSchema(id)
		if err != nil {
			return nil, err
		}
		if ts != nil {
			out = append(out, source.TableSchemas{Schema: id.Database, Table: id.Table, Topic: ts.topic, Key: ts.key, Value: ts.envelope})
		}
	}
	return out, nil
}

// snapshotKind is what a snapshot's rows are: the initial snapshot's or a blocking one's.
type snapshotKind struct {
	name string // the offset's snapshot value while it runs: initialSnapshot or blockingSnapshot
	// at is the rows' source position: the snapshot's own for the initial snapshot; for a blocking one, the
	// stream's where it paused, as Debezium's rows carry its streaming source info.
	at sourceBlock
	// conditions are a blocking snapshot's additional-conditions by db.table; the initial snapshot runs
	// snapshot.select.statement.overrides instead, as Debezium's do.
	conditions map[string]string
}

// The offset's snapshot values, as Debezium's SnapshotType names them.
const (
	initialSnapshot  = "INITIAL"
	blockingSnapshot = "BLOCKING"
)

// readRows reads the rows of every table progress has not done as op "r" events with Debezium's snapshot
// markers, on conns (each inside a transaction of the same consistent snapshot): one table per connection
// at a time, len(conns) tables at once. Rows of different tables interleave in the batches, each table's
// in order. Each batch records the in-progress snapshot offset (streamFrom with the progress its rows
// complete: a crash resumes with the tables not yet delivered); the last one records the offset streaming
// starts from, which it returns.
func (r *Reader) readRows(ctx context.Context, conns []*client.Conn, kind snapshotKind, streamFrom Offset, progress *snapshot.Progress, out chan<- source.Batch) (Offset, error) {
	report := metrics.NewSnapshot(r.cfg.Name)
	report.Start(len(progress.Tables), 0)
	defer report.Stop()
	done := streamFrom
	done.Snapshot = ""
	send := func(ctx context.Context, b snapshot.Handed) error {
		o := streamFrom
		o.Snapshot, o.SnapshotProgress = kind.name, b.Progress.Encode()
		if b.Final {
			// Tables read later than streamFrom: streaming must drop what they hold.
			if b.Progress.MaxPosition() > binlogSequence(streamFrom.File, streamFrom.Pos) {
				done.SnapshotProgress = b.Progress.Encode()
			}
			o = done
		}
		report.Progress(b.Progress.DoneCount(), b.Rows, -1)
		select {
		case out <- source.Batch{Events: b.Events, Offset: o.Fields(), Position: binlogPosition{o}}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	run := &rowsRun{r: r, kind: kind, report: report, hand: snapshot.NewHandover(progress, snapshotBatchRows, send)}
	// Debezium's notifications list the tables of a table's start in its HashSet's order, without the
	// signal table, whose rows it does not read; those of a table's end sorted, with it.
	var listed, read []string
	for _, tp := range progress.Tables {
		listed = append(listed, tp.ID)
		if db, table, _ := strings.Cut(tp.ID, "."); !r.cfg.signalTable(tables.ID{Database: db, Table: table}) {
			read = append(read, tp.ID)
		}
	}
	slices.Sort(listed)
	run.listed, run.reading = strings.Join(listed, ","), strings.Join(javacompat.HashMapOrder(read), ",")
	if err := run.notice(ctx, notify.Started, nil); err != nil {
		return Offset{}, err
	}
	// The table structures are looked up here, before the readers start: the reader's cache is not theirs
	// to fill concurrently.
	var jobs []tableJob
	for _, tp := range progress.Tables {
		if tp.Done {
			continue
		}
		db, table, _ := strings.Cut(tp.ID, ".")
		id := tables.ID{Database: db, Table: table}
		if r.cfg.signalTable(id) {
			name := tp.ID
			if err := run.hand.Add(ctx, snapshot.Item{Advance: func(p *snapshot.Progress) { p.Table(name).Done = true }}); err != nil {
				return Offset{}, err
			}
			continue
		}
		ts, err := r.tableSchema(id)
		if err != nil {
			return Offset{}, err
		}
		if ts == nil {
			return Offset{}, fmt.Errorf("snapshot of %s.%s: its structure is not in the catalog", id.Database, id.Table)
		}
		jobs = append(jobs, tableJob{name: tp.ID, id: id, ts: ts})
	}
	// Debezium marks the first row of the first table "first" only when it reads one table at a time.
	if len(conns) == 1 && len(jobs) > 0 {
		jobs[0].firstTable = true
	}
	if len(conns) > 1 {
		r.log.Info("snapshot reads tables in parallel", "threads", len(conns), "tables", len(jobs))
	}
	if err := snapshot.ReadTables(ctx, conns, jobs, func(j tableJob) string { return j.name }, run.table); err != nil {
		return Offset{}, err
	}
	if err := run.notice(ctx, notify.Completed, nil); err != nil {
		return Offset{}, err
	}
	if err := run.hand.Finish(ctx); err != nil {
		return Offset{}, err
	}
	return done, nil
}

// tableJob is one table a snapshot reads.
type tableJob struct {
	name       string // db.table, as the progress has it
	id         tables.ID
	ts         *tableSchema
	firstTable bool // the snapshot's first table, read one table at a time
}

// rowsRun is one snapshot's reading of rows: its table readers share the handover.
type rowsRun struct {
	r               *Reader
	kind            snapshotKind
	hand            *snapshot.Handover
	report          *metrics.Snapshot
	listed, reading string // the tables, as the notifications list them
}

// notice queues an initial snapshot notification behind what is queued so far.
func (s *rowsRun) notice(ctx context.Context, status string, data map[string]string) error {
	ev, ok := s.r.cfg.Notify.Send(notify.Notification{AggregateType: notify.InitialSnapshot, Type: status, Data: data}, s.r.cfg.TopicPrefix, s.r.now(), s.r.log)
	if !ok {
		return nil
	}
	return s.hand.Add(ctx, snapshot.Item{Event: ev, Notice: true})
}

// table reads one table on conn in one streaming SELECT, queuing its rows, then the step that marks it
// done, on the handover. It holds its newest row back until the next one (or the table's end) says whether
// it is the table's last, which decides its marker. It may run beside other tables' readers; the errors it
// returns are wrapped with the table's name by snapshot.ReadTables.
func (s *rowsRun) table(ctx context.Context, conn *client.Conn, job tableJob) error {
	r, ts, id := s.r, job.ts, job.id
	// A read the server stalls would not see ctx end: its deadline is moved to now instead.
	defer context.AfterFunc(ctx, func() { conn.SetReadDeadline(time.Now()) })() //nolint:errcheck // a failed read ends the query as well
	if err := s.notice(ctx, notify.InProgress, map[string]string{"current_collection_in_progress": job.name, "data_collections": s.reading}); err != nil {
		return err
	}
	readTime := r.now().Truncate(time.Second)
	query := fmt.Sprintf("SELECT %s FROM %s.%s", selectList(ts.table), quoteIdent(id.Database), quoteIdent(id.Table))
	if cond, ok := s.kind.conditions[job.name]; ok {
		// A blocking snapshot's additional condition came with a signal: it runs as sqlfilter prints it,
		// bounded as an incremental snapshot's queries are.
		where, err := sqlfilter.Render(cond, sqlfilter.MySQL, ts.table.ColumnNames())
		if err != nil {
			return fmt.Errorf("additional-conditions of %s: %w", job.name, err)
		}
		query = r.cfg.boundedSelect(query + " WHERE " + where)
	}
	// The user's SELECT (snapshot.select.statement.overrides) runs as written; its columns are put in
	// the table's order once the result's fields are known.
	var arrange func([]gomysql.FieldValue) []gomysql.FieldValue
	var fieldsKnown func(*gomysql.Result) error
	if sql, ok := r.cfg.SnapshotSelects[job.name]; ok && s.kind.name == initialSnapshot {
		query = sql
		fieldsKnown = func(res *gomysql.Result) (err error) {
			arrange, err = overrideColumns(res.Fields, ts.table, job.name)
			return err
		}
	}
	var held *snapshot.Item // the newest row, its marker not yet final
	heldFirst := false      // held is the table's first row
	rows := int64(0)
	var result gomysql.Result
	err := conn.ExecuteSelectStreaming(query, &result,
		func(values []gomysql.FieldValue) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if arrange != nil {
				values = arrange(values)
			}
			raw := make([]any, len(values))
			for i := range values {
				raw[i] = values[i]
			}
			row, err := ts.rowStruct(raw, func(col *tables.Column, v any) (any, error) {
				return r.cfg.Modes.FromSnapshot(col, v.(gomysql.FieldValue))
			})
			if err != nil {
				position := fmt.Sprintf("binlog %s:%d, row %d of the table's snapshot", s.kind.at.file, s.kind.at.pos, rows+1)
				return snapshot.UnconvertibleRow(r.cfg.EventFailureMode, r.log, job.name, ts.table.PrimaryKey, position, err)
			}
			if held != nil {
				if err := s.hand.Add(ctx, *held); err != nil {
					return err
				}
			}
			rows++
			heldFirst = rows == 1
			block := s.kind.at
			block.ts, block.db, block.table = readTime, id.Database, id.Table
			block.snapshot = string(snapshot.RowMarker(job.firstTable, false, heldFirst, false))
			src := r.cfg.sourceStruct(r.sourceSchema, block)
			held = &snapshot.Item{Event: ts.event(ts.keyOf(row), ts.envelopeValue(schema.OpRead, nil, row, src, r.now())), Source: src}
			return nil
		}, fieldsKnown)
	if err != nil {
		return err
	}
	if held != nil {
		held.Source.Set(schema.SourceSnapshot, string(snapshot.RowMarker(job.firstTable, false, heldFirst, true)))
		if err := s.hand.Add(ctx, *held); err != nil {
			return err
		}
	}
	// The table counts as done in the batch that hands over its last row.
	name := job.name
	if err := s.hand.Add(ctx, snapshot.Item{Advance: func(p *snapshot.Progress) {
		tp := p.Table(name)
		tp.Done, tp.Rows = true, rows
	}}); err != nil {
		return err
	}
	s.report.TableRows(job.name, rows)
	return s.notice(ctx, notify.TableScanCompleted, map[string]string{"scanned_collection": job.name, "data_collections": s.listed,
		"total_rows_scanned": strconv.FormatInt(rows, 10), "status": "SUCCEEDED"})
}

// overrideColumns is props.OverrideColumns for this driver's result: a returned column the table does not
// have fails the snapshot (fatal: a restart runs the same statement).
func overrideColumns(fields []*gomysql.Field, table *tables.Table, listedAs string) (func([]gomysql.FieldValue) []gomysql.FieldValue, error) {
	returned := make([]string, len(fields))
	for i, f := range fields {
		returned[i] = string(f.Name)
	}
	// The zero FieldValue is NULL.
	arrange, err := props.OverrideColumns[gomysql.FieldValue](returned, table.ColumnNames(), listedAs, listedAs)
	if err != nil {
		return nil, source.Fatal(err)
	}
	return arrange, nil
}

// selectList names every column of t, in t's order, for a SELECT that reads whole rows: "*" leaves out
// MySQL's and MariaDB's INVISIBLE columns, which the binlog and the table's schema hold (Debezium names the
// columns too).
func selectList(t *tables.Table) string {
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = quoteIdent(c.Name)
	}
	return strings.Join(names, ", ")
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

package mysql

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/snapshot/incremental"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/mysql/tables"
	"github.com/cdcd/cdcd/source/notify"
	"github.com/cdcd/cdcd/source/signal"
)

// Signals and incremental snapshots (snapshot/incremental) on MySQL and MariaDB: the signal table's rows
// come from the binlog, the chunks and watermarks go through a query connection of the stream's own, and
// a chunk's rows are converted as the initial snapshot converts them, with the table's structure at the
// stream's position.

var _ source.Signaler = (*Reader)(nil)

// Signal queues a signal from outside the database (the REST API, the signal file) for the stream to act
// on between two binlog events. It never blocks: with the queue full it fails. Safe for concurrent use.
func (r *Reader) Signal(id, kind, data string) error { return r.signals.Signal(id, kind, data) }

// newIncremental is the stream's incremental snapshot runner, resumed from the stored offset.
func (st *stream) newIncremental(start Offset) error {
	st.inc = &incremental.Runner{Config: st.r.cfg.Signals, DB: incDB{st}, Log: st.r.log, Notify: st.notify, Now: st.r.now,
		LogicalName: st.r.cfg.TopicPrefix, Reposition: st.reposition, Blocking: st.requestBlocking,
		Seen: &st.r.seenSignals}
	if err := st.inc.Resume(start.Incremental); err != nil {
		return fatal(err) // an offset the stored state cannot be read from: a restart reads the same
	}
	return nil
}

// signalTable reports whether id is the signal table (signal.data.collection).
func (c *Config) signalTable(id tables.ID) bool {
	return c.Signals.Table != "" && id.Database+"."+id.Table == c.Signals.Table
}

// sourceSignal acts on a change of the signal table: its row is (id, type, data). It runs before the
// change's own event is emitted, as Debezium processes a signal before dispatching its record, so the rows
// of a window the change closes precede the watermark's event.
func (st *stream) sourceSignal(op byte, row *schema.Struct, at sourceBlock) error {
	if row == nil || len(row.Values) < 3 {
		return nil
	}
	text := func(i int) string { s, _ := row.Values[i].(string); return s }
	sig, ok := st.r.cfg.Signals.FromTable(op, text(0), text(1), text(2))
	if !ok {
		return nil
	}
	return st.signal(sig, &at)
}

// signal acts on a signal of any channel and emits the rows of a window it closed. at is the source block
// of the signal table's change (nil for the other channels): Debezium's rows carry the position of the
// close watermark's event, with the snapshot's marker and their own table and time.
func (st *stream) signal(sig signal.Signal, at *sourceBlock) error {
	rows, err := st.inc.Signal(st.ctx, sig)
	if err != nil {
		return st.errorf(st.lastEnd, "signal %s (%s): %w", sig.ID, sig.Type, err)
	}
	for _, row := range rows {
		// Only a close watermark returns rows, and it is a change of the signal table: at is its block.
		cr, blk := row.Value.(chunkRow), *at
		now := st.r.now()
		blk.ts, blk.snapshot, blk.db, blk.table = now, schema.SnapshotIncremental, cr.ts.id.Database, cr.ts.id.Table
		src := st.r.cfg.sourceStruct(st.r.sourceSchema, blk)
		// op "r": txEvent gives it no transaction block, as Debezium's snapshot rows have none.
		st.emit(cr.ts.event(cr.key, cr.ts.envelopeValue(schema.OpRead, nil, cr.row, src, now)))
	}
	return nil
}

// dedupe drops the open window's row of a streamed change's key.
func (st *stream) dedupe(ts *tableSchema, key *schema.Struct) {
	if key != nil && st.inc.Deduping(ts.id.Database, ts.id.Table) {
		st.inc.Dedupe(ts.id.Database+"."+ts.id.Table, incremental.KeyText(key))
	}
}

// notify puts a notification on the enabled channels. Its record travels with the open transaction's
// events, or alone between transactions; it carries no offset of its own.
func (st *stream) notify(n notify.Notification) {
	ev, ok := st.r.cfg.Notify.Send(n, st.r.cfg.TopicPrefix, st.r.now(), st.r.log)
	if !ok {
		return
	}
	if st.inTx {
		st.emit(ev) // no envelope: txEvent leaves it alone
		return
	}
	st.send(source.Batch{Events: []source.Event{ev}})
}

// chunkRow is a chunk row as the stream emits it.
type chunkRow struct {
	ts       *tableSchema
	key, row *schema.Struct
}

// incDB is incremental.Database on a query connection of the stream's, opened when a snapshot first
// needs it (most streams never do) and opened again after it failed.
type incDB struct{ st *stream }

// sqlIdle is how long the query connection may have been idle before it is checked: the server closes
// connections idle for wait_timeout (8 hours by default), and a snapshot may come days after the last.
const sqlIdle = time.Minute

// conn is the stream's query connection.
func (db incDB) conn(ctx context.Context) (*client.Conn, error) {
	st := db.st
	now := st.r.now()
	if st.sql != nil && now.Sub(st.sqlUsed) > sqlIdle && st.sql.Ping() != nil {
		st.sql.Close()
		st.sql = nil
	}
	if st.sql == nil {
		conn, err := st.r.connect(ctx)
		if err != nil {
			return nil, err
		}
		st.sql = conn
	}
	st.sqlUsed = now
	return st.sql, nil
}

// exec runs one statement on the query connection.
func (db incDB) exec(ctx context.Context, query string) (*gomysql.Result, error) {
	conn, err := db.conn(ctx)
	if err != nil {
		return nil, err
	}
	return conn.Execute(query)
}

func (db incDB) Tables(context.Context) ([]string, error) {
	var ids []string
	for _, id := range db.st.r.catalog.TableIDs() {
		if db.st.r.cfg.Filter.IncludeTable(id.Database, id.Table) {
			ids = append(ids, id.Database+"."+id.Table)
		}
	}
	return ids, nil
}

func (db incDB) signalTable() string {
	name, table, _ := strings.Cut(db.st.r.cfg.Signals.Table, ".")
	return quoteIdent(name) + "." + quoteIdent(table)
}

func (db incDB) WriteWatermark(ctx context.Context, id, kind, data string) error {
	if db.st.r.cfg.Signals.ReadOnly {
		return db.st.gtidWatermark(ctx, id, kind)
	}
	res, err := db.exec(ctx, fmt.Sprintf("INSERT INTO %s VALUES (%s, %s, %s)", db.signalTable(), quoteString(id), quoteString(kind), quoteString(data)))
	if err != nil {
		return fmt.Errorf("writing the incremental snapshot's %s watermark into %s (the connector's user needs INSERT on it): %w", kind, db.st.r.cfg.Signals.Table, err)
	}
	res.Close()
	return nil
}

func (db incDB) DeleteWatermark(ctx context.Context, id string) error {
	if db.st.r.cfg.Signals.ReadOnly {
		return db.st.gtidWatermark(ctx, id, signal.CloseWindow) // insert_delete closes by deleting the open one
	}
	res, err := db.exec(ctx, fmt.Sprintf("DELETE FROM %s WHERE id = %s", db.signalTable(), quoteString(id)))
	if err != nil {
		return fmt.Errorf("deleting the incremental snapshot's watermark from %s (the connector's user needs DELETE on it): %w", db.st.r.cfg.Signals.Table, err)
	}
	res.Close()
	return nil
}

// chunkTable is a table as a chunk query reads it.
type chunkTable struct {
	ts       *tableSchema
	from     string           // the quoted table name
	keyIdx   []int            // the chunking columns' positions in the table
	keyCols  []*tables.Column // the chunking columns
	keyKinds []javaKind       // their Java classes
	keyList  string           // the quoted chunking columns, comma-separated
}

func (db incDB) chunkTable(c incremental.Collection) (*chunkTable, error) {
	database, name, _ := strings.Cut(c.ID, ".")
	ts, err := db.st.r.tableSchema(tables.ID{Database: database, Table: name})
	if err != nil {
		return nil, err
	}
	if ts == nil {
		return nil, fmt.Errorf("table %s is not in the schema history", c.ID)
	}
	keys := ts.table.PrimaryKey
	if c.SurrogateKey != nil {
		keys = []string{*c.SurrogateKey}
	}
	if len(keys) == 0 {
		return nil, incremental.ErrNoChunkKey
	}
	ct := &chunkTable{ts: ts, from: quoteIdent(database) + "." + quoteIdent(name)}
	quoted := make([]string, len(keys))
	for i, k := range keys {
		ci := slices.IndexFunc(ts.table.Columns, func(col tables.Column) bool { return strings.EqualFold(col.Name, k) })
		if ci < 0 {
			return nil, fmt.Errorf("surrogate-key %q is not a column of the table", k)
		}
		col := &ts.table.Columns[ci]
		kind, err := keyKind(col)
		if err != nil {
			return nil, err
		}
		ct.keyIdx = append(ct.keyIdx, ci)
		ct.keyCols = append(ct.keyCols, col)
		ct.keyKinds = append(ct.keyKinds, kind)
		quoted[i] = quoteIdent(col.Name)
	}
	ct.keyList = strings.Join(quoted, ", ")
	return ct, nil
}

func (db incDB) MaxKey(ctx context.Context, c incremental.Collection) ([]any, error) {
	ct, err := db.chunkTable(c)
	if err != nil {
		return nil, err
	}
	desc := make([]string, len(ct.keyCols))
	for i, col := range ct.keyCols {
		desc[i] = quoteIdent(col.Name) + " DESC"
	}
	where := ""
	if c.Condition != nil {
		where = " WHERE " + *c.Condition
	}
	var maxKey []any
	err = db.query(ctx, "SELECT "+ct.keyList+" FROM "+ct.from+where+" ORDER BY "+strings.Join(desc, ", ")+" LIMIT 1", func(values []gomysql.FieldValue) error {
		maxKey, err = javaKey(ct.keyKinds, values)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading the largest key of %s: %w", c.ID, err)
	}
	return maxKey, nil
}

func (db incDB) ReadChunk(ctx context.Context, c incremental.Collection, after, max []any, limit int) ([]incremental.Row, error) {
	ct, err := db.chunkTable(c)
	if err != nil {
		return nil, err
	}
	maxLit, err := keyLiterals(max)
	if err != nil {
		return nil, err
	}
	where := " WHERE (" + ct.keyList + ") <= (" + maxLit + ")"
	if after != nil {
		afterLit, err := keyLiterals(after)
		if err != nil {
			return nil, err
		}
		where += " AND (" + ct.keyList + ") > (" + afterLit + ")"
	}
	if c.Condition != nil {
		where += " AND " + *c.Condition
	}
	modes := db.st.r.cfg.Modes
	var rows []incremental.Row
	err = db.query(ctx, "SELECT "+selectList(ct.ts.table)+" FROM "+ct.from+where+" ORDER BY "+ct.keyList+" LIMIT "+strconv.Itoa(limit), func(values []gomysql.FieldValue) error {
		raw := make([]any, len(values))
		for i := range values {
			raw[i] = values[i]
		}
		row, err := ct.ts.rowStruct(raw, func(col *tables.Column, v any) (any, error) { return modes.FromSnapshot(col, v.(gomysql.FieldValue)) })
		if err != nil {
			return err
		}
		keyValues := make([]gomysql.FieldValue, len(ct.keyIdx))
		for i, ki := range ct.keyIdx {
			if ki >= len(values) {
				return fmt.Errorf("a row of %s has %d columns, the schema history %d", c.ID, len(values), len(ct.ts.table.Columns))
			}
			keyValues[i] = values[ki]
		}
		jk, err := javaKey(ct.keyKinds, keyValues)
		if err != nil {
			return err
		}
		key := ct.ts.keyOf(row)
		rows = append(rows, incremental.Row{KeyText: incremental.KeyText(key), JavaKey: jk, Value: chunkRow{ts: ct.ts, key: key, row: row}})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading a chunk of %s: %w", c.ID, err)
	}
	return rows, nil
}

// query streams a SELECT's rows (the text protocol, as the initial snapshot reads them) to each; the
// values are valid only during the call.
func (db incDB) query(ctx context.Context, q string, each func([]gomysql.FieldValue) error) error {
	conn, err := db.conn(ctx)
	if err != nil {
		return err
	}
	var result gomysql.Result
	return conn.ExecuteSelectStreaming(q, &result, each, nil)
}

// javaKind is the Java class the JDBC driver's getObject returns for a key column, as Debezium's offsets
// hold the chunk bounds: Integer for INT, Long for INT UNSIGNED and BIGINT, String for CHAR and VARCHAR.
// Other types are refused: the small integers (whose class differs between Connector/J and MariaDB's
// driver), BIGINT UNSIGNED (a BigInteger), decimals, dates and binary strings.
type javaKind byte

const (
	javaInteger javaKind = iota + 1
	javaLong
	javaString
)

func keyKind(col *tables.Column) (javaKind, error) {
	base, _, _ := strings.Cut(col.TypeName, " ")
	unsigned := strings.Contains(col.TypeName, "UNSIGNED")
	switch {
	case (base == "INT" || base == "INTEGER") && !unsigned:
		return javaInteger, nil
	case base == "INT" || base == "INTEGER", base == "BIGINT" && !unsigned:
		return javaLong, nil
	case (base == "CHAR" || base == "VARCHAR") && col.Charset != "binary":
		return javaString, nil
	}
	return 0, fmt.Errorf("cdcd chunks incremental snapshots by INT, INT UNSIGNED, BIGINT, CHAR and VARCHAR key columns; %s is %s (name another column with surrogate-key)", col.Name, col.TypeName)
}

// javaKey converts a chunking key's values (the text protocol's) into their Java objects.
func javaKey(kinds []javaKind, values []gomysql.FieldValue) ([]any, error) {
	out := make([]any, len(values))
	for i, v := range values {
		switch {
		case v.Type == gomysql.FieldValueTypeNull:
			return nil, errors.New("a key column is null")
		case kinds[i] == javaString:
			out[i] = strings.Clone(string(v.AsString()))
		case v.Type == gomysql.FieldValueTypeSigned && kinds[i] == javaInteger:
			out[i] = int32(v.AsInt64())
		case v.Type == gomysql.FieldValueTypeSigned:
			out[i] = v.AsInt64()
		case v.Type == gomysql.FieldValueTypeUnsigned:
			out[i] = int64(v.AsUint64()) // INT UNSIGNED: within a Long
		default:
			return nil, fmt.Errorf("a key value of type %d", v.Type)
		}
	}
	return out, nil
}

// keyLiterals writes a chunk bound as SQL literals.
func keyLiterals(vals []any) (string, error) {
	parts := make([]string, len(vals))
	for i, v := range vals {
		switch v := v.(type) {
		case int32:
			parts[i] = strconv.FormatInt(int64(v), 10)
		case int64:
			parts[i] = strconv.FormatInt(v, 10)
		case string:
			parts[i] = quoteString(v)
		default:
			return "", fmt.Errorf("a chunk bound of type %T", v)
		}
	}
	return strings.Join(parts, ", "), nil
}

// quoteString is a string literal for the utf8mb4 query connections.
func quoteString(s string) string { return "'" + gomysql.Escape(s) + "'" }

// queuedSignals acts on the signals waiting in the reader's queue.
func (st *stream) queuedSignals() error {
	for {
		select {
		case sig := <-st.r.signals.C():
			if err := st.signal(sig, nil); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// closeSQL closes the incremental snapshot's query connection, if one was opened.
func (st *stream) closeSQL() {
	if st.sql != nil {
		st.sql.Close()
		st.sql = nil // the next incDB.conn opens a new one
	}
}

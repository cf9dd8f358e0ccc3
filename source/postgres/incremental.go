package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/snapshot/incremental"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/metrics"
	"github.com/cdcd/cdcd/source/notify"
	"github.com/cdcd/cdcd/source/postgres/catalog"
	"github.com/cdcd/cdcd/source/signal"
	"github.com/cdcd/cdcd/source/signal/sqlfilter"
)

// Signals and incremental snapshots (snapshot/incremental) on PostgreSQL: the signal table's changes come
// from the stream, the chunks and watermarks go through the reader's SQL connection, and a chunk's rows
// are converted as the initial snapshot converts them (JDBC's rules, catalogColumns' layout).

// newIncremental is the reader's incremental snapshot runner.
func (st *streamState) newIncremental() *incremental.Runner {
	return &incremental.Runner{Config: st.cfg.Signals, DB: incDB{st}, Log: st.log, Notify: st.notify, Now: st.now,
		LogicalName: st.cfg.TopicPrefix, Metrics: metrics.NewSnapshot(st.cfg.Name), Blocking: st.requestBlocking}
}

// chunkRow is a chunk row as the reader emits it: its key and row, converted with its table as read then.
type chunkRow struct {
	t        *table
	key, row *schema.Struct
}

// signalTable reports whether t is the signal table (signal.data.collection).
func (st *streamState) signalTable(t *table) bool {
	return st.cfg.Signals.Table != "" && t.schemaName+"."+t.name == st.cfg.Signals.Table
}

// sourceSignal acts on a change of the signal table: an insert is a signal (a delete of an open watermark
// closes its window with insert_delete). It runs before the change's own event is emitted, as Debezium
// processes a signal before dispatching its record, so a closing window's rows precede the watermark's.
func (st *streamState) sourceSignal(ctx context.Context, op byte, row *schema.Struct, src *schema.Struct) error {
	if row == nil || len(row.Values) < 3 {
		return nil
	}
	text := func(i int) string { s, _ := row.Values[i].(string); return s }
	if sig, ok := st.cfg.Signals.FromTable(op, text(0), text(1), text(2)); ok {
		return st.signal(ctx, sig, src)
	}
	return nil
}

// signal acts on a signal of any channel and emits the rows of a window it closed. src is the source
// block of the signal table's change (nil for the other channels): the rows carry its sequence, as
// Debezium's carry the position of the close watermark's event.
func (st *streamState) signal(ctx context.Context, sig signal.Signal, src *schema.Struct) error {
	rows, err := st.inc.Signal(ctx, sig)
	if err != nil || len(rows) == 0 {
		return err
	}
	var sequence any
	if src != nil {
		sequence = src.Get("sequence")
	}
	for _, r := range rows {
		cr := r.Value.(chunkRow)
		t := cr.t
		now := st.now()
		rowSrc := newSource(st.cfg, now, 0, 0, t.schemaName, t.name).
			Set("snapshot", "incremental").Set("sequence", sequence).Set("lsn", nil)
		value := schema.NewStruct(t.envelope).Set("after", cr.row).Set("source", rowSrc).Set("op", "r").
			Set("ts_ms", now.UnixMilli()).Set("ts_us", now.UnixMicro()).Set("ts_ns", now.UnixNano())
		st.appendEvents(t.event(cr.key, value))
	}
	return nil
}

// dedupe drops the open window's row of key when a change of t streams inside the window.
func (st *streamState) dedupe(t *table, key *schema.Struct) {
	if key != nil && st.inc.Deduping(t.schemaName, t.name) {
		st.inc.Dedupe(t.schemaName+"."+t.name, incremental.KeyText(key))
	}
}

// notify puts a notification on the enabled channels. Its record travels with the open transaction's
// events, or alone between transactions; it carries no offset of its own.
func (st *streamState) notify(n notify.Notification) {
	ev, ok := st.cfg.Notify.Send(n, st.cfg.TopicPrefix, st.now(), st.log)
	if !ok {
		return
	}
	if st.inTx {
		st.appendEvents(ev)
		return
	}
	st.ready = append(st.ready, source.Batch{Events: []source.Event{ev}})
}

// incDB is incremental.Database on the reader's SQL connection.
type incDB struct{ st *streamState }

func (db incDB) Tables(ctx context.Context) ([]string, error) {
	return capturedTableIDs(ctx, db.st.sql, db.st.cfg)
}

func (db incDB) WriteWatermark(ctx context.Context, id, kind, data string) error {
	if db.st.cfg.Signals.ReadOnly {
		return db.st.readOnlyWatermark(ctx, id, kind)
	}
	if !db.st.syncWatermarks {
		// A window closes when the stream reads its close watermark back; with synchronous_commit off on
		// the server, the walsender sees that commit only after the WAL writer's next flush (up to
		// wal_writer_delay later). This session commits nothing but watermarks and heartbeat queries, so
		// flushing its commits costs the database little and saves every window that wait.
		if _, err := db.st.sql.Exec(ctx, "SET synchronous_commit = on"); err != nil {
			return fmt.Errorf("preparing the session that writes the incremental snapshot's watermarks: %w", err)
		}
		db.st.syncWatermarks = true
	}
	if _, err := db.st.sql.Exec(ctx, "INSERT INTO "+signalTableIdent(db.st.cfg.Signals.Table)+" VALUES ($1, $2, $3)", id, kind, data); err != nil {
		return fmt.Errorf("writing the incremental snapshot's %s watermark into %s (the connector's user needs INSERT on it): %w", kind, db.st.cfg.Signals.Table, err)
	}
	return nil
}

func (db incDB) DeleteWatermark(ctx context.Context, id string) error {
	if db.st.cfg.Signals.ReadOnly {
		return db.st.readOnlyWatermark(ctx, id, signal.CloseWindow) // insert_delete closes by deleting the open one
	}
	if _, err := db.st.sql.Exec(ctx, "DELETE FROM "+signalTableIdent(db.st.cfg.Signals.Table)+" WHERE id = $1", id); err != nil {
		return fmt.Errorf("deleting the incremental snapshot's watermark from %s (the connector's user needs DELETE on it): %w", db.st.cfg.Signals.Table, err)
	}
	return nil
}

func signalTableIdent(name string) string {
	schemaName, table, _ := strings.Cut(name, ".")
	return pgx.Identifier{schemaName, table}.Sanitize()
}

// chunkTable is a table as a chunk query reads it: its catalog, converters and chunking columns.
type chunkTable struct {
	info     *catalog.Table
	t        *table
	from     string   // the quoted table name
	keyIdx   []int    // the chunking columns' positions in info.Columns
	keyTypes []string // their pg_type names
	keyCols  []string // quoted
	// condition is the collection's additional condition as checked and printed by sqlfilter; "" for none.
	condition string
}

func (db incDB) chunkTable(ctx context.Context, c incremental.Collection) (*chunkTable, error) {
	schemaName, tableName, _ := strings.Cut(c.ID, ".")
	info, err := catalog.Load(ctx, db.st.sql, schemaName, tableName)
	if err != nil {
		return nil, err
	}
	db.st.tables.enums.Pin(info)
	t, err := newTable(db.st.cfg, info, catalogColumns(info), db.st.tables.headers, db.st.log)
	if err != nil {
		return nil, err
	}
	keys := info.PrimaryKey
	if c.SurrogateKey != nil {
		keys = []string{*c.SurrogateKey}
	}
	if len(keys) == 0 {
		return nil, incremental.ErrNoChunkKey
	}
	ct := &chunkTable{info: info, t: t, from: pgx.Identifier{info.Schema, info.Name}.Sanitize()}
	if c.Condition != nil {
		if ct.condition, err = sqlfilter.Render(*c.Condition, sqlfilter.PostgreSQL, info.ColumnNames()); err != nil {
			return nil, fmt.Errorf("additional-conditions of %s: %w", c.ID, err)
		}
	}
	for _, k := range keys {
		i := slices.IndexFunc(info.Columns, func(col catalog.Column) bool { return col.Name == k })
		if i < 0 {
			return nil, fmt.Errorf("surrogate-key %q is not a column of the table", k)
		}
		typeName := info.Columns[i].TypeName
		if _, err := javaKeyValue(typeName, "0"); err != nil && typeName != "bool" {
			return nil, fmt.Errorf("key column %s: %w", k, err)
		}
		ct.keyIdx = append(ct.keyIdx, i)
		ct.keyTypes = append(ct.keyTypes, typeName)
		ct.keyCols = append(ct.keyCols, pgx.Identifier{k}.Sanitize())
	}
	return ct, nil
}

func (db incDB) MaxKey(ctx context.Context, c incremental.Collection) ([]any, error) {
	ct, err := db.chunkTable(ctx, c)
	if err != nil {
		return nil, err
	}
	where := ""
	if ct.condition != "" {
		where = " WHERE " + ct.condition
	}
	desc := make([]string, len(ct.keyCols))
	for i, k := range ct.keyCols {
		desc[i] = k + " DESC"
	}
	var maxKey []any
	err = db.readOnly(ctx, func() error {
		rr := db.st.sql.PgConn().ExecParams(ctx, "SELECT "+strings.Join(ct.keyCols, ", ")+" FROM "+ct.from+where+" ORDER BY "+strings.Join(desc, ", ")+" LIMIT 1", nil, nil, nil, nil)
		for rr.NextRow() {
			if maxKey, err = javaKey(ct.keyTypes, rr.Values()); err != nil {
				rr.Close()
				return err
			}
		}
		_, err := rr.Close()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading the largest key of %s: %w", ct.from, err)
	}
	return maxKey, nil
}

// readOnly runs a snapshot's query in a read-only transaction of its own on the reader's SQL connection,
// bounded by snapshot.query.timeout.ms, so that what a signal starts neither writes nor runs on for good.
func (db incDB) readOnly(ctx context.Context, query func() error) error {
	tx, err := db.st.sql.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after a commit it does nothing; after a failure the query's error is the one to report
	if timeout := db.st.cfg.Signals.QueryTimeout; timeout > 0 {
		if _, err := tx.Exec(ctx, "SET LOCAL statement_timeout = "+strconv.FormatInt(timeout.Milliseconds(), 10)); err != nil {
			return err
		}
	}
	if err := query(); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "57014" {
			return fmt.Errorf("%w (the query ran longer than %s=%d; raise it for a table this slow)", err, signal.QueryTimeoutKey, db.st.cfg.Signals.QueryTimeout.Milliseconds())
		}
		return err
	}
	return tx.Commit(ctx)
}

func (db incDB) ReadChunk(ctx context.Context, c incremental.Collection, after, max []any, limit int) ([]incremental.Row, error) {
	ct, err := db.chunkTable(ctx, c)
	if err != nil {
		return nil, err
	}
	var params [][]byte
	placeholders := func(vals []any) (string, error) {
		ph := make([]string, len(vals))
		for i, v := range vals {
			text, err := keyParam(v)
			if err != nil {
				return "", err
			}
			params = append(params, []byte(text))
			ph[i] = fmt.Sprintf("$%d::%s", len(params), pgx.Identifier{ct.keyTypes[i]}.Sanitize())
		}
		return "(" + strings.Join(ph, ", ") + ")", nil
	}
	keyList := "(" + strings.Join(ct.keyCols, ", ") + ")"
	maxPH, err := placeholders(max)
	if err != nil {
		return nil, err
	}
	where := " WHERE " + keyList + " <= " + maxPH
	if after != nil {
		afterPH, err := placeholders(after)
		if err != nil {
			return nil, err
		}
		where += " AND " + keyList + " > " + afterPH
	}
	if ct.condition != "" {
		where += " AND " + ct.condition
	}
	cols := make([]string, len(ct.info.Columns))
	for i, col := range ct.info.Columns {
		cols[i] = pgx.Identifier{col.Name}.Sanitize()
	}
	sql := "SELECT " + strings.Join(cols, ", ") + " FROM " + ct.from + where + " ORDER BY " + strings.Join(ct.keyCols, ", ") + " LIMIT " + strconv.Itoa(limit)
	var rows []incremental.Row
	err = db.readOnly(ctx, func() error {
		rr := db.st.sql.PgConn().ExecParams(ctx, sql, params, nil, nil, nil)
		for rr.NextRow() {
			values := rr.Values()
			row, err := ct.t.row(textTuple(values), nil, snapshotted)
			if err != nil {
				rr.Close()
				return err
			}
			keyValues := make([][]byte, len(ct.keyIdx))
			for i, ki := range ct.keyIdx {
				keyValues[i] = values[ki]
			}
			jk, err := javaKey(ct.keyTypes, keyValues)
			if err != nil {
				rr.Close()
				return err
			}
			key := ct.t.key(row)
			rows = append(rows, incremental.Row{KeyText: incremental.KeyText(key), JavaKey: jk, Value: chunkRow{t: ct.t, key: key, row: row}})
		}
		_, err := rr.Close()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading a chunk of %s: %w", ct.from, err)
	}
	return rows, nil
}

// javaKey converts a chunking key's text values into the Java objects Debezium's offsets hold for them.
func javaKey(types []string, values [][]byte) ([]any, error) {
	out := make([]any, len(values))
	for i, v := range values {
		if v == nil {
			return nil, fmt.Errorf("a key column of type %s is null", types[i])
		}
		var err error
		if out[i], err = javaKeyValue(types[i], string(v)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// javaKeyValue is the object pgjdbc's getObject returns for a key value of a type cdcd can chunk by: an
// Integer for int2 and int4, a Long for int8, a String for the text types, a Boolean for bool.
func javaKeyValue(typeName, text string) (any, error) {
	switch typeName {
	case "int2", "int4":
		n, err := strconv.ParseInt(text, 10, 32)
		return int32(n), err
	case "int8":
		return strconv.ParseInt(text, 10, 64)
	case "text", "varchar", "bpchar", "name":
		return text, nil
	case "bool":
		return text == "t", nil
	}
	return nil, fmt.Errorf("cdcd chunks incremental snapshots by integer, text and boolean columns; this one is %s (name another column with surrogate-key)", typeName)
}

// keyParam is the text of a Java key value as a query parameter.
func keyParam(v any) (string, error) {
	switch v := v.(type) {
	case int32:
		return strconv.FormatInt(int64(v), 10), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case int16:
		return strconv.FormatInt(int64(v), 10), nil
	case string:
		return v, nil
	case bool:
		return strconv.FormatBool(v), nil
	}
	return "", fmt.Errorf("a chunk bound of type %T", v)
}

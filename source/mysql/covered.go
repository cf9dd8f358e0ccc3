package mysql

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source/mysql/tables"
)

// A resumed initial snapshot reads the tables the interrupted one had not finished again, in a newer
// snapshot, while streaming starts from the first snapshot's position; the stream drops a change of such a
// table that committed before the newer snapshot, since that snapshot's rows already hold its effect (the
// covered check in rows). A deleted row is the exception: the interrupted snapshot may have delivered it
// before the crash, and the newer snapshot, which no longer has it, cannot take it back. Such a delete is
// streamed when its key is gone from the table now:
//   - gone now: the table's last word on the key is a delete, at or after this one. If it re-appeared
//     before the newer snapshot and went again after it, the later delete streams anyway; streaming this one
//     leaves the key deleted, as the database has it.
//   - there now: it came back, before the newer snapshot (whose row of it then follows the stale one) or
//     after it (that insert streams): the delete is dropped as before.
// An update that changes the key deletes its old key likewise: a delete of the old key goes out when that
// key is gone now. The same holds after a restart inside this window, whatever the stream had decided
// before it. A table without a primary key (or a key cdcd cannot look up) keeps the old rule: dropped.

// goneNow reports whether no row of ts's table has the primary key of the binlog row raw now. ok is false
// when that cannot be told: the table has no primary key, or a key value has a type the query cannot
// carry.
func (st *stream) goneNow(ts *tableSchema, raw []any) (gone, ok bool, err error) {
	pk := ts.table.PrimaryKey
	if len(pk) == 0 {
		return false, false, nil
	}
	conds := make([]string, len(pk))
	args := make([]any, len(pk))
	for i, name := range pk {
		at := primaryKeyColumn(ts, name)
		if at < 0 || at >= len(raw) {
			return false, false, nil
		}
		switch v := raw[at].(type) {
		case nil, string, []byte, int8, int16, int32, int64, uint8, uint16, uint32, uint64, int, uint, float32, float64:
			args[i] = v
		default:
			return false, false, nil
		}
		conds[i] = quoteIdent(name) + " <=> ?"
	}
	conn, err := incDB{st}.conn(st.ctx)
	if err != nil {
		return false, false, err
	}
	q := fmt.Sprintf("SELECT 1 FROM %s.%s WHERE %s LIMIT 1", quoteIdent(ts.id.Database), quoteIdent(ts.id.Table), strings.Join(conds, " AND "))
	res, err := conn.Execute(q, args...)
	if err != nil {
		st.closeSQL()
		return false, false, fmt.Errorf("looking up whether a deleted row of %s.%s is gone (a resumed snapshot's table): %w", ts.id.Database, ts.id.Table, err)
	}
	defer res.Close()
	return len(res.Values) == 0, true, nil
}

// primaryKeyColumn is the index of the primary key column name among the table's columns, -1 if none.
func primaryKeyColumn(ts *tableSchema, name string) int {
	return slices.IndexFunc(ts.table.Columns, func(c tables.Column) bool { return strings.EqualFold(c.Name, name) })
}

// coveredChange handles a change of a table the resumed snapshot re-read that committed before the re-read,
// which the stream otherwise drops: it emits the delete of a key that is gone now (see above), of a delete
// its row, of an update that moved its row to another key its old key. raw is the binlog's row the old key
// had, before the same row converted, after an update's new row (nil for a delete).
func (st *stream) coveredChange(ts *tableSchema, raw []any, before, after, src *schema.Struct, now time.Time) error {
	oldKey := ts.keyOf(before)
	if after != nil && (ts.key == nil || sameKey(oldKey, ts.keyOf(after))) {
		return nil // an update in place: the re-read row holds it
	}
	gone, ok, err := st.goneNow(ts, raw)
	if err != nil || !ok || !gone {
		return err
	}
	st.emitDelete(ts, oldKey, before, src, now)
	return nil
}

// emitDelete emits the delete of key, whose row was before, and its tombstone (tombstones.on.delete).
func (st *stream) emitDelete(ts *tableSchema, key, before, src *schema.Struct, now time.Time) {
	st.emit(ts.event(key, ts.envelopeValue(schema.OpDelete, before, nil, src, now)))
	if st.r.cfg.TombstonesOnDelete {
		st.emit(ts.event(key, nil))
	}
}

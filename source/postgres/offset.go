package postgres

import (
	"fmt"

	"github.com/jackc/pglogrepl"

	"github.com/cdcd/cdcd/snapshot"
	"github.com/cdcd/cdcd/snapshot/incremental"
	"github.com/cdcd/cdcd/source"
)

// LSN is a PostgreSQL WAL position; it prints as PostgreSQL does (0/16B3748).
type LSN = pglogrepl.LSN

// Offset is Debezium's PostgreSQL source offset (spec §5.1), the value stored under the key
// ["<connector name>",{"server":"<topic.prefix>"}] in Connect's offset store.
//
// cdcd records offsets only at transaction boundaries: after a commit, LSN, LastProcessed and LastCommit are
// all the commit's end LSN and MessageType is COMMIT. Debezium also records offsets inside transactions
// (LastProcessed is then the last delivered change and LastCommit the previous commit); cdcd resumes from
// either kind.
type Offset struct {
	LSN           LSN    // lsn
	LastProcessed LSN    // lsn_proc: 0 when absent
	LastCommit    LSN    // lsn_commit: 0 when absent
	TxID          int64  // txId
	Xmin          int64  // xmin: the slot's catalog_xmin with xmin.fetch.interval.ms; 0 when absent
	TsUsec        int64  // ts_usec: commit time in µs
	MessageType   string // messageType: INSERT, UPDATE, DELETE, TRUNCATE, MESSAGE, BEGIN, COMMIT, ORIGIN
	// Snapshot is "INITIAL", "BLOCKING" or "INCREMENTAL" while a snapshot is in progress (legacy true loads as
	// INITIAL); empty otherwise.
	Snapshot           string
	LastSnapshotRecord bool
	SnapshotCompleted  bool
	// SnapshotProgress is cdcd's own snapshot progress (snapshot.ProgressKey): what an interrupted snapshot
	// resumes from, and which streamed changes a finished one already covers. Debezium ignores it.
	SnapshotProgress string
	// Transaction is Debezium's transaction metadata of the offset (transaction_id and the
	// transaction_data_collection_order_<schema.table> counters), with provide.transaction.metadata: what
	// Debezium's END record carries at a commit, or an open transaction in an offset Debezium wrote inside it.
	Transaction []source.OffsetField
	// Incremental is a running incremental snapshot's progress under Debezium's keys (see incremental.go);
	// nil when none runs.
	Incremental *incremental.Offset
}

// Fields returns the offset as Connect's offset map, with keys in the order Debezium's
// PostgresOffsetContext.getOffset puts them.
func (o Offset) Fields() []source.OffsetField {
	f := []source.OffsetField{{Name: "ts_usec", Value: o.TsUsec}, {Name: "txId", Value: o.TxID}, {Name: "lsn", Value: int64(o.LSN)}}
	if o.Xmin != 0 {
		f = append(f, source.OffsetField{Name: "xmin", Value: o.Xmin})
	}
	if o.Snapshot != "" {
		f = append(f, source.OffsetField{Name: "snapshot", Value: o.Snapshot},
			source.OffsetField{Name: "last_snapshot_record", Value: o.LastSnapshotRecord},
			source.OffsetField{Name: "snapshot_completed", Value: o.SnapshotCompleted})
	}
	if o.LastProcessed != 0 {
		f = append(f, source.OffsetField{Name: "lsn_proc", Value: int64(o.LastProcessed)})
	}
	if o.LastCommit != 0 {
		f = append(f, source.OffsetField{Name: "lsn_commit", Value: int64(o.LastCommit)})
	}
	if o.MessageType != "" {
		f = append(f, source.OffsetField{Name: "messageType", Value: o.MessageType})
	}
	f = append(f, o.Transaction...)
	f = append(f, o.Incremental.Fields()...) // Debezium's IncrementalSnapshotContext.store, after the transaction's
	if o.SnapshotProgress != "" {
		f = append(f, source.OffsetField{Name: snapshot.ProgressKey, Value: o.SnapshotProgress})
	}
	return f
}

// ParseOffset reads an offset map as Debezium's PostgresOffsetContext.Loader does. Numbers may arrive as
// json.Number, float64 (from a generic JSON decoder) or any Go integer.
func ParseOffset(m map[string]any) (Offset, error) {
	var o Offset
	var err error
	num := func(key string) int64 {
		v, ok := m[key]
		if !ok || v == nil || err != nil {
			return 0
		}
		var n int64
		n, err = source.OffsetInt64(v)
		if err != nil {
			err = fmt.Errorf("offset key %q: %w", key, err)
		}
		return n
	}
	o.LSN = LSN(num("lsn"))
	o.LastProcessed = LSN(num("lsn_proc"))
	o.LastCommit = LSN(num("lsn_commit"))
	o.TxID = num("txId")
	o.Xmin = num("xmin")
	o.TsUsec = num("ts_usec")
	if err != nil {
		return Offset{}, err
	}
	if s, ok := m["messageType"].(string); ok {
		o.MessageType = s
	}
	switch s := m["snapshot"].(type) {
	case string:
		o.Snapshot = s
	case bool:
		if s {
			o.Snapshot = "INITIAL"
		}
	}
	o.SnapshotProgress, _ = m[snapshot.ProgressKey].(string)
	o.Transaction = source.ParseTxOffset(m)
	o.Incremental = incremental.ParseOffset(m)
	o.LastSnapshotRecord, _ = m["last_snapshot_record"].(bool)
	o.SnapshotCompleted, _ = m["snapshot_completed"].(bool)
	if o.LSN == 0 && o.LastProcessed == 0 {
		return Offset{}, fmt.Errorf("offset has neither lsn nor lsn_proc: %v", m)
	}
	return o, nil
}

// SnapshotInProgress reports whether the offset was written during a snapshot that did not complete.
func (o Offset) SnapshotInProgress() bool {
	return o.Snapshot != "" && !o.LastSnapshotRecord && !o.SnapshotCompleted
}

// ResumeLSN is where streaming restarts: the last commit whose transaction was fully delivered. PostgreSQL
// then sends every transaction that committed after it, so a transaction Debezium had delivered only in
// part is sent again in full and the pipeline skips what it already delivered (see skipThrough).
func (o Offset) ResumeLSN() LSN {
	if o.LastCommit != 0 {
		return o.LastCommit
	}
	if o.LastProcessed != 0 {
		return o.LastProcessed
	}
	return o.LSN
}

// skipThrough returns the LSN up to which changes of the first replayed transaction were already delivered,
// or 0 when the offset stands at a transaction boundary. Changes strictly below it are skipped; the change
// at it is delivered again, because several changes can share one LSN and at-least-once beats a loss.
func (o Offset) skipThrough() LSN {
	switch o.MessageType {
	case "", "COMMIT", "BEGIN":
		return 0
	}
	if o.LastProcessed != 0 {
		return o.LastProcessed
	}
	return o.LSN
}

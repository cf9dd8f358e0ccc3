package mysql

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cdcd/cdcd/snapshot"
	"github.com/cdcd/cdcd/snapshot/incremental"
	"github.com/cdcd/cdcd/source"
)

// Offset is Debezium's binlog source offset (spec §5.2), stored under ["<connector>",{"server":"<prefix>"}].
//
// cdcd records offsets only at transaction boundaries: File/Pos point just past the commit and Events and
// Rows are zero. Debezium also records offsets inside a transaction — Pos is then the transaction's start
// and Events/Rows say how much of it was delivered — and cdcd resumes from either kind.
type Offset struct {
	File     string // file: the binlog file to restart from
	Pos      int64  // pos: where to restart in it
	GTIDs    string // gtids: the completed GTID set to restart from, "" without GTIDs
	Events   int64  // event: events of the restart transaction to skip
	Rows     int64  // row: rows of the next rows event to skip
	ServerID int64  // server_id of the last event, 0 when unknown
	TsSec    int64  // ts_sec: the last event's time
	// Snapshot is "INITIAL" while the initial snapshot is in progress; Debezium writes no completion flag:
	// an offset without it is a finished snapshot (or none).
	Snapshot string
	// SnapshotProgress is cdcd's own snapshot progress (snapshot.ProgressKey): which tables an interrupted
	// snapshot finished, and, after a resumed snapshot, which streamed changes it already holds. Debezium
	// ignores it.
	SnapshotProgress string
	// Transaction is Debezium's transaction metadata of the offset (transaction_id and the
	// transaction_data_collection_order_<db.table> counters), with provide.transaction.metadata: what
	// Debezium's END record carries at a commit, or the transaction open at a DDL statement or in an offset
	// Debezium wrote inside it. A pointer, so that Offset stays comparable: it is a batch's Position.
	Transaction *txOffset
	// Incremental is a running incremental snapshot's progress under Debezium's incremental_snapshot_*
	// keys, nil when none runs.
	Incremental *incremental.Offset
}

// binlogSequence orders binlog positions: the file's sequence number (the digits after its last dot) in the
// high bits, the position in the low ones; what snapshot progress records as a table's position.
func binlogSequence(file string, pos int64) uint64 {
	seq, _ := strconv.ParseUint(file[strings.LastIndexByte(file, '.')+1:], 10, 32)
	return seq<<32 | uint64(pos)&(1<<32-1)
}

// Position is the binlog position a batch stands for: what a stream error names.
func (o Offset) String() string {
	s := fmt.Sprintf("%s:%d", o.File, o.Pos)
	if o.GTIDs != "" {
		s += " gtids=" + o.GTIDs
	}
	if o.Events != 0 || o.Rows != 0 {
		s += fmt.Sprintf(" (+%d events, %d rows)", o.Events, o.Rows)
	}
	return s
}

// Fields returns the offset as Connect's offset map, keys put in the order Debezium's
// BinlogOffsetContext.offsetUsingPosition puts them (the order of keys sharing a Java HashMap bucket).
func (o Offset) Fields() []source.OffsetField {
	var f []source.OffsetField
	if o.ServerID != 0 {
		f = append(f, source.OffsetField{Name: "server_id", Value: o.ServerID})
	}
	if o.GTIDs != "" {
		f = append(f, source.OffsetField{Name: "gtids", Value: o.GTIDs})
	}
	f = append(f, source.OffsetField{Name: "file", Value: o.File}, source.OffsetField{Name: "pos", Value: o.Pos})
	if o.Events != 0 {
		f = append(f, source.OffsetField{Name: "event", Value: o.Events})
	}
	if o.Rows != 0 {
		f = append(f, source.OffsetField{Name: "row", Value: o.Rows})
	}
	if o.TsSec != 0 {
		f = append(f, source.OffsetField{Name: "ts_sec", Value: o.TsSec})
	}
	if o.Snapshot != "" {
		f = append(f, source.OffsetField{Name: "snapshot", Value: o.Snapshot})
	}
	f = append(f, o.Transaction.list()...)
	// Debezium's getOffset: incrementalSnapshotContext.store(transactionContext.store(offset)).
	f = append(f, o.Incremental.Fields()...)
	if o.SnapshotProgress != "" {
		f = append(f, source.OffsetField{Name: snapshot.ProgressKey, Value: o.SnapshotProgress})
	}
	return f
}

// ParseOffset reads an offset map as Debezium's offset loader does: file is required, numbers may be any
// JSON or Go number, snapshot may be the legacy boolean.
func ParseOffset(m map[string]any) (Offset, error) {
	var o Offset
	file, ok := m["file"].(string)
	if !ok || file == "" {
		return Offset{}, fmt.Errorf("offset has no binlog file (key \"file\"): %v", m)
	}
	o.File = file
	for key, dst := range map[string]*int64{"pos": &o.Pos, "event": &o.Events, "row": &o.Rows, "server_id": &o.ServerID, "ts_sec": &o.TsSec} {
		v, ok := m[key]
		if !ok || v == nil {
			continue
		}
		n, err := source.OffsetInt64(v)
		if err != nil {
			return Offset{}, fmt.Errorf("offset key %q: %w", key, err)
		}
		*dst = n
	}
	o.SnapshotProgress, _ = m[snapshot.ProgressKey].(string)
	o.Transaction = newTxOffset(source.ParseTxOffset(m))
	o.Incremental = incremental.ParseOffset(m)
	if err := checkProgress(o.SnapshotProgress); err != nil {
		return Offset{}, err
	}
	if g, ok := m["gtids"].(string); ok {
		o.GTIDs = strings.ReplaceAll(g, "\n", "")
	}
	switch s := m["snapshot"].(type) {
	case string:
		o.Snapshot = strings.ToUpper(s)
		if o.Snapshot == "TRUE" {
			o.Snapshot = initialSnapshot
		}
		if o.Snapshot == "FALSE" {
			o.Snapshot = ""
		}
	case bool:
		if s {
			o.Snapshot = initialSnapshot
		}
	}
	return o, nil
}

// checkProgress refuses a snapshot progress the stream cannot use. The MySQL and MariaDB snapshot reads
// each table whole at one position (one epoch, no key bound), and the stream decides which changes a
// table's snapshot holds by that position alone; a table of several epochs (as the PostgreSQL connector
// writes them) comes from an edited offset or another connector. Fatal: the offset must change. An
// unreadable progress is left to its readers (a resumed snapshot reads every table again).
func checkProgress(s string) error {
	p, err := snapshot.DecodeProgress(s)
	if s == "" || err != nil {
		return nil
	}
	for _, t := range p.Tables {
		if len(t.Epochs) > 1 {
			return fatal(fmt.Errorf("snapshot progress in the offset (%s): table %s has %d epochs, but the MySQL and MariaDB connectors read each table whole at one position, so the offset was edited or written by another connector: give each table one epoch, or remove %s from the offset (PATCH /connectors/{name}/offsets on a stopped connector)",
				snapshot.ProgressKey, t.ID, len(t.Epochs), snapshot.ProgressKey))
		}
	}
	return nil
}

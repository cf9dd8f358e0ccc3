// Package snapshot is cdcd's snapshot coordinator: which snapshot a connector takes (Debezium's
// snapshot.mode), how far a snapshot got (progress that lives in the connector's offset, so an interrupted
// snapshot resumes table by table and chunk by chunk instead of starting over), the source.snapshot marker
// of each row, and which streamed changes a snapshot already covers.
//
// The database-specific reading lives with each reader (source/postgres/snapshot.go); this package holds
// the rules they share.
package snapshot

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Mode is Debezium's snapshot.mode.
type Mode string

const (
	Initial     Mode = "initial"      // snapshot when there is no offset (or one left mid-snapshot), then stream
	InitialOnly Mode = "initial_only" // snapshot when there is no offset, then stop
	NoData      Mode = "no_data"      // never snapshot data; stream from the slot
	Always      Mode = "always"       // snapshot at every start, then stream
	WhenNeeded  Mode = "when_needed"  // snapshot when there is no offset or the offset's position is gone
	// Recovery (binlog connectors only) reads no data: it rebuilds the schema history from the tables'
	// current structure, then streams from the stored offset.
	Recovery Mode = "recovery"
)

// ParseMode reads snapshot.mode, mapping the names older Debezium releases used (never, schema_only →
// no_data; schema_only_recovery is refused for PostgreSQL as Debezium 3.6 refuses it).
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "initial":
		return Initial, nil
	case "initial_only":
		return InitialOnly, nil
	case "no_data", "never", "schema_only":
		return NoData, nil
	case "always":
		return Always, nil
	case "when_needed":
		return WhenNeeded, nil
	}
	return "", fmt.Errorf("snapshot.mode %q is not supported: use initial, initial_only, no_data, always or when_needed", s)
}

// State is what the stored offset says about snapshots.
type State struct {
	HasOffset    bool // an offset exists
	InProgress   bool // it was written during a snapshot that did not finish
	PositionLost bool // its position can no longer be streamed (slot gone or ahead of it)
}

// Plan says whether to snapshot and whether to stream afterwards.
type Plan struct {
	Snapshot bool
	Stream   bool
	// Resume continues the stored snapshot's progress instead of starting a new one.
	Resume bool
}

// Decide applies the mode to the stored state.
func (m Mode) Decide(st State) Plan {
	switch m {
	case NoData, Recovery:
		return Plan{Stream: true}
	case Always:
		return Plan{Snapshot: true, Stream: true}
	case InitialOnly:
		return Plan{Snapshot: !st.HasOffset || st.InProgress, Resume: st.InProgress}
	case WhenNeeded:
		if st.PositionLost {
			return Plan{Snapshot: true, Stream: true}
		}
		return Plan{Snapshot: !st.HasOffset || st.InProgress, Stream: true, Resume: st.InProgress}
	default:
		return Plan{Snapshot: !st.HasOffset || st.InProgress, Stream: true, Resume: st.InProgress}
	}
}

// Marker is a row's source.snapshot value.
type Marker string

const (
	First                 Marker = "first"
	FirstInDataCollection Marker = "first_in_data_collection"
	True                  Marker = "true"
	LastInDataCollection  Marker = "last_in_data_collection"
	Last                  Marker = "last"
)

// RowMarker is Debezium's marker for a row (RelationalSnapshotChangeEventSource.SnapshotMarkerResolver):
// firstTable/lastTable say whether the row's table is the first/last of the snapshot (only ever true when
// tables are read one at a time), firstRow/lastRow whether the row is its table's first/last. Debezium
// additionally forces the snapshot's very last record to Last, whatever table it came from: the
// coordinator does that by holding back one record.
func RowMarker(firstTable, lastTable, firstRow, lastRow bool) Marker {
	switch {
	case lastRow && lastTable:
		return Last
	case firstRow && firstTable:
		return First
	case lastRow:
		return LastInDataCollection
	case firstRow:
		return FirstInDataCollection
	}
	return True
}

// Progress is how far a snapshot got: stored in the connector's offset (as JSON under ProgressKey) with
// every batch of snapshot rows, so it advances only as Kafka acknowledges rows.
type Progress struct {
	// Tables lists the snapshot's tables in reading order.
	Tables []TableProgress `json:"tables"`
}

// ProgressKey is the offset field that holds a snapshot's Progress. Debezium ignores fields it does not
// know, so a Debezium that takes over simply restarts the snapshot, as it would anyway.
const ProgressKey = "cdcd_snapshot"

// TableProgress is one table's part of a snapshot.
type TableProgress struct {
	ID   string `json:"id"` // schema.table
	Done bool   `json:"done"`
	// LastKey is the key of the last row delivered (its primary key columns' text), nil before the first.
	LastKey []string `json:"last_key,omitempty"`
	// Epochs record which database position each part of the table was read at: a resumed snapshot reads
	// the rest of a table in a newer snapshot than its first part.
	Epochs []Epoch `json:"epochs,omitempty"`
	Rows   int64   `json:"rows"`
}

// Epoch says that the table's rows up to and including key UpTo (all remaining rows when UpTo is nil) were
// read in a snapshot that holds every transaction committed before Position.
type Epoch struct {
	UpTo     []string `json:"up_to,omitempty"`
	Position uint64   `json:"position"`
}

// Encode renders progress for the offset.
func (p *Progress) Encode() string {
	b, _ := json.Marshal(p) // plain structs of strings and numbers: cannot fail
	return string(b)
}

// DecodeProgress reads progress from an offset field.
func DecodeProgress(s string) (*Progress, error) {
	var p Progress
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return nil, fmt.Errorf("snapshot progress in the offset (%s) is not readable: %w", ProgressKey, err)
	}
	return &p, nil
}

// Table returns the progress entry of id, or nil.
func (p *Progress) Table(id string) *TableProgress {
	for i := range p.Tables {
		if p.Tables[i].ID == id {
			return &p.Tables[i]
		}
	}
	return nil
}

// Complete reports whether every table is done.
func (p *Progress) Complete() bool {
	for _, t := range p.Tables {
		if !t.Done {
			return false
		}
	}
	return true
}

// Pending counts the tables not done.
func (p *Progress) Pending() int {
	return len(p.Tables) - p.DoneCount()
}

// DoneCount counts the tables done.
func (p *Progress) DoneCount() int {
	n := 0
	for _, t := range p.Tables {
		if t.Done {
			n++
		}
	}
	return n
}

// Clone returns a deep copy, for recording a progress state in an offset while reading goes on.
func (p *Progress) Clone() *Progress {
	c := &Progress{Tables: make([]TableProgress, len(p.Tables))}
	for i, t := range p.Tables {
		t.LastKey = append([]string(nil), t.LastKey...)
		t.Epochs = append([]Epoch(nil), t.Epochs...)
		c.Tables[i] = t
	}
	return c
}

// MaxPosition is the newest snapshot position of any table: once streaming passes it, no streamed change
// can be covered by the snapshot any more.
func (p *Progress) MaxPosition() uint64 {
	var m uint64
	for _, t := range p.Tables {
		for _, e := range t.Epochs {
			m = max(m, e.Position)
		}
	}
	return m
}

// Covered decides whether a streamed change of table id, from a transaction that committed at commit, is
// already in the snapshot: true means drop it. keyAtMost reports whether the change's key is ≤ a given key
// in the table's key order (asked only when the table was read in more than one epoch).
func (p *Progress) Covered(id string, commit uint64, keyAtMost func(key []string) (bool, error)) (bool, error) {
	t := p.Table(id)
	if t == nil {
		return false, nil
	}
	for _, e := range t.Epochs {
		if e.UpTo != nil && len(t.Epochs) > 1 {
			in, err := keyAtMost(e.UpTo)
			if err != nil {
				return false, err
			}
			if !in {
				continue
			}
		}
		return commit < e.Position, nil
	}
	return false, nil
}

package postgres

import (
	"encoding/json"
	"strings"
	"testing"
)

// The offset Debezium 3.6.1 stored in the golden run (testdata/postgres/default/offsets.json): cdcd reads it.
const debeziumOffset = `{"lsn_proc":51865296,"messageType":"MESSAGE","lsn_commit":51865296,"lsn":51865368,"txId":1016,"ts_usec":1796028837529322}`

func TestParseDebeziumOffset(t *testing.T) {
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(debeziumOffset))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	o, err := ParseOffset(m)
	if err != nil {
		t.Fatal(err)
	}
	if o.LSN != 51865368 || o.LastProcessed != 51865296 || o.LastCommit != 51865296 || o.TxID != 1016 || o.MessageType != "MESSAGE" {
		t.Fatalf("parsed %+v", o)
	}
	if o.ResumeLSN() != 51865296 {
		t.Errorf("resume at %d, want lsn_commit 51865296", o.ResumeLSN())
	}
	// A MESSAGE offset inside a transaction: the changes below lsn_proc were delivered.
	if o.skipThrough() != 51865296 {
		t.Errorf("skipThrough = %d, want lsn_proc", o.skipThrough())
	}
}

func TestCommitOffsetResumesAtTheCommit(t *testing.T) {
	o := Offset{LSN: 100, LastProcessed: 100, LastCommit: 100, TxID: 7, TsUsec: 1, MessageType: "COMMIT"}
	if o.ResumeLSN() != 100 || o.skipThrough() != 0 {
		t.Errorf("resume %d skip %d", o.ResumeLSN(), o.skipThrough())
	}
	var names []string
	for _, f := range o.Fields() {
		names = append(names, f.Name)
	}
	// Debezium's PostgresOffsetContext.getOffset put order.
	want := []string{"ts_usec", "txId", "lsn", "lsn_proc", "lsn_commit", "messageType"}
	if len(names) != len(want) {
		t.Fatalf("fields %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("fields %v, want %v", names, want)
		}
	}
}

// TestOffsetXmin: the slot's catalog_xmin (xmin.fetch.interval.ms) is the offset's xmin, after lsn as
// Debezium puts it, and reads back; without it the offset has no xmin.
func TestOffsetXmin(t *testing.T) {
	o := Offset{LSN: 100, LastProcessed: 100, LastCommit: 100, TxID: 7, Xmin: 5, TsUsec: 1, MessageType: "COMMIT"}
	m := map[string]any{}
	var names []string
	for _, f := range o.Fields() {
		names = append(names, f.Name)
		m[f.Name] = f.Value
	}
	if got := strings.Join(names, ","); got != "ts_usec,txId,lsn,xmin,lsn_proc,lsn_commit,messageType" {
		t.Errorf("fields %s, want xmin after lsn", got)
	}
	back, err := ParseOffset(m)
	if err != nil || back.Xmin != 5 {
		t.Errorf("read back xmin %d (%v), want 5", back.Xmin, err)
	}
	o.Xmin = 0
	for _, f := range o.Fields() {
		if f.Name == "xmin" {
			t.Error("an offset without xmin tracking has an xmin")
		}
	}
}

func TestSnapshotOffsetState(t *testing.T) {
	in := map[string]any{"lsn": int64(5), "snapshot": true, "last_snapshot_record": false}
	o, err := ParseOffset(in)
	if err != nil || o.Snapshot != "INITIAL" || !o.SnapshotInProgress() {
		t.Fatalf("legacy snapshot=true must load as an INITIAL snapshot in progress: %+v %v", o, err)
	}
	in["snapshot_completed"] = true
	if o, _ := ParseOffset(in); o.SnapshotInProgress() {
		t.Error("snapshot_completed=true means the snapshot is done")
	}
	if _, err := ParseOffset(map[string]any{"txId": 1}); err == nil {
		t.Error("an offset without lsn must be refused")
	}
	if _, err := ParseOffset(map[string]any{"lsn": "x"}); err == nil {
		t.Error("a non-numeric lsn must be refused")
	}
}

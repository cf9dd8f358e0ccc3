package postgres

import (
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/cdcd/cdcd/snapshot"
	"github.com/cdcd/cdcd/snapshot/incremental"
	"github.com/cdcd/cdcd/source"
)

func idleTestState() *streamState {
	return &streamState{cfg: &Config{SlotName: "s"}, log: slog.New(slog.DiscardHandler), now: time.Now,
		xid: 7, commitTime: time.UnixMicro(1_700_000_000_000_000)}
}

// An idle batch is offered only at a boundary past everything recorded, and only once everything handed
// over is durable; one is in flight at a time.
func TestIdleConfirmOffersOnlyWhenNothingIsPending(t *testing.T) {
	type step struct {
		name     string
		prepare  func(st *streamState, ic *idleConfirm)
		released LSN
		want     LSN // the idle batch's position; 0: none
	}
	steps := []step{
		{name: "no keepalive yet", released: 0x100},
		{name: "keepalive at the last commit", prepare: func(st *streamState, ic *idleConfirm) { ic.heard(0x100, st) }, released: 0x100},
		{name: "keepalive inside a transaction", prepare: func(st *streamState, ic *idleConfirm) {
			st.inTx = true
			ic.heard(0x900, st)
		}, released: 0x100},
		{name: "transaction closed, its keepalive forgotten", prepare: func(st *streamState, ic *idleConfirm) { st.inTx = false }, released: 0x100},
		{name: "keepalive past the commit, commit not durable", prepare: func(st *streamState, ic *idleConfirm) { ic.heard(0x200, st) }, released: 0xff},
		{name: "commit durable", released: 0x100, want: 0x200},
		{name: "next keepalive while the idle batch is pending", prepare: func(st *streamState, ic *idleConfirm) {
			st.ready = nil // handed over
			ic.heard(0x300, st)
		}, released: 0x100},
		{name: "idle batch durable", released: 0x200, want: 0x300},
		{name: "a change read, not handed over", prepare: func(st *streamState, ic *idleConfirm) {
			st.ready = nil
			st.events = []source.Event{{Topic: "t"}}
			ic.heard(0x400, st)
		}, released: 0x300},
		{name: "replaying a transaction Debezium recorded inside", prepare: func(st *streamState, ic *idleConfirm) {
			st.events = nil
			st.skipBelow = 0x380
		}, released: 0x300},
		{name: "an incremental snapshot runs", prepare: func(st *streamState, ic *idleConfirm) {
			st.skipBelow = 0
			st.inc = &incremental.Runner{}
			if err := st.inc.Resume(&incremental.Offset{Collections: `[{"incremental_snapshot_collections_id":"public.t"}]`}); err != nil {
				t.Fatal(err)
			}
		}, released: 0x300},
		{name: "nothing pending", prepare: func(st *streamState, ic *idleConfirm) { st.inc = nil }, released: 0x300, want: 0x400},
	}
	st := idleTestState()
	st.lastCommit = 0x100
	var ic idleConfirm
	for _, s := range steps {
		if s.prepare != nil {
			s.prepare(st, &ic)
		}
		before := len(st.ready)
		ic.offer(st, s.released)
		var got LSN
		if len(st.ready) > before {
			got = LSN(st.ready[len(st.ready)-1].Position.(lsnPosition))
		}
		if got != s.want {
			t.Fatalf("%s: idle batch at %s, want %s", s.name, got, s.want)
		}
	}
}

// The idle offset is the last recorded boundary moved forward: its other keys (here transaction metadata)
// stay, in their order; before any, it is a COMMIT boundary of the last commit read.
func TestIdleOffsetMovesTheLastBoundary(t *testing.T) {
	st := idleTestState()
	st.lastCommit = 0x100
	var ic idleConfirm
	ic.heard(0x180, st)
	ic.offer(st, 0x100)
	first := st.ready[0].Offset
	want := Offset{LSN: 0x180, LastProcessed: 0x180, LastCommit: 0x180, TxID: 7, TsUsec: 1_700_000_000_000_000, MessageType: "COMMIT"}.Fields()
	if !slices.Equal(first, want) {
		t.Fatalf("first idle offset %v, want %v", first, want)
	}

	commit := Offset{LSN: 0x200, LastProcessed: 0x200, LastCommit: 0x200, TxID: 8, TsUsec: 5, MessageType: "COMMIT",
		Transaction: []source.OffsetField{{Name: source.TxOffsetID, Value: "8"}, {Name: source.TxOffsetCountPrefix + "public.t", Value: int64(2)}}}
	st.ready = []source.Batch{{Offset: commit.Fields(), Position: lsnPosition(0x200)}}
	ic.offer(st, 0x180) // sees the commit on its way out
	st.ready, st.lastCommit = nil, 0x200
	ic.heard(0x280, st)
	ic.offer(st, 0x200)
	moved := commit
	moved.LSN, moved.LastProcessed, moved.LastCommit = 0x280, 0x280, 0x280
	if got := st.ready[0].Offset; !slices.Equal(got, moved.Fields()) {
		t.Fatalf("idle offset after a commit %v, want %v", got, moved.Fields())
	}

	// While a finished snapshot's coverage is to be passed, the offset keeps it, as a commit's would.
	st.covered = &snapshot.Progress{Tables: []snapshot.TableProgress{{ID: "public.t", Done: true}}}
	st.ready = nil
	ic.heard(0x300, st)
	ic.offer(st, 0x280)
	covered := Offset{LSN: 0x300, LastProcessed: 0x300, LastCommit: 0x300, TxID: 7, TsUsec: 1_700_000_000_000_000, MessageType: "COMMIT",
		SnapshotProgress: st.covered.Encode()}
	if got := st.ready[0].Offset; !slices.Equal(got, covered.Fields()) {
		t.Fatalf("idle offset under a snapshot's coverage %v, want %v", got, covered.Fields())
	}
}

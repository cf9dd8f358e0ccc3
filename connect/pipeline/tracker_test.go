package pipeline

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cdcd/cdcd/source"
)

type pos int

func (p pos) String() string { return "pos" }

func off(n int) []source.OffsetField { return []source.OffsetField{{Name: "n", Value: n}} }

func TestTrackerRecordsOnlyContiguousAcks(t *testing.T) {
	tr := newTracker(10)
	ctx := context.Background()
	s0, _ := tr.add(ctx, off(0), pos(0))
	s1, _ := tr.add(ctx, nil, nil) // part of a split transaction: no offset
	s2, _ := tr.add(ctx, off(2), pos(2))

	tr.ack(s2, nil)
	if _, _, ok := tr.committable(); ok {
		t.Fatal("batch 2 acknowledged before 0 and 1 must not be committable")
	}
	tr.ack(s0, nil)
	if o, p, ok := tr.committable(); !ok || o[0].Value != 0 || p != pos(0) {
		t.Fatalf("after acking 0: got %v %v %v, want offset 0", o, p, ok)
	}
	tr.ack(s1, nil)
	if o, _, ok := tr.committable(); !ok || o[0].Value != 2 {
		t.Fatalf("after acking 0,1,2: got %v, want offset 2", o)
	}
	tr.committed(pos(2))
	if _, _, ok := tr.committable(); ok {
		t.Fatal("a committed offset must not be offered again")
	}
}

func TestTrackerFailureStopsProgress(t *testing.T) {
	tr := newTracker(10)
	ctx := context.Background()
	s0, _ := tr.add(ctx, off(0), pos(0))
	s1, _ := tr.add(ctx, off(1), pos(1))
	tr.ack(s0, errors.New("broker said no"))
	tr.ack(s1, nil)
	if _, _, ok := tr.committable(); ok {
		t.Fatal("nothing after a failed batch may be recorded")
	}
	select {
	case <-tr.failed:
	default:
		t.Fatal("failed channel not closed")
	}
	if tr.failure() == nil {
		t.Fatal("failure() lost the error")
	}
}

func TestTrackerBlocksWhenFull(t *testing.T) {
	tr := newTracker(2)
	ctx := context.Background()
	s0, _ := tr.add(ctx, off(0), pos(0))
	tr.add(ctx, off(1), pos(1))

	added := make(chan struct{})
	go func() {
		tr.add(ctx, off(2), pos(2))
		close(added)
	}()
	select {
	case <-added:
		t.Fatal("add must block while the tracker is full")
	case <-time.After(50 * time.Millisecond):
	}
	tr.ack(s0, nil)
	select {
	case <-added:
	case <-time.After(5 * time.Second):
		t.Fatal("add did not unblock after an ack freed a slot")
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := tr.add(cctx, nil, nil); err == nil {
		t.Fatal("add on a full tracker with a cancelled context must fail")
	}
}

// TestTrackerSaysWhileFull: an add that waits for room reports it every fullReport until an ack frees a
// slot, and acknowledgedBehind counts what was acknowledged behind the unacknowledged head.
func TestTrackerSaysWhileFull(t *testing.T) {
	defer func(d time.Duration) { fullReport = d }(fullReport)
	fullReport = 10 * time.Millisecond
	tr := newTracker(2)
	told := make(chan time.Duration, 16)
	tr.full = func(waited time.Duration) {
		select {
		case told <- waited:
		default:
		}
	}
	ctx := context.Background()
	head, _ := tr.add(ctx, nil, nil)
	second, _ := tr.add(ctx, nil, nil)
	tr.ack(second, nil)
	if n := tr.acknowledgedBehind(); n != 1 {
		t.Fatalf("acknowledgedBehind = %d, want 1", n)
	}
	added := make(chan error, 1)
	go func() {
		_, err := tr.add(ctx, nil, nil)
		added <- err
	}()
	select {
	case <-told:
	case err := <-added:
		t.Fatalf("add returned (%v) while the tracker was full", err)
	case <-time.After(10 * time.Second):
		t.Fatal("a waiting add never reported")
	}
	tr.ack(head, nil)
	select {
	case err := <-added:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("add did not return once the head was acknowledged")
	}
}

package pipeline

import (
	"context"
	"sync"
	"time"

	"github.com/cdcd/cdcd/source"
)

// tracker orders acknowledgements. Batches are acknowledged out of order (one partition's broker answers
// before another's), but an offset may be recorded only when its batch and every batch before it are
// acknowledged: the tracker yields the offset of the highest contiguous acknowledged batch.
//
// It is bounded: add blocks while max batches are pending, which stops the reader from reading further.
type tracker struct {
	slots chan struct{} // one token per pending batch: the bound

	mu      sync.Mutex
	nextSeq uint64
	pending []pendingBatch // in sequence order; the head is the oldest unresolved batch
	// ready is the offset of the highest contiguous acknowledged batch that carries one, not yet committed.
	readyOffset []source.OffsetField
	readyPos    source.Position
	// last is the position of the last offset recorded (nil before the first).
	last source.Position

	err    error
	failed chan struct{} // closed on the first failed acknowledgement

	full func(waited time.Duration) // told while add waits for room; see fullReport
}

type pendingBatch struct {
	seq    uint64
	offset []source.OffsetField
	pos    source.Position
	acked  bool
}

func newTracker(max int) *tracker {
	return &tracker{slots: make(chan struct{}, max), failed: make(chan struct{}), full: func(time.Duration) {}}
}

// fullReport is how often add, while it waits for room, calls full.
var fullReport = 30 * time.Second

// add registers the next batch and returns its sequence number. It blocks while the tracker is full and
// returns ctx's error if ctx ends first; every fullReport of waiting it calls t.full with the time waited.
func (t *tracker) add(ctx context.Context, offset []source.OffsetField, pos source.Position) (uint64, error) {
	select {
	case t.slots <- struct{}{}:
	default:
		if err := t.waitForRoom(ctx); err != nil {
			return 0, err
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	seq := t.nextSeq
	t.nextSeq++
	t.pending = append(t.pending, pendingBatch{seq: seq, offset: offset, pos: pos})
	return seq, nil
}

// waitForRoom takes a slot once one is free, telling t.full every fullReport meanwhile.
func (t *tracker) waitForRoom(ctx context.Context) error {
	start := time.Now()
	tick := time.NewTicker(fullReport)
	defer tick.Stop()
	for {
		select {
		case t.slots <- struct{}{}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			t.full(time.Since(start))
		}
	}
}

// ack resolves batch seq. A failed batch is never resolved: nothing after it can be recorded, and the
// pipeline restarts from the last durable offset.
func (t *tracker) ack(seq uint64, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		if t.err == nil {
			t.err = err
			close(t.failed)
		}
		return
	}
	if len(t.pending) == 0 {
		return
	}
	i := int(seq - t.pending[0].seq)
	if i < 0 || i >= len(t.pending) {
		return
	}
	t.pending[i].acked = true
	n := 0
	for n < len(t.pending) && t.pending[n].acked {
		if t.pending[n].offset != nil {
			t.readyOffset, t.readyPos = t.pending[n].offset, t.pending[n].pos
		}
		n++
	}
	if n == 0 {
		return
	}
	// Slide the window instead of copying the rest: many small batches resolve one by one, and a copy per
	// ack made that quadratic. append reallocates once the tail reaches capacity, copying only live entries.
	clear(t.pending[:n])
	t.pending = t.pending[n:]
	for range n {
		<-t.slots
	}
}

// committable returns the offset to record next, if any.
func (t *tracker) committable() ([]source.OffsetField, source.Position, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.readyOffset == nil {
		return nil, nil, false
	}
	return t.readyOffset, t.readyPos, true
}

// committed marks the offset at pos as recorded, unless a later one became ready meanwhile.
func (t *tracker) committed(pos source.Position) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.last = pos
	if t.readyPos == pos {
		t.readyOffset, t.readyPos = nil, nil
	}
}

// lastCommitted is the position of the last offset recorded, nil before the first.
func (t *tracker) lastCommitted() source.Position {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last
}

// unresolved returns how many batches are not acknowledged yet and the end of the oldest of them (nil
// when none): what a stop now could not record.
func (t *tracker) unresolved() (int, source.Position) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.pending) == 0 {
		return 0, nil
	}
	return len(t.pending), t.pending[0].pos
}

// acknowledgedBehind counts the pending batches acknowledged behind the unacknowledged head: many while the
// head is not means one acknowledgement is missing, not that Kafka is slow.
func (t *tracker) acknowledgedBehind() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, b := range t.pending {
		if b.acked {
			n++
		}
	}
	return n
}

// failure returns the first failed acknowledgement's error.
func (t *tracker) failure() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

package kafka

import (
	"context"
	"testing"
)

// waiting reports how many acquire calls are blocked.
func (b *byteBudget) waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.waiters)
}

// TestBudgetIsFIFOAndALeavingWaiterUnblocksTheQueue: a big request at the head is not overtaken
// by a small one that would fit, and when the head gives up, the one behind it gets its bytes.
func TestBudgetIsFIFOAndALeavingWaiterUnblocksTheQueue(t *testing.T) {
	b := newByteBudget(10)
	if err := b.acquire(t.Context(), 6); err != nil {
		t.Fatal(err)
	}
	bigCtx, cancelBig := context.WithCancel(t.Context())
	big := make(chan error)
	go func() { big <- b.acquire(bigCtx, 8) }()
	waitFor(t, "the big request to queue", func() bool { return b.waiting() == 1 })

	small := make(chan error)
	go func() { small <- b.acquire(t.Context(), 4) }() // fits, but must queue behind the big one
	waitFor(t, "the small request to queue", func() bool { return b.waiting() == 2 })

	cancelBig()
	if err := <-big; err == nil {
		t.Fatal("cancelled acquire succeeded")
	}
	if err := <-small; err != nil {
		t.Fatal(err)
	}
	if got := b.inUse(); got != 10 {
		t.Fatalf("in use = %d, want 10", got)
	}
	b.release(10)
	if got := b.inUse(); got != 0 || b.waiting() != 0 {
		t.Fatalf("in use = %d, waiting = %d after release", got, b.waiting())
	}
}

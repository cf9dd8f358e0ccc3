package kafka

import (
	"context"
	"sync"
)

// byteBudget is a FIFO weighted semaphore over bytes in flight. kafka-go's asynchronous queue is
// unbounded, so this is what turns a slow or unreachable broker into backpressure on the caller
// (the role buffer.memory plays in the Java producer).
//
// FIFO matters: a large request at the head is not starved by a stream of small ones behind it.
type byteBudget struct {
	mu      sync.Mutex
	limit   int64
	used    int64
	waiters []*budgetWaiter
}

type budgetWaiter struct {
	n     int64
	ready chan struct{} // closed when the bytes were granted
}

func newByteBudget(limit int64) *byteBudget { return &byteBudget{limit: limit} }

// acquire takes n bytes (n must be in (0, limit]), blocking until they are free or ctx is done.
// On ctx done it returns ctx.Err() and holds nothing.
func (b *byteBudget) acquire(ctx context.Context, n int64) error {
	b.mu.Lock()
	if len(b.waiters) == 0 && b.used+n <= b.limit {
		b.used += n
		b.mu.Unlock()
		return nil
	}
	w := &budgetWaiter{n: n, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()

	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		defer b.mu.Unlock()
		select {
		case <-w.ready:
			// Granted while we were giving up: hand the bytes back (and maybe to the next waiter).
			b.used -= n
			b.grantLocked()
		default:
			b.removeLocked(w)
			// Leaving the head of the queue may unblock the waiters behind us.
			b.grantLocked()
		}
		return ctx.Err()
	}
}

// release returns n bytes taken by acquire.
func (b *byteBudget) release(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	b.grantLocked()
}

// inUse reports the bytes currently held.
func (b *byteBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

func (b *byteBudget) grantLocked() {
	for len(b.waiters) > 0 {
		w := b.waiters[0]
		if b.used+w.n > b.limit {
			return
		}
		b.used += w.n
		b.waiters[0] = nil
		b.waiters = b.waiters[1:]
		close(w.ready)
	}
}

func (b *byteBudget) removeLocked(w *budgetWaiter) {
	for i, x := range b.waiters {
		if x == w {
			b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
			return
		}
	}
}

package snapshot

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
)

// ReadTables reads jobs (one table each) on conns, one job per connection at a time, in jobs' order as
// connections come free: snapshot.max.threads connections read that many tables at once. read runs on its
// own goroutine per connection and must return once ctx ends. The first failure cancels the others and is
// returned, wrapped once with the table's name; ReadTables returns only after every goroutine has ended,
// so the caller may close conns afterwards. A panic in read is turned into that table's error: the
// reader's own goroutine is guarded by the task, these are not, and would take the process down.
func ReadTables[C, J any](ctx context.Context, conns []C, jobs []J, name func(J) string, read func(context.Context, C, J) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan J)
	var wg sync.WaitGroup
	for _, conn := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var j J
			defer func() {
				if v := recover(); v != nil {
					cancel(fmt.Errorf("snapshot of %s: %w", name(j), source.Recovered(v, nil)))
				}
			}()
			for j = range next {
				if err := read(ctx, conn, j); err != nil {
					cancel(fmt.Errorf("snapshot of %s: %w", name(j), err))
					return
				}
			}
		}()
	}
feed:
	for _, j := range jobs {
		select {
		case next <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

// Item is what a table reader queues on a Handover: a row, a notification, or a step of progress alone.
type Item struct {
	Event source.Event
	// Source is a row's source block (nil for anything but a row): the handover sets its snapshot marker to
	// Last when the row turns out to be the snapshot's last record.
	Source *schema.Struct
	// Notice says Event is a notification: handed over in its place, but not a row.
	Notice bool
	// Advance records in the progress what handing this item over completes (a table done, its last key);
	// it runs when the batch holding the item is built, under the handover's turn.
	Advance func(*Progress)
}

// Handed is one batch a Handover hands over.
type Handed struct {
	Events []source.Event
	// Progress is what this batch and every batch before it complete; it is the handover's own and is
	// changed by later batches: encode it before returning.
	Progress *Progress
	// Final is the snapshot's last batch, its last row marked Last.
	Final bool
	// Rows counts the rows handed over so far, this batch's included.
	Rows int64
}

// Handover hands a snapshot's rows to the pipeline in batches, one batch at a time, each recording the
// progress its rows complete. Tables may be read on several connections at once (snapshot.max.threads):
// every reader queues its table's rows and progress steps in order on the one queue, so the rows of
// different tables interleave while each table's keep their order, and a progress step goes out in the
// same batch as the rows queued before it, never earlier. Since batches are handed over in queue order and
// the pipeline makes an offset durable only behind every batch before it, a durable offset never says a
// table is done (or read up to a key) before all of those rows are acknowledged: a snapshot resumed after a
// crash does not skip rows it never delivered.
//
// The newest row is held back (with the items queued after it) until another row follows or Finish:
// Debezium marks the snapshot's very last record "last", and only the end tells which record that is.
//
// Add, Flush and Finish may be called from several goroutines at once; each blocks while another holds the
// turn, and while send blocks.
type Handover struct {
	send     func(context.Context, Handed) error
	size     int
	mu       sync.Mutex // the turn: the queue, the progress and every send
	progress *Progress
	queue    []Item
	rows     int64
}

// NewHandover returns a handover of batches of about size items, recording into progress (which it owns
// from now on). send hands one batch to the pipeline: it runs with the turn held, so batches go out one at
// a time and in order; it blocks until the pipeline takes the batch, and returns ctx's error if ctx ends
// first. Its error is returned by the Add, Flush or Finish that called it.
func NewHandover(progress *Progress, size int, send func(context.Context, Handed) error) *Handover {
	return &Handover{send: send, size: size, progress: progress}
}

// Add queues an item, handing a batch over when size items are queued.
func (h *Handover) Add(ctx context.Context, it Item) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.queue = append(h.queue, it)
	if len(h.queue) >= h.size {
		return h.flush(ctx, false)
	}
	return nil
}

// Flush hands over what is queued, but for the newest row and what follows it (the end of a chunk).
func (h *Handover) Flush(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.flush(ctx, false)
}

// Finish marks the newest row the snapshot's last and hands over everything queued as the final batch.
// Call it once every reader has returned.
func (h *Handover) Finish(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := len(h.queue) - 1; i >= 0; i-- {
		if h.queue[i].Source != nil {
			h.queue[i].Source.Set(schema.SourceSnapshot, string(Last))
			break
		}
	}
	return h.flush(ctx, true)
}

// flush hands the queued items over as one batch, holding back the newest row and the items after it
// unless final. Callers hold mu.
func (h *Handover) flush(ctx context.Context, final bool) error {
	n := len(h.queue)
	if !final {
		for n > 0 && h.queue[n-1].Source == nil {
			n--
		}
		n--
		if n <= 0 {
			return nil
		}
	}
	var events []source.Event
	for _, it := range h.queue[:n] {
		if it.Advance != nil {
			it.Advance(h.progress)
		}
		if it.Source != nil {
			h.rows++
		}
		if it.Source != nil || it.Notice {
			events = append(events, it.Event)
		}
	}
	h.queue = append(h.queue[:0:0], h.queue[n:]...)
	return h.send(ctx, Handed{Events: events, Progress: h.progress, Final: final, Rows: h.rows})
}

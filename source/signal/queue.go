package signal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"
)

// Queue holds the signals of the channels outside the database (cdcd's REST endpoint, the signal file, the
// Kafka signal topic) until the reader's stream goroutine, which owns the connections, acts on them between
// two messages. Bounded: a sender finding it full is told to retry rather than blocked, except the kafka
// channel, which waits (the topic keeps its signals meanwhile).
type Queue struct {
	connector string
	cfg       Config
	ch        chan Signal
	wake      atomic.Pointer[func()]
}

// queueCapacity bounds the signals waiting for the stream goroutine.
const queueCapacity = 32

// NewQueue returns an empty queue for the named connector (the name is in its errors) with its signalling
// settings: whether the rest channel is on, the dialect of its filters.
func NewQueue(connector string, cfg Config) *Queue {
	return &Queue{connector: connector, cfg: cfg, ch: make(chan Signal, queueCapacity)}
}

// Signal queues a signal of the rest channel (POST /connectors/{name}/signals). It is refused unless the
// channel is enabled, and an execute-snapshot whose additional-conditions hold a filter that is not a
// condition is refused here, so that the client hears why. It never blocks: with the queue full it
// fails. Safe to call from any goroutine.
func (q *Queue) Signal(id, kind, data string) error {
	if !q.cfg.REST {
		return fmt.Errorf("connector %s does not take signals over REST: add %s to signal.enabled.channels to send them with POST /connectors/{name}/signals", q.connector, ChannelREST)
	}
	if kind == ExecuteSnapshot {
		// A request that does not parse is logged and skipped by the reader, as the other channels' are;
		// only its filters are checked here.
		if req, err := ParseSnapshotRequest(data, false); err == nil {
			if err := req.CheckFilters(q.cfg.Dialect); err != nil {
				return err
			}
		}
	}
	return q.offer(Signal{ID: id, Type: kind, Data: data})
}

// offer queues a signal without blocking: with the queue full it fails. Watermarks are the incremental
// snapshot's own and refused.
func (q *Queue) offer(s Signal) error {
	if s.ID == "" || s.Type == "" {
		return errors.New(`a signal needs an "id" and a "type"`)
	}
	if s.Type == OpenWindow || s.Type == CloseWindow {
		return fmt.Errorf("%s is written by the incremental snapshot itself, never sent", s.Type)
	}
	select {
	case q.ch <- s:
	default:
		return fmt.Errorf("%d signals are already waiting for connector %s; send this one again later", queueCapacity, q.connector)
	}
	if wake := q.wake.Load(); wake != nil {
		(*wake)()
	}
	return nil
}

// put queues a signal of a channel that waits rather than drops (kafka): it blocks while the queue is
// full, until the stream goroutine takes a signal or ctx ends. The id may be empty (a Kafka signal need
// not have one). Watermarks are refused as Signal refuses them.
func (q *Queue) put(ctx context.Context, s Signal) error {
	if s.Type == OpenWindow || s.Type == CloseWindow {
		return fmt.Errorf("%s is written by the incremental snapshot itself, never sent", s.Type)
	}
	select {
	case q.ch <- s:
	case <-ctx.Done():
		return ctx.Err()
	}
	if wake := q.wake.Load(); wake != nil {
		(*wake)()
	}
	return nil
}

// C is the queued signals, for the stream goroutine's select.
func (q *Queue) C() <-chan Signal { return q.ch }

// SetWake sets what interrupts the stream goroutine's wait for its next message when a signal is queued
// (nil: nothing). It must not block.
func (q *Queue) SetWake(wake func()) {
	if wake == nil {
		q.wake.Store(nil)
		return
	}
	q.wake.Store(&wake)
}

// PollFile reads the signal file at path every interval until ctx ends and queues its signals; a line
// that is not a signal, and a signal the full queue refuses, are logged and dropped.
func (q *Queue) PollFile(ctx context.Context, path string, interval time.Duration, log *slog.Logger) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		signals, bad, err := PollFile(path)
		for _, e := range append(bad, err) {
			if e != nil {
				log.Warn("signal file", "error", e)
			}
		}
		for _, s := range signals {
			if err := q.offer(s); err != nil {
				log.Warn("signal from the signal file dropped", "signal", s.ID, "error", err)
			}
		}
	}
}

// FromTable is the signal a change of the signal table stands for, as Debezium's source channel reads
// it: an insert (its id, type and data columns) is a signal when the source channel is on, and a
// watermark always (the incremental snapshot reads its own windows whatever the channels); with
// insert_delete, the delete of an open watermark closes its window. ok is false for any other change.
func (c Config) FromTable(op byte, id, kind, data string) (sig Signal, ok bool) {
	switch {
	case op == 'c' && (c.Source || kind == OpenWindow || kind == CloseWindow):
		return Signal{ID: id, Type: kind, Data: data}, true
	case op == 'd' && c.DeleteWatermarks && kind == OpenWindow:
		return Signal{ID: strings.TrimSuffix(id, "-open") + "-close", Type: CloseWindow}, true
	}
	return Signal{}, false
}

// Package pipeline is the runtime's data path: it moves one task's batches from its reader through the
// transforms and the worker's converters to its sink, and records offsets only behind the sink's
// acknowledgements. The control plane (package connect) builds a Pipeline per task and runs it.
package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/cdcd/cdcd/connect/transforms"
	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/avro"
	"github.com/cdcd/cdcd/sink"
	"github.com/cdcd/cdcd/source"
)

// OffsetWriter stores a connector's source offset durably.
type OffsetWriter interface {
	// WriteOffset records offset for the connector's partition and returns once it is durable (fsynced, or
	// acknowledged by every in-sync replica). It blocks until then or until ctx ends (an error: the offset
	// may or may not have been stored, and a later write supersedes it). Called from one goroutine at a time.
	WriteOffset(ctx context.Context, offset []source.OffsetField) error
}

// Encoder turns an event into a Kafka record with the worker's converters.
type Encoder interface {
	Encode(ev *source.Event) (sink.Record, error)
}

// Transformer applies a connector's transforms chain (connect/transforms.Chain) to an event before it is
// encoded, as Connect applies single message transforms before conversion.
type Transformer interface {
	// Transform rewrites ev in place and reports whether it is still to be produced; false means a transform
	// dropped it.
	Transform(ev *source.Event) (keep bool, err error)
}

// Pipeline moves one connector's batches from its reader through the encoder to Kafka, and records offsets.
//
// The invariant that makes it crash-safe: a position is released to the database only after the offset that
// stands for it is durable, and an offset is written only after Kafka acknowledged its batch and every batch
// before it. At any instant the database's confirmed position ≤ the durable offset ≤ what Kafka holds.
type Pipeline struct {
	Reader source.Reader
	// Transforms, when not nil, runs on every event before Encoder.
	Transforms    Transformer
	Encoder       Encoder
	Sender        sink.Sink
	Offsets       OffsetWriter
	FlushInterval time.Duration // offset.flush.interval.ms
	// FlushTimeout is offset.flush.timeout.ms (0: Connect's default, 5 s): how long one offset write, and
	// the final flush of a stopping task, wait before giving up. A periodic write that times out is
	// retried at the next interval; on the way out, what Kafka has not acknowledged by then is not
	// recorded, so it is read again after the restart.
	FlushTimeout time.Duration
	// MaxPendingBatches bounds the batches between read and offset commit (each may be empty, so the sink's
	// byte bound alone does not bound them).
	MaxPendingBatches int
	// Name is the connector's name, which labels its queue metrics.
	Name string
	// Errors is the connector's errors.* handling of records a transform or a converter fails on; the zero
	// value is Connect's default, errors.tolerance=none.
	Errors ErrorHandling
	// Transactions, when not nil, is exactly-once delivery: Offsets and FlushInterval are not used, and
	// each offset is written with the records it stands for in one transaction of the sink.
	Transactions *Transactions
	Log          *slog.Logger
}

// Boundary is where a transaction ends: Connect's transaction.boundary.
type Boundary int

const (
	// BoundaryPoll ends a transaction when the reader has no further batch ready, as Connect commits
	// after each poll (which returns what the connector has queued), or once it holds
	// Transactions.MaxRecords records. "Ready" is measured over Transactions.PollLinger: the reader hands
	// over one source transaction at a time through a short queue, so an empty queue is not yet a dry
	// reader, and committing at every empty queue made transactions of a few records (a backlog then
	// drained at the commit's round trips, a few hundred records a second).
	BoundaryPoll Boundary = iota
	// BoundaryInterval ends a transaction every Transactions.Interval.
	BoundaryInterval
	// BoundaryConnector ends a transaction with each source transaction (each batch that carries an
	// offset: the reader's batches end at source transaction boundaries).
	BoundaryConnector
)

// Transactions configures exactly-once delivery (Kafka Connect's exactly.once.source.support).
//
// INVARIANT: a transaction holds records and the offset record that stands for the last of them, and
// a position is released to the database only after that transaction committed. A batch without an
// offset (the part of a split source transaction) never ends a transaction, so an offset never stands
// for a part of a source transaction: after any crash, a read_committed consumer sees each change once.
type Transactions struct {
	Sink sink.Transactional
	// OffsetRecord is the offsets-topic record that stores offset (Connect's key and value bytes).
	OffsetRecord func(offset []source.OffsetField) (sink.Record, error)
	// OffsetsTopic is the topic OffsetRecord writes to. A record of the task's own bound for it fails the
	// task (ExactlyOnceWorkerSourceTask refuses it): it would stay in an open transaction while the next
	// read of the offsets waits for that transaction to end.
	OffsetsTopic string
	Boundary     Boundary
	Interval     time.Duration // BoundaryInterval's (transaction.boundary.interval.ms)
	MaxRecords   int           // BoundaryPoll's bound (max.batch.size); 0: 2048
	// PollLinger is how long BoundaryPoll waits, once no batch is ready, for a next one before it ends the
	// transaction: the latency it adds when the source goes quiet. 0: DefaultPollLinger.
	PollLinger time.Duration
	// CommitTimeout bounds one commit: the acknowledgement of the transaction's records and EndTxn.
	CommitTimeout time.Duration
}

// ErrOwnOffsetsTopic is ExactlyOnceWorkerSourceTask's refusal of a record bound for the task's offsets topic.
var ErrOwnOffsetsTopic = errors.New("source tasks may not produce to their own offsets topics when exactly-once support is enabled")

// DefaultPollLinger is Transactions.PollLinger's default: several times the gap between two source
// transactions read from a backlog, and a small part of a commit's round trips.
const DefaultPollLinger = 5 * time.Millisecond

// Run runs until ctx is cancelled or a part fails. On the way out it records the offset of everything Kafka
// acknowledged, so a clean stop loses nothing and repeats nothing.
func (p *Pipeline) Run(ctx context.Context) error {
	if p.MaxPendingBatches <= 0 {
		p.MaxPendingBatches = 4096
	}
	tr := newTracker(p.MaxPendingBatches)
	tr.full = func(waited time.Duration) {
		n, first := tr.unresolved()
		p.Log.Warn("reading waits: the in-flight bound is full and Kafka has not acknowledged the oldest batch",
			"waited", waited.Round(time.Second), "unacknowledged_batches", n, "acknowledged_behind_it", tr.acknowledgedBehind(),
			"first_unacknowledged_end", first, "last_recorded", tr.lastCommitted(), "max_pending_batches", p.MaxPendingBatches)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	// One batch of read-ahead: the reader decodes the next batch while this goroutine encodes and sends
	// the last, which is all the overlap two stages need. Each batch held here is up to a thousand decoded
	// changes; four of them were a fifth of the heap in a backlog drain, for no measurable throughput.
	batches := make(chan source.Batch, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := p.Reader.Run(ctx, batches); err != nil && !errors.Is(err, context.Canceled) {
			cancel(&ReaderError{Err: err})
		}
	}()
	if p.Transactions != nil {
		return p.runTransactional(ctx, cancel, batches, tr, &wg)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		p.commitLoop(ctx, tr, cancel)
	}()

	err := p.produce(ctx, batches, tr)
	if err != nil {
		cancel(err)
	}
	wg.Wait()
	// Final commit: wait up to FlushTimeout for outstanding acks so a stop records what was delivered.
	// INVARIANT: what is still unacknowledged afterwards is not recorded; it is re-read after the restart.
	flushCtx, cancelFlush := context.WithTimeout(context.Background(), p.flushTimeout())
	ferr := p.Sender.Flush(flushCtx)
	cancelFlush()
	cerr := p.commit(tr)
	if cerr != nil && err == nil {
		err = cerr
	}
	if n, first := tr.unresolved(); n > 0 || ferr != nil || cerr != nil {
		p.Log.Warn("stopping with batches Kafka did not acknowledge; their offsets are not recorded and they are read again after the restart",
			"unacknowledged_batches", n, "first_unacknowledged_end", first, "last_recorded", tr.lastCommitted(),
			"flush_timeout", p.flushTimeout(), "flush_error", ferr, "commit_error", cerr)
	}
	if cause := context.Cause(ctx); err == nil && cause != nil && !errors.Is(cause, context.Canceled) {
		err = cause
	}
	if terr := tr.failure(); err == nil && terr != nil {
		err = terr
	}
	return err
}

// produce encodes and sends batches in order until ctx ends. A panic of a transform, a converter or the
// sink becomes its error (a *source.PanicError naming the batch), so that Run still stops the reader and
// records what Kafka acknowledged before the task fails.
func (p *Pipeline) produce(ctx context.Context, batches <-chan source.Batch, tr *tracker) (err error) {
	var b source.Batch
	defer func() {
		if v := recover(); v != nil {
			err = source.Recovered(v, b.Position)
		}
	}()
	for {
		b = source.Batch{}
		select {
		case <-ctx.Done():
			return nil
		case b = <-batches:
		}
		if _, err := p.send(ctx, b, tr); err != nil || ctx.Err() != nil {
			return err
		}
		if idle, ok := p.Sender.(sink.IdleAware); ok && len(batches) == 0 {
			idle.SourceIdle() // nothing more ready: what the sink holds back to batch, it may send now
		}
	}
}

// send encodes b's events and hands them to the sink, tracked by tr, and returns how many records it
// sent. It returns nil with ctx ended when ctx ended first.
func (p *Pipeline) send(ctx context.Context, b source.Batch, tr *tracker) (int, error) {
	recs, err := p.convert(b)
	if err != nil {
		return 0, err
	}
	return p.deliver(ctx, b, recs, tr)
}

// convert runs b's events through the transforms and the converters. A record that is filtered, or
// skipped by errors.tolerance=all, is not produced; the batch's offset still counts once the rest is
// acknowledged.
func (p *Pipeline) convert(b source.Batch) ([]sink.Record, error) {
	recs := make([]sink.Record, 0, len(b.Events))
	for i := range b.Events {
		ev := &b.Events[i]
		if p.Transforms != nil {
			original := *ev
			keep, err := p.Transforms.Transform(ev)
			if err != nil {
				if err := p.recordFailed(stageTransformation, &original, err, b.Position); err != nil {
					return nil, err
				}
				continue
			}
			if !keep {
				continue
			}
		}
		rec, err := p.Encoder.Encode(ev)
		if err != nil {
			if err := p.recordFailed(stageConversion, ev, err, b.Position); err != nil {
				return nil, err
			}
			continue
		}
		if p.Transactions != nil && rec.Topic == p.Transactions.OffsetsTopic {
			return nil, source.Fatal(fmt.Errorf("%w (topic %s, at %v)", ErrOwnOffsetsTopic, rec.Topic, b.Position))
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

// deliver hands b's converted records to the sink, tracked by tr, and returns how many it sent. It
// returns nil with ctx ended when ctx ended first.
func (p *Pipeline) deliver(ctx context.Context, b source.Batch, recs []sink.Record, tr *tracker) (int, error) {
	seq, err := tr.add(ctx, b.Offset, b.Position)
	if err != nil {
		return 0, nil // ctx ended while waiting for room
	}
	if len(recs) == 0 {
		tr.ack(seq, nil)
		return 0, nil
	}
	if err := p.Sender.Send(ctx, recs, func(err error) { tr.ack(seq, err) }); err != nil {
		if ctx.Err() != nil {
			return 0, nil
		}
		return 0, fmt.Errorf("sending to Kafka: %w", err)
	}
	return len(recs), nil
}

// commitLoop records offsets every FlushInterval, and reports the queue.
func (p *Pipeline) commitLoop(ctx context.Context, tr *tracker, cancel context.CancelCauseFunc) {
	t := time.NewTicker(p.FlushInterval)
	defer t.Stop()
	queueCapacity.WithLabelValues(p.Name, "0").Set(float64(cap(tr.slots)))
	size := queueSize.WithLabelValues(p.Name, "0")
	for {
		size.Set(float64(len(tr.slots)))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-tr.failed:
			cancel(tr.failure())
			return
		}
		if err := p.commit(tr); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				// As Connect's offset flush: give this one up and try again at the next interval.
				n, first := tr.unresolved()
				p.Log.Warn("offset flush timed out; retrying at the next interval", "timeout", p.flushTimeout(),
					"unacknowledged_batches", n, "first_unacknowledged_end", first, "last_recorded", tr.lastCommitted(), "error", err)
				continue
			}
			cancel(err)
			return
		}
	}
}

// flushTimeout is FlushTimeout, or Connect's default.
func (p *Pipeline) flushTimeout() time.Duration {
	if p.FlushTimeout > 0 {
		return p.FlushTimeout
	}
	return 5 * time.Second
}

// commit writes the offset of the highest contiguous acknowledged batch, then releases its position.
func (p *Pipeline) commit(tr *tracker) error {
	offset, pos, ok := tr.committable()
	if !ok {
		return nil
	}
	// INVARIANT: Kafka ack (tracker) → durable offset (WriteOffset) → source release (Release). Never reorder.
	// A write that times out releases nothing: the position stays held until a later write succeeds.
	ctx, cancel := context.WithTimeout(context.Background(), p.flushTimeout())
	defer cancel()
	if err := p.Offsets.WriteOffset(ctx, offset); err != nil {
		return fmt.Errorf("writing the offset at %v: %w", pos, err)
	}
	p.Reader.Release(pos)
	tr.committed(pos)
	return nil
}

// ErrorHandling is how a connector treats a record that a transform or a converter fails on: Connect's
// errors.tolerance, errors.log.enable and errors.log.include.messages. The zero value is Connect's default.
type ErrorHandling struct {
	// TolerateAll is errors.tolerance=all: the record is skipped and the task goes on. With
	// none, the task fails naming the record's topic and key and the failing transform or converter.
	TolerateAll bool
	// Log is errors.log.enable: each tolerated failure is logged at ERROR, without the record's content.
	Log bool
	// LogRecords is errors.log.include.messages: the log line also carries the record's topic, key, value
	// and headers.
	LogRecords bool
}

// ParseErrorHandling reads the errors.* settings of a connector config, as Connect's ConnectorConfig does.
func ParseErrorHandling(props map[string]string) (ErrorHandling, error) {
	var h ErrorHandling
	switch v := strings.TrimSpace(props["errors.tolerance"]); v {
	case "", "none":
	case "all":
		h.TolerateAll = true
	default:
		return h, fmt.Errorf("invalid value %s for configuration errors.tolerance: String must be one of: none, all", v)
	}
	for key, dst := range map[string]*bool{"errors.log.enable": &h.Log, "errors.log.include.messages": &h.LogRecords} {
		switch v := strings.ToLower(strings.TrimSpace(props[key])); v {
		case "", "false":
		case "true":
			*dst = true
		default:
			return h, fmt.Errorf("invalid value %s for configuration %s: Expected value to be either true or false", props[key], key)
		}
	}
	return h, nil
}

// Stages of a source record that errors.tolerance covers, named as Connect's errors.Stage names them.
const (
	stageTransformation = "TRANSFORMATION"
	stageConversion     = "CONVERSION"
)

// recordFailed applies errors.tolerance to a record a transform or converter failed on: nil means skip it,
// otherwise the error ends the run. A schema registry that could not be reached is not the record's fault:
// that error ends the run whatever the tolerance, and the task restarts from its durable offset.
func (p *Pipeline) recordFailed(stage string, ev *source.Event, err error, at source.Position) error {
	if errors.Is(err, avro.ErrRegistry) && !source.IsFatal(err) {
		return fmt.Errorf("encoding an event for topic %s (batch ending at %v): %w", ev.Topic, at, err)
	}
	class := "converter"
	var terr *transforms.TransformError
	if errors.As(err, &terr) {
		class = terr.Class
	}
	if !p.Errors.TolerateAll {
		// The trace names where the record is (its topic, the columns of its key, the batch's position),
		// never its key or row values: a task's trace is shown by /status and /health to every client.
		return source.Fatal(fmt.Errorf("tolerance exceeded in error handler (errors.tolerance=none): stage %s (%s) failed on a record for topic %s keyed by %s (batch ending at %v): %w",
			stage, class, ev.Topic, keyColumns(ev), at, err))
	}
	if p.Errors.Log {
		attrs := []any{"stage", stage, "class", class, "error", err}
		if p.Errors.LogRecords {
			attrs = append(attrs, "topic", ev.Topic, "key", recordKeyString(ev), "value", connectString(ev.Value))
			for _, h := range ev.Headers {
				attrs = append(attrs, "header."+h.Key, connectString(h.Value))
			}
		}
		p.Log.Error("Error encountered in task; the record is skipped (errors.tolerance=all)", attrs...)
	}
	return nil
}

// recordKeyString renders a record's key as Connect's toString does ({"id":1} for a struct).
func recordKeyString(ev *source.Event) string { return connectString(ev.Key) }

// keyColumns names the fields of a record's key schema, without their values: "columns [id, tenant]",
// or what the key is when it is no struct.
func keyColumns(ev *source.Event) string {
	switch {
	case ev.KeySchema == nil && ev.Key == nil:
		return "no key"
	case ev.KeySchema == nil || ev.KeySchema.Type != schema.StructT:
		return "a key without columns"
	}
	names := make([]string, len(ev.KeySchema.Fields))
	for i, f := range ev.KeySchema.Fields {
		names[i] = f.Name
	}
	return "columns [" + strings.Join(names, ", ") + "]"
}

func connectString(v any) string {
	var b strings.Builder
	if err := appendConnectString(&b, v, false); err != nil {
		return fmt.Sprintf("%v", v)
	}
	return b.String()
}

// runTransactional is Run under exactly-once delivery: the goroutine that sends the batches also starts
// the commits, at the boundaries Transactions names, and sends nothing while one is in flight.
func (p *Pipeline) runTransactional(ctx context.Context, cancel context.CancelCauseFunc, batches <-chan source.Batch, tr *tracker, reader *sync.WaitGroup) error {
	tx := p.Transactions
	if tx.MaxRecords <= 0 {
		tx.MaxRecords = 2048
	}
	if tx.PollLinger <= 0 {
		tx.PollLinger = DefaultPollLinger
	}
	t := transaction{p: p, tr: tr}
	err := t.run(ctx, batches)
	if err != nil {
		cancel(err)
	}
	reader.Wait()
	// A commit in flight ends first, however the loop ended: every record of it was sent.
	if cerr := t.awaitCommit(); err == nil {
		err = cerr
	}
	// Final commit: what the stop interrupted is committed if it ends at an offset, within the commit
	// timeout. INVARIANT: what does not commit is aborted (by the next producer of the transactional.id)
	// and read again after the restart, as are the batches held back during the last commit.
	if err == nil && tr.failure() == nil && t.committable() {
		t.startCommit()
		err = t.awaitCommit()
	}
	if cause := context.Cause(ctx); err == nil && cause != nil && !errors.Is(cause, context.Canceled) {
		err = cause
	}
	if terr := tr.failure(); err == nil && terr != nil {
		err = terr
	}
	return err
}

// transaction is the open transaction of runTransactional: what it has sent since the last commit
// began, and that commit while it is in flight.
type transaction struct {
	p       *Pipeline
	tr      *tracker
	records int                  // sent in the open transaction
	offset  []source.OffsetField // of its last batch with one: what a commit records; nil when none
	// split is set while the last batch sent was a part of a split source transaction (no offset): its
	// records are in the open transaction but no offset stands for them, so it must not commit yet.
	split  bool
	pos    source.Position
	opened time.Time

	// committing delivers the outcome of the commit in flight; nil when none. Until it is in, nothing is
	// sent: a Send would join the committing transaction. The batches read meanwhile are converted and
	// held (up to MaxRecords records), so that the next transaction's transforms and converters run
	// during the commit's round trips (the last acknowledgements, EndTxn) instead of after them.
	committing chan error
	held       []heldBatch
}

// heldBatch is a batch read and converted while a commit was in flight, not yet sent.
type heldBatch struct {
	batch source.Batch
	recs  []sink.Record
}

// run sends batches into transactions and starts their commits at the boundaries, until ctx ends or a
// send or commit fails. A panic of a transform, a converter or the sink becomes its error, as in produce.
func (t *transaction) run(ctx context.Context, batches <-chan source.Batch) (err error) {
	var b source.Batch
	defer func() {
		if v := recover(); v != nil {
			err = source.Recovered(v, b.Position)
		}
	}()
	tx := t.p.Transactions
	var tick <-chan time.Time
	if tx.Boundary == BoundaryInterval {
		ticker := time.NewTicker(tx.Interval)
		defer ticker.Stop()
		tick = ticker.C
	}
	// dry fires once no batch arrived for PollLinger (BoundaryPoll); nil while no transaction waits on it.
	var dry <-chan time.Time
	idle := time.NewTimer(tx.PollLinger)
	defer idle.Stop()
	// take sends a converted batch into the open transaction and starts its commit when it is due.
	take := func(b source.Batch, recs []sink.Record) error {
		n, err := t.p.deliver(ctx, b, recs, t.tr)
		if err != nil || ctx.Err() != nil {
			return err
		}
		t.records += n
		t.split = b.Offset == nil
		if t.split {
			dry = nil
			return nil // inside a source transaction: an offset would stand for a part of it
		}
		t.offset, t.pos = b.Offset, b.Position
		var due bool
		switch tx.Boundary {
		case BoundaryConnector:
			due = true
		case BoundaryPoll:
			// Bounded: the transaction ends PollLinger after the reader ran dry, or at MaxRecords.
			due = t.records >= tx.MaxRecords
			if !due {
				idle.Reset(tx.PollLinger)
				dry = idle.C
			}
		case BoundaryInterval:
			due = time.Since(t.opened) >= tx.Interval
		}
		if due {
			dry = nil
			t.startCommit()
		}
		return nil
	}
	t.opened = time.Now()
	for {
		b = source.Batch{}
		in := batches
		if t.committing != nil && t.heldRecords() >= tx.MaxRecords {
			in = nil // enough held: wait for the commit
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.tr.failed:
			return t.tr.failure()
		case err := <-t.committing:
			t.committing = nil
			if err != nil {
				return err
			}
			// Send what was held, in order, until it is all sent or a boundary starts the next commit.
			for len(t.held) > 0 && t.committing == nil {
				h := t.held[0]
				t.held[0] = heldBatch{}
				t.held = t.held[1:]
				b = h.batch
				if err := take(h.batch, h.recs); err != nil || ctx.Err() != nil {
					return err
				}
			}
			continue
		case <-dry:
			dry = nil
			if t.committing == nil && t.committable() {
				t.startCommit()
			}
			continue
		case <-tick:
			if t.committing == nil && t.committable() && time.Since(t.opened) >= tx.Interval {
				t.startCommit()
			}
			continue
		case b = <-in:
		}
		recs, err := t.p.convert(b)
		if err != nil {
			return err
		}
		if t.committing != nil {
			t.held = append(t.held, heldBatch{batch: b, recs: recs})
			continue
		}
		if err := take(b, recs); err != nil || ctx.Err() != nil {
			return err
		}
	}
}

// heldRecords counts the records held back during the commit in flight.
func (t *transaction) heldRecords() int {
	n := 0
	for _, h := range t.held {
		n += len(h.recs)
	}
	return n
}

// committable reports whether the open transaction may end now: it holds an offset, and no part of a
// split source transaction was sent after it.
func (t *transaction) committable() bool { return t.offset != nil && !t.split }

// startCommit ends the open transaction in the background: with the offset record of its last offset,
// then it releases the offset's position; awaitCommit or the run loop takes the outcome. A new
// transaction opens at once. INVARIANT: Kafka transaction committed (its records and the offset) →
// source release (Release). Never reorder. One commit at a time: the caller starts one only when none is
// in flight, and sends nothing until it is done.
func (t *transaction) startCommit() {
	offset, pos := t.offset, t.pos
	t.records, t.offset, t.pos, t.opened = 0, nil, nil, time.Now()
	done := make(chan error, 1)
	t.committing = done
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- source.Recovered(v, pos)
			}
		}()
		done <- t.commitAt(offset, pos)
	}()
}

// awaitCommit waits for the commit in flight, if any, and returns its outcome.
func (t *transaction) awaitCommit() error {
	if t.committing == nil {
		return nil
	}
	err := <-t.committing
	t.committing = nil
	return err
}

func (t *transaction) commitAt(offset []source.OffsetField, pos source.Position) error {
	tx := t.p.Transactions
	rec, err := tx.OffsetRecord(offset)
	if err != nil {
		return fmt.Errorf("encoding the offset at %v: %w", pos, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cmp.Or(tx.CommitTimeout, time.Minute))
	defer cancel()
	if err := tx.Sink.Commit(ctx, []sink.Record{rec}); err != nil {
		return fmt.Errorf("committing the transaction ending at %v: %w", pos, err)
	}
	t.p.Reader.Release(pos)
	t.tr.committed(pos)
	return nil
}

// ReaderError is a failure of the pipeline's reader (the database side), as opposed to the sink's or a
// transform's: the task tells a reader that fails the same way on every attempt from a Kafka outage.
type ReaderError struct{ Err error }

func (e *ReaderError) Error() string { return "reader: " + e.Err.Error() }
func (e *ReaderError) Unwrap() error { return e.Err }

package connect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/connect/pipeline"
	"github.com/cdcd/cdcd/connect/transforms"
	"github.com/cdcd/cdcd/sink"
	"github.com/cdcd/cdcd/source"
)

// State is a connector's or task's state as Connect's REST API reports it.
type State string

const (
	Unassigned State = "UNASSIGNED"
	Running    State = "RUNNING"
	Paused     State = "PAUSED"
	Stopped    State = "STOPPED"
	Failed     State = "FAILED"
	Restarting State = "RESTARTING"
)

// TargetState is what a connector was asked to be: started, paused or stopped (Connect's TargetState).
type TargetState int

const (
	TargetStarted TargetState = iota
	TargetPaused
	TargetStopped
)

// task runs a connector's single task: it restarts the pipeline from the last durable offset after a
// retriable failure (a Kafka outage, a lost database connection), and stays FAILED after a fatal one.
// A task lives from its start until its context is cancelled (stop, restart, delete, shutdown); pausing
// does not end it, it only closes its gate.
type task struct {
	name  string
	props map[string]string
	// secrets are scrubbed from every error the task reports and every line it logs.
	secrets secrets
	log     *slog.Logger
	w       *Worker
	gate    *gate

	cancel context.CancelFunc
	done   chan struct{} // closed when run returned
	// read is the end of the last batch the reader handed on, for the trace of a panic.
	read lastPosition
	// recorded is the connector's durable offset as the last attempt left it (run's and attempt's only,
	// on run's goroutine): an attempt that leaves it unchanged made no progress.
	recorded string
	// abandoned is set when the task did not stop within task.shutdown.graceful.timeout.ms: from then on
	// it records no offset and reports no state (a new task may already run in its place).
	abandoned atomic.Bool
	// reporting is held while a state is reported, and by abandon while it sets abandoned: once abandon
	// returned, no report is under way or to come (distributed mode closes its status queue after that).
	reporting sync.Mutex

	// signaler is the running reader when it takes signals (source.Signaler); nil between attempts.
	signaler atomic.Pointer[source.Signaler]

	mu    sync.Mutex
	state State
	trace string
}

// signal hands a Debezium signal to the task's running reader.
func (c *task) signal(id, kind, data string) error {
	s := c.signaler.Load()
	if s == nil {
		state, _ := c.Status()
		return &RequestError{Kind: Conflict, Message: fmt.Sprintf("the task of connector %s is not reading (state %s); send the signal once it runs", c.name, state)}
	}
	if err := (*s).Signal(id, kind, data); err != nil {
		return &RequestError{Kind: BadRequest, Message: err.Error()}
	}
	return nil
}

func (c *task) setState(s State, err error) {
	trace := ""
	if err != nil {
		trace = err.Error()
	}
	c.setStateTrace(s, trace)
}

// setStateTrace sets the task's state and trace and reports them (to the status topic, the metrics).
func (c *task) setStateTrace(s State, trace string) {
	c.reporting.Lock()
	defer c.reporting.Unlock()
	if c.abandoned.Load() {
		return
	}
	c.mu.Lock()
	c.state = s
	c.trace = trace
	c.mu.Unlock()
	taskStateChanged(c.name, s)
	if c.w.onTaskState != nil {
		state, trace := c.Status()
		c.w.onTaskState(c.name, state, trace)
	}
}

// Status returns the task's state and, when it failed, why. A running task whose gate is closed is PAUSED.
func (c *task) Status() (State, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == Running && c.gate.isClosed() {
		return Paused, ""
	}
	return c.state, c.trace
}

// abandon gives up on a task that did not stop within timeout (task.shutdown.graceful.timeout.ms): it
// records no offset from now on, so what it still delivers is read again by its successor, and its
// state is no longer reported. Its goroutine ends by itself once its bounded waits (the final flush, the
// sink's close) run out.
func (c *task) abandon(timeout time.Duration) {
	c.reporting.Lock()
	defer c.reporting.Unlock()
	if c.abandoned.Swap(true) {
		return
	}
	c.log.Error("task did not stop within task.shutdown.graceful.timeout.ms; abandoning it: what it did not record is read again at the next start",
		"timeout", timeout, "last_read_end", c.read.get())
}

// setRunning marks the task RUNNING as an attempt starts its pipeline. A retry's trace stays until the
// attempt reads its first batch (reading): until then the database may still be unreachable.
func (c *task) setRunning() {
	c.mu.Lock()
	trace := c.trace
	c.mu.Unlock()
	if !strings.HasPrefix(trace, retryPrefix) {
		trace = ""
	}
	c.setStateTrace(Running, trace)
}

// waitPrefix starts the trace of a running task whose reader waits for something it names (source.Env.Waiting).
const waitPrefix = "waiting: "

// waiting shows what the reader waits for in the running task's trace, and clears it ("") once it no
// longer waits.
func (c *task) waiting(what string) {
	c.mu.Lock()
	state, trace := c.state, c.trace
	c.mu.Unlock()
	switch {
	case state != Running:
	case what != "":
		c.setStateTrace(Running, waitPrefix+what)
	case strings.HasPrefix(trace, waitPrefix):
		c.setStateTrace(Running, "")
	}
}

// reading is called when an attempt passes on its first batch: a retry's trace is cleared.
func (c *task) reading() {
	c.mu.Lock()
	retrying := c.state == Running && strings.HasPrefix(c.trace, retryPrefix)
	c.mu.Unlock()
	if retrying {
		c.setStateTrace(Running, "")
	}
}

// retryPrefix starts the trace of a RUNNING task that retries after a retriable error.
const retryPrefix = "retrying: "

// run runs the task until ctx ends. Each attempt builds a fresh reader from the durable offset, so
// anything delivered but not recorded is delivered again (at-least-once), and nothing is skipped.
//
// States: RUNNING while an attempt runs; after a retriable error the task stays RUNNING, as Connect shows
// a task that Debezium restarts, but its trace reads "retrying: …" with the last error and the next
// attempt, until an attempt runs again. FAILED with the error as trace after a fatal error, or once
// errors.max.retries consecutive retries failed (Debezium's key: -1, the default, retries forever; 0
// fails at the first error). An attempt that moved the durable offset, or ran for longer than the longest
// backoff, resets the count and the backoff: reading again what the last attempt read (a snapshot's
// schema changes) is no progress. An attempt that read from the database, failed with the error the
// previous attempt failed with, its reader's, and left the durable offset where that one left it, fails the
// task: a retry would do the same again (a database that is down is read from by neither, and a Kafka
// outage is the sink's error: both are retried).
func (c *task) run(ctx context.Context) {
	defer close(c.done)
	maxRetries, err := maxRetries(c.props)
	if err != nil {
		c.log.Error("connector failed; fix the cause and restart it", "error", err)
		c.setState(Failed, err)
		return
	}
	const maxBackoff = time.Minute
	backoff := time.Second
	retries := 0
	lastFailure := "" // the previous attempt's error, when it read from the database
	for {
		before, started, recorded := c.read.count(), time.Now(), c.recorded
		err := c.secrets.error(c.attempt(ctx))
		if ctx.Err() != nil {
			c.setState(Stopped, nil)
			return
		}
		if source.IsFatal(err) {
			c.log.Error("connector failed; fix the cause and restart it", "error", err)
			c.setState(Failed, err)
			return
		}
		progressed := c.recorded != recorded
		var fromReader *pipeline.ReaderError
		sameAgain := c.read.count() != before && errors.As(err, &fromReader)
		if sameAgain && !progressed && err.Error() == lastFailure {
			err = fmt.Errorf("stopped retrying: the task failed twice in a row with the same error at the same recorded offset, so a retry would fail again; fix the cause and restart the task: %w", err)
			c.log.Error("connector failed; fix the cause and restart it", "error", err)
			c.setState(Failed, err)
			return
		}
		lastFailure = ""
		if sameAgain {
			lastFailure = err.Error()
		}
		if progressed || time.Since(started) > maxBackoff {
			retries, backoff = 0, time.Second
		}
		if maxRetries >= 0 && retries >= maxRetries {
			err = fmt.Errorf("the maximum number of retries (errors.max.retries=%d) has been attempted; the last error: %w", maxRetries, err)
			c.log.Error("connector failed; fix the cause and restart it", "error", err)
			c.setState(Failed, err)
			return
		}
		retries++
		c.log.Warn("connector task failed; restarting from the last recorded offset", "in", backoff, "retry", retries, "error", err)
		c.setStateTrace(Running, fmt.Sprintf("%sretry %d%s in %s after: %v", retryPrefix, retries, retryBudget(maxRetries), backoff, err))
		select {
		case <-ctx.Done():
			c.setState(Stopped, nil)
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, maxBackoff)
	}
}

// maxRetries reads Debezium's errors.max.retries (-1, its default: no limit).
func maxRetries(props map[string]string) (int, error) {
	v := strings.TrimSpace(props["errors.max.retries"])
	if v == "" {
		return -1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < -1 {
		return 0, source.Fatal(fmt.Errorf("invalid value %s for configuration errors.max.retries: -1 (no limit), 0 (no retry) or a number of retries", v))
	}
	return n, nil
}

func retryBudget(max int) string {
	if max < 0 {
		return ""
	}
	return fmt.Sprintf(" of %d", max)
}

// attempt runs the task once. A panic anywhere in it (building the reader, the transforms, the sink) fails
// the task instead of the process: a *source.PanicError, fatal, with the stack as the task's trace.
func (c *task) attempt(ctx context.Context) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = source.Recovered(v, c.read.get())
		}
	}()
	plug, err := c.w.plugins.forConfig(c.props)
	if err != nil {
		return source.Fatal(err)
	}
	src, err := plug.NewTask(c.name, c.props, c.log)
	if err != nil {
		return refusalError(c.secrets.refusals(c.props, taskRefusals(plug, c.name)), source.IsFatal(err))
	}
	key, err := offsets.Key(c.name, src.Partition())
	if err != nil {
		return err
	}
	// With exactly-once support the producers of the connector's earlier task generations are fenced
	// first, as Connect fences them before a task initialises (the round is the leader's).
	if c.w.preflight != nil {
		if err := c.w.preflight(ctx, c.name); err != nil {
			return err
		}
	}
	store, offsetsTopic, err := c.w.offsetsFor(ctx, c.name, c.props)
	if err != nil {
		return err
	}
	// Another worker may have run this connector until a moment ago: read what it recorded.
	if err := store.ReadToEnd(ctx); err != nil {
		return err
	}
	defer func() {
		raw, _ := store.Get(key)
		c.recorded = string(raw)
	}()
	own, _ := store.(*connectorOffsets)
	if _, ok := store.Get(key); !ok && own != nil {
		if _, ok := own.secondary.Get(key); ok {
			c.log.Warn("the connector's own offsets topic has no offset for it, so it starts without one, as Kafka Connect does: "+
				"the offset in the worker's offsets topic is not used (copy it over with PATCH /connectors/{name}/offsets while "+
				"the connector is stopped to resume from it)", "offsets_topic", offsetsTopic)
		}
	}
	var stored map[string]any
	if raw, ok := store.Get(key); ok {
		m, err := offsets.DecodeValue(raw)
		if err != nil {
			return fmt.Errorf("stored offset of connector %q: %w", c.name, err)
		}
		stored = m.Map()
	}
	if err := c.w.checkOverrides(c.props); err != nil {
		return err
	}
	reader, err := src.OpenReader(stored, source.Env{Log: c.log, Logs: connectorLogs{LogOpener: c.w.logs, props: c.w.currentNames(c.props)}, Signals: c.w.signals,
		Waiting: c.waiting})
	if err != nil {
		return fmt.Errorf("stored offset of connector %q: %w", c.name, err)
	}
	if s, ok := reader.(source.Signaler); ok {
		c.signaler.Store(&s)
		defer c.signaler.Store(nil)
	}
	chain, err := transforms.New(c.props, c.log)
	if err != nil {
		return err
	}
	errorHandling, err := pipeline.ParseErrorHandling(c.props)
	if err != nil {
		return source.Fatal(err)
	}
	exactlyOnce, err := c.w.exactlyOnce(c.name, c.props, c.log)
	if err != nil {
		return source.Fatal(err)
	}
	sinkCfg := c.w.sinkConfig(c.name, c.props)
	if exactlyOnce != nil {
		sinkCfg.TransactionalID = exactlyOnce.transactionalID
	}
	sender, err := c.w.sinks.OpenSink(sinkCfg, c.log)
	if err != nil {
		return source.Fatal(err)
	}
	defer func() {
		// The sink's close is bounded whatever Kafka does: it fails what is still outstanding.
		ctx, cancel := context.WithTimeout(context.Background(), c.w.flushTimeout)
		defer cancel()
		if err := sender.Close(ctx); err != nil {
			c.log.Warn("closing the producer", "error", err)
		}
	}()

	c.setRunning()
	p := &pipeline.Pipeline{
		Reader:        gatedReader{Reader: reader, gate: c.gate, read: &c.read, reading: c.reading, maxBatch: maxBatchSize(c.props)},
		Name:          c.name,
		Transforms:    chain,
		Errors:        errorHandling,
		Encoder:       c.w.encoder,
		Sender:        sender,
		Offsets:       storeOffsetWriter{store: store, key: key, abandoned: &c.abandoned},
		FlushInterval: c.w.flushInterval,
		FlushTimeout:  c.w.flushTimeout,
		Log:           c.log,
	}
	if exactlyOnce != nil {
		transactional, ok := sender.(sink.Transactional)
		if !ok {
			return source.Fatal(fmt.Errorf("exactly.once.source.support=enabled: the sink of connector %q has no transactions", c.name))
		}
		p.Transactions = exactlyOnce.transactions(transactional, p.Offsets.(storeOffsetWriter), offsetsTopic, own)
	}
	return p.Run(ctx)
}

// storeOffsetWriter stores one connector partition's offset in the worker's offset store.
type storeOffsetWriter struct {
	store offsetStore
	key   []byte
	// abandoned, once set, refuses every write: the task was given up and a successor owns the offset.
	abandoned *atomic.Bool
}

// errAbandoned refuses the offset writes of an abandoned task.
var errAbandoned = errors.New("the task was abandoned after task.shutdown.graceful.timeout.ms; its offset is not recorded")

func (f storeOffsetWriter) WriteOffset(ctx context.Context, offset []source.OffsetField) error {
	value, err := f.encode(offset)
	if err != nil {
		return err
	}
	return f.store.Put(ctx, []offsets.Entry{{Key: f.key, Value: value}})
}

// encode is offset's value bytes, refused once the task was abandoned.
func (f storeOffsetWriter) encode(offset []source.OffsetField) ([]byte, error) {
	if f.abandoned != nil && f.abandoned.Load() {
		return nil, errAbandoned
	}
	fields := make(offsets.Fields, len(offset))
	for i, o := range offset {
		fields[i] = offsets.Field{Name: o.Name, Value: o.Value}
	}
	return offsets.EncodeValue(fields)
}

// gate holds a paused task's reader back: while closed, no batch moves on, so the reader blocks on its
// output and stops reading, yet keeps its replication connection and its slot (a paused connector holds
// its place in the WAL, as a paused Debezium task does).
type gate struct {
	mu     sync.Mutex
	closed bool
	opened chan struct{} // closed and replaced on every open
}

func newGate(closed bool) *gate { return &gate{closed: closed, opened: make(chan struct{})} }

func (g *gate) isClosed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed
}

// set closes or opens the gate; opening it wakes every waiter.
func (g *gate) set(closed bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed && !closed {
		close(g.opened)
		g.opened = make(chan struct{})
	}
	g.closed = closed
}

// wait blocks while the gate is closed, or until ctx ends.
func (g *gate) wait(ctx context.Context) error {
	for {
		g.mu.Lock()
		closed, opened := g.closed, g.opened
		g.mu.Unlock()
		if !closed {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-opened:
		}
	}
}

// gatedReader passes a Reader's batches on only while its gate is open, and runs the Reader in a goroutine
// of its own whose panic becomes Run's error (a *source.PanicError after the last batch passed on).
type gatedReader struct {
	source.Reader
	gate *gate
	read *lastPosition // where the end of each batch passed on is recorded
	// reading, when not nil, is called once, when the first batch is passed on.
	reading func()
	// maxBatch bounds the events of each batch passed on (max.batch.size); a larger one is split
	// (splitBatch). 0: no bound.
	maxBatch int
}

func (r gatedReader) Run(ctx context.Context, out chan<- source.Batch) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan source.Batch)
	done := make(chan error, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- source.Recovered(v, nil) // the position is filled in by result
			}
		}()
		done <- r.Reader.Run(ctx, batches)
	}()
	for {
		if err := r.gate.wait(ctx); err != nil {
			cancel()
			return r.result(<-done)
		}
		select {
		case err := <-done:
			return r.result(err)
		case b := <-batches:
			r.read.set(b.Position)
			if r.reading != nil {
				r.reading()
				r.reading = nil
			}
			for _, part := range splitBatch(b, r.maxBatch) {
				select {
				case out <- part:
				case <-ctx.Done():
					return r.result(<-done)
				}
			}
		}
	}
}

// result is the reader's return. A panic gets the end of the last batch passed on as its position, read
// here, where it was recorded: the reader's goroutine may panic right after a send, before it was.
func (r gatedReader) result(err error) error {
	if pe, ok := err.(*source.PanicError); ok {
		pe.Position = r.read.get()
	}
	return err
}

// lastPosition holds a position written by one goroutine and read by others, and counts the sets.
type lastPosition struct {
	p atomic.Pointer[source.Position]
	n atomic.Uint64
}

func (l *lastPosition) set(pos source.Position) {
	l.p.Store(&pos)
	l.n.Add(1)
}

// count is how many positions were set so far (positions need not be comparable).
func (l *lastPosition) count() uint64 { return l.n.Load() }

// get returns the last position set, nil before the first.
func (l *lastPosition) get() source.Position {
	if p := l.p.Load(); p != nil {
		return *p
	}
	return nil
}

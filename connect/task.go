package connect

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/connect/pipeline"
	"github.com/cdcd/cdcd/connect/transforms"
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

	mu    sync.Mutex
	state State
	trace string
}

func (c *task) setState(s State, err error) {
	c.mu.Lock()
	c.state = s
	c.trace = ""
	if err != nil {
		c.trace = err.Error()
	}
	c.mu.Unlock()
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

// run runs the task until ctx ends. Each attempt builds a fresh reader from the durable offset, so
// anything delivered but not recorded is delivered again (at-least-once), and nothing is skipped.
func (c *task) run(ctx context.Context) {
	defer close(c.done)
	backoff := time.Second
	for {
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
		c.log.Warn("connector task failed; restarting from the last recorded offset", "in", backoff, "error", err)
		c.setState(Running, err)
		select {
		case <-ctx.Done():
			c.setState(Stopped, nil)
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, time.Minute)
	}
}

func (c *task) attempt(ctx context.Context) error {
	plug, err := c.w.plugins.forConfig(c.props)
	if err != nil {
		return source.Fatal(err)
	}
	src, err := plug.NewTask(c.name, c.props, c.log)
	if err != nil {
		return err
	}
	key, err := offsets.Key(c.name, src.Partition())
	if err != nil {
		return err
	}
	// Another worker may have run this connector until a moment ago: read what it recorded.
	if err := c.w.offsets.ReadToEnd(ctx); err != nil {
		return err
	}
	var stored map[string]any
	if raw, ok := c.w.offsets.Get(key); ok {
		m, err := offsets.DecodeValue(raw)
		if err != nil {
			return fmt.Errorf("stored offset of connector %q: %w", c.name, err)
		}
		stored = m.Map()
	}
	reader, err := src.OpenReader(stored, source.Env{Log: c.log, Logs: c.w.logs})
	if err != nil {
		return fmt.Errorf("stored offset of connector %q: %w", c.name, err)
	}
	chain, err := transforms.New(c.props, c.log)
	if err != nil {
		return err
	}
	errorHandling, err := pipeline.ParseErrorHandling(c.props)
	if err != nil {
		return source.Fatal(err)
	}
	sender, err := c.w.sinks.OpenSink(c.w.sinkConfig(c.name, c.props), c.log)
	if err != nil {
		return source.Fatal(err)
	}
	defer sender.Close(context.Background())

	c.setState(Running, nil)
	p := &pipeline.Pipeline{
		Reader:        gatedReader{Reader: reader, gate: c.gate},
		Name:          c.name,
		Transforms:    chain,
		Errors:        errorHandling,
		Encoder:       c.w.encoder,
		Sender:        sender,
		Offsets:       storeOffsetWriter{store: c.w.offsets, key: key},
		FlushInterval: c.w.flushInterval,
		Log:           c.log,
	}
	return p.Run(ctx)
}

// storeOffsetWriter stores one connector partition's offset in the worker's offset store.
type storeOffsetWriter struct {
	store offsetStore
	key   []byte
}

func (f storeOffsetWriter) WriteOffset(offset []source.OffsetField) error {
	fields := make(offsets.Fields, len(offset))
	for i, o := range offset {
		fields[i] = offsets.Field{Name: o.Name, Value: o.Value}
	}
	value, err := offsets.EncodeValue(fields)
	if err != nil {
		return err
	}
	return f.store.Put(context.Background(), []offsets.Entry{{Key: f.key, Value: value}})
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

// gatedReader passes a Reader's batches on only while its gate is open.
type gatedReader struct {
	source.Reader
	gate *gate
}

func (r gatedReader) Run(ctx context.Context, out chan<- source.Batch) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan source.Batch)
	done := make(chan error, 1)
	go func() { done <- r.Reader.Run(ctx, batches) }()
	for {
		if err := r.gate.wait(ctx); err != nil {
			cancel()
			return <-done
		}
		select {
		case err := <-done:
			return err
		case b := <-batches:
			select {
			case out <- b:
			case <-ctx.Done():
				return <-done
			}
		}
	}
}

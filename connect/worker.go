package connect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/connect/pipeline"
	"github.com/cdcd/cdcd/schema/configdef"
	"github.com/cdcd/cdcd/sink"
	"github.com/cdcd/cdcd/source"
)

// Worker is a standalone worker: connect-standalone's behaviour with the same worker and connector files,
// and the herder behind its REST API (herder.go). Connector configs live in memory, as in Connect's
// standalone mode; offsets live in the offsets file.
type Worker struct {
	cfg           *config.Worker
	log           *slog.Logger
	offsets       offsetStore
	encoder       *pipeline.RecordEncoder
	flushInterval time.Duration

	// life is the parent of every task's context; Shutdown cancels it.
	life     context.Context
	shutdown context.CancelFunc
	tasks    sync.WaitGroup

	// opMu serialises the herder's operations (create, stop, restart, delete…), as Connect's synchronized
	// StandaloneHerder does; an operation may wait for a task to stop while holding it. mu guards the fields
	// below and is held only briefly, so status reads never wait for an operation.
	opMu       sync.Mutex
	mu         sync.Mutex
	connectors map[string]*connector
	workerID   string
	closed     bool
	onDelete   DeleteHook

	plugins connectorSet
	sinks   sink.Opener
	logs    source.LogOpener

	// onTaskState, when set, hears every state a task reports (distributed mode writes it to the status
	// topic). It is called from the task's goroutine, without the worker's locks held.
	onTaskState func(connector string, state State, trace string)
}

// offsetStore is where a worker's offsets live: the offsets file (standalone) or the offset topic
// (distributed).
type offsetStore interface {
	Get(key []byte) (value []byte, ok bool)
	Entries() []offsets.Entry
	// Put returns once the entries are durable.
	Put(ctx context.Context, entries []offsets.Entry) error
	// ReadToEnd waits until what other workers wrote before the call is visible to Get.
	ReadToEnd(ctx context.Context) error
}

// fileOffsets is the standalone offsets file as an offsetStore: this process is its only writer.
type fileOffsets struct{ *offsets.FileStore }

func (f fileOffsets) Put(_ context.Context, entries []offsets.Entry) error {
	return f.FileStore.Put(entries)
}

func (fileOffsets) ReadToEnd(context.Context) error { return nil }

// connector is one configured connector: its config as given, what it was asked to be, and its task
// (nil while stopped).
type connector struct {
	name   string
	config map[string]string
	target TargetState
	task   *task
}

// NewStandalone builds a standalone worker from a parsed worker config (config.ParseWorker with
// config.Standalone) and the parts cmd/cdcd wired. Nothing runs until AddConnector (or a REST call)
// creates a connector.
func NewStandalone(cfg *config.Worker, parts Parts, log *slog.Logger) (*Worker, error) {
	store, err := offsets.OpenFile(cfg.OffsetStorageFile)
	if err != nil {
		return nil, fmt.Errorf("offset.storage.file.filename: %w", err)
	}
	return newWorker(cfg, fileOffsets{store}, parts, log)
}

// WarnUnknownWorkerKeys logs each worker key that neither Connect nor a wired part defines, as Connect's
// AbstractConfig.logUnused does.
func WarnUnknownWorkerKeys(res configdef.Result, parts Parts, log *slog.Logger) {
	for _, u := range res.Unknown {
		if parts.OwnsWorkerKey == nil || !parts.OwnsWorkerKey(u.Name) {
			log.Warn("unknown worker property ignored", "key", u.Name, "did_you_mean", u.Suggestion)
		}
	}
}

// newWorker builds the part of a worker both modes share: the task runner over an offset store.
func newWorker(cfg *config.Worker, store offsetStore, parts Parts, log *slog.Logger) (*Worker, error) {
	if len(parts.Connectors) == 0 || parts.Sink == nil || parts.Logs == nil {
		return nil, errors.New("connect: the runtime needs connectors, a sink and a log opener (wired in cmd/cdcd)")
	}
	enc, err := pipeline.NewRecordEncoder(cfg)
	if err != nil {
		return nil, err
	}
	life, shutdown := context.WithCancel(context.Background())
	return &Worker{
		cfg: cfg, log: log, offsets: store, encoder: enc,
		flushInterval: cfg.OffsetFlushInterval,
		life:          life, shutdown: shutdown,
		connectors: map[string]*connector{},
		workerID:   "cdcd",
		plugins:    parts.Connectors, sinks: parts.Sink, logs: parts.Logs,
	}, nil
}

// Config returns the worker's parsed configuration.
func (w *Worker) Config() *config.Worker { return w.cfg }

// SetWorkerID sets the id status reports give as worker_id: Connect's advertised REST host:port.
func (w *Worker) SetWorkerID(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.workerID = id
}

// AddConnector creates a connector from a connector file (its config already validated by the caller) in
// the given initial state ("" or RUNNING, PAUSED, STOPPED). Connectors are isolated: one failing does not
// stop the others.
func (w *Worker) AddConnector(name string, props map[string]string, initialState string) error {
	target, err := parseInitialState(initialState)
	if err != nil {
		return err
	}
	_, _, err = w.putConnector(name, props, false, target)
	return err
}

// Shutdown stops every task, letting each record the offset of what Kafka acknowledged, and returns when
// all have stopped. The worker starts no task afterwards.
func (w *Worker) Shutdown() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.shutdown()
	w.tasks.Wait()
}

// startTask starts c's task under the worker's life. Callers hold opMu.
func (w *Worker) startTask(c *connector) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	ctx, cancel := context.WithCancel(w.life)
	t := &task{
		name: c.name, log: w.log.With("connector", c.name), w: w,
		gate: newGate(c.target == TargetPaused), cancel: cancel, done: make(chan struct{}), state: Unassigned,
	}
	c.task = t
	// The task sees the config with placeholders resolved; the herder keeps and shows it unresolved.
	props, err := w.ResolveConnectorConfig(c.config)
	if err != nil {
		t.setState(Failed, err) // a provider's error names the placeholder, never a resolved value
		close(t.done)
		return
	}
	t.props = props
	t.secrets = secretsOf(c.config, props, w.keysOf(props))
	t.log = t.secrets.logger(t.log)
	w.tasks.Add(1)
	go func() {
		defer w.tasks.Done()
		t.run(ctx)
	}()
}

// stopTask stops c's task, if any, and waits until it recorded its last offset. Callers hold opMu.
func (w *Worker) stopTask(c *connector) {
	w.mu.Lock()
	t := c.task
	c.task = nil
	w.mu.Unlock()
	if t == nil {
		return
	}
	t.cancel()
	<-t.done
}

// sinkConfig is the sink configuration of one connector's task: the worker's producer.* settings,
// overridden by the connector's producer.override.* settings, and the connector's config for the sink's
// own keys (topic.creation.*).
func (w *Worker) sinkConfig(name string, props map[string]string) sink.Config {
	producer := maps.Clone(w.cfg.Producer)
	if producer == nil {
		producer = map[string]string{}
	}
	for k, v := range props {
		if rest, ok := strings.CutPrefix(k, "producer.override."); ok {
			producer[rest] = v
		}
	}
	return sink.Config{
		Connector: name,
		// Connect names a source task's producer connector-producer-<connector>-<task>.
		ClientID:             "connector-producer-" + name + "-0",
		Servers:              w.cfg.BootstrapServers,
		Settings:             producer,
		ConnectorConfig:      props,
		TopicCreationEnabled: w.cfg.TopicCreationEnable,
	}
}

// ResolveConnectorConfig resolves config-provider placeholders (${env:…}, ${file:…}) in a connector config
// with the worker's providers, as Connect does before a connector sees its config.
func (w *Worker) ResolveConnectorConfig(props map[string]string) (map[string]string, error) {
	res, err := w.cfg.Providers.Resolve(props)
	if err != nil {
		return nil, err
	}
	return res.Values, nil
}

// ConfiguredConnector is one connector as the worker holds it, for parts wired beside the runtime (the
// slot guardian): its name, its config with placeholders resolved, and its task's state.
type ConfiguredConnector struct {
	Name     string
	Resolved map[string]string
	State    State
}

// ConfiguredConnectors lists every configured connector, whatever its state (a stopped or paused connector
// still owns its slot). A connector whose placeholders no longer resolve is left out. Safe for concurrent
// use; it does not wait for the herder's operations.
func (w *Worker) ConfiguredConnectors() []ConfiguredConnector {
	type entry struct {
		name   string
		config map[string]string
		state  State
	}
	w.mu.Lock()
	entries := make([]entry, 0, len(w.connectors))
	for _, c := range w.connectors {
		state := Stopped
		if c.task != nil {
			state, _ = c.task.Status()
		}
		entries = append(entries, entry{c.name, c.config, state})
	}
	w.mu.Unlock()
	out := make([]ConfiguredConnector, 0, len(entries))
	for _, e := range entries {
		resolved, err := w.ResolveConnectorConfig(e.config)
		if err != nil {
			continue
		}
		out = append(out, ConfiguredConnector{Name: e.name, Resolved: resolved, State: e.state})
	}
	return out
}

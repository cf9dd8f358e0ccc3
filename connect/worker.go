package connect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/connect/pipeline"
	"github.com/cdcd/cdcd/schema/configdef"
	"github.com/cdcd/cdcd/sink"
	"github.com/cdcd/cdcd/source"
	srcmetrics "github.com/cdcd/cdcd/source/metrics"
	"github.com/cdcd/cdcd/source/signal"
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

	// flushTimeout is offset.flush.timeout.ms; stopTimeout is task.shutdown.graceful.timeout.ms.
	flushTimeout, stopTimeout time.Duration

	// life is the parent of every task's context; Shutdown cancels it.
	life     context.Context
	shutdown context.CancelFunc

	// ops serialises the herder's operations (create, stop, restart, delete…) on one connector, as
	// Connect's synchronized StandaloneHerder does, but per connector: an operation may wait up to
	// task.shutdown.graceful.timeout.ms for its task to stop, and a stop that hangs must not hold up a
	// change to another connector. mu guards the fields below and is held only briefly (never across a
	// stop or a network call), so status reads never wait for an operation.
	ops        keyedMutex
	mu         sync.Mutex
	connectors map[string]*connector
	// live are the tasks whose run has not returned, abandoned ones included.
	live     map[*task]struct{}
	liveDone chan struct{} // closed and replaced whenever a live task returns
	workerID string
	closed   bool
	onDelete DeleteHook

	plugins connectorSet
	sinks   sink.Opener
	logs    source.LogOpener
	signals signal.KafkaOpener

	// onTaskState, when set, hears every state a task reports (distributed mode writes it to the status
	// topic). It is called from the task's goroutine, without the worker's locks held.
	onTaskState func(connector string, state State, trace string)
	// ownOffsets, when set (distributed mode), opens a connector's own offsets topic (offsets.storage.topic)
	// on the worker's cluster, creating it when missing; the store stays open while the worker runs.
	ownOffsets func(ctx context.Context, topic string) (offsetStore, error)
	// preflight, when set, runs before an exactly-once task reads its offset and opens its transactional
	// producer (distributed mode's zombie fencing round); an error fails that attempt of the task.
	preflight func(ctx context.Context, connector string) error
}

// offsetStore is where a worker's offsets live: the offsets file (standalone) or the offset topic
// (distributed).
type offsetStore interface {
	Get(key []byte) (value []byte, ok bool)
	// Entries lists the stored keys, sorted; tombstoned keys are not listed. A nil Value is a key known
	// without an offset (connectorOffsets: one only the worker's topic holds).
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

// Entries leaves out the tombstones the file keeps, as Connect's FileOffsetBackingStore forgets the
// partition of a tombstone.
func (f fileOffsets) Entries() []offsets.Entry {
	return slices.DeleteFunc(f.FileStore.Entries(), func(e offsets.Entry) bool { return e.Value == nil })
}

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
	if open := cfg.Providers.Unrestricted(); len(open) > 0 {
		log.Warn("config providers without a restriction: any client of the REST API can name any file or environment "+
			"variable this process can read in a connector config and have it resolved; restrict each one with "+
			"config.providers.<name>.param.allowed.paths (file and directory providers: comma-separated absolute paths) "+
			"or config.providers.<name>.param.allowlist.pattern (env provider: a regular expression of variable names)",
			"providers", open)
	}
	life, shutdown := context.WithCancel(context.Background())
	return &Worker{
		cfg: cfg, log: log, offsets: store, encoder: enc,
		flushInterval: cfg.OffsetFlushInterval,
		flushTimeout:  orDefault(cfg.OffsetFlushTimeout, 5*time.Second),
		stopTimeout:   orDefault(cfg.TaskShutdownGracefulTimeout, 5*time.Second),
		life:          life, shutdown: shutdown,
		connectors: map[string]*connector{},
		live:       map[*task]struct{}{}, liveDone: make(chan struct{}),
		workerID: "cdcd",
		plugins:  parts.Connectors, sinks: parts.Sink, logs: parts.Logs, signals: parts.Signals,
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
//
// Unlike a REST request, a connector file is not checked against its database: a worker restarted while
// a database is down starts, and that connector's task reports the problem (RUNNING with a "retrying: …"
// trace, or FAILED), so the process recovers by itself once the database is back. connect-standalone
// would exit instead.
func (w *Worker) AddConnector(name string, props map[string]string, initialState string) error {
	target, err := parseInitialState(initialState)
	if err != nil {
		return err
	}
	_, _, err = w.putConnector(name, props, false, target, false)
	return err
}

// orDefault is d, or def when d is not positive (Connect's defaults for unset timeouts).
func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Shutdown stops every task, letting each record the offset of what Kafka acknowledged, and returns when
// all have stopped or task.shutdown.graceful.timeout.ms passed, whichever comes first; the tasks still
// running then are abandoned (see abandon). The worker starts no task afterwards.
func (w *Worker) Shutdown() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.shutdown()
	w.awaitStop(nil, time.Now().Add(w.stopTimeout))
}

// awaitStop waits until the cancelled task t has returned (every live task when t is nil), or until
// deadline; whatever is still running then is abandoned. It reports whether all stopped in time.
func (w *Worker) awaitStop(t *task, deadline time.Time) bool {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		w.mu.Lock()
		var waiting []*task
		if t != nil {
			if _, ok := w.live[t]; ok {
				waiting = append(waiting, t)
			}
		} else {
			for lt := range w.live {
				if !lt.abandoned.Load() { // given up already: not waited for twice
					waiting = append(waiting, lt)
				}
			}
		}
		changed := w.liveDone
		w.mu.Unlock()
		if len(waiting) == 0 {
			return true
		}
		select {
		case <-changed:
		case <-timer.C:
			for _, lt := range waiting {
				lt.abandon(w.stopTimeout)
			}
			return false
		}
	}
}

// taskReturned drops t from the live tasks and wakes awaitStop.
func (w *Worker) taskReturned(t *task) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.live, t)
	close(w.liveDone)
	w.liveDone = make(chan struct{})
}

// startTask starts c's task under the worker's life. Callers hold c's operation lock (ops).
func (w *Worker) startTask(c *connector) {
	// The task sees the config with placeholders resolved; the herder keeps and shows it unresolved.
	// c.config does not change meanwhile: the caller holds c's operation lock.
	props, resolveErr := w.ResolveConnectorConfig(c.config)
	ctx, cancel := context.WithCancel(w.life)
	t := &task{
		name: c.name, log: w.log.With("connector", c.name), w: w,
		gate: newGate(c.target == TargetPaused), cancel: cancel, done: make(chan struct{}), state: Unassigned,
	}
	if resolveErr == nil {
		t.props = props
		t.secrets = secretsOf(c.config, props, w.keysOf(props))
		t.log = t.secrets.logger(t.log)
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		cancel()
		return
	}
	c.task = t
	if resolveErr == nil {
		w.live[t] = struct{}{}
	}
	w.mu.Unlock()
	srcmetrics.Declare(c.name)
	if resolveErr != nil {
		// Reported without w.mu held: distributed mode's state callback takes it.
		t.setState(Failed, resolveErr) // a provider's error names the placeholder, never a resolved value
		close(t.done)
		cancel()
		return
	}
	go func() {
		defer w.taskReturned(t)
		t.run(ctx)
	}()
}

// stopTask stops c's task, if any, and waits until it recorded its last offset, at most
// task.shutdown.graceful.timeout.ms: a task still running then is abandoned (see task.abandon), as
// Connect abandons a task that does not stop in time. Callers hold c's operation lock (ops), which is
// therefore held for that bound at most; no other lock is held meanwhile.
func (w *Worker) stopTask(c *connector) {
	w.mu.Lock()
	t := c.task
	c.task = nil
	w.mu.Unlock()
	if t == nil {
		return
	}
	t.cancel()
	w.awaitStop(t, time.Now().Add(w.stopTimeout))
}

// keyedMutex is a mutex per key (a connector's name); a key's entry lives while someone holds or waits
// for it.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*keyedLock
}

type keyedLock struct {
	sync.Mutex
	refs int
}

// lock locks key's mutex and returns its unlock.
func (k *keyedMutex) lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyedLock{}
	}
	l := k.locks[key]
	if l == nil {
		l = &keyedLock{}
		k.locks[key] = l
	}
	l.refs++
	k.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		k.mu.Lock()
		defer k.mu.Unlock()
		if l.refs--; l.refs == 0 {
			delete(k.locks, key)
		}
	}
}

// sinkConfig is the sink configuration of one connector's task: the worker's producer.* settings,
// overridden by the connector's producer.override.* settings (Worker.baseProducerConfigs: the worker's
// top-level settings do not reach a task's producer), the admin client's security settings (see
// adminSettings), and the connector's config for the sink's own keys (topic.creation.*).
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
		AdminSettings:        w.adminSettings(props),
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
	// Hide replaces the connector's secrets (values a provider resolved, passwords, credentials) and their
	// pieces in a text worded from Resolved by someone else: a database server's error, say.
	Hide func(text string) string
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
		out = append(out, ConfiguredConnector{Name: e.name, Resolved: resolved, State: e.state,
			Hide: secretsOf(e.config, resolved, w.keysOf(resolved)).scrub})
	}
	return out
}

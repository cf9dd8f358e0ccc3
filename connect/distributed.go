package connect

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cdcd/cdcd/connect/cluster"
	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/connect/offsets"
	kafkago "github.com/segmentio/kafka-go"
)

// Distributed is a distributed worker: connect-distributed's behaviour with the same worker properties.
// Connector configs, offsets and statuses live in the group's three internal topics (connect/cluster),
// in Connect's formats, so Kafka Connect workers and cdcd workers can take over from each other. A
// connector's task runs only on the member the group's assignment gives it: it is started when
// assigned and stopped before the assignment callback returns when revoked or when the member fences
// itself, so no connector has two owners. Its REST herder (distributed_herder.go) serves reads from the
// topics and refuses writes only the leader may make with NotLeader, which the REST layer forwards.
type Distributed struct {
	w      *Worker
	log    *slog.Logger
	stores *cluster.Stores
	member *cluster.Member
	kafka  kafkago.RoundTripper // the worker's transport for the group and the topics; nil: kafka-go's defaults
	// configs is the config topic as reconciliation reads it (stores.Configs once open).
	configs  configView
	keys     sessionKeys // the group's session key (stores.Configs once open)
	url      string      // this worker's advertised REST URL, ending in "/"
	client   *http.Client
	onDelete DeleteHook // see SetDeleteHook; set before Run

	life       context.Context // set by Run: publishing task configs stops with it
	reconcileC chan struct{}
	statusQ    chan func(context.Context) error
	joined     chan struct{}
	joinOnce   sync.Once
	generation atomic.Int32

	// stateMu guards what the last assignment said; REST requests read it.
	stateMu         sync.Mutex
	leader          bool
	leaderURL       string
	compatible      bool          // the group runs Connect's compatible protocol: no request signatures
	assignedC       chan struct{} // signalled on each assignment (keepSessionKey)
	rebalanceNeeded bool
	rebalanceOffset int64         // the config offset an assignment must reach to clear rebalanceNeeded
	rebalanced      chan struct{} // closed when rebalanceNeeded clears; a new one for each pending rebalance

	// reconcileMu serialises reconciliation and local restarts, which may wait for tasks to stop (each
	// at most task.shutdown.graceful.timeout.ms, all at once). mu guards what reconciliation keeps and
	// is held only briefly: never while a task stops, so readers of it never wait for a stop.
	reconcileMu     sync.Mutex
	mu              sync.Mutex
	owned           map[cluster.Item]bool
	running         map[string]*connector // connector name → its task running here, with its task config
	connectorStates map[string]cluster.State
	publishing      map[string]bool

	known cluster.ConfigSnapshot // the config the reconcile loop saw last (loop goroutine only)

	// ownOffsets are the connectors' own offsets topics opened so far, by name (see openOwnOffsets).
	ownOffsetsMu     sync.Mutex
	ownOffsets       map[string]ownOffsetStore
	ownOffsetsClosed bool // set by closeOwnOffsets: none is opened after it

	// taskWrites serialises the leader's commit records with its zombie fencing rounds (fencingRound).
	taskWrites sync.Mutex
}

// NewDistributed builds a distributed worker from worker properties; nothing connects to Kafka until
// Open.
func NewDistributed(cfg *config.Worker, parts Parts, log *slog.Logger) (*Distributed, error) {
	d := &Distributed{
		log:             log,
		client:          &http.Client{Timeout: 30 * time.Second},
		reconcileC:      make(chan struct{}, 1),
		assignedC:       make(chan struct{}, 1),
		statusQ:         make(chan func(context.Context) error, 1024),
		joined:          make(chan struct{}),
		rebalanceOffset: -1,
		owned:           map[cluster.Item]bool{},
		running:         map[string]*connector{},
		connectorStates: map[string]cluster.State{},
		publishing:      map[string]bool{},
	}
	d.kafka = parts.Kafka
	d.generation.Store(-1)
	// The offset store is opened in Open; the worker reads it through d until then.
	w, err := newWorker(cfg, lazyOffsets{d}, parts, log)
	if err != nil {
		return nil, err
	}
	w.onTaskState = d.taskStateChanged
	w.ownOffsets = d.openOwnOffsets
	if cfg.ExactlyOnceSource {
		w.preflight = d.preflightFencing
	}
	d.w = w
	return d, nil
}

// configView is what reconciliation reads of the config topic.
type configView interface {
	Snapshot() cluster.ConfigSnapshot
}

// lazyOffsets is the offset topic once Open opened it.
type lazyOffsets struct{ d *Distributed }

func (l lazyOffsets) store() *cluster.OffsetStore { return l.d.stores.Offsets }

func (l lazyOffsets) Get(key []byte) ([]byte, bool) { return l.store().Get(key) }

func (l lazyOffsets) Entries() []offsets.Entry { return l.store().Entries() }

func (l lazyOffsets) Put(ctx context.Context, entries []offsets.Entry) error {
	return l.store().Put(ctx, entries)
}

func (l lazyOffsets) ReadToEnd(ctx context.Context) error { return l.store().ReadToEnd(ctx) }

// Config returns the worker's parsed configuration.
func (d *Distributed) Config() *config.Worker { return d.w.cfg }

// SetWorkerID sets the id statuses carry: Connect's advertised REST host:port.
func (d *Distributed) SetWorkerID(id string) { d.w.SetWorkerID(id) }

// SetHTTPClient replaces the client that sends task configs to the leader (e.g. one trusting the
// cluster's TLS certificates).
func (d *Distributed) SetHTTPClient(c *http.Client) { d.client = c }

// Open opens the internal topics (creating them when missing) and prepares the group membership;
// advertisedURL is this worker's REST base URL as other workers reach it.
func (d *Distributed) Open(ctx context.Context, advertisedURL string) error {
	var opts []cluster.StoresOption
	if d.kafka != nil {
		opts = append(opts, cluster.WithTransport(d.kafka))
	}
	stores, err := cluster.OpenStores(ctx, d.w.cfg, func(string) { d.requestReconcile() }, d.log, opts...)
	if err != nil {
		return err
	}
	d.stores, d.configs, d.keys = stores, stores.Configs, stores.Configs
	d.known = stores.Configs.Snapshot()
	d.url = advertisedURL
	mc := cluster.MemberConfigFor(d.w.cfg)
	mc.URL, mc.Configs, mc.OnAssignment, mc.Logger = advertisedURL, stores.Configs, d.onAssignment, d.log
	mc.Transport = d.kafka
	member, err := cluster.NewMember(mc)
	if err != nil {
		stores.Close()
		return err
	}
	d.member = member
	return nil
}

// Joined is closed once the worker completed its first rebalance (GET /health then answers 200).
func (d *Distributed) Joined() <-chan struct{} { return d.joined }

// Run takes part in the group until ctx ends, then stops every task (each records its last offset),
// leaves the group and closes the topics.
func (d *Distributed) Run(ctx context.Context) error {
	d.life = ctx
	statusDone := make(chan struct{})
	go func() {
		defer close(statusDone)
		d.writeStatuses()
	}()
	loopCtx, stopLoop := context.WithCancel(context.Background())
	loopDone := make(chan struct{})
	go func() {
		defer close(loopDone)
		d.reconcileLoop(loopCtx)
	}()
	keyDone := make(chan struct{})
	go func() {
		defer close(keyDone)
		d.keepSessionKey(loopCtx)
	}()
	err := d.member.Run(ctx) // revokes everything through onAssignment before it returns
	stopLoop()
	<-loopDone
	<-keyDone
	d.w.Shutdown()
	close(d.statusQ)
	<-statusDone
	d.closeOwnOffsets()
	d.stores.Close()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// ownOffsetStore is a connector's own offsets topic, open and tailed (*cluster.OffsetStore).
type ownOffsetStore interface {
	offsetStore
	Close()
}

// openOwnOffsets opens a connector's own offsets topic (creating it when missing) the first time a task or
// a REST request needs it, and keeps it open, tailed, while a connector names it (closeUnusedOwnOffsets):
// connectors naming the same topic share it, and a task's restart does not read it from its beginning again.
func (d *Distributed) openOwnOffsets(ctx context.Context, topic string) (offsetStore, error) {
	d.ownOffsetsMu.Lock()
	defer d.ownOffsetsMu.Unlock()
	if s, ok := d.ownOffsets[topic]; ok {
		return s, nil
	}
	if d.ownOffsetsClosed {
		return nil, cluster.ErrClosed
	}
	var opts []cluster.StoresOption
	if d.kafka != nil {
		opts = append(opts, cluster.WithTransport(d.kafka))
	}
	s, err := cluster.OpenOffsetStore(ctx, cluster.ConnectorOffsetLog(d.w.cfg, topic, d.log, opts...))
	if err != nil {
		return nil, err
	}
	if d.ownOffsets == nil {
		d.ownOffsets = map[string]ownOffsetStore{}
	}
	d.ownOffsets[topic] = s
	return s, nil
}

// closeUnusedOwnOffsets closes the own offsets topics that neither a configured connector nor a task running
// here names any more, so that a worker holds one reader per topic in use, not one per topic ever named (a
// REST client creating and deleting connectors would otherwise grow the readers without bound). A topic
// named through a config provider cannot be told from its placeholder: while one is, every topic stays open.
// Callers hold d.mu, after the tasks that stop were stopped (reconcileLocked).
func (d *Distributed) closeUnusedOwnOffsets(snap cluster.ConfigSnapshot) {
	named := map[string]bool{}
	for _, cfg := range snap.Connectors {
		if topic, set := cfg[offsetsTopicKey]; set {
			if strings.Contains(topic, "${") {
				return
			}
			named[topic] = true
		}
	}
	for _, c := range d.running {
		named[c.config[offsetsTopicKey]] = true
	}
	d.ownOffsetsMu.Lock()
	defer d.ownOffsetsMu.Unlock()
	for topic, s := range d.ownOffsets {
		if !named[topic] {
			s.Close()
			delete(d.ownOffsets, topic)
		}
	}
}

// closeOwnOffsets closes the connectors' own offsets topics, once no task runs.
func (d *Distributed) closeOwnOffsets() {
	d.ownOffsetsMu.Lock()
	defer d.ownOffsetsMu.Unlock()
	d.ownOffsetsClosed = true
	for topic, s := range d.ownOffsets {
		s.Close()
		delete(d.ownOffsets, topic)
	}
}

func (d *Distributed) requestReconcile() {
	select {
	case d.reconcileC <- struct{}{}:
	default:
	}
}

// reconcileLoop applies every change read from the config topic: a rebalance when connectors or task
// counts changed, and new target states and task configs to what runs here.
func (d *Distributed) reconcileLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.reconcileC:
		}
		snap := d.configs.Snapshot()
		if needsRebalance(d.known, snap) {
			d.markRebalanceNeeded(snap.Offset)
			d.member.RequestRejoin()
		}
		d.known = snap
		d.reconcileMu.Lock()
		d.mu.Lock()
		d.reconcileLocked(snap)
		d.mu.Unlock()
		d.reconcileMu.Unlock()
	}
}

// markRebalanceNeeded holds leader-only requests (leaderOnly) until an assignment made from the config at
// offset or later.
func (d *Distributed) markRebalanceNeeded(offset int64) {
	d.stateMu.Lock()
	defer d.stateMu.Unlock()
	if !d.rebalanceNeeded {
		d.rebalanced = make(chan struct{})
	}
	d.rebalanceNeeded, d.rebalanceOffset = true, offset
}

// needsRebalance says whether the work to assign changed: connectors added or removed, or task counts.
func needsRebalance(before, after cluster.ConfigSnapshot) bool {
	if !slices.Equal(before.ConnectorNames(), after.ConnectorNames()) {
		return true
	}
	for name, tasks := range after.Tasks {
		if len(before.Tasks[name]) != len(tasks) {
			return true
		}
	}
	return false
}

// onAssignment is the member's callback: it records the leader and hands the owned items to
// reconcileLocked, which stops revoked tasks before returning.
func (d *Distributed) onAssignment(a cluster.Assignment) {
	d.generation.Store(a.Generation)
	d.stateMu.Lock()
	d.leader, d.leaderURL, d.compatible = a.Leader, a.LeaderURL, a.Compatible
	if a.Generation >= 0 && a.ConfigOffset >= d.rebalanceOffset && d.rebalanceNeeded {
		d.rebalanceNeeded = false
		close(d.rebalanced)
	}
	d.stateMu.Unlock()
	select {
	case d.assignedC <- struct{}{}:
	default:
	}
	d.log.Info("group assignment", "generation", a.Generation, "leader", a.Leader, "assigned", itemNames(a.Assigned), "revoked", itemNames(a.Revoked))

	rebalances.Inc()
	d.reconcileMu.Lock()
	defer d.reconcileMu.Unlock()
	d.mu.Lock()
	d.owned = map[cluster.Item]bool{}
	connectors, tasks := 0, 0
	if a.Generation >= 0 {
		for _, it := range a.Owned {
			d.owned[it] = true
			if it.Task < 0 {
				connectors++
			} else {
				tasks++
			}
		}
	}
	assigned.WithLabelValues("connectors").Set(float64(connectors))
	assigned.WithLabelValues("tasks").Set(float64(tasks))
	d.reconcileLocked(d.configs.Snapshot())
	d.mu.Unlock()
	if a.Generation >= 0 {
		d.joinOnce.Do(func() { close(d.joined) })
	}
}

func itemNames(items []cluster.Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.String()
	}
	return out
}

// targetOf is a connector's target state in snap, as the worker's TargetState.
func targetOf(snap cluster.ConfigSnapshot, name string) TargetState {
	switch snap.TargetStates[name] {
	case cluster.Paused:
		return TargetPaused
	case cluster.Stopped:
		return TargetStopped
	}
	return TargetStarted
}

// reconcileLocked makes what runs here match the owned items and the config: tasks no longer owned,
// no longer configured, stopped, or whose task config changed are stopped (and waited for, all at once,
// with d.mu released); owned tasks not running are started; target states reach running tasks; owned
// connectors report their state and get the task configs their config implies. Callers hold
// d.reconcileMu and d.mu.
func (d *Distributed) reconcileLocked(snap cluster.ConfigSnapshot) {
	var stopping []*connector
	var gone []string // connectors that no longer run here: their metrics are deleted
	for name, c := range d.running {
		cfg, ok := taskConfig(snap, name)
		target := targetOf(snap, name)
		owned := d.owned[cluster.Item{Connector: name, Task: 0}]
		if !owned || !ok || target == TargetStopped || !maps.Equal(cfg, c.config) {
			stopping = append(stopping, c)
			delete(d.running, name)
			if _, configured := snap.Connectors[name]; !owned || !configured {
				gone = append(gone, name)
			}
			continue
		}
		if c.target != target {
			c.target = target
			if t := c.task; t != nil {
				t.gate.set(target == TargetPaused)
				state, trace := t.Status()
				d.taskStateChanged(name, state, trace)
			}
		}
	}
	if len(stopping) > 0 {
		d.mu.Unlock()
		d.stopTasks(stopping)
		for _, name := range gone {
			forgetConnectorMetrics(name)
		}
		d.mu.Lock()
	}
	for _, it := range slices.SortedFunc(maps.Keys(d.owned), compareItem) {
		if it.IsConnector() || d.running[it.Connector] != nil {
			continue
		}
		if it.Task != 0 {
			d.log.Warn("cdcd runs one task per connector; ignoring the extra task", "task", it.String())
			continue
		}
		cfg, ok := taskConfig(snap, it.Connector)
		target := targetOf(snap, it.Connector)
		if !ok || target == TargetStopped {
			continue
		}
		c := &connector{name: it.Connector, config: cfg, target: target}
		d.running[it.Connector] = c
		d.w.startTask(c)
	}
	d.closeUnusedOwnOffsets(snap)
	d.reconcileConnectorsLocked(snap)
}

// stopTasks stops the tasks of cs at once and returns when all stopped or were abandoned, after
// task.shutdown.graceful.timeout.ms at most. Callers hold d.reconcileMu but not d.mu.
func (d *Distributed) stopTasks(cs []*connector) {
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.w.stopTask(c)
		}()
	}
	wg.Wait()
}

// reconcileConnectorsLocked writes the state of each connector owned here, UNASSIGNED for one that
// moved away, and publishes task configs that differ from those the connector's config implies.
func (d *Distributed) reconcileConnectorsLocked(snap cluster.ConfigSnapshot) {
	for name := range d.connectorStates {
		if d.owned[cluster.Item{Connector: name, Task: cluster.ConnectorTask}] {
			continue
		}
		delete(d.connectorStates, name)
		if _, configured := snap.Connectors[name]; configured {
			d.putConnectorStatus(name, cluster.Unassigned)
		}
	}
	for it := range d.owned {
		props, ok := snap.Connectors[it.Connector]
		if !it.IsConnector() || !ok {
			continue
		}
		name, target := it.Connector, targetOf(snap, it.Connector)
		if state := cluster.State(target.connectorState()); d.connectorStates[name] != state {
			d.connectorStates[name] = state
			d.putConnectorStatus(name, state)
		}
		want := d.w.plugins.impliedTaskConfigs(props, target)
		if _, incomplete := slices.BinarySearch(snap.Inconsistent, name); !incomplete && sameTaskConfigs(snap.Tasks[name], want) {
			continue
		}
		d.publishTaskConfigs(name, want)
	}
}

func compareItem(a, b cluster.Item) int {
	if a.Connector != b.Connector {
		if a.Connector < b.Connector {
			return -1
		}
		return 1
	}
	return a.Task - b.Task
}

// taskConfig returns task 0's committed config.
func taskConfig(snap cluster.ConfigSnapshot, name string) (map[string]string, bool) {
	tasks := snap.Tasks[name]
	if len(tasks) == 0 {
		return nil, false
	}
	return tasks[0], true
}

// impliedTaskConfigs are the task configs Connect stores for a Debezium connector: one task, with the
// connector's config as submitted (placeholders unresolved, as Connect's reverse transform leaves them)
// and task.class; none while the connector is STOPPED.
func (s connectorSet) impliedTaskConfigs(props map[string]string, target TargetState) []map[string]string {
	if target == TargetStopped {
		return []map[string]string{}
	}
	cfg := maps.Clone(props)
	if class := s.taskClass(props); class != "" {
		cfg["task.class"] = class
	}
	return []map[string]string{cfg}
}

func sameTaskConfigs(a, b []map[string]string) bool {
	return slices.EqualFunc(a, b, func(x, y map[string]string) bool { return maps.Equal(x, y) })
}

// publishTaskConfigs has the leader store a connector's task configs: directly when this worker leads,
// else through the leader's POST /connectors/{name}/tasks, as Connect's followers do. It runs in the
// background; once done it reconciles again, so a config that changed meanwhile is published next.
func (d *Distributed) publishTaskConfigs(name string, tasks []map[string]string) {
	if d.publishing[name] || d.life == nil {
		return
	}
	d.publishing[name] = true
	go func() {
		err := d.sendTaskConfigs(name, tasks)
		d.mu.Lock()
		delete(d.publishing, name)
		d.mu.Unlock()
		if err != nil {
			d.log.Warn("publishing task configs failed; retrying", "connector", name, "error", err)
			select {
			case <-d.life.Done():
				return
			case <-time.After(time.Second):
			}
		}
		d.requestReconcile()
	}()
}

func (d *Distributed) sendTaskConfigs(name string, tasks []map[string]string) error {
	ctx, cancel := context.WithTimeout(d.life, 30*time.Second)
	defer cancel()
	d.stateMu.Lock()
	leader, leaderURL := d.leader, d.leaderURL
	d.stateMu.Unlock()
	if leader {
		return d.putTaskConfigsAsLeader(ctx, name, tasks)
	}
	body, err := json.Marshal(tasks)
	if err != nil {
		return err
	}
	return d.leaderRequest(ctx, leaderURL, http.MethodPost, []string{"connectors", name, "tasks"}, body)
}

// putTaskConfigsAsLeader writes a connector's task configs and tombstones the statuses of tasks beyond
// the new count, as Connect's leader does.
func (d *Distributed) putTaskConfigsAsLeader(ctx context.Context, name string, tasks []map[string]string) error {
	d.taskWrites.Lock()
	defer d.taskWrites.Unlock()
	if err := d.stores.Configs.ReadToEnd(ctx); err != nil {
		return err
	}
	snap := d.configs.Snapshot()
	if _, ok := snap.Connectors[name]; !ok {
		return connectorNotFound(name)
	}
	if err := d.stores.Configs.PutTaskConfigs(ctx, name, tasks); err != nil {
		return err
	}
	for id := range d.stores.Status.Tasks(name) {
		if id >= len(tasks) {
			if err := d.stores.Status.DeleteTask(ctx, name, id); err != nil {
				return err
			}
		}
	}
	return nil
}

// taskStateChanged is the worker's task-state hook: the task's state goes to the status topic. A
// stopped task is UNASSIGNED, as Connect writes it on shutdown, unless its task no longer exists: the
// leader has tombstoned that status, and writing it would bring it back.
func (d *Distributed) taskStateChanged(name string, state State, trace string) {
	st := d.status(cluster.State(state))
	st.Trace = trace
	if state == Stopped {
		if _, ok := taskConfig(d.configs.Snapshot(), name); !ok {
			return
		}
		st.State = cluster.Unassigned
	}
	d.enqueueStatus(func(ctx context.Context) error { return d.stores.Status.PutTask(ctx, name, 0, st) })
}

func (d *Distributed) putConnectorStatus(name string, state cluster.State) {
	st := d.status(state)
	d.enqueueStatus(func(ctx context.Context) error { return d.stores.Status.PutConnector(ctx, name, st) })
}

func (d *Distributed) status(state cluster.State) cluster.Status {
	d.w.mu.Lock()
	id := d.w.workerID
	d.w.mu.Unlock()
	return cluster.Status{State: state, WorkerID: id, Generation: int64(d.generation.Load()), Version: pluginVersion()}
}

// enqueueStatus hands a status write to writeStatuses, which writes them in order without holding up
// the caller (an assignment callback must not wait for Kafka).
func (d *Distributed) enqueueStatus(write func(context.Context) error) { d.statusQ <- write }

func (d *Distributed) writeStatuses() {
	for write := range d.statusQ {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := write(ctx); err != nil {
			d.log.Warn("writing a status to the status topic failed", "error", err)
		}
		cancel()
	}
}

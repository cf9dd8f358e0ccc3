package connect

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cdcd/cdcd/connect/cluster"
	"github.com/cdcd/cdcd/schema/configdef"
)

// This file is the distributed herder's REST side: what Connect's DistributedHerder answers, reading the
// internal topics, and refusing with NotLeader what only the leader (or a task's owner) may do.

// StaleConfigMessage is Connect's answer (409) to a request made while a rebalance is pending.
const StaleConfigMessage = "Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)"

// requestTimeout bounds the topic writes and reads of one REST request (Connect's 90 s REST timeout).
const requestTimeout = 90 * time.Second

// rebalanceWait bounds how long a leader-only request waits for a pending rebalance. Connect's herder thread
// serves queued requests only after the rebalance it has to finish, so a request made right after a create
// waits for that rebalance instead of failing; past this bound cdcd answers 409, as Connect does when the
// config is still stale.
const rebalanceWait = 30 * time.Second

// leaderOnly refuses a request this worker cannot serve: a rebalance still pending after rebalanceWait (or
// ctx) ends (409), or another worker leads (NotLeader, forwarded to the leader).
func (d *Distributed) leaderOnly(ctx context.Context, action string) error {
	bound := time.NewTimer(rebalanceWait)
	defer bound.Stop()
	d.stateMu.Lock()
	defer d.stateMu.Unlock()
	for d.rebalanceNeeded { // each pass waits for the rebalance pending then; a newer one is waited for too
		rebalanced := d.rebalanced
		d.stateMu.Unlock()
		expired := false
		select {
		case <-rebalanced:
		case <-bound.C:
			expired = true
		case <-ctx.Done():
			expired = true
		}
		d.stateMu.Lock()
		if expired && d.rebalanceNeeded {
			return &RequestError{Kind: Conflict, Message: StaleConfigMessage}
		}
	}
	if !d.leader {
		return &RequestError{Kind: NotLeader, Message: "Only the leader can " + action + ".", Forward: d.leaderURL}
	}
	return nil
}

// leaderConfig is the preamble of a leader-only request: this worker must lead (leaderOnly), and it then reads
// the config topic to its end (freshConfig).
func (d *Distributed) leaderConfig(ctx context.Context, action string) (cluster.ConfigSnapshot, error) {
	if err := d.leaderOnly(ctx, action); err != nil {
		return cluster.ConfigSnapshot{}, err
	}
	return d.freshConfig(ctx)
}

// freshConfig reads the config topic to its end and returns what it holds.
func (d *Distributed) freshConfig(ctx context.Context) (cluster.ConfigSnapshot, error) {
	if err := d.stores.Configs.ReadToEnd(ctx); err != nil {
		return cluster.ConfigSnapshot{}, &RequestError{Kind: ServerError, Message: err.Error()}
	}
	return d.configs.Snapshot(), nil
}

func requestContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), requestTimeout)
}

// Connectors lists the configured connectors, sorted.
func (d *Distributed) Connectors() []string {
	return append([]string{}, d.configs.Snapshot().ConnectorNames()...)
}

func infoOf(snap cluster.ConfigSnapshot, name string) (ConnectorInfo, error) {
	props, ok := snap.Connectors[name]
	if !ok {
		return ConnectorInfo{}, connectorNotFound(name)
	}
	tasks := []TaskID{}
	for i := range snap.Tasks[name] {
		tasks = append(tasks, TaskID{Connector: name, Task: i})
	}
	return ConnectorInfo{Name: name, Config: props, Tasks: tasks, Type: ConnectorType}, nil
}

// ConnectorInfo returns a connector's config (as submitted) and its committed tasks.
func (d *Distributed) ConnectorInfo(name string) (ConnectorInfo, error) {
	return infoOf(d.configs.Snapshot(), name)
}

// ConnectorConfig returns a connector's config as submitted.
func (d *Distributed) ConnectorConfig(name string) (map[string]string, error) {
	info, err := d.ConnectorInfo(name)
	return info.Config, err
}

// TaskConfigs returns the committed task configs.
func (d *Distributed) TaskConfigs(name string) ([]TaskInfo, error) {
	snap := d.configs.Snapshot()
	if _, ok := snap.Connectors[name]; !ok {
		return nil, connectorNotFound(name)
	}
	out := []TaskInfo{}
	for i, cfg := range snap.Tasks[name] {
		out = append(out, TaskInfo{ID: TaskID{Connector: name, Task: i}, Config: cfg})
	}
	return out, nil
}

func stateInfo(st cluster.Status) StateInfo {
	return StateInfo{State: State(st.State), Trace: st.Trace, WorkerID: st.WorkerID, Version: st.Version}
}

// ConnectorStatus returns the states the owners wrote to the status topic.
func (d *Distributed) ConnectorStatus(name string) (ConnectorStatus, error) {
	cs, ok := d.stores.Status.Connector(name)
	if !ok {
		return ConnectorStatus{}, notFound("No status found for connector %s", name)
	}
	out := ConnectorStatus{Name: name, Connector: stateInfo(cs), Tasks: []TaskStatus{}, Type: ConnectorType}
	tasks := d.stores.Status.Tasks(name)
	for _, id := range slices.Sorted(maps.Keys(tasks)) {
		out.Tasks = append(out.Tasks, TaskStatus{ID: id, StateInfo: stateInfo(tasks[id])})
	}
	return out, nil
}

// TaskStatus returns one task's state from the status topic.
func (d *Distributed) TaskStatus(name string, id int) (TaskStatus, error) {
	st, ok := d.stores.Status.Tasks(name)[id]
	if !ok {
		return TaskStatus{}, notFound("No status found for task %s-%d", name, id)
	}
	return TaskStatus{ID: id, StateInfo: stateInfo(st)}, nil
}

// PutConnectorConfig validates a config here, then (on the leader) stores it; initialState applies to
// a created connector only. The owner of the connector then publishes its task configs.
func (d *Distributed) PutConnectorConfig(name string, cfg map[string]string, allowReplace bool, initialState string) (bool, ConnectorInfo, error) {
	target, err := parseInitialState(initialState)
	if err != nil {
		return false, ConnectorInfo{}, err
	}
	if err := d.w.checkConnectorConfig(cfg, true); err != nil {
		return false, ConnectorInfo{}, err
	}
	ctx, cancel := requestContext()
	defer cancel()
	if err := d.leaderOnly(ctx, "set connector configs"); err != nil {
		return false, ConnectorInfo{}, err
	}
	d.w.warnUnknownKeys(name, cfg)
	snap, err := d.freshConfig(ctx)
	if err != nil {
		return false, ConnectorInfo{}, err
	}
	_, exists := snap.Connectors[name]
	if exists && !allowReplace {
		return false, ConnectorInfo{}, &RequestError{Kind: AlreadyExists, Message: "Connector " + name + " already exists"}
	}
	var initial *cluster.TargetState
	if !exists && initialState != "" {
		state := clusterTarget(target)
		initial = &state
	}
	if err := d.stores.Configs.PutConnectorConfig(ctx, name, cfg, initial); err != nil {
		return false, ConnectorInfo{}, &RequestError{Kind: ServerError, Message: err.Error()}
	}
	info, err := infoOf(d.configs.Snapshot(), name)
	return !exists, info, err
}

func clusterTarget(t TargetState) cluster.TargetState {
	switch t {
	case TargetPaused:
		return cluster.Paused
	case TargetStopped:
		return cluster.Stopped
	}
	return cluster.Started
}

// PatchConnectorConfig applies a partial config (KIP-477) on the leader.
func (d *Distributed) PatchConnectorConfig(name string, patch map[string]*string) (ConnectorInfo, error) {
	ctx, cancel := requestContext()
	defer cancel()
	if err := d.leaderOnly(ctx, "patch connector configs"); err != nil {
		return ConnectorInfo{}, err
	}
	current, err := d.ConnectorConfig(name)
	if err != nil {
		return ConnectorInfo{}, err
	}
	_, info, err := d.PutConnectorConfig(name, applyPatch(current, patch), true, "")
	return info, err
}

// PauseConnector records the PAUSED target state; any worker may, as in Connect.
func (d *Distributed) PauseConnector(name string) error {
	return d.putTargetState(name, cluster.Paused)
}

// ResumeConnector records the STARTED target state (also for a STOPPED connector).
func (d *Distributed) ResumeConnector(name string) error {
	return d.putTargetState(name, cluster.Started)
}

func (d *Distributed) putTargetState(name string, state cluster.TargetState) error {
	ctx, cancel := requestContext()
	defer cancel()
	snap, err := d.freshConfig(ctx)
	if err != nil {
		return err
	}
	if _, ok := snap.Connectors[name]; !ok {
		return notFound("Unknown connector %s", name)
	}
	if err := d.stores.Configs.PutTargetState(ctx, name, state); err != nil {
		return &RequestError{Kind: ServerError, Message: err.Error()}
	}
	return nil
}

// StopConnector (leader) records STOPPED and an empty task list, so the connector's tasks stop
// wherever they run, and its offsets may then be changed.
func (d *Distributed) StopConnector(name string) error {
	ctx, cancel := requestContext()
	defer cancel()
	snap, err := d.leaderConfig(ctx, "stop connectors")
	if err != nil {
		return err
	}
	if _, ok := snap.Connectors[name]; !ok {
		return notFound("Unknown connector %s", name)
	}
	if err := d.stores.Configs.PutTargetState(ctx, name, cluster.Stopped); err != nil {
		return &RequestError{Kind: ServerError, Message: err.Error()}
	}
	if err := d.putTaskConfigsAsLeader(ctx, name, []map[string]string{}); err != nil {
		return &RequestError{Kind: ServerError, Message: err.Error()}
	}
	return nil
}

// PutTaskConfigs is Connect's internal POST /connectors/{name}/tasks: a follower that runs a connector
// hands the leader the task configs to store. The REST layer accepts only requests signed with the
// group's session key (VerifyInternalRequest); besides, cdcd stores only the task configs the connector's
// config implies (which is what Debezium's connectors generate, also on a Java worker), so not even a
// worker can make a task run with a config of its own.
func (d *Distributed) PutTaskConfigs(name string, tasks []map[string]string) error {
	ctx, cancel := requestContext()
	defer cancel()
	snap, err := d.leaderConfig(ctx, "set task configs")
	if err != nil {
		return err
	}
	if err := d.w.plugins.checkTaskConfigs(snap, name, tasks); err != nil {
		return err
	}
	return d.putTaskConfigsAsLeader(ctx, name, tasks)
}

// checkTaskConfigs refuses task configs other than those the connector's config and target state imply.
func (s connectorSet) checkTaskConfigs(snap cluster.ConfigSnapshot, name string, tasks []map[string]string) error {
	props, ok := snap.Connectors[name]
	if !ok {
		return connectorNotFound(name)
	}
	if !sameTaskConfigs(tasks, s.impliedTaskConfigs(props, targetOf(snap, name))) {
		return &RequestError{Kind: BadRequest, Message: "The task configs of connector " + name + " do not match its current config; they may be stale"}
	}
	return nil
}

// FailedTasks lists the tasks running on this worker that are FAILED (GET /health of this worker; the
// status of the others' is in GET /connectors/{name}/status).
func (d *Distributed) FailedTasks() []TaskState {
	d.mu.Lock()
	cs := make([]*connector, 0, len(d.running))
	for _, c := range d.running {
		cs = append(cs, c)
	}
	d.mu.Unlock()
	tasks := map[string]*task{}
	d.w.mu.Lock()
	for _, c := range cs {
		if c.task != nil {
			tasks[c.name] = c.task
		}
	}
	d.w.mu.Unlock()
	return failedOf(tasks)
}

// localTask returns the task running here for a connector, if any.
func (d *Distributed) localTask(name string) *connector {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.running[name]
}

// ownerURL is the REST URL of the worker whose status record says it runs task id: restarts go there,
// as Connect sends them to the owner.
func (d *Distributed) ownerURL(name string, id int) (string, bool) {
	st, ok := d.stores.Status.Tasks(name)[id]
	if !ok || st.WorkerID == "" {
		return "", false
	}
	// Workers of one cluster serve the same scheme: this worker's own.
	scheme, _, _ := strings.Cut(d.url, "://")
	return scheme + "://" + st.WorkerID + "/", true
}

// restartLocal restarts the connector's task here from its durable offset.
func (d *Distributed) restartLocal(c *connector) {
	d.reconcileMu.Lock()
	defer d.reconcileMu.Unlock()
	d.mu.Lock()
	current := d.running[c.name] == c
	d.mu.Unlock()
	if !current {
		return // revoked meanwhile: its new owner starts it
	}
	d.w.stopTask(c) // bounded; d.mu is free meanwhile
	d.w.startTask(c)
}

// RestartConnector restarts what the request asks for. The connector instance has no work of its own
// (see Worker.RestartConnector); a task is restarted by its owner, to which the request is forwarded.
func (d *Distributed) RestartConnector(name string, includeTasks, onlyFailed bool) (*ConnectorStatus, error) {
	if _, configured := d.configs.Snapshot().Connectors[name]; !configured {
		return nil, notFound("Unknown connector: %s", name)
	}
	if !includeTasks && !onlyFailed {
		return nil, nil
	}
	st, err := d.ConnectorStatus(name)
	if err != nil {
		return nil, notFound("Status for connector %s not found", name)
	}
	if !onlyFailed || st.Connector.State == Failed {
		st.Connector.State, st.Connector.Trace = Restarting, ""
	}
	restart := false
	for i := range st.Tasks {
		if includeTasks && (!onlyFailed || st.Tasks[i].State == Failed) {
			st.Tasks[i].State, st.Tasks[i].Trace = Restarting, ""
			restart = true
		}
	}
	if !restart {
		return &st, nil
	}
	c := d.localTask(name)
	if c == nil {
		return nil, d.notOwner(name, 0)
	}
	d.restartLocal(c)
	return &st, nil
}

// notOwner sends a task's request to its owner.
func (d *Distributed) notOwner(name string, id int) error {
	owner, ok := d.ownerURL(name, id)
	if !ok || owner == d.url {
		return &RequestError{Kind: Conflict, Message: "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"}
	}
	return &RequestError{Kind: NotLeader, Message: "Task " + name + " is not owned by this worker", Forward: owner}
}

// SignalConnector hands a Debezium signal to the connector's task on the worker that runs it.
func (d *Distributed) SignalConnector(name, id, kind, data string) error {
	snap := d.configs.Snapshot()
	if _, ok := snap.Connectors[name]; !ok {
		return notFound("Unknown connector: %s", name)
	}
	c := d.localTask(name)
	if c == nil {
		return d.notOwner(name, 0)
	}
	d.w.mu.Lock()
	t := c.task
	d.w.mu.Unlock()
	if t == nil {
		return d.notOwner(name, 0)
	}
	return t.signal(id, kind, data)
}

// FenceZombies is Connect's PUT /connectors/{name}/fence, served by the leader (forwarded there, as in
// Connect): a round of zombie fencing that fences every task producer of the connector, the running task's
// too (it fails its next commit and restarts from its last committed offset), then writes the task count
// record Connect's round writes. Connect's workers call it before an exactly-once task starts, when only a
// pending generation is fenced; cdcd's workers run that round themselves (preflightFencing).
func (d *Distributed) FenceZombies(ctx context.Context, name string) error {
	return d.fencingRound(ctx, name, true)
}

// RestartTask restarts a task from its durable offset on the worker that runs it.
func (d *Distributed) RestartTask(name string, id int) error {
	snap := d.configs.Snapshot()
	if _, ok := snap.Connectors[name]; !ok {
		return notFound("Unknown connector: %s", name)
	}
	if id < 0 || id >= len(snap.Tasks[name]) {
		return notFound("Unknown task: %s-%d", name, id)
	}
	c := d.localTask(name)
	if c == nil || id != 0 {
		return d.notOwner(name, id)
	}
	d.restartLocal(c)
	return nil
}

// DeleteConnector (leader) removes the connector's config and target state and tombstones its
// statuses; its offsets stay, as in Connect.
func (d *Distributed) DeleteConnector(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	snap, err := d.leaderConfig(ctx, "delete connectors")
	if err != nil {
		return err
	}
	props, ok := snap.Connectors[name]
	if !ok {
		return connectorNotFound(name)
	}
	if err := d.stores.Configs.RemoveConnectorConfig(ctx, name); err != nil {
		return &RequestError{Kind: ServerError, Message: err.Error()}
	}
	err = d.stores.Status.DeleteConnector(ctx, name)
	for id := range d.stores.Status.Tasks(name) {
		if err == nil {
			err = d.stores.Status.DeleteTask(ctx, name, id)
		}
	}
	if err != nil {
		return &RequestError{Kind: ServerError, Message: err.Error()}
	}
	if d.onDelete != nil {
		// The task stops on its owner once that worker reads the tombstone: the hook may have to wait
		// for it (within this request's bound).
		return d.onDelete(ctx, name, props)
	}
	return nil
}

// SetDeleteHook installs h, which the leader runs after it deleted a connector (the REST request that
// deleted it waits for it). Unlike standalone mode's, it runs while the connector's task may still be
// stopping on another worker. Call it before Run.
func (d *Distributed) SetDeleteHook(h DeleteHook) { d.onDelete = h }

// Leads reports whether this worker is the group's leader, as the last assignment said, and the leader's
// REST URL (ending in "/"; "" until an assignment named one).
func (d *Distributed) Leads() (leads bool, leaderURL string) {
	d.stateMu.Lock()
	defer d.stateMu.Unlock()
	return d.leader, d.leaderURL
}

// ResolveConnectorConfig resolves config-provider placeholders with the worker's providers.
func (d *Distributed) ResolveConnectorConfig(props map[string]string) (map[string]string, error) {
	return d.w.ResolveConnectorConfig(props)
}

// ConfiguredConnectors lists every connector of the cluster, from the config topic, with the state its
// owner wrote to the status topic (UNASSIGNED before one did). A connector whose placeholders do not
// resolve on this worker is left out. Safe for concurrent use; it reads what the topics' readers hold.
func (d *Distributed) ConfiguredConnectors() []ConfiguredConnector {
	snap := d.configs.Snapshot()
	out := make([]ConfiguredConnector, 0, len(snap.Connectors))
	for _, name := range snap.ConnectorNames() {
		resolved, err := d.w.ResolveConnectorConfig(snap.Connectors[name])
		if err != nil {
			continue
		}
		state := Unassigned
		if st, ok := d.stores.Status.Tasks(name)[0]; ok {
			state = State(st.State)
		} else if st, ok := d.stores.Status.Connector(name); ok {
			state = State(st.State)
		}
		out = append(out, ConfiguredConnector{Name: name, Resolved: resolved, State: state,
			Hide: secretsOf(snap.Connectors[name], resolved, d.w.keysOf(resolved)).scrub})
	}
	return out
}

// ConnectorOffsets returns the connector's offsets from its offset store (Worker.offsetsFor: the
// worker's topic, or its own offsets.storage.topic over it), read to its end.
func (d *Distributed) ConnectorOffsets(name string) (ConnectorOffsets, error) {
	props, err := d.ConnectorConfig(name)
	if err != nil {
		return ConnectorOffsets{}, err
	}
	ctx, cancel := requestContext()
	defer cancel()
	store, err := d.offsetStoreOf(ctx, name, props)
	if err != nil {
		return ConnectorOffsets{}, err
	}
	return storedOffsets(store, name), nil
}

// offsetStoreOf is the offset store of a connector whose config is props (unresolved), read to its end.
func (d *Distributed) offsetStoreOf(ctx context.Context, name string, props map[string]string) (offsetStore, error) {
	resolved, err := d.w.ResolveConnectorConfig(props)
	if err != nil {
		return nil, &RequestError{Kind: ServerError, Message: err.Error()} // a provider's error names no resolved value
	}
	store, _, err := d.w.offsetsFor(ctx, name, resolved)
	if err == nil {
		err = store.ReadToEnd(ctx)
	}
	if err != nil {
		return nil, &RequestError{Kind: ServerError, Message: secretsOf(props, resolved, d.w.keysOf(resolved)).scrub(err.Error())}
	}
	return store, nil
}

// stoppedOffsetStore is the leader's check before an offsets change: the connector exists and is
// STOPPED (so its task configs are empty and no task runs anywhere). It returns the connector's offset
// store, read to its end.
func (d *Distributed) stoppedOffsetStore(name string) (offsetStore, error) {
	ctx, cancel := requestContext()
	defer cancel()
	snap, err := d.leaderConfig(ctx, "modify connector offsets")
	if err != nil {
		return nil, err
	}
	props, ok := snap.Connectors[name]
	if !ok {
		return nil, connectorNotFound(name)
	}
	if targetOf(snap, name) != TargetStopped || len(snap.Tasks[name]) > 0 {
		return nil, notStoppedError(name)
	}
	return d.offsetStoreOf(ctx, name, props)
}

// AlterConnectorOffsets writes offsets of a STOPPED connector to its offset store.
func (d *Distributed) AlterConnectorOffsets(name string, changes []ConnectorOffset) (string, error) {
	store, err := d.stoppedOffsetStore(name)
	if err != nil {
		return "", err
	}
	return alterOffsets(store, name, changes)
}

// ResetConnectorOffsets tombstones every offset of a STOPPED connector in its offset store.
func (d *Distributed) ResetConnectorOffsets(name string) (string, error) {
	store, err := d.stoppedOffsetStore(name)
	if err != nil {
		return "", err
	}
	return resetOffsets(store, name)
}

// ConnectorPlugins lists the plugins, as the standalone worker does.
func (d *Distributed) ConnectorPlugins(connectorsOnly bool) []PluginInfo {
	return d.w.ConnectorPlugins(connectorsOnly)
}

// PluginConfig returns a plugin's setting definitions.
func (d *Distributed) PluginConfig(plugin string) ([]configdef.ConfigKeyInfo, error) {
	return d.w.PluginConfig(plugin)
}

// ValidateConnectorConfig validates a config on this worker, as Connect does.
func (d *Distributed) ValidateConnectorConfig(plugin string, cfg map[string]string) (configdef.ConfigInfos, error) {
	return d.w.ValidateConnectorConfig(plugin, cfg)
}

// CheckSchemas is cdcd's schema registry pre-flight check for a configured connector.
func (d *Distributed) CheckSchemas(ctx context.Context, name string) (SchemaCheck, error) {
	props, err := d.ConnectorConfig(name)
	if err != nil {
		return SchemaCheck{}, err
	}
	return d.w.checkSchemas(ctx, name, props)
}

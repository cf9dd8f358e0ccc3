package connect

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cdcd/cdcd/schema/configdef"
	"github.com/cdcd/cdcd/source"
)

// This file is the herder: what Connect's StandaloneHerder does for the REST API, with its messages.

// ErrorKind says how Connect reports a refused request (the REST layer maps it to a status code).
type ErrorKind int

const (
	NotFound      ErrorKind = iota // Connect's NotFoundException: 404
	AlreadyExists                  // AlreadyExistsException: 409
	BadRequest                     // BadRequestException: 400
	ServerError                    // any other exception: 500
	Conflict                       // a ConnectRestException with 409 (e.g. a rebalance is needed first)
	NotLeader                      // RequestTargetException: another worker serves it; the REST layer forwards
	Forbidden                      // a ConnectRestException with 403 (an internal request's bad signature)
	Unavailable                    // a ConnectRestException with 503 (no session key read yet)
)

// RequestError is a refused herder request; Message is Connect's text for it.
type RequestError struct {
	Kind    ErrorKind
	Message string
	// Forward is the base URL of the worker that serves a NotLeader request ("" when no leader is known).
	Forward string
}

func (e *RequestError) Error() string { return e.Message }

func notFound(format string, args ...any) error {
	return &RequestError{Kind: NotFound, Message: fmt.Sprintf(format, args...)}
}

func connectorNotFound(name string) error { return notFound("Connector %s not found", name) }

// DeleteHook runs after a connector was deleted, with its last config (e.g. to drop its replication slot).
// It runs while the herder is busy, so it should be quick; its error is reported to the REST caller.
type DeleteHook func(ctx context.Context, name string, config map[string]string) error

// SetDeleteHook installs h; nil removes it.
func (w *Worker) SetDeleteHook(h DeleteHook) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.onDelete = h
}

// ConnectorType is the lower-case connector type of ConnectorInfo and plugin listings.
const ConnectorType = "source"

// ConnectorInfo is Connect's ConnectorInfo.
type ConnectorInfo struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
	Tasks  []TaskID          `json:"tasks"`
	Type   string            `json:"type"`
}

// TaskID is Connect's ConnectorTaskId.
type TaskID struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
}

// TaskInfo is one entry of GET /connectors/{name}/tasks.
type TaskInfo struct {
	ID     TaskID            `json:"id"`
	Config map[string]string `json:"config"`
}

// StateInfo is the state of a connector or task as Connect 4.4 reports it; Trace only when non-empty.
type StateInfo struct {
	State    State  `json:"state"`
	Trace    string `json:"trace,omitempty"`
	WorkerID string `json:"worker_id"`
	Version  string `json:"version"`
}

// TaskStatus is Connect's ConnectorStateInfo.TaskState.
type TaskStatus struct {
	ID int `json:"id"`
	StateInfo
}

// ConnectorStatus is Connect's ConnectorStateInfo.
type ConnectorStatus struct {
	Name      string       `json:"name"`
	Connector StateInfo    `json:"connector"`
	Tasks     []TaskStatus `json:"tasks"`
	Type      string       `json:"type"`
}

// ConnectorOffset is one source partition and its offset, as JSON objects (the offset may be null).
type ConnectorOffset struct {
	Partition json.RawMessage `json:"partition"`
	Offset    json.RawMessage `json:"offset"`
}

// ConnectorOffsets is the body of GET and PATCH /connectors/{name}/offsets.
type ConnectorOffsets struct {
	Offsets []ConnectorOffset `json:"offsets"`
}

// PluginInfo is one entry of GET /connector-plugins.
type PluginInfo struct {
	Class   string `json:"class"`
	Type    string `json:"type"`
	Version string `json:"version"`
}

// pluginVersion is the version cdcd reports for its connector plugin and its statuses.
func pluginVersion() string { return source.Version }

// Connectors lists the connectors' names in order (an empty list, never nil: it is JSON's []).
func (w *Worker) Connectors() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string{}, slices.Sorted(maps.Keys(w.connectors))...)
}

func (w *Worker) lookup(name string) (*connector, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c, ok := w.connectors[name]
	return c, ok
}

// ConnectorInfo returns a connector's config and tasks.
func (w *Worker) ConnectorInfo(name string) (ConnectorInfo, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c, ok := w.connectors[name]
	if !ok {
		return ConnectorInfo{}, connectorNotFound(name)
	}
	return c.info(), nil
}

// info is ConnectorInfo; callers hold w.mu.
func (c *connector) info() ConnectorInfo {
	tasks := []TaskID{}
	if c.task != nil {
		tasks = append(tasks, TaskID{Connector: c.name, Task: 0})
	}
	return ConnectorInfo{Name: c.name, Config: maps.Clone(c.config), Tasks: tasks, Type: ConnectorType}
}

// ConnectorConfig returns a connector's config as it was given (config-provider placeholders unresolved).
func (w *Worker) ConnectorConfig(name string) (map[string]string, error) {
	info, err := w.ConnectorInfo(name)
	return info.Config, err
}

// TaskConfigs returns the task configs: the connector's config and the task class, as Debezium's.
func (w *Worker) TaskConfigs(name string) ([]TaskInfo, error) {
	info, err := w.ConnectorInfo(name)
	if err != nil {
		return nil, err
	}
	out := []TaskInfo{}
	taskClass := w.plugins.taskClass(info.Config)
	for _, id := range info.Tasks {
		cfg := maps.Clone(info.Config)
		cfg["task.class"] = taskClass
		out = append(out, TaskInfo{ID: id, Config: cfg})
	}
	return out, nil
}

// ConnectorStatus returns the state of a connector and its task.
func (w *Worker) ConnectorStatus(name string) (ConnectorStatus, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c, ok := w.connectors[name]
	if !ok {
		return ConnectorStatus{}, notFound("No status found for connector %s", name)
	}
	return w.statusLocked(c), nil
}

func (w *Worker) statusLocked(c *connector) ConnectorStatus {
	st := ConnectorStatus{
		Name:      c.name,
		Connector: StateInfo{State: c.target.connectorState(), WorkerID: w.workerID, Version: pluginVersion()},
		Tasks:     []TaskStatus{},
		Type:      ConnectorType,
	}
	if c.task != nil {
		s, trace := c.task.Status()
		st.Tasks = append(st.Tasks, TaskStatus{ID: 0, StateInfo: StateInfo{State: s, Trace: trace, WorkerID: w.workerID, Version: pluginVersion()}})
	}
	return st
}

// TaskState is one task and its state, as GET /health lists the failed ones.
type TaskState struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
	State     State  `json:"state"`
	Trace     string `json:"trace,omitempty"`
}

// FailedTasks lists the tasks of this worker that are FAILED, by connector name. Safe for concurrent use;
// it does not wait for the herder's operations.
func (w *Worker) FailedTasks() []TaskState {
	w.mu.Lock()
	tasks := make(map[string]*task, len(w.connectors))
	for name, c := range w.connectors {
		if c.task != nil {
			tasks[name] = c.task
		}
	}
	w.mu.Unlock()
	return failedOf(tasks)
}

// failedOf lists the FAILED tasks among tasks (connector name → its task), by connector name.
func failedOf(tasks map[string]*task) []TaskState {
	var out []TaskState
	for _, name := range slices.Sorted(maps.Keys(tasks)) {
		if s, trace := tasks[name].Status(); s == Failed {
			out = append(out, TaskState{Connector: name, Task: 0, State: s, Trace: trace})
		}
	}
	return out
}

func (t TargetState) connectorState() State {
	switch t {
	case TargetPaused:
		return Paused
	case TargetStopped:
		return Stopped
	}
	return Running
}

// TaskStatus returns the state of one task.
func (w *Worker) TaskStatus(name string, id int) (TaskStatus, error) {
	st, err := w.ConnectorStatus(name)
	if err == nil {
		for _, t := range st.Tasks {
			if t.ID == id {
				return t, nil
			}
		}
	}
	return TaskStatus{}, notFound("No status found for task %s-%d", name, id)
}

func parseInitialState(s string) (TargetState, error) {
	switch strings.ToUpper(s) {
	case "", "RUNNING":
		return TargetStarted, nil
	case "PAUSED":
		return TargetPaused, nil
	case "STOPPED":
		return TargetStopped, nil
	}
	return 0, &RequestError{Kind: BadRequest, Message: "Invalid initial_state " + s + "; expected RUNNING, PAUSED or STOPPED"}
}

// PutConnectorConfig creates a connector, or replaces its config when allowReplace (PUT …/config); it
// reports whether it created one. initialState applies to a created connector only. The config is
// validated first: any error refuses the request with Connect's "Connector configuration is invalid"
// message. Replacing a config restarts the task from the durable offset.
func (w *Worker) PutConnectorConfig(name string, cfg map[string]string, allowReplace bool, initialState string) (bool, ConnectorInfo, error) {
	target, err := parseInitialState(initialState)
	if err != nil {
		return false, ConnectorInfo{}, err
	}
	return w.putConnector(name, cfg, allowReplace, target, true)
}

// putConnector creates or replaces a connector; checkConnection is validation's database check, which
// the REST API's requests get and connector files at start-up do not (see AddConnector).
func (w *Worker) putConnector(name string, cfg map[string]string, allowReplace bool, target TargetState, checkConnection bool) (bool, ConnectorInfo, error) {
	if err := w.checkConnectorConfig(cfg, checkConnection); err != nil {
		return false, ConnectorInfo{}, err
	}
	w.warnUnknownKeys(name, cfg)
	defer w.ops.lock(name)()
	c, exists := w.lookup(name)
	if exists && !allowReplace {
		return false, ConnectorInfo{}, &RequestError{Kind: AlreadyExists, Message: "Connector " + name + " already exists"}
	}
	if exists {
		w.stopTask(c)
		w.mu.Lock()
		c.config = maps.Clone(cfg)
		w.mu.Unlock()
	} else {
		c = &connector{name: name, config: maps.Clone(cfg), target: target}
		w.mu.Lock()
		w.connectors[name] = c
		w.mu.Unlock()
	}
	if c.target != TargetStopped {
		w.startTask(c)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return !exists, c.info(), nil
}

// PatchConnectorConfig applies a partial config (a nil value removes the key, KIP-477) and replaces the
// connector's config with the result.
func (w *Worker) PatchConnectorConfig(name string, patch map[string]*string) (ConnectorInfo, error) {
	current, err := w.ConnectorConfig(name)
	if err != nil {
		return ConnectorInfo{}, err
	}
	_, info, err := w.putConnector(name, applyPatch(current, patch), true, TargetStarted, true)
	return info, err
}

// applyPatch changes config in place by a KIP-477 patch (a nil value removes its key) and returns it.
func applyPatch(config map[string]string, patch map[string]*string) map[string]string {
	for k, v := range patch {
		if v == nil {
			delete(config, k)
		} else {
			config[k] = *v
		}
	}
	return config
}

// checkConnectorConfig refuses what Connect refuses before storing a config: no or an unknown connector
// class, or any validation error; with checkConnection, a database that cannot be reached or read too.
func (w *Worker) checkConnectorConfig(cfg map[string]string, checkConnection bool) error {
	infos, err := w.validate(cfg, checkConnection)
	if err != nil {
		return err
	}
	if infos.ErrorCount > 0 {
		return &RequestError{Kind: BadRequest, Message: configdef.InvalidConfigMessage(infos)}
	}
	return nil
}

// PauseConnector pauses a connector: its task stays, holding its slot, but stops reading.
func (w *Worker) PauseConnector(name string) error { return w.setPaused(name, true) }

// ResumeConnector resumes a paused or stopped connector.
func (w *Worker) ResumeConnector(name string) error { return w.setPaused(name, false) }

func (w *Worker) setPaused(name string, paused bool) error {
	defer w.ops.lock(name)()
	c, ok := w.lookup(name)
	if !ok {
		return notFound("Unknown connector %s", name)
	}
	w.mu.Lock()
	c.target = TargetStarted
	if paused {
		c.target = TargetPaused
	}
	t := c.task
	w.mu.Unlock()
	if t != nil {
		t.gate.set(paused)
	} else if !paused {
		w.startTask(c)
	}
	return nil
}

// StopConnector stops a connector's task (it records its last offset first) and keeps its config and
// offsets; offsets can be changed only in this state.
func (w *Worker) StopConnector(name string) error {
	defer w.ops.lock(name)()
	c, ok := w.lookup(name)
	if !ok {
		return &RequestError{Kind: ServerError, Message: "No connector `" + name + "` configured"}
	}
	w.stopTask(c)
	w.mu.Lock()
	c.target = TargetStopped
	w.mu.Unlock()
	return nil
}

// RestartConnector restarts a connector and, with includeTasks, its task (with onlyFailed, only what
// FAILED). cdcd's connector has no work of its own besides its task, so restarting the connector alone
// changes nothing. Without either flag it returns a nil status (Connect answers 204); otherwise the status
// with what restarts marked RESTARTING, as Connect's restart plan.
func (w *Worker) RestartConnector(name string, includeTasks, onlyFailed bool) (*ConnectorStatus, error) {
	defer w.ops.lock(name)()
	c, ok := w.lookup(name)
	if !includeTasks && !onlyFailed {
		if !ok {
			return nil, connectorNotFound(name)
		}
		return nil, nil
	}
	if !ok {
		return nil, notFound("Unknown connector: %s", name)
	}
	w.mu.Lock()
	st := w.statusLocked(c)
	w.mu.Unlock()
	if !onlyFailed || st.Connector.State == Failed {
		st.Connector.State, st.Connector.Trace = Restarting, ""
	}
	restartTask := false
	for i := range st.Tasks {
		if includeTasks && (!onlyFailed || st.Tasks[i].State == Failed) {
			st.Tasks[i].State, st.Tasks[i].Trace = Restarting, ""
			restartTask = true
		}
	}
	if restartTask {
		w.stopTask(c)
		w.startTask(c)
	}
	return &st, nil
}

// RestartTask restarts a connector's task from its durable offset.
func (w *Worker) RestartTask(name string, id int) error {
	defer w.ops.lock(name)()
	c, ok := w.lookup(name)
	if !ok {
		return connectorNotFound(name)
	}
	w.mu.Lock()
	hasTask := c.task != nil
	w.mu.Unlock()
	if id != 0 || !hasTask {
		return notFound("Task %s-%d not found", name, id)
	}
	w.stopTask(c)
	w.startTask(c)
	return nil
}

// SignalConnector hands a Debezium signal to the connector's running task (cdcd's
// POST /connectors/{name}/signals).
func (w *Worker) SignalConnector(name, id, kind, data string) error {
	c, ok := w.lookup(name)
	if !ok {
		return connectorNotFound(name)
	}
	w.mu.Lock()
	t := c.task
	w.mu.Unlock()
	if t == nil {
		return &RequestError{Kind: Conflict, Message: fmt.Sprintf("connector %s has no running task (it is stopped); resume it, then send the signal", name)}
	}
	return t.signal(id, kind, data)
}

// DeleteConnector stops a connector and forgets it; its offsets stay in the offsets file, as in Connect.
func (w *Worker) DeleteConnector(ctx context.Context, name string) error {
	defer w.ops.lock(name)()
	c, ok := w.lookup(name)
	if !ok {
		return connectorNotFound(name)
	}
	w.stopTask(c)
	w.mu.Lock()
	delete(w.connectors, name)
	hook := w.onDelete
	w.mu.Unlock()
	forgetConnectorMetrics(name)
	if hook != nil {
		if err := hook(ctx, name, c.config); err != nil {
			return &RequestError{Kind: ServerError, Message: fmt.Sprintf("Connector %s was deleted, but: %v", name, err)}
		}
	}
	return nil
}

package cluster

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cdcd/cdcd/connect/interworker"
	"github.com/cdcd/cdcd/schema/jsonconv"
)

// TargetState is what a connector was asked to be (Connect's TargetState).
type TargetState string

const (
	Started TargetState = "STARTED"
	Paused  TargetState = "PAUSED"
	Stopped TargetState = "STOPPED"
)

// The config topic's key prefixes (KafkaConfigBackingStore).
const (
	connectorKeyPrefix   = "connector-"
	taskKeyPrefix        = "task-"
	commitKeyPrefix      = "commit-"
	targetStateKeyPrefix = "target-state-"
	// taskCountKeyPrefix is the task count record (TASK_COUNT_RECORD_V0, {"task-count":n}) the leader of
	// an exactly-once cluster writes once the producers of a connector's earlier task generations are
	// fenced: task configs committed after a connector's last such record are "pending fencing", and
	// their tasks must not start before the next round writes one.
	taskCountKeyPrefix = "tasks-fencing-"
	// sessionKeyKey is the group's session key (SESSION_KEY_V0), which the leader writes and every worker
	// signs and checks internal requests with (KIP-507).
	sessionKeyKey = "session-key"
)

// Keys of the config topic that cdcd reads past without acting on them: they are written by Java
// workers for features cdcd does not take part in (restarts requested through the topic, cluster-wide
// log levels), and cdcd never rewrites them.
var configKeysLeftAlone = []string{"restart-connector-", "logger-cluster-"}

// ConfigSnapshot is the cluster's configuration as read from the config topic up to Offset.
type ConfigSnapshot struct {
	// Offset is the offset after the last record read (-1 before any): the "config offset" members
	// exchange in the group protocol, so two members agree on it only when they read the same records.
	Offset int64
	// Connectors holds each connector's config as submitted (${…} placeholders unresolved).
	Connectors map[string]map[string]string
	// TargetStates holds each connector's target state; a connector without a record is STARTED.
	TargetStates map[string]TargetState
	// Tasks holds the committed task configs of each connector, task n at index n. A connector whose
	// last commit record found task records missing is left out (and listed in Inconsistent) until a
	// complete commit arrives.
	Tasks map[string][]map[string]string
	// Inconsistent lists connectors whose last commit was incomplete, sorted.
	Inconsistent []string
	// TaskCountRecords holds each connector's last task count record ("tasks-fencing-<name>"): the number
	// of tasks whose producers the last round of zombie fencing covered. A connector without one never
	// had a fencing round. Records outlive their connector's deletion, as in Connect.
	TaskCountRecords map[string]int
	// PendingFencing holds the connectors whose last commit record came after their last task count
	// record (Connect's ClusterConfigState.pendingFencing): with exactly-once source support, their tasks
	// start only after a round of zombie fencing.
	PendingFencing map[string]bool
	// TaskGenerations counts each connector's complete task commits as this reader saw them
	// (ClusterConfigState.taskConfigGeneration): a fencing round checks that no newer generation was
	// committed while it fenced. The numbers are local to this reader.
	TaskGenerations map[string]int
}

// ConnectorNames returns the configured connectors, sorted.
func (s ConfigSnapshot) ConnectorNames() []string {
	return slices.Sorted(maps.Keys(s.Connectors))
}

// ConfigStoreConfig configures a ConfigStore.
type ConfigStoreConfig struct {
	Log LogConfig
	// OnChange, when set, is called with a connector's name after a record read from the topic
	// changed its config, target state or committed tasks; it runs on the reading goroutine, after
	// the initial read to the end, and must not block or call back into the store.
	OnChange func(connector string)
}

// ConfigStore is config.storage.topic, read and written as KafkaConfigBackingStore does. Only the
// group's leader should write connector and task configs (Connect's single-writer rule); any worker
// may write target states. All methods are safe for concurrent use; writes return after the record
// was acknowledged and read back, so a Snapshot taken afterwards shows it.
type ConfigStore struct {
	log      *TopicLog
	logger   *slog.Logger
	onChange func(string)

	mu           sync.Mutex
	started      bool // OnChange fires only after the initial read
	offset       int64
	connectors   map[string]map[string]string
	targetStates map[string]TargetState
	taskConfigs  map[string]map[int]map[string]string // committed
	taskCounts   map[string]int
	deferred     map[string]map[int]map[string]string // task records waiting for their commit
	inconsistent map[string]bool
	taskCountRec map[string]int
	pending      map[string]bool
	generations  map[string]int
	sessionKey   *interworker.SessionKey
	keyChanged   chan struct{} // closed and replaced when a session key is read
}

// OpenConfigStore creates or checks the config topic (one partition, compacted) and reads it to its end.
func OpenConfigStore(ctx context.Context, cfg ConfigStoreConfig) (*ConfigStore, error) {
	logger := cfg.Log.Logger
	if logger == nil {
		logger = slog.Default()
	}
	s := newConfigStore(logger.With("topic", cfg.Log.Topic.Name), cfg.OnChange)
	cfg.Log.Topic.SinglePartition = true
	l, err := OpenLog(ctx, cfg.Log, s.apply)
	if err != nil {
		return nil, fmt.Errorf("config store: %w", err)
	}
	s.log = l
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
	return s, nil
}

func newConfigStore(logger *slog.Logger, onChange func(string)) *ConfigStore {
	return &ConfigStore{
		logger:       logger,
		onChange:     onChange,
		offset:       -1,
		connectors:   map[string]map[string]string{},
		targetStates: map[string]TargetState{},
		taskConfigs:  map[string]map[int]map[string]string{},
		taskCounts:   map[string]int{},
		deferred:     map[string]map[int]map[string]string{},
		inconsistent: map[string]bool{},
		taskCountRec: map[string]int{},
		pending:      map[string]bool{},
		generations:  map[string]int{},
		keyChanged:   make(chan struct{}),
	}
}

// Close stops reading the topic.
func (s *ConfigStore) Close() { s.log.Close() }

// ReadToEnd waits until every record written to the topic before the call was read.
func (s *ConfigStore) ReadToEnd(ctx context.Context) error {
	if err := s.log.ReadToEnd(ctx); err != nil {
		return fmt.Errorf("config store: %w", err)
	}
	return nil
}

// Snapshot returns a copy of the configuration read so far.
func (s *ConfigStore) Snapshot() ConfigSnapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := ConfigSnapshot{
		Offset:       s.offset,
		Connectors:   make(map[string]map[string]string, len(s.connectors)),
		TargetStates: maps.Clone(s.targetStates),
		Tasks:        map[string][]map[string]string{},
		Inconsistent: slices.Sorted(maps.Keys(s.inconsistent)),

		TaskCountRecords: maps.Clone(s.taskCountRec),
		PendingFencing:   maps.Clone(s.pending),
		TaskGenerations:  maps.Clone(s.generations),
	}
	for name, props := range s.connectors {
		snap.Connectors[name] = maps.Clone(props)
		if s.inconsistent[name] {
			continue
		}
		n := s.taskCounts[name]
		tasks := make([]map[string]string, 0, n)
		for i := range n {
			tasks = append(tasks, maps.Clone(s.taskConfigs[name][i]))
		}
		snap.Tasks[name] = tasks
	}
	return snap
}

// PutConnectorConfig writes a connector's config as given (placeholders unresolved). A non-nil
// initial state is written first, as Connect does for a connector created with initial_state.
func (s *ConfigStore) PutConnectorConfig(ctx context.Context, name string, props map[string]string, initial *TargetState) error {
	var msgs []Message
	if initial != nil {
		msgs = append(msgs, Message{Key: []byte(targetStateKeyPrefix + name), Value: targetStateValue(*initial)})
	}
	msgs = append(msgs, Message{Key: []byte(connectorKeyPrefix + name), Value: propertiesValue(props)})
	return s.writeAndRead(ctx, msgs...)
}

// RemoveConnectorConfig deletes a connector: tombstones for its config and its target state. Its
// task and commit records stay, as in Connect; a later commit without a config is ignored.
func (s *ConfigStore) RemoveConnectorConfig(ctx context.Context, name string) error {
	return s.writeAndRead(ctx,
		Message{Key: []byte(connectorKeyPrefix + name)},
		Message{Key: []byte(targetStateKeyPrefix + name)})
}

// PutTaskConfigs replaces a connector's task configs with Connect's commit protocol: the task
// records, then (once they are read back) the commit record that makes them count. Readers that see
// the task records without their commit keep the previous tasks. Zero tasks writes only the commit.
func (s *ConfigStore) PutTaskConfigs(ctx context.Context, name string, tasks []map[string]string) error {
	if err := s.ReadToEnd(ctx); err != nil {
		return err
	}
	if len(tasks) > 0 {
		msgs := make([]Message, len(tasks))
		for i, props := range tasks {
			msgs[i] = Message{Key: []byte(taskKey(name, i)), Value: propertiesValue(props)}
		}
		if err := s.writeAndRead(ctx, msgs...); err != nil {
			return err
		}
	}
	commit := []byte(`{"tasks":` + strconv.Itoa(len(tasks)) + `}`)
	return s.writeAndRead(ctx, Message{Key: []byte(commitKeyPrefix + name), Value: commit})
}

// PutTaskCountRecord writes a connector's task count record (KafkaConfigBackingStore.putTaskCountRecord):
// the producers of its tasks up to the last generation are fenced, and its current tasks, count of them,
// may start. Only the leader writes it, after a round of zombie fencing.
func (s *ConfigStore) PutTaskCountRecord(ctx context.Context, name string, count int) error {
	return s.writeAndRead(ctx, Message{Key: []byte(taskCountKeyPrefix + name), Value: taskCountValue(count)})
}

// taskCountValue is TASK_COUNT_RECORD_V0 as the schemaless JsonConverter writes it.
func taskCountValue(count int) []byte {
	return []byte(`{"task-count":` + strconv.Itoa(count) + `}`)
}

// SessionKey returns the last session key read from the topic (ok false before any), and a channel closed
// when a newer one is read.
func (s *ConfigStore) SessionKey() (key interworker.SessionKey, ok bool, changed <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessionKey != nil {
		key, ok = *s.sessionKey, true
	}
	return key, ok, s.keyChanged
}

// PutSessionKey writes a new session key (KafkaConfigBackingStore.putSessionKey); only the leader writes one.
func (s *ConfigStore) PutSessionKey(ctx context.Context, key interworker.SessionKey) error {
	return s.writeAndRead(ctx, Message{Key: []byte(sessionKeyKey), Value: sessionKeyValue(key)})
}

// sessionKeyValue is SESSION_KEY_V0 as the schemaless JsonConverter writes it: the key's bytes in base64,
// its algorithm and its creation time in epoch milliseconds.
func sessionKeyValue(key interworker.SessionKey) []byte {
	b := []byte(`{"key":`)
	b = jsonconv.AppendJSONString(b, base64.StdEncoding.EncodeToString(key.Key))
	b = append(b, `,"algorithm":`...)
	b = jsonconv.AppendJSONString(b, key.Algorithm)
	b = append(b, `,"creation-timestamp":`...)
	b = strconv.AppendInt(b, key.Created.UnixMilli(), 10)
	return append(b, '}')
}

// PutTargetState records what a connector should be.
func (s *ConfigStore) PutTargetState(ctx context.Context, name string, state TargetState) error {
	return s.writeAndRead(ctx, Message{Key: []byte(targetStateKeyPrefix + name), Value: targetStateValue(state)})
}

func (s *ConfigStore) writeAndRead(ctx context.Context, msgs ...Message) error {
	if err := s.log.Write(ctx, msgs...); err != nil {
		return fmt.Errorf("config store: %w", err)
	}
	return s.ReadToEnd(ctx)
}

func taskKey(connector string, task int) string {
	return taskKeyPrefix + connector + "-" + strconv.Itoa(task)
}

// propertiesValue is the JSON of CONNECTOR_CONFIGURATION_V0 / TASK_CONFIGURATION_V0 as the
// schemaless JsonConverter writes it. Properties are written sorted, as a Go map has no order;
// readers look them up by name.
func propertiesValue(props map[string]string) []byte {
	b := []byte(`{"properties":{`)
	for i, k := range slices.Sorted(maps.Keys(props)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonconv.AppendJSONString(b, k)
		b = append(b, ':')
		b = jsonconv.AppendJSONString(b, props[k])
	}
	return append(b, "}}"...)
}

// targetStateValue is TARGET_STATE_V1: "state" says PAUSED for STOPPED, so that workers older than
// Connect 3.5 (which know no STOPPED) keep the connector from running; "state.v2" has the truth.
func targetStateValue(state TargetState) []byte {
	v1 := state
	if state == Stopped {
		v1 = Paused
	}
	b := []byte(`{"state":`)
	b = jsonconv.AppendJSONString(b, string(v1))
	b = append(b, `,"state.v2":`...)
	b = jsonconv.AppendJSONString(b, string(state))
	return append(b, '}')
}

// apply folds one record into the state, following KafkaConfigBackingStore's ConsumeCallback.
func (s *ConfigStore) apply(r Record) {
	key := string(r.Key)
	s.mu.Lock()
	s.offset = r.Offset + 1
	changed, err := s.applyLocked(key, r.Value)
	notify := s.started && changed != "" && s.onChange != nil
	s.mu.Unlock()
	if err != nil {
		s.logger.Warn("skipping config record", "offset", r.Offset, "err", &RecordError{Topic: r.Topic, Key: key, Reason: err.Error()})
	}
	if notify {
		s.onChange(changed)
	}
}

// applyLocked returns the connector whose visible configuration changed, if any.
func (s *ConfigStore) applyLocked(key string, value []byte) (changed string, err error) {
	switch {
	case strings.HasPrefix(key, targetStateKeyPrefix):
		name := strings.TrimPrefix(key, targetStateKeyPrefix)
		return name, s.applyTargetState(name, value)
	case strings.HasPrefix(key, connectorKeyPrefix):
		name := strings.TrimPrefix(key, connectorKeyPrefix)
		return name, s.applyConnector(name, value)
	case strings.HasPrefix(key, taskKeyPrefix):
		return "", s.applyTask(strings.TrimPrefix(key, taskKeyPrefix), value)
	case strings.HasPrefix(key, commitKeyPrefix):
		name := strings.TrimPrefix(key, commitKeyPrefix)
		return name, s.applyCommit(name, value)
	case strings.HasPrefix(key, taskCountKeyPrefix):
		return "", s.applyTaskCount(strings.TrimPrefix(key, taskCountKeyPrefix), value)
	case key == sessionKeyKey:
		return "", s.applySessionKey(value)
	}
	for _, prefix := range configKeysLeftAlone {
		if strings.HasPrefix(key, prefix) {
			return "", nil
		}
	}
	return "", fmt.Errorf("unknown key")
}

func (s *ConfigStore) applyTargetState(name string, value []byte) error {
	if value == nil {
		delete(s.targetStates, name)
		if _, ok := s.connectors[name]; ok {
			s.targetStates[name] = Started
		}
		return nil
	}
	var v struct {
		State   *string `json:"state"`
		StateV2 *string `json:"state.v2"`
	}
	if err := json.Unmarshal(value, &v); err != nil {
		return fmt.Errorf("target state: %w", err)
	}
	raw := v.StateV2
	if raw == nil {
		raw = v.State
	}
	if raw == nil {
		return fmt.Errorf("target state without a state")
	}
	switch state := TargetState(*raw); state {
	case Started, Paused, Stopped:
		s.targetStates[name] = state
		return nil
	default:
		return fmt.Errorf("unknown target state %q", *raw)
	}
}

func (s *ConfigStore) applyConnector(name string, value []byte) error {
	if value == nil {
		delete(s.connectors, name)
		delete(s.taskCounts, name)
		delete(s.taskConfigs, name)
		delete(s.deferred, name)
		delete(s.inconsistent, name)
		return nil
	}
	props, err := decodeProperties(value)
	if err != nil {
		return err
	}
	s.connectors[name] = props
	if _, ok := s.targetStates[name]; !ok {
		s.targetStates[name] = Started
	}
	return nil
}

func (s *ConfigStore) applyTask(id string, value []byte) error {
	// The task number follows the last dash; connector names may contain dashes.
	cut := strings.LastIndexByte(id, '-')
	if cut < 0 {
		return fmt.Errorf("task key without a task number")
	}
	n, err := strconv.Atoi(id[cut+1:])
	if err != nil || n < 0 {
		return fmt.Errorf("task key with a bad task number")
	}
	if value == nil {
		return fmt.Errorf("task record is a tombstone")
	}
	props, err := decodeProperties(value)
	if err != nil {
		return err
	}
	name := id[:cut]
	if s.deferred[name] == nil {
		s.deferred[name] = map[int]map[string]string{}
	}
	s.deferred[name][n] = props
	return nil
}

func (s *ConfigStore) applyCommit(name string, value []byte) error {
	var v struct {
		Tasks *json.Number `json:"tasks"`
	}
	if value == nil {
		return fmt.Errorf("commit record is a tombstone")
	}
	if err := json.Unmarshal(value, &v); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if v.Tasks == nil {
		return fmt.Errorf("commit without a task count")
	}
	count, err := strconv.Atoi(v.Tasks.String())
	if err != nil || count < 0 {
		return fmt.Errorf("commit with a bad task count %s", v.Tasks)
	}
	if _, ok := s.connectors[name]; !ok {
		// Compaction may have removed both the config and its tombstone; the commit is left over.
		return s.applyConnector(name, nil)
	}
	deferred := s.deferred[name]
	complete := true
	for i := range count {
		if _, ok := deferred[i]; !ok {
			complete = false
			break
		}
	}
	if complete {
		if s.taskConfigs[name] == nil {
			s.taskConfigs[name] = map[int]map[string]string{}
		}
		maps.Copy(s.taskConfigs[name], deferred)
		delete(s.inconsistent, name)
		s.generations[name]++
	} else {
		s.inconsistent[name] = true
	}
	delete(s.deferred, name)
	s.taskCounts[name] = count
	// Task configs committed after the last task count record need a round of zombie fencing before their
	// tasks start, complete or not (as processTasksCommitRecord marks them).
	s.pending[name] = true
	return nil
}

// applyTaskCount reads a task count record: it ends the connector's pending fencing. A record in another
// shape is skipped, as KafkaConfigBackingStore skips it, and the fencing stays pending.
func (s *ConfigStore) applyTaskCount(name string, value []byte) error {
	if value == nil {
		return fmt.Errorf("task count record is a tombstone")
	}
	var v struct {
		TaskCount json.RawMessage `json:"task-count"`
	}
	if err := json.Unmarshal(value, &v); err != nil {
		return fmt.Errorf("task count record: %w", err)
	}
	if v.TaskCount == nil {
		return fmt.Errorf("task count record without a task-count")
	}
	// An integer, as intValue takes it; a string or a fraction is not one.
	count, err := strconv.ParseInt(string(v.TaskCount), 10, 32)
	if err != nil || count < 0 {
		return fmt.Errorf("task count record with a bad task-count %s", v.TaskCount)
	}
	s.taskCountRec[name] = int(count)
	delete(s.pending, name)
	return nil
}

// applySessionKey reads a session key record; one in another shape is skipped, as
// KafkaConfigBackingStore.processSessionKeyRecord skips it, and the previous key stays.
func (s *ConfigStore) applySessionKey(value []byte) error {
	if value == nil {
		return fmt.Errorf("session key record is a tombstone")
	}
	var v struct {
		Key       *string      `json:"key"`
		Algorithm *string      `json:"algorithm"`
		Created   *json.Number `json:"creation-timestamp"`
	}
	if err := json.Unmarshal(value, &v); err != nil {
		return fmt.Errorf("session key: %w", err)
	}
	if v.Key == nil || v.Algorithm == nil || v.Created == nil {
		return fmt.Errorf("session key without its key, algorithm or creation-timestamp")
	}
	key, err := base64.StdEncoding.DecodeString(*v.Key)
	if err != nil || len(key) == 0 {
		return fmt.Errorf("session key whose key is not base64 or empty")
	}
	created, err := strconv.ParseInt(v.Created.String(), 10, 64)
	if err != nil {
		return fmt.Errorf("session key with a bad creation-timestamp %s", v.Created)
	}
	s.sessionKey = &interworker.SessionKey{Key: key, Algorithm: *v.Algorithm, Created: time.UnixMilli(created)}
	close(s.keyChanged)
	s.keyChanged = make(chan struct{})
	return nil
}

// decodeProperties reads {"properties":{…}}. Connect's schema allows null values; such keys are
// left out, as they carry no setting.
func decodeProperties(value []byte) (map[string]string, error) {
	var v struct {
		Properties map[string]*string `json:"properties"`
	}
	if err := json.Unmarshal(value, &v); err != nil {
		return nil, fmt.Errorf("properties: %w", err)
	}
	if v.Properties == nil {
		return nil, fmt.Errorf("no properties")
	}
	props := make(map[string]string, len(v.Properties))
	for k, p := range v.Properties {
		if p != nil {
			props[k] = *p
		}
	}
	return props, nil
}

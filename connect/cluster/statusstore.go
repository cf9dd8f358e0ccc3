package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/cdcd/cdcd/schema/jsonconv"
)

// State is a connector's or task's state as Connect reports it (AbstractStatus.State).
type State string

const (
	Unassigned   State = "UNASSIGNED"
	Running      State = "RUNNING"
	StatePaused  State = "PAUSED"
	Failed       State = "FAILED"
	Restarting   State = "RESTARTING"
	StateStopped State = "STOPPED"
)

const (
	connectorStatusPrefix = "status-connector-"
	taskStatusPrefix      = "status-task-"
)

// Status is one status record: STATUS_SCHEMA_V0 plus Connect 4.1's version.
type Status struct {
	State      State
	Trace      string // the failure's stack trace; "" is written as null
	WorkerID   string // the owner's advertised host:port
	Generation int64  // the group generation the owner held when it wrote the record
	Version    string // the plugin version; "" is written as null
}

// StatusStore is status.storage.topic, read and written as KafkaStatusBackingStore does. All methods
// are safe for concurrent use; Put returns once the record is acknowledged with acks=all.
type StatusStore struct {
	log    *TopicLog
	logger *slog.Logger

	mu         sync.RWMutex
	connectors map[string]Status
	tasks      map[string]map[int]Status
}

// OpenStatusStore creates or checks the status topic (status.storage.partitions, compacted) and
// reads it to its end.
func OpenStatusStore(ctx context.Context, cfg LogConfig) (*StatusStore, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	s := &StatusStore{logger: logger.With("topic", cfg.Topic.Name), connectors: map[string]Status{}, tasks: map[string]map[int]Status{}}
	l, err := OpenLog(ctx, cfg, s.apply)
	if err != nil {
		return nil, fmt.Errorf("status store: %w", err)
	}
	s.log = l
	return s, nil
}

// Close stops reading the topic.
func (s *StatusStore) Close() { s.log.Close() }

// ReadToEnd waits until every status written before the call was read.
func (s *StatusStore) ReadToEnd(ctx context.Context) error {
	if err := s.log.ReadToEnd(ctx); err != nil {
		return fmt.Errorf("status store: %w", err)
	}
	return nil
}

// PutConnector writes a connector's status. UNASSIGNED and FAILED are written as Connect's putSafe
// writes them: not over a status another worker wrote in a newer generation, since that worker owns
// the connector now and a late report from its former owner must not hide its state.
func (s *StatusStore) PutConnector(ctx context.Context, connector string, st Status) error {
	s.mu.RLock()
	cur, ok := s.connectors[connector]
	s.mu.RUnlock()
	if ok && overtaken(cur, st) {
		return nil
	}
	return s.write(ctx, connectorStatusPrefix+connector, statusValue(st))
}

// PutTask writes a task's status, with PutConnector's rule for UNASSIGNED and FAILED.
func (s *StatusStore) PutTask(ctx context.Context, connector string, task int, st Status) error {
	s.mu.RLock()
	cur, ok := s.tasks[connector][task]
	s.mu.RUnlock()
	if ok && overtaken(cur, st) {
		return nil
	}
	return s.write(ctx, taskStatusKey(connector, task), statusValue(st))
}

// overtaken says whether a safe write of next must yield to cur (KafkaStatusBackingStore's
// CacheEntry.canWriteSafely).
func overtaken(cur, next Status) bool {
	safe := next.State == Unassigned || next.State == Failed
	return safe && cur.WorkerID != next.WorkerID && cur.Generation > next.Generation
}

// DeleteConnector writes the tombstone Connect writes for a deleted connector (its DESTROYED state).
func (s *StatusStore) DeleteConnector(ctx context.Context, connector string) error {
	return s.write(ctx, connectorStatusPrefix+connector, nil)
}

// DeleteTask writes the tombstone for a task that no longer exists.
func (s *StatusStore) DeleteTask(ctx context.Context, connector string, task int) error {
	return s.write(ctx, taskStatusKey(connector, task), nil)
}

func (s *StatusStore) write(ctx context.Context, key string, value []byte) error {
	if err := s.log.Write(ctx, Message{Key: []byte(key), Value: value}); err != nil {
		return fmt.Errorf("status store: %w", err)
	}
	return nil
}

// Connector returns a connector's last status read.
func (s *StatusStore) Connector(connector string) (Status, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st, ok := s.connectors[connector]
	return st, ok
}

// Tasks returns the last status read of each of a connector's tasks, by task number.
func (s *StatusStore) Tasks(connector string) map[int]Status {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[int]Status, len(s.tasks[connector]))
	for n, st := range s.tasks[connector] {
		out[n] = st
	}
	return out
}

func taskStatusKey(connector string, task int) string {
	return taskStatusPrefix + connector + "-" + strconv.Itoa(task)
}

// statusValue writes the fields in the schema's order: state, trace, worker_id, generation, version.
func statusValue(st Status) []byte {
	b := []byte(`{"state":`)
	b = jsonconv.AppendJSONString(b, string(st.State))
	b = append(b, `,"trace":`...)
	b = appendNullableString(b, st.Trace)
	b = append(b, `,"worker_id":`...)
	b = jsonconv.AppendJSONString(b, st.WorkerID)
	b = append(b, `,"generation":`...)
	b = strconv.AppendInt(b, st.Generation, 10)
	b = append(b, `,"version":`...)
	b = appendNullableString(b, st.Version)
	return append(b, '}')
}

func appendNullableString(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return jsonconv.AppendJSONString(b, s)
}

func (s *StatusStore) apply(r Record) {
	key := string(r.Key)
	if err := s.applyRecord(key, r.Value); err != nil {
		s.logger.Warn("skipping status record", "offset", r.Offset, "err", &RecordError{Topic: r.Topic, Key: key, Reason: err.Error()})
	}
}

func (s *StatusStore) applyRecord(key string, value []byte) error {
	var st Status
	if value != nil {
		var err error
		if st, err = decodeStatus(value); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case strings.HasPrefix(key, connectorStatusPrefix):
		name := strings.TrimPrefix(key, connectorStatusPrefix)
		if value == nil {
			delete(s.connectors, name)
		} else {
			s.connectors[name] = st
		}
	case strings.HasPrefix(key, taskStatusPrefix):
		id := strings.TrimPrefix(key, taskStatusPrefix)
		cut := strings.LastIndexByte(id, '-')
		n, err := strconv.Atoi(id[cut+1:])
		if cut < 0 || err != nil {
			return fmt.Errorf("task status key without a task number")
		}
		name := id[:cut]
		if value == nil {
			delete(s.tasks[name], n)
			return nil
		}
		// A late UNASSIGNED from an older generation must not hide a running task (KAFKA-12525).
		if old, ok := s.tasks[name][n]; ok && st.State == Unassigned && old.State == Running && old.Generation >= st.Generation {
			return nil
		}
		if s.tasks[name] == nil {
			s.tasks[name] = map[int]Status{}
		}
		s.tasks[name][n] = st
	}
	// Other keys (status-topic-…) are read past: cdcd does not track active topics.
	return nil
}

func decodeStatus(value []byte) (Status, error) {
	var v struct {
		State      string      `json:"state"`
		Trace      *string     `json:"trace"`
		WorkerID   string      `json:"worker_id"`
		Generation json.Number `json:"generation"`
		Version    *string     `json:"version"`
	}
	if err := json.Unmarshal(value, &v); err != nil {
		return Status{}, fmt.Errorf("status: %w", err)
	}
	gen, err := v.Generation.Int64()
	if err != nil {
		return Status{}, fmt.Errorf("status generation %q is not an integer", v.Generation)
	}
	st := Status{State: State(v.State), WorkerID: v.WorkerID, Generation: gen}
	if v.Trace != nil {
		st.Trace = *v.Trace
	}
	if v.Version != nil {
		st.Version = *v.Version
	}
	return st, nil
}

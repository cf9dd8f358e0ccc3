package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/cdcd/cdcd/connect/offsets"
)

// OffsetStore is offset.storage.topic, read and written as KafkaOffsetBackingStore does. Keys and
// values are the bytes connect/offsets builds (offsets.Key, offsets.EncodeValue); the store keeps
// them byte for byte, because Connect looks offsets up by the exact key bytes. A record goes to the
// partition Java's producer picks for its key (murmur2), so a key written by cdcd and by a Java
// worker compacts to one record.
//
// Durability contract: Put returns only after the broker acknowledged every entry with acks=all.
// Release a source position (PostgreSQL standby status, slot advance) only after the Put carrying it
// returned nil. All methods are safe for concurrent use.
type OffsetStore struct {
	log    *TopicLog
	logger *slog.Logger

	mu      sync.RWMutex
	entries map[string][]byte // key bytes → value bytes, tombstones removed
}

// OpenOffsetStore creates or checks the offsets topic (offset.storage.partitions, compacted) and
// reads it to its end.
func OpenOffsetStore(ctx context.Context, cfg LogConfig) (*OffsetStore, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	s := &OffsetStore{logger: logger.With("topic", cfg.Topic.Name), entries: map[string][]byte{}}
	l, err := OpenLog(ctx, cfg, s.apply)
	if err != nil {
		return nil, fmt.Errorf("offset store: %w", err)
	}
	s.log = l
	return s, nil
}

func (s *OffsetStore) apply(r Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Value == nil {
		delete(s.entries, string(r.Key))
		return
	}
	s.entries[string(r.Key)] = r.Value
}

// Close stops reading the topic.
func (s *OffsetStore) Close() { s.log.Close() }

// ReadToEnd waits until every offset written before the call was read; Connect does this before
// every lookup, so a task that starts on another worker sees the offsets its predecessor wrote.
func (s *OffsetStore) ReadToEnd(ctx context.Context) error {
	if err := s.log.ReadToEnd(ctx); err != nil {
		return fmt.Errorf("offset store: %w", err)
	}
	return nil
}

// Get returns the value stored under the exact key bytes, as read so far (call ReadToEnd first for
// the latest).
func (s *OffsetStore) Get(key []byte) (value []byte, ok bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.entries[string(key)]
	return slices.Clone(v), ok
}

// Entries returns every stored entry, sorted by key.
func (s *OffsetStore) Entries() []offsets.Entry {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]offsets.Entry, 0, len(s.entries))
	for k, v := range s.entries {
		out = append(out, offsets.Entry{Key: []byte(k), Value: slices.Clone(v)})
	}
	slices.SortFunc(out, func(a, b offsets.Entry) int { return slices.Compare(a.Key, b.Key) })
	return out
}

// ConnectorEntries returns the entries whose key names connector, sorted by key. Keys that are not
// Connect's [connector, partition] shape are skipped with a warning, as Connect skips them.
func (s *OffsetStore) ConnectorEntries(connector string) []offsets.Entry {
	var out []offsets.Entry
	for _, e := range s.Entries() {
		name, _, err := offsets.DecodeKey(e.Key)
		if err != nil {
			s.logger.Warn("skipping offset record with a key Connect does not read", "err", err)
			continue
		}
		if name == connector {
			out = append(out, e)
		}
	}
	return out
}

// Put writes entries (a nil Value is a tombstone) and returns once all are acknowledged with
// acks=all; see the durability contract on OffsetStore. The local view is updated when the records
// are read back.
func (s *OffsetStore) Put(ctx context.Context, entries []offsets.Entry) error {
	msgs := make([]Message, len(entries))
	for i, e := range entries {
		msgs[i] = Message{Key: e.Key, Value: e.Value}
	}
	if err := s.log.Write(ctx, msgs...); err != nil {
		return fmt.Errorf("offset store: %w", err)
	}
	return nil
}

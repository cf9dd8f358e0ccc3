package offsets

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"

	"github.com/cdcd/cdcd/source/durable"
)

// FileStore is an offsets file in FileOffsetBackingStore's format, the
// standalone worker's offset.storage.file.filename. Java Connect and Debezium
// Server can read what it writes, and it reads theirs.
//
// The store keeps every entry in memory and rewrites the whole file on each
// Put, as Java does. All methods are safe for concurrent use.
//
// Durability contract: Put returns only after the new contents are on disk.
// Callers hold the invariant "offset durable before the source position is
// released": acknowledge a position to the database (PostgreSQL standby
// status update, slot advance) only after the Put carrying it has returned
// nil. Releasing it earlier loses changes if the process dies in between.
type FileStore struct {
	path string

	writeMu sync.Mutex // serializes Put, so the file and memory change in the same order

	mu      sync.RWMutex
	entries map[string][]byte // key bytes → value bytes; a nil value is a tombstone
}

// OpenFile loads the offsets file at path. A missing file is an empty store;
// it is created by the first Put. A file that is not a serialized
// HashMap<byte[],byte[]> is an error naming the file and the problem (Java
// Connect silently starts empty on a truncated file; cdcd refuses, because
// starting over from scratch is rarely what the operator wants).
func OpenFile(path string) (*FileStore, error) {
	s := &FileStore{path: path, entries: map[string][]byte{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open offsets file: %w", err)
	}
	loaded, err := decodeMap(data)
	if err != nil {
		return nil, fmt.Errorf("offsets file %s: %w", path, err)
	}
	for _, e := range loaded {
		s.entries[string(e.Key)] = e.Value
	}
	return s, nil
}

// Get returns the value stored under key. A tombstone (a null value) reads
// as absent, as it does for Connect.
func (s *FileStore) Get(key []byte) (value []byte, ok bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v := s.entries[string(key)]
	if v == nil {
		return nil, false
	}
	return bytes.Clone(v), true
}

// Entries returns a copy of all entries sorted by key, tombstones included
// (with a nil Value).
func (s *FileStore) Entries() []Entry {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return sortedEntries(s.entries)
}

// Put stores entries, later ones winning over earlier ones with the same key,
// and returns once the file holds them durably (durable.WriteFile: a crash
// leaves the old or the new contents; the file keeps its mode, or gets 0644
// when new). A nil Value stores a tombstone, kept as Java keeps it. On error
// the store is unchanged and the file holds either its old contents or, if
// only the final directory sync failed, the new ones.
//
// Put blocks for the disk writes; concurrent Puts run one after another.
func (s *FileStore) Put(entries []Entry) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()

	s.mu.RLock()
	next := make(map[string][]byte, len(s.entries)+len(entries))
	for k, v := range s.entries {
		next[k] = v
	}
	s.mu.RUnlock()
	for i, e := range entries {
		if e.Key == nil {
			return fmt.Errorf("offsets file %s: entry %d has a nil key", s.path, i)
		}
		next[string(e.Key)] = bytes.Clone(e.Value)
	}
	data, err := appendMap(nil, sortedEntries(next))
	if err != nil {
		return fmt.Errorf("offsets file %s: %w", s.path, err)
	}
	if err := durable.WriteFile(s.path, data, 0o644); err != nil {
		return fmt.Errorf("offsets file %s: %w", s.path, err)
	}

	s.mu.Lock()
	s.entries = next
	s.mu.Unlock()
	return nil
}

func sortedEntries(m map[string][]byte) []Entry {
	out := make([]Entry, 0, len(m))
	for k, v := range m {
		out = append(out, Entry{Key: []byte(k), Value: bytes.Clone(v)})
	}
	slices.SortFunc(out, func(a, b Entry) int { return bytes.Compare(a.Key, b.Key) })
	return out
}

package slotguard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// A distributed cluster keeps its ledger in a compacted Kafka topic beside Connect's internal topics: one
// record per slot and per publication, keyed by what identifies it, so compaction keeps the newest state
// of each and a tombstone forgets one. Every worker reads the whole topic at start and tails it: a slot a
// task created on one worker is known to whichever worker leads the guardian, and stays known after every
// worker restarted.
//
// Keys are JSON arrays, like Connect's own keys: ["slot","<host:port>","<slot>"] and
// ["publication","<host:port>","<database>","<publication>","<connector>"]; values are the JSON of the
// SlotRecord or PublicationRecord.

// LedgerEntry is one record of a shared ledger's topic. A nil Value is a tombstone.
type LedgerEntry struct {
	Key, Value []byte
}

// RecordLog is the topic a shared ledger writes to.
type RecordLog interface {
	// WriteRecords stores the entries in the order given and returns once the log acknowledged every one
	// of them as durable (acks=all), or ctx ended. It may be called from any goroutine, one call at a time.
	WriteRecords(ctx context.Context, entries []LedgerEntry) error
}

// sharedWriteTimeout bounds one change's write to the topic: the callers (a task that created a slot, a
// guardian refresh) must not wait on an unreachable Kafka for ever, and a change not written is tried
// again by the next refresh.
const sharedWriteTimeout = 30 * time.Second

// NewSharedLedger is an empty ledger whose changes go to log. Feed it every record of the log, its own
// writes included, through Apply before the ledger is used (the worker reads the topic to its end at start).
func NewSharedLedger(log RecordLog) *Ledger {
	return &Ledger{store: sharedStore{log}, now: time.Now}
}

type sharedStore struct{ log RecordLog }

func (s sharedStore) save(prev, next ledgerDoc) error {
	entries, err := ledgerChanges(prev, next)
	if err != nil || len(entries) == 0 {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), sharedWriteTimeout)
	defer cancel()
	if err := s.log.WriteRecords(ctx, entries); err != nil {
		return fmt.Errorf("writing the slot ledger topic: %w", err)
	}
	return nil
}

// ledgerChanges are the records that turn prev into next, in key order: the new or changed records, and a
// tombstone for every record next no longer has.
func ledgerChanges(prev, next ledgerDoc) ([]LedgerEntry, error) {
	before, err := ledgerRecords(prev)
	if err != nil {
		return nil, err
	}
	after, err := ledgerRecords(next)
	if err != nil {
		return nil, err
	}
	var out []LedgerEntry
	for _, key := range slices.Sorted(maps.Keys(after)) {
		if value := after[key]; !bytes.Equal(before[key], value) {
			out = append(out, LedgerEntry{Key: []byte(key), Value: value})
		}
	}
	for _, key := range slices.Sorted(maps.Keys(before)) {
		if _, ok := after[key]; !ok {
			out = append(out, LedgerEntry{Key: []byte(key)})
		}
	}
	return out, nil
}

// ledgerRecords is a document as the topic holds it: value by key.
func ledgerRecords(doc ledgerDoc) (map[string][]byte, error) {
	out := map[string][]byte{}
	put := func(key []string, v any) error {
		k, err := json.Marshal(key)
		if err != nil {
			return err
		}
		value, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encoding a slot ledger record: %w", err)
		}
		out[string(k)] = value
		return nil
	}
	for _, r := range doc.Slots {
		if err := put(slotKey(r), r); err != nil {
			return nil, err
		}
	}
	for _, r := range doc.Publications {
		if err := put(publicationKey(r), r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func slotKey(r SlotRecord) []string { return []string{"slot", r.Server, r.Slot} }

func publicationKey(r PublicationRecord) []string {
	return []string{"publication", r.Server, r.Database, r.Publication, r.Connector}
}

// ErrLedgerRecord marks a record of the ledger topic that Apply cannot read; it is skipped.
var ErrLedgerRecord = errors.New("unreadable slot ledger record")

// Apply folds one record of the ledger's topic into the ledger: a record replaces what the ledger holds
// under its key, a tombstone removes it. Records are applied in the topic's order, from one goroutine. A
// record it cannot read (another program's, a damaged one) changes nothing and returns an error wrapping
// ErrLedgerRecord.
func (l *Ledger) Apply(key, value []byte) error {
	var k []string
	if err := json.Unmarshal(key, &k); err != nil || len(k) == 0 {
		return fmt.Errorf("%w: the key %.200q is not a JSON array of strings", ErrLedgerRecord, key)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case k[0] == "slot" && len(k) == 3:
		same := func(r SlotRecord) bool { return r.Server == k[1] && r.Slot == k[2] }
		createdBefore := slices.ContainsFunc(l.doc.Slots, func(r SlotRecord) bool { return same(r) && r.CreatedByCDCD })
		slots := slices.DeleteFunc(slices.Clone(l.doc.Slots), same)
		if value != nil {
			var rec SlotRecord
			if err := json.Unmarshal(value, &rec); err != nil || !same(rec) {
				return fmt.Errorf("%w: the value under %s is not that slot's record", ErrLedgerRecord, key)
			}
			// Who created a slot does not change until its record is forgotten (as in recordSlot): the
			// leader may record a slot as used before it read the creating worker's record, and its
			// later write must not erase the mark.
			rec.CreatedByCDCD = rec.CreatedByCDCD || createdBefore
			slots = append(slots, rec)
		}
		l.doc = ledgerDoc{Slots: slots, Publications: l.doc.Publications}
	case k[0] == "publication" && len(k) == 5:
		same := func(r PublicationRecord) bool { return slices.Equal(publicationKey(r), k) }
		pubs := slices.DeleteFunc(slices.Clone(l.doc.Publications), same)
		if value != nil {
			var rec PublicationRecord
			if err := json.Unmarshal(value, &rec); err != nil || !same(rec) {
				return fmt.Errorf("%w: the value under %s is not that publication's record", ErrLedgerRecord, key)
			}
			pubs = append(pubs, rec)
		}
		l.doc = ledgerDoc{Slots: l.doc.Slots, Publications: pubs}
	default:
		return fmt.Errorf("%w: unknown key %.200q", ErrLedgerRecord, key)
	}
	return nil
}

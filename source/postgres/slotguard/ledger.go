package slotguard

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/cdcd/cdcd/source/durable"
)

// LedgerPath is where the ledger of a worker whose offsets live in offsetsFile is kept.
func LedgerPath(offsetsFile string) string { return offsetsFile + ".slots.json" }

// SlotRecord says that cdcd created a slot for a connector, or saw a connector use it. It outlives the
// connector, which is how a slot left behind by a deleted connector is known to be orphaned, even after a
// restart.
type SlotRecord struct {
	Server        string    `json:"server"` // host:port
	Database      string    `json:"database"`
	Slot          string    `json:"slot_name"`
	Connector     string    `json:"connector"`
	CreatedByCDCD bool      `json:"created_by_cdcd"`
	RecordedAt    time.Time `json:"recorded_at"`
}

// PublicationRecord says that cdcd created a publication for a connector, so dropping the connector's slot
// deliberately may drop it too.
type PublicationRecord struct {
	Server      string    `json:"server"`
	Database    string    `json:"database"`
	Publication string    `json:"publication"`
	Connector   string    `json:"connector"`
	RecordedAt  time.Time `json:"recorded_at"`
}

type ledgerDoc struct {
	Slots        []SlotRecord        `json:"slots"`
	Publications []PublicationRecord `json:"publications"`
}

// Ledger is the durable record of the slots and publications cdcd created or saw in use. A standalone
// worker keeps it in a small JSON file rewritten whole on every change with durable.WriteFile, so a crash
// leaves either the old or the new record, never a torn one; a distributed cluster keeps it as keyed
// records in a compacted Kafka topic that every worker reads (NewSharedLedger). What it holds in memory
// changes only once the file or the topic holds it: a change whose save failed is not there, and the same
// change later is tried again. It is safe for concurrent use.
type Ledger struct {
	store ledgerStore // nil keeps the ledger in memory only
	now   func() time.Time

	mu  sync.Mutex
	doc ledgerDoc // never modified in place: a change builds a new document and commitLocked swaps it in
}

// ledgerStore makes a change of the ledger durable before the ledger holds it. save is called with the
// ledger's lock held, one call at a time.
type ledgerStore interface {
	save(prev, next ledgerDoc) error
}

// ledgerFile is a standalone worker's ledger file, given mode 0600 when new.
type ledgerFile string

func (f ledgerFile) save(_, next ledgerDoc) error {
	data, err := json.MarshalIndent(next, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the slot ledger: %w", err)
	}
	if err := durable.WriteFile(string(f), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("writing the slot ledger: %w", err)
	}
	return nil
}

// OpenLedger loads the ledger at path; a missing file is an empty ledger. An empty path gives a ledger that
// lives in memory only.
func OpenLedger(path string) (*Ledger, error) {
	l := &Ledger{now: time.Now}
	if path == "" {
		return l, nil
	}
	l.store = ledgerFile(path)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the slot ledger: %w", err)
	}
	if err := json.Unmarshal(data, &l.doc); err != nil {
		return nil, fmt.Errorf("slot ledger %s is not valid JSON (fix or remove it; removing it makes cdcd forget which slots it created): %w", path, err)
	}
	return l, nil
}

// RecordCreated records that cdcd created slot on server for connector. Call it as soon as the slot exists:
// a slot created but never recorded is foreign once its connector is gone, and never dropped automatically.
// It blocks while the file is written; an error means the record may not survive a restart.
func (l *Ledger) RecordCreated(server, database, slot, connector string) error {
	return l.recordSlot(SlotRecord{Server: server, Database: database, Slot: slot, Connector: connector, CreatedByCDCD: true})
}

// recordUsed records that connector uses slot; a slot that cdcd created keeps that mark.
func (l *Ledger) recordUsed(server, database, slot, connector string) error {
	return l.recordSlot(SlotRecord{Server: server, Database: database, Slot: slot, Connector: connector})
}

func (l *Ledger) recordSlot(rec SlotRecord) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	slots := l.doc.Slots
	i := slices.IndexFunc(slots, func(r SlotRecord) bool { return r.Server == rec.Server && r.Slot == rec.Slot })
	if i >= 0 {
		old := slots[i]
		rec.CreatedByCDCD = rec.CreatedByCDCD || old.CreatedByCDCD // who created it does not change
		if old.Connector == rec.Connector && old.Database == rec.Database && old.CreatedByCDCD == rec.CreatedByCDCD {
			return nil // nothing new: spare the disk a rewrite every refresh
		}
		rec.RecordedAt = l.now()
		slots = slices.Clone(slots)
		slots[i] = rec
	} else {
		rec.RecordedAt = l.now()
		slots = append(slices.Clip(slots), rec) // Clip: a new array, never l.doc's spare capacity
	}
	return l.commitLocked(ledgerDoc{Slots: slots, Publications: l.doc.Publications})
}

// RecordPublication records that cdcd created publication in database on server for connector.
func (l *Ledger) RecordPublication(server, database, publication, connector string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if slices.ContainsFunc(l.doc.Publications, func(r PublicationRecord) bool {
		return r.Server == server && r.Database == database && r.Publication == publication && r.Connector == connector
	}) {
		return nil
	}
	rec := PublicationRecord{Server: server, Database: database, Publication: publication, Connector: connector, RecordedAt: l.now()}
	return l.commitLocked(ledgerDoc{Slots: l.doc.Slots, Publications: append(slices.Clone(l.doc.Publications), rec)})
}

// Slot returns the record of slot on server.
func (l *Ledger) Slot(server, slot string) (SlotRecord, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := slices.IndexFunc(l.doc.Slots, func(r SlotRecord) bool { return r.Server == server && r.Slot == slot })
	if i < 0 {
		return SlotRecord{}, false
	}
	return l.doc.Slots[i], true
}

// slotsOf returns the records of server's slots.
func (l *Ledger) slotsOf(server string) []SlotRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []SlotRecord
	for _, r := range l.doc.Slots {
		if r.Server == server {
			out = append(out, r)
		}
	}
	return out
}

// Publications returns the publications cdcd created for connector in database on server.
func (l *Ledger) Publications(server, database, connector string) []PublicationRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []PublicationRecord
	for _, r := range l.doc.Publications {
		if r.Server == server && r.Database == database && r.Connector == connector {
			out = append(out, r)
		}
	}
	return out
}

// forgetSlot removes the record of a slot that no longer exists.
func (l *Ledger) forgetSlot(server, slot string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	slots := slices.DeleteFunc(slices.Clone(l.doc.Slots), func(r SlotRecord) bool { return r.Server == server && r.Slot == slot })
	if len(slots) == len(l.doc.Slots) {
		return nil
	}
	return l.commitLocked(ledgerDoc{Slots: slots, Publications: l.doc.Publications})
}

// forgetPublication removes the record of a publication that was dropped.
func (l *Ledger) forgetPublication(rec PublicationRecord) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	pubs := slices.DeleteFunc(slices.Clone(l.doc.Publications), func(r PublicationRecord) bool {
		return r.Server == rec.Server && r.Database == rec.Database && r.Publication == rec.Publication
	})
	return l.commitLocked(ledgerDoc{Slots: l.doc.Slots, Publications: pubs})
}

// commitLocked saves next and only then makes it the ledger's content, so a failed save leaves the ledger
// as it was.
func (l *Ledger) commitLocked(next ledgerDoc) error {
	if l.store != nil {
		if err := l.store.save(l.doc, next); err != nil {
			return err
		}
	}
	l.doc = next
	return nil
}

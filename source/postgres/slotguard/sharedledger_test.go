package slotguard

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// memoryTopic is a compacted topic in memory that every worker's ledger reads: Write appends, and
// deliver hands a ledger the records it has not read yet, in order, as a worker's tail does.
type memoryTopic struct {
	mu      sync.Mutex
	entries []LedgerEntry
	fail    error // the next write fails with it
}

func (m *memoryTopic) WriteRecords(_ context.Context, entries []LedgerEntry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		err := m.fail
		m.fail = nil
		return err
	}
	m.entries = append(m.entries, entries...)
	return nil
}

// compacted is what the topic keeps per key after compaction: the newest value, tombstones dropped.
func (m *memoryTopic) compacted() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	for _, e := range m.entries {
		if e.Value == nil {
			delete(out, string(e.Key))
		} else {
			out[string(e.Key)] = string(e.Value)
		}
	}
	return out
}

type worker struct {
	ledger *Ledger
	read   int
}

func (m *memoryTopic) deliver(t *testing.T, w *worker) {
	t.Helper()
	m.mu.Lock()
	pending := append([]LedgerEntry(nil), m.entries[w.read:]...)
	w.read = len(m.entries)
	m.mu.Unlock()
	for _, e := range pending {
		if err := w.ledger.Apply(e.Key, e.Value); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSharedLedgerAcrossWorkers: a slot a task records on one worker is known to another worker once it
// read the topic, a forgotten slot is tombstoned, the topic holds exactly the ledger, and a worker that
// starts later rebuilds it from the topic alone.
func TestSharedLedgerAcrossWorkers(t *testing.T) {
	topic := &memoryTopic{}
	a, b := &worker{ledger: NewSharedLedger(topic)}, &worker{ledger: NewSharedLedger(topic)}
	if err := a.ledger.RecordCreated("db:5432", "app", "inv", "inventory"); err != nil {
		t.Fatal(err)
	}
	if err := a.ledger.RecordPublication("db:5432", "app", "inv_pub", "inventory"); err != nil {
		t.Fatal(err)
	}
	if err := b.ledger.RecordCreated("db:5432", "app", "orders", "orders"); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.ledger.Slot("db:5432", "inv"); ok {
		t.Fatal("worker b knew worker a's slot before reading the topic")
	}
	topic.deliver(t, a)
	topic.deliver(t, b)
	for name, w := range map[string]*worker{"a": a, "b": b} {
		if r, ok := w.ledger.Slot("db:5432", "inv"); !ok || !r.CreatedByCDCD || r.Connector != "inventory" {
			t.Errorf("worker %s: slot inv %+v %v", name, r, ok)
		}
		if _, ok := w.ledger.Slot("db:5432", "orders"); !ok {
			t.Errorf("worker %s does not know slot orders", name)
		}
		if p := w.ledger.Publications("db:5432", "app", "inventory"); len(p) != 1 {
			t.Errorf("worker %s: publications %+v", name, p)
		}
	}
	// Seeing a created slot in use again writes nothing: the topic is not rewritten every refresh.
	before := len(topic.entries)
	if err := b.ledger.recordUsed("db:5432", "app", "inv", "inventory"); err != nil || len(topic.entries) != before {
		t.Errorf("recordUsed of a known slot wrote %d records (%v)", len(topic.entries)-before, err)
	}

	if err := b.ledger.forgetSlot("db:5432", "inv"); err != nil {
		t.Fatal(err)
	}
	if err := b.ledger.forgetPublication(PublicationRecord{Server: "db:5432", Database: "app", Publication: "inv_pub"}); err != nil {
		t.Fatal(err)
	}
	topic.deliver(t, a)
	topic.deliver(t, b)
	if _, ok := a.ledger.Slot("db:5432", "inv"); ok {
		t.Error("worker a still knows the slot worker b forgot")
	}
	if p := a.ledger.Publications("db:5432", "app", "inventory"); len(p) != 0 {
		t.Errorf("worker a still knows the publication worker b forgot: %+v", p)
	}

	late := &worker{ledger: NewSharedLedger(topic)}
	topic.deliver(t, late)
	if _, ok := late.ledger.Slot("db:5432", "orders"); !ok || len(topic.compacted()) != 1 {
		t.Errorf("a worker started later: orders known %v; the compacted topic holds %v", ok, topic.compacted())
	}
}

// TestSharedLedgerKeepsCreatedMark: the leader records a slot as used before it read the record of the
// worker whose task created it; the created mark survives on every worker, and on one that reads the topic later.
func TestSharedLedgerKeepsCreatedMark(t *testing.T) {
	topic := &memoryTopic{}
	creator, leader := &worker{ledger: NewSharedLedger(topic)}, &worker{ledger: NewSharedLedger(topic)}
	if err := creator.ledger.RecordCreated("db:5432", "app", "inv", "inventory"); err != nil {
		t.Fatal(err)
	}
	if err := leader.ledger.recordUsed("db:5432", "app", "inv", "inventory"); err != nil {
		t.Fatal(err)
	}
	late := &worker{ledger: NewSharedLedger(topic)}
	for name, w := range map[string]*worker{"creator": creator, "leader": leader, "late": late} {
		topic.deliver(t, w)
		if r, ok := w.ledger.Slot("db:5432", "inv"); !ok || !r.CreatedByCDCD {
			t.Errorf("%s: %+v %v, want the slot created by cdcd", name, r, ok)
		}
	}
}

// TestSharedLedgerFailedWrite: a change Kafka did not take is not in the ledger, and is written when made again.
func TestSharedLedgerFailedWrite(t *testing.T) {
	topic := &memoryTopic{fail: errors.New("broker unreachable")}
	l := NewSharedLedger(topic)
	if err := l.RecordCreated("db:5432", "app", "inv", "inventory"); err == nil {
		t.Fatal("a failed write reported success")
	}
	if _, ok := l.Slot("db:5432", "inv"); ok {
		t.Fatal("the ledger holds a change the topic refused")
	}
	if err := l.RecordCreated("db:5432", "app", "inv", "inventory"); err != nil {
		t.Fatal(err)
	}
	if len(topic.compacted()) != 1 {
		t.Errorf("the retried change is not in the topic: %v", topic.compacted())
	}
}

func TestSharedLedgerRefusesForeignRecords(t *testing.T) {
	l := NewSharedLedger(&memoryTopic{})
	for _, tc := range []struct{ key, value string }{
		{`not json`, `{}`},
		{`["slot","db:5432"]`, `{}`},
		{`["table","x","y"]`, `{}`},
		{`["slot","db:5432","inv"]`, `{"server":"db:5432","slot_name":"other"}`}, // the value is another slot's
		{`["slot","db:5432","inv"]`, `[1,2]`},
		{`["publication","db:5432","app","p","c"]`, `{"server":"db:5432"}`},
	} {
		if err := l.Apply([]byte(tc.key), []byte(tc.value)); !errors.Is(err, ErrLedgerRecord) {
			t.Errorf("Apply(%s, %s) = %v, want ErrLedgerRecord", tc.key, tc.value, err)
		}
	}
	if _, ok := l.Slot("db:5432", "inv"); ok {
		t.Error("a refused record changed the ledger")
	}
}

func FuzzLedgerApply(f *testing.F) {
	f.Add([]byte(`["slot","db:5432","inv"]`), []byte(`{"server":"db:5432","slot_name":"inv","connector":"c"}`))
	f.Add([]byte(`["publication","s","d","p","c"]`), []byte(nil))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		l := NewSharedLedger(&memoryTopic{})
		_ = l.Apply(key, value)
	})
}

// flag is a Leadership the test moves; it counts the guardian's questions.
type flag struct {
	leads atomic.Bool
	asked atomic.Int32
}

func (f *flag) Leads() bool {
	f.asked.Add(1)
	return f.leads.Load()
}

// TestRunLeadingOnlyWhileLeading: a guardian that does not lead reads no server; once it leads it does, and
// when it stops leading it forgets its inventory.
func TestRunLeadingOnlyWhileLeading(t *testing.T) {
	// Nothing listens on port 1: a refresh records the server as down, which is enough to see it ran.
	cfg, err := ParseConfig(map[string]string{ConfigPrefix + "servers": "postgres://u@127.0.0.1:1/db?connect_timeout=1", ConfigPrefix + "refresh.interval.ms": "50"})
	if err != nil {
		t.Fatal(err)
	}
	g := New(cfg, &fakeRegistry{}, nil, slog.New(slog.DiscardHandler))
	lead := &flag{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.RunLeading(ctx, lead) }()
	defer func() { cancel(); <-done }()

	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("gave up waiting until %s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("the guardian asked twice whether it leads", func() bool { return lead.asked.Load() >= 2 })
	if len(g.Servers()) != 0 {
		t.Fatal("a guardian that does not lead read a server")
	}
	lead.leads.Store(true)
	waitFor("the leader read the server", func() bool { return len(g.Servers()) == 1 })
	lead.leads.Store(false)
	waitFor("the former leader forgot its inventory", func() bool { return len(g.Servers()) == 0 })
}

package connect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cdcd/cdcd/connect/cluster"
	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/source"
)

// memOffsets is an offsetStore in memory that records its writes in a journal shared with other stores,
// and fails the writes fail says to fail.
type memOffsets struct {
	name    string
	journal *[]string
	fail    func(entries []offsets.Entry) error

	mu      sync.Mutex
	entries map[string][]byte
}

func newMemOffsets(name string, journal *[]string, entries ...offsets.Entry) *memOffsets {
	m := &memOffsets{name: name, journal: journal, entries: map[string][]byte{}}
	for _, e := range entries {
		m.entries[string(e.Key)] = e.Value
	}
	return m
}

func (m *memOffsets) Get(key []byte) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.entries[string(key)]
	return v, ok
}

func (m *memOffsets) Entries() []offsets.Entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []offsets.Entry
	for _, k := range slices.Sorted(maps.Keys(m.entries)) {
		out = append(out, offsets.Entry{Key: []byte(k), Value: m.entries[k]})
	}
	return out
}

func (m *memOffsets) Put(_ context.Context, entries []offsets.Entry) error {
	var parts []string
	for _, e := range entries {
		if e.Value == nil {
			parts = append(parts, string(e.Key)+"=null")
		} else {
			parts = append(parts, string(e.Key)+"="+string(e.Value))
		}
	}
	slices.Sort(parts)
	*m.journal = append(*m.journal, m.name+" "+strings.Join(parts, " "))
	if m.fail != nil {
		if err := m.fail(entries); err != nil {
			return err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range entries {
		if e.Value == nil {
			delete(m.entries, string(e.Key))
		} else {
			m.entries[string(e.Key)] = e.Value
		}
	}
	return nil
}

func (m *memOffsets) ReadToEnd(context.Context) error { return nil }

func entry(key, value string) offsets.Entry {
	e := offsets.Entry{Key: []byte(key)}
	if value != "" {
		e.Value = []byte(value)
	}
	return e
}

// A connector's own offsets topic is read as Connect 4.4 reads it: the connector store's answer laid over
// the worker store's, where KafkaOffsetBackingStore answers null for a key it lacks. So a key only the
// worker's topic holds reads as absent (no fallback), and is listed with a null offset.
func TestConnectorOffsetsReads(t *testing.T) {
	var journal []string
	primary := newMemOffsets("connector", &journal, entry("a", "1"), entry("b", "2"))
	secondary := newMemOffsets("worker", &journal, entry("a", "0"), entry("c", "9"))
	s := &connectorOffsets{primary: primary, secondary: secondary, log: slog.New(slog.DiscardHandler)}

	for key, want := range map[string]string{"a": "1", "b": "2", "c": ""} {
		got, ok := s.Get([]byte(key))
		if string(got) != want || ok != (want != "") {
			t.Errorf("Get(%s) = %q, %v; want %q (the connector's topic's value, absent when it has none)", key, got, ok, want)
		}
	}
	var listed []string
	for _, e := range s.Entries() {
		listed = append(listed, fmt.Sprintf("%s=%s", e.Key, e.Value))
	}
	if want := []string{"a=1", "b=2", "c="}; !slices.Equal(listed, want) {
		t.Errorf("Entries = %v, want %v (the worker-only key with no value)", listed, want)
	}
	if len(journal) != 0 {
		t.Errorf("reads wrote %v", journal)
	}
}

// Writes follow ConnectorOffsetBackingStore.set: tombstones to the worker's topic first, then everything
// to the connector's, then the non-tombstones to the worker's; a failed secondary tombstone write stops the
// write, a failed primary write skips the secondary, a failed last secondary write is only logged.
func TestConnectorOffsetsWrites(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name                 string
		put                  []offsets.Entry
		failPrimary          bool
		failWorkerTombstones bool
		failWorkerValues     bool
		wantErr              bool
		want                 []string
	}{
		{name: "values: primary, then secondary", put: []offsets.Entry{entry("a", "1"), entry("b", "2")},
			want: []string{"connector a=1 b=2", "worker a=1 b=2"}},
		{name: "tombstones: secondary first, then primary, then the values to the secondary",
			put:  []offsets.Entry{entry("a", "1"), entry("b", "")},
			want: []string{"worker b=null", "connector a=1 b=null", "worker a=1"}},
		{name: "tombstones only: nothing after the primary", put: []offsets.Entry{entry("b", "")},
			want: []string{"worker b=null", "connector b=null"}},
		{name: "a failed primary write skips the secondary", put: []offsets.Entry{entry("a", "1")}, failPrimary: true,
			wantErr: true, want: []string{"connector a=1"}},
		{name: "a failed secondary tombstone write fails before the primary", put: []offsets.Entry{entry("a", "1"), entry("b", "")},
			failWorkerTombstones: true, wantErr: true, want: []string{"worker b=null"}},
		{name: "a failed secondary value write is not the write's failure", put: []offsets.Entry{entry("a", "1")},
			failWorkerValues: true, want: []string{"connector a=1", "worker a=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var journal []string
			primary := newMemOffsets("connector", &journal)
			secondary := newMemOffsets("worker", &journal)
			if tt.failPrimary {
				primary.fail = func([]offsets.Entry) error { return boom }
			}
			secondary.fail = func(entries []offsets.Entry) error {
				if entries[0].Value == nil && tt.failWorkerTombstones || entries[0].Value != nil && tt.failWorkerValues {
					return boom
				}
				return nil
			}
			s := &connectorOffsets{primary: primary, secondary: secondary, log: slog.New(slog.DiscardHandler)}
			err := s.Put(t.Context(), tt.put)
			if (err != nil) != tt.wantErr || err != nil && !errors.Is(err, boom) {
				t.Errorf("Put: %v, want error %v", err, tt.wantErr)
			}
			if !slices.Equal(journal, tt.want) {
				t.Errorf("writes %q, want %q", journal, tt.want)
			}
		})
	}
}

// The REST offsets endpoints over a connector's own topic: GET lists a partition only the worker's topic
// holds with a null offset; DELETE erases every partition in both topics, the worker's first.
func TestConnectorOffsetsREST(t *testing.T) {
	key := func(server string) string {
		k, err := offsets.Key("pg", map[string]any{"server": server})
		if err != nil {
			t.Fatal(err)
		}
		return string(k)
	}
	var journal []string
	primary := newMemOffsets("connector", &journal, entry(key("a"), `{"lsn":1}`))
	secondary := newMemOffsets("worker", &journal, entry(key("a"), `{"lsn":0}`), entry(key("b"), `{"lsn":5}`),
		entry(`["other",{"server":"x"}]`, `{"lsn":7}`))
	s := &connectorOffsets{primary: primary, secondary: secondary, log: slog.New(slog.DiscardHandler)}

	var got []string
	for _, o := range storedOffsets(s, "pg").Offsets {
		got = append(got, string(o.Partition)+" "+string(o.Offset))
	}
	if want := []string{`{"server":"a"} {"lsn":1}`, `{"server":"b"} null`}; !slices.Equal(got, want) {
		t.Errorf("GET offsets = %q, want %q", got, want)
	}
	if _, err := resetOffsets(s, "pg"); err != nil {
		t.Fatal(err)
	}
	want := []string{"worker " + key("a") + "=null " + key("b") + "=null", "connector " + key("a") + "=null " + key("b") + "=null"}
	if !slices.Equal(journal, want) {
		t.Errorf("DELETE offsets wrote %q, want %q", journal, want)
	}
	if _, ok := secondary.Get([]byte(`["other",{"server":"x"}]`)); !ok {
		t.Error("DELETE offsets erased another connector's offset")
	}
}

// offsetsFor builds the store Connect's Worker.offsetStoreFor*SourceTask builds: the worker's alone without
// the key or with the worker's own topic, else the connector's topic over the worker's.
func TestOffsetsFor(t *testing.T) {
	w := newPolicyWorker(t, nil)
	w.cfg.Mode, w.cfg.OffsetStorageTopic = config.Distributed, "connect-offsets"
	var journal []string
	opened := map[string]*memOffsets{}
	w.ownOffsets = func(_ context.Context, topic string) (offsetStore, error) {
		opened[topic] = newMemOffsets(topic, &journal)
		return opened[topic], nil
	}
	cfg := pgConfig("pg")
	if store, topic, err := w.offsetsFor(t.Context(), "pg", cfg); err != nil || store != w.offsets || topic != "connect-offsets" {
		t.Errorf("without the key: %T %s %v, want the worker's store and topic", store, topic, err)
	}
	cfg[offsetsTopicKey] = "connect-offsets"
	if store, topic, err := w.offsetsFor(t.Context(), "pg", cfg); err != nil || store != w.offsets || topic != "connect-offsets" {
		t.Errorf("the worker's own topic: %T %s %v, want the worker's store alone", store, topic, err)
	}
	cfg[offsetsTopicKey] = "pg-offsets"
	store, topic, err := w.offsetsFor(t.Context(), "pg", cfg)
	own, ok := store.(*connectorOffsets)
	if err != nil || !ok || topic != "pg-offsets" || own.primary != opened["pg-offsets"] || own.secondary != w.offsets {
		t.Fatalf("another topic: %T %s %v, want pg-offsets over the worker's store", store, topic, err)
	}
	cfg["producer.override.bootstrap.servers"] = "elsewhere:9092"
	if _, _, err := w.offsetsFor(t.Context(), "pg", cfg); err == nil || !source.IsFatal(err) || !strings.Contains(err.Error(), "offsets.storage.topic") {
		t.Errorf("another cluster: %v, want a fatal refusal naming offsets.storage.topic", err)
	}
}

// offsets.storage.topic is refused by name where cdcd cannot honour it: in standalone mode (Connect ignores
// it there), empty, and with client settings that would put or reach the topic elsewhere than the worker's
// own clients do.
func TestOffsetsTopicValidation(t *testing.T) {
	w := newPolicyWorker(t, map[string]string{"producer.security.protocol": "PLAINTEXT", "security.protocol": "PLAINTEXT"})
	cfg := pgConfig("pg")
	cfg[offsetsTopicKey] = "pg-offsets"
	got := errorsByKey(t, w, cfg)
	if msgs := got[offsetsTopicKey]; len(msgs) != 1 || !strings.Contains(msgs[0], "standalone worker keeps every connector's offsets in its offset.storage.file.filename") ||
		!strings.Contains(msgs[0], "remove offsets.storage.topic") || len(got) != 1 {
		t.Errorf("standalone: errors %v, want offsets.storage.topic refused with the reason and the fix", got)
	}
	if err := w.CheckConnectorConfig("pg", cfg, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), offsetsTopicKey) {
		t.Errorf("standalone connector file: %v, want offsets.storage.topic refused", err)
	}

	w.cfg.Mode = config.Distributed
	if got := errorsByKey(t, w, cfg); len(got) != 0 {
		t.Errorf("distributed: errors %v, want none", got)
	}
	for _, tt := range []struct {
		set     map[string]string
		key     string
		message string
	}{
		{map[string]string{offsetsTopicKey: ""}, offsetsTopicKey, "String must be non-empty"},
		{map[string]string{"producer.override.bootstrap.servers": "elsewhere:9092"}, offsetsTopicKey, "producer.override.bootstrap.servers"},
		{map[string]string{"producer.override.bootstrap.servers": "127.0.0.1:1"}, "", ""},
		{map[string]string{"admin.override.bootstrap.servers": "elsewhere:9092"}, offsetsTopicKey, "admin.override.bootstrap.servers"},
		{map[string]string{"consumer.override.isolation.level": "read_uncommitted"}, "consumer.override.isolation.level", "remove consumer.override.isolation.level"},
		{map[string]string{"producer.override.security.protocol": "SSL"}, offsetsTopicKey, "producer has other Kafka security settings (security.protocol)"},
		{map[string]string{"admin.override.sasl.mechanism": "PLAIN"}, offsetsTopicKey, "admin client has other Kafka security settings (sasl.mechanism)"},
	} {
		c := maps.Clone(cfg)
		maps.Copy(c, tt.set)
		got := errorsByKey(t, w, c)
		if tt.key == "" {
			if len(got) != 0 {
				t.Errorf("%v: errors %v, want none", tt.set, got)
			}
			continue
		}
		if msgs := got[tt.key]; len(msgs) == 0 || !strings.Contains(strings.Join(msgs, "|"), tt.message) {
			t.Errorf("%v: errors %v, want %s refused mentioning %q", tt.set, got, tt.key, tt.message)
		}
	}
}

// Once a distributed worker closed the connectors' own offsets topics (it stops), none is opened again, by a
// late REST request say, that nothing would close.
func TestOwnOffsetsNotReopenedAfterClose(t *testing.T) {
	d := &Distributed{}
	d.closeOwnOffsets()
	if _, err := d.openOwnOffsets(t.Context(), "pg-offsets"); !errors.Is(err, cluster.ErrClosed) {
		t.Errorf("opening after close: %v, want cluster.ErrClosed", err)
	}
}

// closableOffsets is an own offsets topic that records whether it was closed.
type closableOffsets struct {
	offsetStore
	closed bool
}

func (c *closableOffsets) Close() { c.closed = true }

// TestUnusedOwnOffsetsTopicsAreClosed: a worker keeps a reader open per own offsets topic that a connector's
// config or a task running here names, and closes the others (a topic of a deleted connector, or one a
// connector no longer names), so that creating and deleting connectors grows nothing; a topic named through
// a config provider keeps every reader open, since its name cannot be told.
func TestUnusedOwnOffsetsTopicsAreClosed(t *testing.T) {
	stores := map[string]*closableOffsets{}
	d := &Distributed{ownOffsets: map[string]ownOffsetStore{}, running: map[string]*connector{
		"running": {name: "running", config: map[string]string{offsetsTopicKey: "task-topic"}},
	}}
	for _, topic := range []string{"configured", "task-topic", "deleted-connector", "renamed-away"} {
		stores[topic] = &closableOffsets{}
		d.ownOffsets[topic] = stores[topic]
	}
	snap := cluster.ConfigSnapshot{Connectors: map[string]map[string]string{
		"a":       {offsetsTopicKey: "configured"},
		"b":       {offsetsTopicKey: "now-this-one"},
		"running": {},
	}}
	d.closeUnusedOwnOffsets(snap)
	for topic, open := range map[string]bool{"configured": true, "task-topic": true, "deleted-connector": false, "renamed-away": false} {
		if stores[topic].closed == open {
			t.Errorf("%s: closed=%v, want %v", topic, stores[topic].closed, !open)
		}
		if _, kept := d.ownOffsets[topic]; kept != open {
			t.Errorf("%s: still listed=%v, want %v", topic, kept, open)
		}
	}

	stores["configured"].closed = false
	snap.Connectors["c"] = map[string]string{offsetsTopicKey: "${env:TOPIC}"}
	delete(snap.Connectors, "a")
	d.closeUnusedOwnOffsets(snap)
	if stores["configured"].closed {
		t.Error("a topic was closed while a connector names its topic through a provider")
	}
}

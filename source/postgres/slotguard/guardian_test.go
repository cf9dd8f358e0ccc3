package slotguard

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeRegistry is the worker's view of its connectors, changed by the test.
type fakeRegistry struct {
	mu         sync.Mutex
	connectors []ConnectorSlot
}

func (r *fakeRegistry) Connectors() []ConnectorSlot {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]ConnectorSlot(nil), r.connectors...)
}

func (r *fakeRegistry) set(cs ...ConnectorSlot) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.connectors = cs
}

// fakeClock is moved by the test only.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// logBuffer collects JSON log lines so tests can count them.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines returns the logged records whose message is msg and whose attributes include every pair of match.
func (b *logBuffer) lines(msg string, match map[string]string) []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(b.buf.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil || rec["msg"] != msg {
			continue
		}
		ok := true
		for k, v := range match {
			if s, _ := rec[k].(string); s != v {
				ok = false
			}
		}
		if ok {
			out = append(out, rec)
		}
	}
	return out
}

func newLog() (*slog.Logger, *logBuffer) {
	b := &logBuffer{}
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}

const testServer = "db:5432"

func logicalSlot(name string, active bool, retained int64) Slot {
	return Slot{Name: name, Type: "logical", Database: ptr("app"), Plugin: ptr("pgoutput"), Active: active,
		RetainedWALBytes: ptr(retained), WALStatus: ptr("reserved")}
}

func unitGuardian(t *testing.T, cfg Config, reg Registry, ledger *Ledger) (*Guardian, *fakeClock, *logBuffer) {
	t.Helper()
	clock := &fakeClock{now: t0}
	log, buf := newLog()
	g := New(cfg, reg, ledger, log)
	g.now = clock.Now
	return g, clock, buf
}

func report(t *testing.T, g *Guardian, slot string) SlotReport {
	t.Helper()
	for _, r := range g.Slots() {
		if r.Name == slot {
			return r
		}
	}
	t.Fatalf("slot %q not in the inventory", slot)
	return SlotReport{}
}

func TestAlertIsLoggedWhenItStartsAndWhenItClearsOnly(t *testing.T) {
	cfg := Config{Inactive: time.Minute}
	g, clock, logs := unitGuardian(t, cfg, &fakeRegistry{}, nil)
	observe := func(active bool) {
		g.observe(testServer, "", ServerInfo{}, []Slot{logicalSlot("s", active, 0)}, nil, nil)
	}

	observe(false) // first seen inactive now
	if r := report(t, g, "s"); r.InactiveSince == nil || !r.InactiveSince.Equal(t0) || len(r.Alerts) != 0 {
		t.Fatalf("first refresh: inactive_since %v, alerts %v; want %v and none", r.InactiveSince, r.Alerts, t0)
	}
	clock.Advance(time.Minute)
	observe(false)
	clock.Advance(time.Minute)
	observe(false)
	r := report(t, g, "s")
	if len(r.Alerts) != 1 || r.Alerts[0].Kind != AlertInactive || !r.Alerts[0].Since.Equal(t0.Add(time.Minute)) || r.InactiveSeconds != 120 {
		t.Fatalf("after 2 min inactive: alerts %+v, inactive_seconds %v", r.Alerts, r.InactiveSeconds)
	}
	if n := len(logs.lines("replication slot alert", map[string]string{"slot": "s", "kind": "inactive", "level": "WARN"})); n != 1 {
		t.Errorf("alert start logged %d times over two refreshes, want once", n)
	}
	observe(true)
	observe(true)
	if r := report(t, g, "s"); len(r.Alerts) != 0 || r.InactiveSince != nil || r.InactiveSeconds != 0 {
		t.Errorf("active again: alerts %v, inactive_since %v", r.Alerts, r.InactiveSince)
	}
	if n := len(logs.lines("replication slot alert cleared", map[string]string{"slot": "s", "kind": "inactive"})); n != 1 {
		t.Errorf("alert clear logged %d times, want once", n)
	}
	// Inactive again: the clock starts over.
	clock.Advance(time.Hour)
	observe(false)
	if r := report(t, g, "s"); !r.InactiveSince.Equal(clock.Now()) || len(r.Alerts) != 0 {
		t.Errorf("inactive again: since %v, alerts %v", r.InactiveSince, r.Alerts)
	}
}

func TestServerInactiveSinceIsPreferred(t *testing.T) {
	g, _, _ := unitGuardian(t, Config{Inactive: time.Minute}, &fakeRegistry{}, nil)
	s := logicalSlot("s", false, 0)
	s.ServerInactiveAt = ptr(t0.Add(-time.Hour)) // PostgreSQL 17 saw it go inactive before cdcd started
	g.observe(testServer, "", ServerInfo{}, []Slot{s}, nil, nil)
	if r := report(t, g, "s"); r.InactiveSeconds != 3600 || len(r.Alerts) != 1 {
		t.Errorf("inactive_seconds %v alerts %v, want 3600 and the inactive alert", r.InactiveSeconds, r.Alerts)
	}
}

func TestSeverityChangeRestartsTheAlert(t *testing.T) {
	g, _, logs := unitGuardian(t, Config{}, &fakeRegistry{}, nil)
	s := logicalSlot("s", true, 0)
	s.WALStatus = ptr("extended")
	g.observe(testServer, "", ServerInfo{}, []Slot{s}, nil, nil)
	s.WALStatus = ptr("lost")
	g.observe(testServer, "", ServerInfo{}, []Slot{s}, nil, nil)
	if n := len(logs.lines("replication slot alert", map[string]string{"kind": "wal_status", "level": "ERROR"})); n != 1 {
		t.Errorf("lost logged at error %d times, want once", n)
	}
	if n := len(logs.lines("replication slot alert cleared", map[string]string{"kind": "wal_status"})); n != 1 {
		t.Errorf("the extended alert cleared %d times, want once", n)
	}
}

func TestGrowthAndTimeToFullFromRefreshes(t *testing.T) {
	cfg := Config{GrowthPerSecond: 50, TimeToFull: 2 * time.Minute}
	g, clock, _ := unitGuardian(t, cfg, &fakeRegistry{}, nil)
	for i, retained := range []int64{1000, 2000, 3000} {
		if i > 0 {
			clock.Advance(10 * time.Second)
		}
		s := logicalSlot("s", false, retained)
		s.SafeWALSize = ptr(12000 - retained) // max_slot_wal_keep_size is 12000 bytes past restart_lsn
		g.observe(testServer, "", ServerInfo{}, []Slot{s}, nil, nil)
	}
	r := report(t, g, "s")
	if r.GrowthBytesPerSecond == nil || *r.GrowthBytesPerSecond != 100 {
		t.Fatalf("growth %v, want 100 bytes/s", r.GrowthBytesPerSecond)
	}
	if r.TimeToFullSeconds == nil || *r.TimeToFullSeconds != 90 {
		t.Fatalf("time to full %v, want 90 s (9000 bytes at 100 bytes/s)", r.TimeToFullSeconds)
	}
	if got := kinds(r.Alerts); strings.Join(got, ",") != "growth/warn,time_to_full/error" {
		t.Errorf("alerts %v", got)
	}
	// The window slides: after growthSamples flat refreshes the slot is no longer growing.
	for range growthSamples {
		clock.Advance(10 * time.Second)
		s := logicalSlot("s", false, 3000)
		g.observe(testServer, "", ServerInfo{}, []Slot{s}, nil, nil)
	}
	if r := report(t, g, "s"); *r.GrowthBytesPerSecond != 0 || r.TimeToFullSeconds != nil || len(r.Alerts) != 0 {
		t.Errorf("flat: growth %v, time to full %v, alerts %v", *r.GrowthBytesPerSecond, r.TimeToFullSeconds, r.Alerts)
	}
}

func TestDeletedConnectorsSlotBecomesOrphanedEvenAfterRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "offsets.dat.slots.json")
	ledger, err := OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	reg := &fakeRegistry{}
	reg.set(ConnectorSlot{Connector: "inventory", Server: testServer, Database: "app", SlotName: "inv", State: "STOPPED"})
	g, _, _ := unitGuardian(t, Config{}, reg, ledger)
	slots := []Slot{logicalSlot("inv", false, 0), logicalSlot("hand_made", false, 0)}
	g.observe(testServer, "", ServerInfo{}, slots, nil, reg.Connectors())
	if r := report(t, g, "inv"); r.Status != StatusOwned || deref(r.Connector) != "inventory" || deref(r.ConnectorState) != "STOPPED" {
		t.Fatalf("stopped connector's slot: %s %v", r.Status, deref(r.Connector))
	}
	if r := report(t, g, "hand_made"); r.Status != StatusForeign || r.Connector != nil {
		t.Fatalf("hand-made slot: %s", r.Status)
	}

	// cdcd restarts without the connector's config: only the ledger file remembers the slot.
	reg.set()
	ledger2, err := OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	g2, _, logs2 := unitGuardian(t, Config{}, reg, ledger2)
	g2.observe(testServer, "", ServerInfo{}, slots, nil, nil)
	r := report(t, g2, "inv")
	if r.Status != StatusOrphaned || deref(r.Connector) != "inventory" || len(r.Alerts) != 1 || r.Alerts[0].Kind != AlertOrphaned {
		t.Fatalf("after restart: status %s connector %v alerts %v; want orphaned by inventory with an orphaned alert", r.Status, deref(r.Connector), r.Alerts)
	}
	if report(t, g2, "hand_made").Status != StatusForeign {
		t.Error("hand-made slot should stay foreign")
	}
	if len(logs2.lines("replication slot alert", map[string]string{"slot": "inv", "kind": "orphaned"})) != 1 {
		t.Error("orphaned alert not logged")
	}

	// The slot goes away (dropped by hand): its alert clears and, the connector being gone, the record too.
	g2.observe(testServer, "", ServerInfo{}, slots[1:], nil, nil)
	if _, ok := ledger2.Slot(testServer, "inv"); ok {
		t.Error("the record of a gone slot of a gone connector was kept")
	}
	if len(logs2.lines("replication slot alert cleared", map[string]string{"slot": "inv", "kind": "orphaned"})) != 1 {
		t.Error("alert of a vanished slot not cleared")
	}
}

func TestUnreadableServerKeepsItsLastStateAndLogsOnce(t *testing.T) {
	g, _, logs := unitGuardian(t, Config{}, &fakeRegistry{}, nil)
	s := logicalSlot("s", true, 0)
	s.WALStatus = ptr("lost")
	g.observe(testServer, "", ServerInfo{}, []Slot{s}, nil, nil)
	down := errors.New("connection refused")
	g.observe(testServer, "", ServerInfo{}, nil, down, nil)
	g.observe(testServer, "", ServerInfo{}, nil, down, nil)
	if r := report(t, g, "s"); len(r.Alerts) != 1 {
		t.Errorf("alerts of an unreadable server's slot: %v, want kept", r.Alerts)
	}
	if n := len(logs.lines("cannot read the replication slots of a server; keeping its last known state", nil)); n != 1 {
		t.Errorf("failure logged %d times, want once", n)
	}
	if n := len(logs.lines("replication slot alert cleared", nil)); n != 0 {
		t.Errorf("an unreadable server cleared %d alerts", n)
	}
	if s := g.Servers(); len(s) != 1 || s[0].Up || s[0].Error == "" {
		t.Errorf("server report %+v", s)
	}
}

func TestHandlers(t *testing.T) {
	reg := &fakeRegistry{}
	reg.set(ConnectorSlot{Connector: "inventory", Server: testServer, Database: "app", SlotName: "inv", State: "RUNNING"},
		ConnectorSlot{Connector: "new", Server: testServer, Database: "app", SlotName: "not_yet", State: "UNASSIGNED"})
	g, _, _ := unitGuardian(t, Config{}, reg, nil)
	other := logicalSlot("other", false, 7)
	other.WALStatus = ptr("extended")
	g.observe(testServer, "", ServerInfo{}, []Slot{logicalSlot("inv", true, 42), other}, nil, reg.Connectors())

	mux := http.NewServeMux()
	mux.Handle("GET /slots", g.SlotsHandler())
	mux.Handle("GET /connectors/{name}/slot", g.ConnectorSlotHandler())
	mux.Handle("GET /metrics", g.MetricsHandler())
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.String()
	}

	code, body := get("/slots")
	var slots struct {
		Slots []map[string]any `json:"slots"`
	}
	if err := json.Unmarshal([]byte(body), &slots); code != 200 || err != nil || len(slots.Slots) != 2 {
		t.Fatalf("/slots: %d %s", code, body)
	}
	inv := slots.Slots[0]
	for k, want := range map[string]any{"server": testServer, "slot_name": "inv", "slot_type": "logical", "database": "app", "active": true,
		"status": "owned", "connector": "inventory", "retained_wal_bytes": 42.0, "wal_status": "reserved", "inactive_seconds": 0.0} {
		if inv[k] != want {
			t.Errorf("/slots inv[%s] = %v, want %v", k, inv[k], want)
		}
	}
	if alerts, ok := slots.Slots[1]["alerts"].([]any); !ok || len(alerts) != 1 {
		t.Errorf("/slots other alerts = %v", slots.Slots[1]["alerts"])
	}

	if code, body := get("/connectors/nope/slot"); code != 404 || strings.TrimSpace(body) != `{"error_code":404,"message":"Connector nope not found"}` {
		t.Errorf("unknown connector: %d %s", code, body)
	}
	code, body = get("/connectors/inventory/slot")
	var cs ConnectorSlotResponse
	if err := json.Unmarshal([]byte(body), &cs); code != 200 || err != nil || cs.Slot == nil || cs.Slot.Name != "inv" || cs.State != "RUNNING" {
		t.Errorf("known connector: %d %s", code, body)
	}
	if code, body := get("/connectors/new/slot"); code != 200 || !strings.Contains(body, `"slot":null`) {
		t.Errorf("connector without its slot yet: %d %s", code, body)
	}

	_, metrics := get("/metrics")
	for _, want := range []string{
		`cdcd_slot_retained_wal_bytes{server="db:5432",slot="inv",status="owned"} 42`,
		`cdcd_slot_active{server="db:5432",slot="inv",status="owned"} 1`,
		`cdcd_slot_active{server="db:5432",slot="other",status="foreign"} 0`,
		`cdcd_slot_alerts{server="db:5432",slot="other",status="foreign"} 1`,
		`cdcd_slot_alert{kind="wal_status",server="db:5432",severity="warn",slot="other",status="foreign"} 1`,
		`cdcd_slots_server_up{server="db:5432"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestWebhookRetriesWithBackoffAndGivesUp(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var e Event
		_ = json.Unmarshal(body, &e)
		mu.Lock()
		calls[e.Reason]++
		n := calls[e.Reason]
		mu.Unlock()
		switch {
		case e.Reason == "flaky" && n < 3:
			w.WriteHeader(http.StatusServiceUnavailable)
		case e.Reason == "rejected":
			w.WriteHeader(http.StatusBadRequest)
		case e.Reason == "down":
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	log, _ := newLog()
	w := newWebhook(srv.URL, log)
	w.attempts, w.backoff = 4, time.Millisecond
	ctx := t.Context()
	if err := w.deliver(ctx, Event{Reason: "flaky"}); err != nil {
		t.Errorf("flaky receiver: %v", err)
	}
	if err := w.deliver(ctx, Event{Reason: "rejected"}); err == nil {
		t.Error("a 400 was taken as delivered")
	}
	if err := w.deliver(ctx, Event{Reason: "down"}); err == nil {
		t.Error("a dead receiver was taken as delivered")
	}
	mu.Lock()
	defer mu.Unlock()
	if calls["flaky"] != 3 || calls["rejected"] != 1 || calls["down"] != 4 {
		t.Errorf("calls %v: want flaky 3 (two 503s then 200), rejected 1 (no retry on 400), down 4 (bounded)", calls)
	}
}

// A server's error quotes what the DSN names (a database, a user); the connectors' Hide keeps their secrets
// out of the server report and the log.
func TestServerErrorsHideTheConnectorsSecrets(t *testing.T) {
	g, _, logs := unitGuardian(t, Config{}, &fakeRegistry{}, nil)
	hide := func(text string) string { return strings.ReplaceAll(text, "secret-db", "[hidden]") }
	connectors := []ConnectorSlot{{Connector: "c", Server: testServer, Database: "secret-db", Hide: hide}, {Connector: "other"}}
	g.observe(testServer, "", ServerInfo{}, nil, errors.New(`FATAL: database "secret-db" does not exist`), connectors)
	lines := logs.lines("cannot read the replication slots of a server; keeping its last known state", nil)
	if s := g.Servers(); len(s) != 1 || s[0].Error != `FATAL: database "[hidden]" does not exist` || len(lines) != 1 ||
		lines[0]["error"] != s[0].Error {
		t.Errorf("server report %+v, log %v: want the database hidden", s, lines)
	}
}

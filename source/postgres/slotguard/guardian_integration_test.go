package slotguard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pgEnv is a fresh database on the test-bed PostgreSQL with a guardian watching the server.
type pgEnv struct {
	dsn, server, db string
	conn            *pgx.Conn
	reg             *fakeRegistry
	ledger          *Ledger
	clock           *fakeClock
	logs            *logBuffer
	g               *Guardian
}

func newPGEnv(t *testing.T, cfg Config) *pgEnv {
	t.Helper()
	dsn := testenv.NewPostgresDB(t)
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	server, err := serverKey(dsn)
	if err != nil {
		t.Fatal(err)
	}
	ledger, err := OpenLedger(LedgerPath(t.TempDir() + "/offsets.dat"))
	if err != nil {
		t.Fatal(err)
	}
	log, logs := newLog()
	// From PostgreSQL 17 on the guardian takes a slot's inactivity from the server's own clock
	// (pg_replication_slots.inactive_since): the fake clock starts a minute ahead of the real one, so a slot
	// the test creates went inactive before the fake clock's start, as it would with one clock.
	start := time.Now().Add(time.Minute).Truncate(time.Second)
	e := &pgEnv{dsn: dsn, server: server, db: conn.Config().Database, conn: conn, reg: &fakeRegistry{}, ledger: ledger, clock: &fakeClock{now: start}, logs: logs}
	e.g = New(cfg, e.reg, ledger, log)
	e.g.now = e.clock.Now
	return e
}

// slotName is unique across tests and reruns (slots are server-wide) and short enough for NAMEDATALEN.
func slotName(tag string) string { return fmt.Sprintf("sg_%s_%08x", tag, rand.Uint32()) }

func (e *pgEnv) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := e.conn.Exec(t.Context(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func (e *pgEnv) logicalSlot(t *testing.T, tag string) string {
	t.Helper()
	name := slotName(tag)
	e.exec(t, "SELECT pg_create_logical_replication_slot($1, 'pgoutput')", name)
	return name
}

func (e *pgEnv) exists(t *testing.T, sql string, args ...any) bool {
	t.Helper()
	var ok bool
	if err := e.conn.QueryRow(t.Context(), "SELECT EXISTS ("+sql+")", args...).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

func (e *pgEnv) slotExists(t *testing.T, name string) bool {
	t.Helper()
	return e.exists(t, "SELECT 1 FROM pg_replication_slots WHERE slot_name = $1", name)
}

func (e *pgEnv) connector(name, slot, state string) ConnectorSlot {
	return ConnectorSlot{Connector: name, Server: e.server, Database: e.db, SlotName: slot, Publication: "dbz_publication", State: state, DSN: e.dsn}
}

func (e *pgEnv) refresh(t *testing.T) {
	t.Helper()
	e.g.Refresh(t.Context())
	for _, s := range e.g.Servers() {
		if !s.Up {
			t.Fatalf("refresh could not read %s: %s", s.Server, s.Error)
		}
	}
}

func TestInspectReadsTheServersColumns(t *testing.T) {
	e := newPGEnv(t, Config{})
	name := e.logicalSlot(t, "cols")
	e.exec(t, "CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t SELECT generate_series(1, 1000)")
	info, slots, err := Inspect(t.Context(), e.conn)
	if err != nil {
		t.Fatal(err)
	}
	i := indexOf(slots, name)
	if i < 0 {
		t.Fatalf("slot %s not listed", name)
	}
	s := slots[i]
	if s.Type != "logical" || deref(s.Database) != e.db || deref(s.Plugin) != "pgoutput" || s.Active || s.RestartLSN == nil || s.ConfirmedFlushLSN == nil {
		t.Errorf("slot %+v", s)
	}
	if s.RetainedWALBytes == nil || *s.RetainedWALBytes <= 0 {
		t.Errorf("retained WAL %v after writing rows, want > 0", s.RetainedWALBytes)
	}
	if info.VersionNum >= 130000 && deref(s.WALStatus) != "reserved" {
		t.Errorf("wal_status %v", deref(s.WALStatus))
	}
	if s.SafeWALSize != nil {
		t.Errorf("safe_wal_size %d without max_slot_wal_keep_size", *s.SafeWALSize)
	}
	if (info.VersionNum >= 140000) != (s.TwoPhase != nil) || (info.VersionNum >= 170000) != (s.Failover != nil) || (info.VersionNum >= 170000) != (s.Synced != nil) {
		t.Errorf("version %d: two_phase %v failover %v synced %v", info.VersionNum, s.TwoPhase, s.Failover, s.Synced)
	}
}

func indexOf(slots []Slot, name string) int {
	for i, s := range slots {
		if s.Name == name {
			return i
		}
	}
	return -1
}

func TestOrphanedSlotIsDroppedAfterTheGracePeriodOnly(t *testing.T) {
	const grace = 10 * time.Minute
	e := newPGEnv(t, Config{Enabled: true, OrphanPolicy: PolicyDrop, OrphanGrace: grace})
	slot := e.logicalSlot(t, "orph")
	const pub = "inventory_pub"
	e.exec(t, "CREATE PUBLICATION "+pub)
	if err := e.ledger.RecordCreated(e.server, e.db, slot, "inventory"); err != nil {
		t.Fatal(err)
	}
	if err := e.ledger.RecordPublication(e.server, e.db, pub, "inventory"); err != nil {
		t.Fatal(err)
	}
	e.reg.set(e.connector("inventory", slot, "RUNNING"))

	e.refresh(t)
	e.clock.Advance(time.Hour) // long inactive, but owned
	e.refresh(t)
	if r := report(t, e.g, slot); r.Status != StatusOwned || !e.slotExists(t, slot) {
		t.Fatalf("running connector's slot: %s, exists %v", r.Status, e.slotExists(t, slot))
	}

	e.reg.set() // the connector is deleted
	e.refresh(t)
	r := report(t, e.g, slot)
	if r.Status != StatusOrphaned || deref(r.Connector) != "inventory" || len(r.Alerts) == 0 || r.Alerts[0].Kind != AlertOrphaned {
		t.Fatalf("deleted connector's slot: status %s, alerts %v; want orphaned with an orphaned alert", r.Status, r.Alerts)
	}
	if r.DropEligibleAt == nil || !r.DropEligibleAt.Equal(e.clock.Now().Add(grace)) {
		t.Errorf("drop_eligible_at %v, want %v", r.DropEligibleAt, e.clock.Now().Add(grace))
	}

	e.clock.Advance(grace - time.Second)
	e.refresh(t)
	if !e.slotExists(t, slot) {
		t.Fatal("slot dropped before the grace period ended")
	}
	e.clock.Advance(time.Second)
	e.refresh(t)
	if e.slotExists(t, slot) {
		t.Fatal("orphaned slot not dropped after the grace period")
	}
	if e.exists(t, "SELECT 1 FROM pg_publication WHERE pubname = $1", pub) {
		t.Error("the publication cdcd created for the deleted connector was kept")
	}
	if _, ok := e.ledger.Slot(e.server, slot); ok {
		t.Error("the dropped slot is still in the ledger")
	}
	if audit := e.logs.lines("AUDIT dropped replication slot", map[string]string{"slot": slot, "connector": "inventory"}); len(audit) != 1 {
		t.Errorf("%d audit lines for the drop, want 1", len(audit))
	}
	for _, r := range e.g.Slots() {
		if r.Name == slot {
			t.Error("dropped slot still in the inventory")
		}
	}
}

func TestDryRunDropsNothing(t *testing.T) {
	e := newPGEnv(t, Config{Enabled: true, OrphanPolicy: PolicyDrop, OrphanGrace: time.Minute, DryRun: true})
	slot := e.logicalSlot(t, "dry")
	if err := e.ledger.RecordCreated(e.server, e.db, slot, "gone"); err != nil {
		t.Fatal(err)
	}
	e.reg.set(e.connector("other", "other_slot", "RUNNING")) // tells the guardian about the server
	for range 3 {
		e.refresh(t)
		e.clock.Advance(time.Hour)
	}
	if !e.slotExists(t, slot) {
		t.Fatal("dry run dropped the slot")
	}
	if n := len(e.logs.lines("AUDIT dry run: would drop orphaned replication slot", map[string]string{"slot": slot})); n != 1 {
		t.Errorf("dry run reported the slot %d times, want once", n)
	}
}

// TestPolicyNeverDropsOwnedForeignOrPhysicalSlots: a paused connector's slot stays owned, a hand-made slot is
// foreign, a physical slot recorded for a deleted connector is orphaned; none is dropped however long it waits.
func TestPolicyNeverDropsOwnedForeignOrPhysicalSlots(t *testing.T) {
	e := newPGEnv(t, Config{Enabled: true, OrphanPolicy: PolicyDrop, OrphanGrace: time.Minute})
	paused := e.logicalSlot(t, "paused")
	foreign := e.logicalSlot(t, "foreign")
	physical := slotName("phys")
	e.exec(t, "SELECT pg_create_physical_replication_slot($1, true)", physical)
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), e.dsn)
		if err == nil {
			conn.Exec(context.Background(), "SELECT pg_drop_replication_slot($1)", physical)
			conn.Close(context.Background())
		}
	})
	if err := e.ledger.RecordCreated(e.server, e.db, paused, "paused-connector"); err != nil {
		t.Fatal(err)
	}
	if err := e.ledger.RecordCreated(e.server, "", physical, "deleted-connector"); err != nil {
		t.Fatal(err)
	}
	e.reg.set(e.connector("paused-connector", paused, "PAUSED"))
	for range 3 {
		e.refresh(t)
		e.clock.Advance(time.Hour)
	}
	for slot, status := range map[string]string{paused: StatusOwned, foreign: StatusForeign, physical: StatusOrphaned} {
		if r := report(t, e.g, slot); r.Status != status {
			t.Errorf("slot %s: status %s, want %s", slot, r.Status, status)
		}
		if !e.slotExists(t, slot) {
			t.Errorf("slot %s (%s) was dropped", slot, status)
		}
	}
	if n := len(e.logs.lines("AUDIT dropped replication slot", nil)); n != 0 {
		t.Errorf("%d drops audited, want none", n)
	}
}

// holdSlot streams from slot on a replication connection until the test ends, which makes it active.
func holdSlot(t *testing.T, dsn, slot string) {
	t.Helper()
	conn, err := pgconn.Connect(t.Context(), dsn+"&replication=database")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	if err := pglogrepl.StartReplication(t.Context(), conn, slot, 0, pglogrepl.StartReplicationOptions{
		Mode: pglogrepl.LogicalReplication, PluginArgs: []string{"proto_version '1'", "publication_names 'dbz_publication'"},
	}); err != nil {
		t.Fatal(err)
	}
}

func TestActiveSlotIsNeverDropped(t *testing.T) {
	e := newPGEnv(t, Config{Enabled: true, OrphanPolicy: PolicyDrop, OrphanGrace: time.Minute})
	e.exec(t, "CREATE PUBLICATION dbz_publication")
	slot := e.logicalSlot(t, "active")
	if err := e.ledger.RecordCreated(e.server, e.db, slot, "deleted-connector"); err != nil {
		t.Fatal(err)
	}
	holdSlot(t, e.dsn, slot)
	e.reg.set(e.connector("other", "other_slot", "RUNNING"))
	for range 3 {
		e.refresh(t)
		e.clock.Advance(time.Hour)
	}
	if r := report(t, e.g, slot); r.Status != StatusOrphaned || !r.Active {
		t.Fatalf("held slot: status %s active %v, want orphaned and active", r.Status, r.Active)
	}
	if !e.slotExists(t, slot) {
		t.Fatal("the policy dropped an active slot")
	}
	if err := e.g.DropConnectorSlot(t.Context(), e.server, slot); !errors.Is(err, ErrSlotActive) {
		t.Errorf("DropConnectorSlot on an active slot: %v, want ErrSlotActive", err)
	}
	if !e.slotExists(t, slot) {
		t.Fatal("DropConnectorSlot dropped an active slot")
	}
}

func TestDropConnectorSlotKeepsASharedPublication(t *testing.T) {
	e := newPGEnv(t, Config{Enabled: true})
	e.exec(t, "CREATE PUBLICATION dbz_publication")
	a, b := e.logicalSlot(t, "a"), e.logicalSlot(t, "b")
	for _, rec := range [][2]string{{a, "conn-a"}, {b, "conn-b"}} {
		if err := e.ledger.RecordCreated(e.server, e.db, rec[0], rec[1]); err != nil {
			t.Fatal(err)
		}
		if err := e.ledger.RecordPublication(e.server, e.db, "dbz_publication", rec[1]); err != nil {
			t.Fatal(err)
		}
	}
	e.reg.set(e.connector("conn-a", a, "STOPPED"), e.connector("conn-b", b, "RUNNING"))
	e.refresh(t)
	if err := e.g.DropConnectorSlot(t.Context(), e.server, a); err != nil {
		t.Fatal(err)
	}
	if e.slotExists(t, a) || !e.slotExists(t, b) {
		t.Fatalf("after dropping %s: a exists %v, b exists %v", a, e.slotExists(t, a), e.slotExists(t, b))
	}
	if !e.exists(t, "SELECT 1 FROM pg_publication WHERE pubname = 'dbz_publication'") {
		t.Error("dropped a publication conn-b still uses")
	}
	if err := e.g.DropConnectorSlot(t.Context(), e.server, a); !errors.Is(err, ErrSlotNotFound) {
		t.Errorf("dropping it again: %v, want ErrSlotNotFound", err)
	}
	if err := e.g.DropConnectorSlot(t.Context(), "nowhere:5432", a); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("unknown server: %v, want ErrUnknownServer", err)
	}
}

// TestRunAlertsAnOrphanThroughWebhookAndMetrics runs the real loop: the alert for a deleted connector's slot
// reaches the webhook and /metrics within a few refresh intervals, and the slot stays (policy off).
func TestRunAlertsAnOrphanThroughWebhookAndMetrics(t *testing.T) {
	events := make(chan Event, 1024)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev Event
		if err := json.Unmarshal(body, &ev); err == nil {
			events <- ev
		}
	}))
	defer hook.Close()
	cfg, err := ParseConfig(map[string]string{"cdcd.slots.refresh.interval.ms": "50", "cdcd.slots.webhook.url": hook.URL})
	if err != nil {
		t.Fatal(err)
	}
	e := newPGEnv(t, cfg)
	e.g.now = time.Now // the loop's own ticker drives refreshes here
	slot := e.logicalSlot(t, "run")
	if err := e.ledger.RecordCreated(e.server, e.db, slot, "inventory"); err != nil {
		t.Fatal(err)
	}
	e.reg.set(e.connector("inventory", slot, "RUNNING"))

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.g.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	waitFor(t, "the slot to be seen as owned", func() bool {
		for _, r := range e.g.Slots() {
			if r.Name == slot {
				return r.Status == StatusOwned
			}
		}
		return false
	})
	e.reg.set() // the connector is deleted
	deadline := time.After(30 * time.Second)
	for got := false; !got; {
		select {
		case ev := <-events:
			got = ev.Event == EventAlertStarted && ev.Slot.Name == slot && ev.Alert != nil && ev.Alert.Kind == AlertOrphaned && ev.Slot.Status == StatusOrphaned
		case <-deadline:
			t.Fatal("no orphaned alert reached the webhook")
		}
	}
	rec := httptest.NewRecorder()
	e.g.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	labels := fmt.Sprintf(`server=%q,slot=%q,status="orphaned"`, e.server, slot)
	for _, want := range []string{"cdcd_slot_alerts{" + labels + "} 1", "cdcd_slot_active{" + labels + "} 0", "cdcd_slot_inactive_seconds{" + labels + "}", "cdcd_slot_retained_wal_bytes{" + labels + "}"} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if !e.slotExists(t, slot) {
		t.Error("the default policy dropped a slot")
	}
}

// waitFor polls cond; the bound only keeps a broken test from hanging.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lateRegistry lists no connector for its first calls, then one: a connector created while a refresh runs.
type lateRegistry struct {
	calls     int
	emptyFor  int
	connector ConnectorSlot
}

func (r *lateRegistry) Connectors() []ConnectorSlot {
	r.calls++
	if r.calls <= r.emptyFor {
		return nil
	}
	return []ConnectorSlot{r.connector}
}

func TestPolicyRechecksTheRegistryBeforeDropping(t *testing.T) {
	e := newPGEnv(t, Config{Enabled: true, OrphanPolicy: PolicyDrop, OrphanGrace: time.Minute, Servers: nil})
	slot := e.logicalSlot(t, "late")
	if err := e.ledger.RecordCreated(e.server, e.db, slot, "inventory"); err != nil {
		t.Fatal(err)
	}
	// Refresh 1 and refresh 2 see no connector; refresh 2 finds the slot droppable, and the re-check (the
	// third call) sees the connector that was just created.
	reg := &lateRegistry{emptyFor: 2, connector: e.connector("inventory", slot, "UNASSIGNED")}
	e.g.registry = reg
	e.g.cfg.Servers = []string{e.dsn}
	e.refresh(t)
	e.clock.Advance(time.Hour)
	e.refresh(t)
	if reg.calls != 3 {
		t.Fatalf("registry asked %d times, want 3", reg.calls)
	}
	if !e.slotExists(t, slot) {
		t.Fatal("dropped the slot of a connector created during the refresh")
	}
}

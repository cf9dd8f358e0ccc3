// Package slotguard watches every replication slot of every PostgreSQL server cdcd connects to. An inactive
// slot makes the server keep all WAL since its position, so a slot left behind by a deleted or stopped
// connector can fill the primary's disk. The guardian keeps an inventory (refreshed on an interval), tells
// which slots a connector owns, which were left behind by one (orphaned) and which cdcd knows nothing of
// (foreign), raises alerts as logs, Prometheus metrics and webhook calls, and, only when configured to,
// drops orphaned slots after a grace period.
//
// Safety rule, enforced where a slot is dropped automatically: only an orphaned, inactive, logical,
// persistent slot whose connector is still absent at the moment of the drop, and that stayed orphaned and
// inactive for the whole grace period, is ever dropped without a person asking.
package slotguard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Slot statuses.
const (
	StatusOwned    = "owned"    // a connector that uses it exists (running, paused, stopped or failed)
	StatusOrphaned = "orphaned" // recorded for a connector that no longer exists
	StatusForeign  = "foreign"  // cdcd knows nothing of it
)

// ConnectorSlot is what the worker knows of one connector.
type ConnectorSlot struct {
	Connector string
	Server    string // host:port exactly as the connector's database.hostname and database.port give it
	Database  string
	SlotName  string
	// Publication is the connector's publication.name; a publication another connector still uses is never dropped.
	Publication string
	State       string // RUNNING, PAUSED, STOPPED, FAILED, UNASSIGNED
	// DSN reaches Server with the connector's credentials; the guardian only reads pg_replication_slots
	// through it, and drops slots and publications when told to.
	DSN string
	// Hide replaces the connector's secrets (values a config provider resolved, passwords) in a text the
	// guardian reports or logs: a server's error quotes the database or user the DSN names. nil hides nothing.
	Hide func(text string) string
}

// hideSecrets is text with the secrets of every connector hidden (ConnectorSlot.Hide).
func hideSecrets(text string, connectors []ConnectorSlot) string {
	for _, c := range connectors {
		if c.Hide != nil {
			text = c.Hide(text)
		}
	}
	return text
}

// Registry tells the guardian which connectors exist. In distributed mode it must list the connectors of
// the whole cluster, not only this worker's, or the slots of connectors running elsewhere look orphaned.
type Registry interface {
	// Connectors returns every connector that exists, whatever its state. It must not block for long and
	// may be called concurrently.
	Connectors() []ConnectorSlot
}

// SlotReport is the guardian's view of one slot: the server's row plus what the guardian tracks.
type SlotReport struct {
	Server string `json:"server"`
	Slot
	Status         string  `json:"status"`
	Connector      *string `json:"connector"`
	ConnectorState *string `json:"connector_state"`
	// CreatedByCDCD: the ledger says cdcd created the slot (rather than only seeing a connector use it).
	CreatedByCDCD        bool       `json:"created_by_cdcd"`
	InactiveSince        *time.Time `json:"inactive_since"` // first refresh that saw it inactive (or the server's own clock, PostgreSQL 17+)
	InactiveSeconds      float64    `json:"inactive_seconds"`
	OrphanedSince        *time.Time `json:"orphaned_since,omitempty"`
	DropEligibleAt       *time.Time `json:"drop_eligible_at,omitempty"` // when orphan.policy=drop may drop it
	GrowthBytesPerSecond *float64   `json:"growth_bytes_per_second"`
	TimeToFullSeconds    *float64   `json:"time_to_full_seconds"`
	Alerts               []Alert    `json:"alerts"`
	CheckedAt            time.Time  `json:"checked_at"`
}

// ServerReport is the state of one watched server.
type ServerReport struct {
	Server    string    `json:"server"`
	Up        bool      `json:"up"`
	Error     string    `json:"error,omitempty"`
	CheckedAt time.Time `json:"checked_at"`
	ServerInfo
}

// slotState is what the guardian remembers of a slot between refreshes.
type slotState struct {
	report        SlotReport
	samples       []sample
	inactiveSince time.Time // zero while active
	orphanedSince time.Time // zero unless orphaned
	alerts        map[AlertKind]Alert
	dryRunLogged  bool // the dry run reported this slot once; it says so again only after the slot changes status
}

type serverState struct {
	dsn       string
	report    ServerReport
	slots     map[string]*slotState // by slot name
	failedLog bool                  // the current failure has been logged
}

// Guardian keeps the inventory and runs the alerts and the orphan policy. Its methods are safe for
// concurrent use; Refresh and drops are serialised.
type Guardian struct {
	cfg      Config
	registry Registry
	ledger   *Ledger
	log      *slog.Logger
	now      func() time.Time // time.Now; tests that move time themselves replace it
	webhook  *webhook         // nil without cdcd.slots.webhook.url

	work sync.Mutex // one refresh or drop at a time, so a drop never races a refresh's view of the slot

	mu      sync.RWMutex
	servers map[string]*serverState // by host:port
	dropped map[string]int          // slots dropped per server, for the metrics
}

// New builds a guardian; nothing runs until Run (or Refresh). ledger may be nil for a guardian that forgets
// everything on restart.
func New(cfg Config, registry Registry, ledger *Ledger, log *slog.Logger) *Guardian {
	if ledger == nil {
		ledger, _ = OpenLedger("") // an in-memory ledger cannot fail to open
	}
	g := &Guardian{
		cfg: cfg, registry: registry, ledger: ledger, log: log.With("component", "slotguard"), now: time.Now,
		servers: map[string]*serverState{}, dropped: map[string]int{},
	}
	if cfg.WebhookURL != "" {
		g.webhook = newWebhook(cfg.WebhookURL, g.log)
	}
	return g
}

// Run refreshes at once and then every RefreshInterval, and delivers webhook calls, until ctx ends. It
// returns nil then; a refresh that fails for one server is logged and retried at the next interval.
func (g *Guardian) Run(ctx context.Context) error { return g.RunLeading(ctx, nil) }

// Leadership tells the guardian of a distributed worker whether it is the one that watches the cluster's
// slots. One worker at a time (the group's leader) reads the servers, raises the alerts and applies the
// orphan policy for the whole cluster, so each server is read once per interval and a slot is dropped by
// one worker, not by every worker that sees it orphaned.
type Leadership interface {
	// Leads reports whether this worker leads now. It must not block; it is called from Run's goroutine.
	Leads() bool
}

// leadershipCheck is how often a guardian with a Leadership asks whether it leads: a new leader starts
// watching within this time of a rebalance, not a whole refresh interval later.
const leadershipCheck = time.Second

// RunLeading is Run for one worker of a cluster: the guardian refreshes only while lead says this worker
// leads (a nil lead always leads). When it stops leading it forgets its inventory and alerts, so a former
// leader neither serves a stale inventory nor drops anything; the new leader builds its own from the
// servers and the shared ledger. The webhook delivers what was queued either way.
func (g *Guardian) RunLeading(ctx context.Context, lead Leadership) error {
	if !g.cfg.Enabled {
		return nil
	}
	var wg sync.WaitGroup
	if g.webhook != nil {
		wg.Go(func() { g.webhook.run(ctx) })
	}
	defer wg.Wait()
	interval := g.cfg.RefreshInterval
	if interval <= 0 {
		interval = 30 * time.Second // a Config built by hand rather than by ParseConfig
	}
	check := interval
	if lead != nil {
		check = min(interval, leadershipCheck)
	}
	ticker := time.NewTicker(check)
	defer ticker.Stop()
	leading := false
	var refreshed time.Time
	for {
		switch now := time.Now(); {
		case lead == nil || lead.Leads():
			if !leading && lead != nil {
				g.log.Info("this worker leads the cluster: watching the replication slots")
			}
			leading = true
			// Half a tick of slack: the ticker's beats fall a little short of interval after a refresh.
			if refreshed.IsZero() || now.Sub(refreshed) >= interval-check/2 {
				refreshed = now
				g.Refresh(ctx)
			}
		case leading:
			leading, refreshed = false, time.Time{}
			g.forget()
			g.log.Info("another worker leads the cluster now: it watches the replication slots")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// forget drops the inventory and its alerts without announcing anything: they are not over, another
// worker watches them now.
func (g *Guardian) forget() {
	g.work.Lock()
	defer g.work.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.servers = map[string]*serverState{}
}

// inspectTimeout bounds how long one unreachable or stuck server can hold up a refresh.
const inspectTimeout = 10 * time.Second

// Refresh reads every watched server once, updates the inventory and alerts, and applies the orphan policy.
// It blocks for the round trips; ctx cancels them.
func (g *Guardian) Refresh(ctx context.Context) {
	g.work.Lock()
	defer g.work.Unlock()
	connectors := g.registry.Connectors()
	for server, dsn := range g.watchedServers(connectors) {
		g.refreshServer(ctx, server, dsn, connectors)
	}
	if g.cfg.OrphanPolicy == PolicyDrop {
		g.applyPolicy(ctx)
	}
}

// watchedServers are the connectors' servers, the configured ones, and every server watched before: a
// server whose last connector was just deleted still has that connector's slot.
func (g *Guardian) watchedServers(connectors []ConnectorSlot) map[string]string {
	g.mu.RLock()
	out := map[string]string{}
	for server, st := range g.servers {
		out[server] = st.dsn
	}
	g.mu.RUnlock()
	for _, dsn := range g.cfg.Servers {
		if server, err := serverKey(dsn); err == nil {
			out[server] = dsn
		}
	}
	for _, c := range connectors {
		if c.Server != "" && c.DSN != "" {
			out[c.Server] = c.DSN // the newest credentials win
		}
	}
	return out
}

// serverKey is host:port of a connection string, the form connectors name servers by.
func serverKey(dsn string) (string, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "", fmt.Errorf("parsing connection string %s: %w", redactDSN(dsn), err)
	}
	return net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))), nil
}

func (g *Guardian) refreshServer(ctx context.Context, server, dsn string, connectors []ConnectorSlot) {
	info, slots, err := g.inspect(ctx, dsn)
	g.observe(server, dsn, info, slots, err, connectors)
}

// observe folds one inspection of a server (or its failure) into the inventory, the ledger and the alerts.
func (g *Guardian) observe(server, dsn string, info ServerInfo, slots []Slot, err error, connectors []ConnectorSlot) {
	now := g.now()
	g.mu.Lock()
	st := g.servers[server]
	if st == nil {
		st = &serverState{slots: map[string]*slotState{}}
		g.servers[server] = st
	}
	st.dsn = dsn
	st.report = ServerReport{Server: server, Up: err == nil, CheckedAt: now, ServerInfo: info}
	if err != nil {
		// Keep the last known slots and alerts: a server that cannot be read has not fixed its slots.
		st.report.Error = hideSecrets(err.Error(), connectors)
		logIt := !st.failedLog
		st.failedLog = true
		g.mu.Unlock()
		if logIt {
			g.log.Warn("cannot read the replication slots of a server; keeping its last known state", "server", server, "error", st.report.Error)
		}
		return
	}
	if st.failedLog {
		g.log.Info("reading the replication slots of the server again", "server", server)
	}
	st.failedLog = false
	var events []Event
	seen := map[string]bool{}
	for _, s := range slots {
		seen[s.Name] = true
		ss := st.slots[s.Name]
		if ss == nil {
			ss = &slotState{alerts: map[AlertKind]Alert{}}
			st.slots[s.Name] = ss
		}
		events = append(events, g.updateSlot(server, ss, s, connectors, now)...)
	}
	for name, ss := range st.slots {
		if !seen[name] {
			events = append(events, clearAll(ss, now, "the slot no longer exists")...)
			delete(st.slots, name)
		}
	}
	g.mu.Unlock()

	g.recordAndPrune(server, slots, connectors)
	g.announce(events)
}

func (g *Guardian) inspect(ctx context.Context, dsn string) (ServerInfo, []Slot, error) {
	ctx, cancel := context.WithTimeout(ctx, inspectTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return ServerInfo{}, nil, fmt.Errorf("connecting: %w", err)
	}
	defer conn.Close(context.Background())
	return Inspect(ctx, conn)
}

// classify tells the status of slot name on server, and the connector it belongs or belonged to.
// Ownership wins whenever in doubt: a slot any existing connector uses, or recorded for a connector that
// still exists (under any server spelling), is owned.
func classify(server, name string, connectors []ConnectorSlot, rec SlotRecord, recorded bool) (status string, owner *ConnectorSlot) {
	for i, c := range connectors {
		if c.Server == server && c.SlotName == name {
			return StatusOwned, &connectors[i]
		}
	}
	if !recorded {
		return StatusForeign, nil
	}
	for i, c := range connectors {
		if c.Connector == rec.Connector {
			return StatusOwned, &connectors[i]
		}
	}
	return StatusOrphaned, &ConnectorSlot{Connector: rec.Connector, Server: server, Database: rec.Database, SlotName: name}
}

// updateSlot folds one refresh's row into the slot's state and returns the alert changes. Called with g.mu held.
func (g *Guardian) updateSlot(server string, ss *slotState, s Slot, connectors []ConnectorSlot, now time.Time) []Event {
	rec, recorded := g.ledger.Slot(server, s.Name)
	status, owner := classify(server, s.Name, connectors, rec, recorded)

	switch {
	case s.Active:
		ss.inactiveSince = time.Time{}
	case s.ServerInactiveAt != nil:
		ss.inactiveSince = *s.ServerInactiveAt // PostgreSQL 17 knows better, even across cdcd restarts
	case ss.inactiveSince.IsZero():
		ss.inactiveSince = now
	}
	if status != StatusOrphaned {
		ss.orphanedSince = time.Time{}
	} else if ss.orphanedSince.IsZero() {
		ss.orphanedSince = now
	}
	if status != ss.report.Status {
		ss.dryRunLogged = false
	}
	if s.RetainedWALBytes != nil {
		ss.samples = append(ss.samples, sample{at: now, retained: *s.RetainedWALBytes})
		if len(ss.samples) > growthSamples {
			ss.samples = slices.Delete(ss.samples, 0, len(ss.samples)-growthSamples)
		}
	}

	f := slotFacts{slot: s, status: status}
	if owner != nil {
		f.connector = owner.Connector
	}
	if !ss.inactiveSince.IsZero() {
		f.inactiveFor = max(now.Sub(ss.inactiveSince), 0)
	}
	f.rate, f.rateKnown = growthRate(ss.samples)
	f.toFull, f.toFullKnown = timeToFull(s, g.cfg.WALCapacity, f.rate, f.rateKnown)

	r := SlotReport{Server: server, Slot: s, Status: status, CreatedByCDCD: recorded && rec.CreatedByCDCD, CheckedAt: now,
		InactiveSeconds: f.inactiveFor.Seconds()}
	if owner != nil {
		r.Connector = &owner.Connector
		if owner.State != "" {
			r.ConnectorState = &owner.State
		}
	}
	if !ss.inactiveSince.IsZero() {
		r.InactiveSince = ptr(ss.inactiveSince)
	}
	if !ss.orphanedSince.IsZero() {
		r.OrphanedSince = ptr(ss.orphanedSince)
		if g.cfg.OrphanPolicy == PolicyDrop && s.Type == "logical" {
			r.DropEligibleAt = ptr(latest(ss.orphanedSince, ss.inactiveSince).Add(g.cfg.OrphanGrace))
		}
	}
	if f.rateKnown {
		r.GrowthBytesPerSecond = ptr(f.rate)
	}
	if f.toFullKnown {
		r.TimeToFullSeconds = ptr(f.toFull.Seconds())
	}

	// Alerts keep their start time while they last; an alert whose rule no longer fires clears.
	var events []Event
	current := map[AlertKind]Alert{}
	for _, a := range evaluate(g.cfg, f) {
		if old, ok := ss.alerts[a.Kind]; ok && old.Severity == a.Severity {
			a.Since = old.Since
		} else {
			a.Since = now
			events = append(events, Event{Event: EventAlertStarted, At: now, Alert: ptr(a)})
		}
		current[a.Kind] = a
	}
	for kind, old := range ss.alerts {
		if next, ok := current[kind]; !ok || next.Severity != old.Severity {
			events = append(events, Event{Event: EventAlertCleared, At: now, Alert: ptr(old)})
		}
	}
	ss.alerts = current
	r.Alerts = slices.SortedFunc(maps.Values(current), func(a, b Alert) int { return cmp.Compare(string(a.Kind), string(b.Kind)) })
	if r.Alerts == nil {
		r.Alerts = []Alert{}
	}
	ss.report = r
	for i := range events {
		events[i].Slot = r
	}
	return events
}

// clearAll ends every alert of a slot. Called with g.mu held.
func clearAll(ss *slotState, now time.Time, reason string) []Event {
	var events []Event
	for _, a := range ss.alerts {
		events = append(events, Event{Event: EventAlertCleared, At: now, Alert: ptr(a), Slot: ss.report, Reason: reason})
	}
	ss.alerts = map[AlertKind]Alert{}
	return events
}

// recordAndPrune keeps the ledger in step with what the server shows: every slot a connector uses is
// recorded (so it is known to be orphaned once the connector is gone, even after a restart), and the record
// of a slot that no longer exists and whose connector is gone too is forgotten.
func (g *Guardian) recordAndPrune(server string, slots []Slot, connectors []ConnectorSlot) {
	present := map[string]Slot{}
	for _, s := range slots {
		present[s.Name] = s
	}
	for _, c := range connectors {
		s, ok := present[c.SlotName]
		if c.Server != server || !ok || s.Type != "logical" {
			continue
		}
		if err := g.ledger.recordUsed(server, deref(s.Database), s.Name, c.Connector); err != nil {
			g.log.Warn("cannot record a connector's slot in the ledger", "server", server, "slot", s.Name, "connector", c.Connector, "error", err)
		}
	}
	for _, rec := range g.ledger.slotsOf(server) {
		if _, ok := present[rec.Slot]; ok || slices.ContainsFunc(connectors, func(c ConnectorSlot) bool { return c.Connector == rec.Connector }) {
			continue
		}
		if err := g.ledger.forgetSlot(server, rec.Slot); err != nil {
			g.log.Warn("cannot update the slot ledger", "server", server, "slot", rec.Slot, "error", err)
		}
	}
}

// dropBlocker says why the orphan policy must not drop the slot now, or "" when it may. Every safeguard of
// the automatic drop is here, each with its own reason.
func dropBlocker(cfg Config, r SlotReport, now time.Time) string {
	switch {
	case cfg.OrphanPolicy != PolicyDrop:
		return "orphan.policy is not drop"
	case r.Status == StatusOwned:
		return "a connector owns it"
	case r.Status == StatusForeign:
		return "cdcd did not record it for any connector"
	case r.Status != StatusOrphaned:
		return "its status is unknown"
	case r.Type != "logical":
		return "it is a " + r.Type + " slot"
	case r.Temporary:
		return "it is temporary and goes away with its session"
	case r.Active:
		return "it is active"
	case r.OrphanedSince == nil || now.Sub(*r.OrphanedSince) < cfg.OrphanGrace:
		return "it has not been orphaned for the grace period"
	case r.InactiveSince == nil || now.Sub(*r.InactiveSince) < cfg.OrphanGrace:
		return "it has not been inactive for the grace period"
	}
	return ""
}

// applyPolicy drops (or, in a dry run, reports) every slot the orphan policy may drop. Called with g.work held.
func (g *Guardian) applyPolicy(ctx context.Context) {
	now := g.now()
	var candidates []SlotReport
	g.mu.Lock()
	for _, st := range g.servers {
		if !st.report.Up {
			continue // its slots are as last seen, not as they are
		}
		for _, ss := range st.slots {
			if dropBlocker(g.cfg, ss.report, now) != "" {
				continue
			}
			if g.cfg.DryRun {
				if !ss.dryRunLogged {
					ss.dryRunLogged = true
					g.auditDryRun(ss.report)
				}
				continue
			}
			candidates = append(candidates, ss.report)
		}
	}
	g.mu.Unlock()
	for _, r := range candidates {
		// The connector may have been created since the refresh read the registry.
		rec, recorded := g.ledger.Slot(r.Server, r.Name)
		if status, _ := classify(r.Server, r.Name, g.registry.Connectors(), rec, recorded); status != StatusOrphaned {
			continue
		}
		if err := g.drop(ctx, r.Server, r.Name, "orphan policy: connector "+deref(r.Connector)+" no longer exists"); err != nil {
			g.log.Error("orphan policy could not drop a replication slot", "server", r.Server, "slot", r.Name, "error", err)
		}
	}
}

func (g *Guardian) auditDryRun(r SlotReport) {
	g.log.Warn("AUDIT dry run: would drop orphaned replication slot", "audit", "slot_drop_dry_run",
		"server", r.Server, "slot", r.Name, "database", deref(r.Database), "connector", deref(r.Connector),
		"retained_wal_bytes", derefInt(r.RetainedWALBytes))
	g.notify(Event{Event: EventSlotDropDryRun, At: g.now(), Slot: r, Reason: "orphan.dry.run=true"})
}

// DropConnectorSlot drops slot on server on purpose (DELETE /connectors/{name}?dropSlot=true,
// slot.drop.on.stop), whatever its status, unless it is active: stop the connector first. The publication
// cdcd created for the slot's connector goes too, unless another existing connector uses it. It blocks
// while a refresh runs and for the round trips; errors wrap ErrUnknownServer, ErrSlotNotFound or ErrSlotActive.
func (g *Guardian) DropConnectorSlot(ctx context.Context, server, slot string) error {
	g.work.Lock()
	defer g.work.Unlock()
	return g.drop(ctx, server, slot, "requested")
}

// releasePoll is how often DropReleasedConnectorSlot tries again while the slot is active.
const releasePoll = 250 * time.Millisecond

// DropReleasedConnectorSlot is DropConnectorSlot for a deleted connector whose task may still be stopping
// on another worker (distributed mode): while the slot is active it tries again every releasePoll until
// ctx ends, and then returns the ErrSlotActive error.
func (g *Guardian) DropReleasedConnectorSlot(ctx context.Context, server, slot string) error {
	for {
		err := g.DropConnectorSlot(ctx, server, slot)
		if !errors.Is(err, ErrSlotActive) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(releasePoll):
		}
	}
}

// drop drops a slot and the publications cdcd created for its connector, audits it and forgets it.
// Called with g.work held.
func (g *Guardian) drop(ctx context.Context, server, slot, reason string) error {
	dsn, ok := g.watchedServers(g.registry.Connectors())[server]
	if !ok {
		return fmt.Errorf("%w: %s (no connector or cdcd.slots.servers entry names it)", ErrUnknownServer, server)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", server, err)
	}
	defer conn.Close(context.Background())
	before, err := DropSlot(ctx, conn, slot)
	if err != nil {
		return err
	}
	rec, _ := g.ledger.Slot(server, slot)
	connector := rec.Connector
	connectors := g.registry.Connectors()
	if connector == "" {
		if i := slices.IndexFunc(connectors, func(c ConnectorSlot) bool { return c.Server == server && c.SlotName == slot }); i >= 0 {
			connector = connectors[i].Connector
		}
	}
	g.log.Warn("AUDIT dropped replication slot", "audit", "slot_dropped", "server", server, "slot", slot,
		"database", deref(before.Database), "connector", connector, "reason", reason,
		"retained_wal_bytes", derefInt(before.RetainedWALBytes), "restart_lsn", deref(before.RestartLSN))
	errs := []error{g.ledger.forgetSlot(server, slot)}
	if before.Database != nil && connector != "" {
		errs = append(errs, g.dropPublications(ctx, dsn, server, *before.Database, connector, connectors))
	}

	now := g.now()
	g.mu.Lock()
	g.dropped[server]++
	var events []Event
	if st := g.servers[server]; st != nil {
		if ss := st.slots[slot]; ss != nil {
			events = clearAll(ss, now, "the slot was dropped")
			delete(st.slots, slot)
		}
	}
	g.mu.Unlock()
	report := SlotReport{Server: server, Slot: before, Status: "dropped", CheckedAt: now, Alerts: []Alert{}}
	if connector != "" {
		report.Connector = &connector
	}
	g.announce(append(events, Event{Event: EventSlotDropped, At: now, Slot: report, Reason: reason}))
	return errors.Join(errs...)
}

// dropPublications drops the publications cdcd created for connector in database, except one that another
// existing connector of the same database is configured with.
func (g *Guardian) dropPublications(ctx context.Context, dsn, server, database, connector string, connectors []ConnectorSlot) error {
	recs := g.ledger.Publications(server, database, connector)
	if len(recs) == 0 {
		return nil
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return fmt.Errorf("parsing the connection string of %s: %w", server, err)
	}
	cfg.Database = database // a publication lives in one database
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connecting to database %s on %s: %w", database, server, err)
	}
	defer conn.Close(context.Background())
	var errs []error
	for _, rec := range recs {
		if slices.ContainsFunc(connectors, func(c ConnectorSlot) bool {
			return c.Connector != connector && c.Server == server && c.Database == database && c.Publication == rec.Publication
		}) {
			g.log.Info("keeping publication another connector uses", "server", server, "database", database, "publication", rec.Publication)
			continue
		}
		if _, err := conn.Exec(ctx, "DROP PUBLICATION IF EXISTS "+pgx.Identifier{rec.Publication}.Sanitize()); err != nil {
			errs = append(errs, fmt.Errorf("dropping publication %q in database %s: %w", rec.Publication, database, err))
			continue
		}
		g.log.Warn("AUDIT dropped publication", "audit", "publication_dropped", "server", server, "database", database, "publication", rec.Publication, "connector", connector)
		errs = append(errs, g.ledger.forgetPublication(rec))
	}
	return errors.Join(errs...)
}

// Slots returns the current inventory, sorted by server and slot name.
func (g *Guardian) Slots() []SlotReport {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var out []SlotReport
	for _, st := range g.servers {
		for _, ss := range st.slots {
			out = append(out, ss.report)
		}
	}
	slices.SortFunc(out, func(a, b SlotReport) int {
		if c := cmp.Compare(a.Server, b.Server); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return out
}

// Servers returns the state of every watched server, sorted by server.
func (g *Guardian) Servers() []ServerReport {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var out []ServerReport
	for _, st := range g.servers {
		out = append(out, st.report)
	}
	slices.SortFunc(out, func(a, b ServerReport) int { return cmp.Compare(a.Server, b.Server) })
	return out
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func ptr[T any](v T) *T { return &v }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefInt(n *int64) int64 {
	if n == nil {
		return 0
	}
	return *n
}

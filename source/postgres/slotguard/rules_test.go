package slotguard

import (
	"slices"
	"testing"
	"time"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func TestGrowthRate(t *testing.T) {
	cases := []struct {
		name    string
		samples []sample
		want    float64
		ok      bool
	}{
		{"no samples", nil, 0, false},
		{"one sample", []sample{{t0, 100}}, 0, false},
		{"same instant", []sample{{t0, 100}, {t0, 500}}, 0, false},
		{"growing", []sample{{t0, 1000}, {t0.Add(10 * time.Second), 1500}, {t0.Add(20 * time.Second), 3000}}, 100, true},
		{"catching up", []sample{{t0, 3000}, {t0.Add(10 * time.Second), 1000}}, -200, true},
	}
	for _, c := range cases {
		got, ok := growthRate(c.samples)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: growthRate = %v, %v; want %v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestTimeToFull(t *testing.T) {
	cases := []struct {
		name      string
		retained  *int64
		safe      *int64
		capacity  int64
		rate      float64
		rateKnown bool
		want      time.Duration
		ok        bool
	}{
		{"no limit known", ptr[int64](1000), nil, 0, 100, true, 0, false},
		{"safe_wal_size", ptr[int64](1000), ptr[int64](6000), 0, 100, true, time.Minute, true},
		{"capacity less retained", ptr[int64](1000), nil, 13000, 100, true, 2 * time.Minute, true},
		{"nearer limit wins", ptr[int64](1000), ptr[int64](6000), 4000, 100, true, 30 * time.Second, true},
		{"not growing", ptr[int64](1000), ptr[int64](6000), 0, 0, true, 0, false},
		{"shrinking", ptr[int64](1000), ptr[int64](6000), 0, -50, true, 0, false},
		{"rate unknown", ptr[int64](1000), ptr[int64](6000), 0, 0, false, 0, false},
		{"capacity already exceeded", ptr[int64](5000), nil, 4000, 0, false, 0, true},
		{"unreserved slot: negative safe_wal_size", ptr[int64](5000), ptr[int64](-10), 0, 0, false, 0, true},
		{"no restart_lsn ignores capacity", nil, nil, 4000, 100, true, 0, false},
	}
	for _, c := range cases {
		s := Slot{RetainedWALBytes: c.retained, SafeWALSize: c.safe}
		got, ok := timeToFull(s, c.capacity, c.rate, c.rateKnown)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: timeToFull = %v, %v; want %v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func kinds(alerts []Alert) []string {
	var out []string
	for _, a := range alerts {
		out = append(out, string(a.Kind)+"/"+a.Severity)
	}
	slices.Sort(out)
	return out
}

func TestEvaluate(t *testing.T) {
	cfg := Config{RetainedBytes: 1000, Inactive: time.Minute, GrowthPerSecond: 10, TimeToFull: time.Hour}
	base := Slot{Name: "s", Type: "logical", Active: true, RetainedWALBytes: ptr[int64](10), WALStatus: ptr("reserved")}
	with := func(f func(*slotFacts)) slotFacts {
		facts := slotFacts{slot: base, status: StatusOwned}
		f(&facts)
		return facts
	}
	cases := []struct {
		name  string
		cfg   Config
		facts slotFacts
		want  []string
	}{
		{"healthy", cfg, with(func(*slotFacts) {}), nil},
		{"orphaned", cfg, with(func(f *slotFacts) { f.status = StatusOrphaned }), []string{"orphaned/warn"}},
		{"retained at threshold", cfg, with(func(f *slotFacts) { f.slot.RetainedWALBytes = ptr[int64](1000) }), []string{"retained_wal/warn"}},
		{"retained below threshold", cfg, with(func(f *slotFacts) { f.slot.RetainedWALBytes = ptr[int64](999) }), nil},
		{"retained alert disabled", Config{}, with(func(f *slotFacts) { f.slot.RetainedWALBytes = ptr[int64](1 << 40) }), nil},
		{"inactive long enough", cfg, with(func(f *slotFacts) { f.slot.Active = false; f.inactiveFor = time.Minute }), []string{"inactive/warn"}},
		{"inactive not long enough", cfg, with(func(f *slotFacts) { f.slot.Active = false; f.inactiveFor = time.Minute - 1 }), nil},
		{"growing fast", cfg, with(func(f *slotFacts) { f.rate, f.rateKnown = 10, true }), []string{"growth/warn"}},
		{"growth unknown", cfg, with(func(f *slotFacts) { f.rate = 1e9 }), nil},
		{"extended", cfg, with(func(f *slotFacts) { f.slot.WALStatus = ptr("extended") }), []string{"wal_status/warn"}},
		{"unreserved", cfg, with(func(f *slotFacts) { f.slot.WALStatus = ptr("unreserved") }), []string{"wal_status/error"}},
		{"lost", cfg, with(func(f *slotFacts) { f.slot.WALStatus = ptr("lost") }), []string{"wal_status/error"}},
		{"full within threshold", cfg, with(func(f *slotFacts) { f.toFull, f.toFullKnown = time.Hour, true }), []string{"time_to_full/error"}},
		{"full later", cfg, with(func(f *slotFacts) { f.toFull, f.toFullKnown = time.Hour+1, true }), nil},
		{"several at once", cfg, with(func(f *slotFacts) {
			f.status = StatusOrphaned
			f.slot.Active = false
			f.inactiveFor = time.Hour
			f.slot.WALStatus = ptr("lost")
		}), []string{"inactive/warn", "orphaned/warn", "wal_status/error"}},
	}
	for _, c := range cases {
		if got := kinds(evaluate(c.cfg, c.facts)); !slices.Equal(got, c.want) {
			t.Errorf("%s: alerts %v, want %v", c.name, got, c.want)
		}
	}
}

func TestClassify(t *testing.T) {
	connectors := []ConnectorSlot{
		{Connector: "inventory", Server: "db:5432", SlotName: "inv_slot", State: "PAUSED"},
		{Connector: "moved", Server: "db.internal:5432", SlotName: "moved_slot"},
	}
	cases := []struct {
		name, server, slot string
		rec                *SlotRecord
		want, connector    string
	}{
		{"used by a paused connector", "db:5432", "inv_slot", nil, StatusOwned, "inventory"},
		{"same slot name on another server", "other:5432", "inv_slot", nil, StatusForeign, ""},
		{"recorded for a deleted connector", "db:5432", "old_slot", &SlotRecord{Connector: "deleted"}, StatusOrphaned, "deleted"},
		{"recorded for a connector that still exists", "db:5432", "moved_slot", &SlotRecord{Connector: "moved"}, StatusOwned, "moved"},
		{"unknown to cdcd", "db:5432", "hand_made", nil, StatusForeign, ""},
	}
	for _, c := range cases {
		var rec SlotRecord
		if c.rec != nil {
			rec = *c.rec
		}
		status, owner := classify(c.server, c.slot, connectors, rec, c.rec != nil)
		got := ""
		if owner != nil {
			got = owner.Connector
		}
		if status != c.want || got != c.connector {
			t.Errorf("%s: classify = %s, %q; want %s, %q", c.name, status, got, c.want, c.connector)
		}
	}
}

// TestDropBlocker covers every safeguard of the automatic drop on its own: each case breaks one condition
// of an otherwise droppable slot.
func TestDropBlocker(t *testing.T) {
	cfg := Config{OrphanPolicy: PolicyDrop, OrphanGrace: 10 * time.Minute}
	now := t0.Add(time.Hour)
	droppable := SlotReport{Status: StatusOrphaned, Slot: Slot{Type: "logical"}, OrphanedSince: ptr(t0), InactiveSince: ptr(t0)}
	cases := []struct {
		name   string
		cfg    Config
		change func(*SlotReport)
		drop   bool
	}{
		{"orphaned past the grace period", cfg, func(*SlotReport) {}, true},
		{"exactly at the grace period", cfg, func(r *SlotReport) { r.OrphanedSince = ptr(now.Add(-cfg.OrphanGrace)) }, true},
		{"policy none", Config{OrphanPolicy: PolicyNone, OrphanGrace: time.Minute}, func(*SlotReport) {}, false},
		{"owned", cfg, func(r *SlotReport) { r.Status = StatusOwned }, false},
		{"foreign", cfg, func(r *SlotReport) { r.Status = StatusForeign }, false},
		{"status missing", cfg, func(r *SlotReport) { r.Status = "" }, false},
		{"physical", cfg, func(r *SlotReport) { r.Type = "physical" }, false},
		{"temporary", cfg, func(r *SlotReport) { r.Temporary = true }, false},
		{"active", cfg, func(r *SlotReport) { r.Active = true }, false},
		{"orphaned within the grace period", cfg, func(r *SlotReport) { r.OrphanedSince = ptr(now.Add(-cfg.OrphanGrace + time.Second)) }, false},
		{"inactive within the grace period", cfg, func(r *SlotReport) { r.InactiveSince = ptr(now.Add(-time.Second)) }, false},
		{"never seen inactive", cfg, func(r *SlotReport) { r.InactiveSince = nil }, false},
	}
	for _, c := range cases {
		r := droppable
		c.change(&r)
		reason := dropBlocker(c.cfg, r, now)
		if (reason == "") != c.drop {
			t.Errorf("%s: dropBlocker = %q, want drop=%v", c.name, reason, c.drop)
		}
	}
}

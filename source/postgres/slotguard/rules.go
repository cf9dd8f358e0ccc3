package slotguard

import (
	"fmt"
	"time"
)

// AlertKind names the rule an alert comes from; it is stable, for alerting rules and webhook consumers.
type AlertKind string

const (
	AlertOrphaned   AlertKind = "orphaned"     // a slot cdcd recorded for a connector that no longer exists
	AlertRetained   AlertKind = "retained_wal" // retained WAL at or above cdcd.slots.alert.retained.bytes
	AlertInactive   AlertKind = "inactive"     // inactive at least cdcd.slots.alert.inactive.ms
	AlertGrowth     AlertKind = "growth"       // retained WAL growing at least cdcd.slots.alert.growth.bytes.per.second
	AlertWALStatus  AlertKind = "wal_status"   // wal_status extended, unreserved or lost
	AlertTimeToFull AlertKind = "time_to_full" // safe_wal_size or the WAL capacity runs out within cdcd.slots.alert.time.to.full.ms
)

// Severities, which are also the log levels of the lines that announce an alert.
const (
	SeverityWarn  = "warn"
	SeverityError = "error"
)

// Alert is one rule a slot currently breaks.
type Alert struct {
	Kind     AlertKind `json:"kind"`
	Severity string    `json:"severity"`
	Message  string    `json:"message"`
	Since    time.Time `json:"since"` // when the alert started; kept while it lasts
}

// sample is one refresh's measurement of a slot's retained WAL.
type sample struct {
	at       time.Time
	retained int64
}

// growthSamples is how many refreshes the growth rate looks back over: long enough to smooth out a
// consumer's bursty confirmations, short enough to notice a slot that just stopped.
const growthSamples = 6

// growthRate is the retained WAL's change in bytes per second from the oldest to the newest sample; false
// until two samples lie apart in time. It is negative while a consumer catches up.
func growthRate(samples []sample) (float64, bool) {
	if len(samples) < 2 {
		return 0, false
	}
	first, last := samples[0], samples[len(samples)-1]
	span := last.at.Sub(first.at).Seconds()
	if span <= 0 {
		return 0, false
	}
	return float64(last.retained-first.retained) / span, true
}

// timeToFull estimates how long until the slot reaches a limit at the current growth rate: safe_wal_size
// (the WAL that may still be written before max_slot_wal_keep_size invalidates the slot), or the configured
// WAL capacity less what the slot retains. It is the nearer of the two, zero when a limit is already
// reached, and false when no limit is known or the slot is not growing towards one.
func timeToFull(s Slot, capacity int64, rate float64, rateKnown bool) (time.Duration, bool) {
	var remaining []int64
	if s.SafeWALSize != nil {
		remaining = append(remaining, *s.SafeWALSize)
	}
	if capacity > 0 && s.RetainedWALBytes != nil {
		remaining = append(remaining, capacity-*s.RetainedWALBytes)
	}
	best, found := time.Duration(0), false
	for _, r := range remaining {
		var d time.Duration
		switch {
		case r <= 0:
			d = 0
		case !rateKnown || rate <= 0:
			continue
		default:
			secs := float64(r) / rate
			if secs >= float64(1<<62)/float64(time.Second) {
				continue // centuries away: no estimate worth showing
			}
			d = time.Duration(secs * float64(time.Second))
		}
		if !found || d < best {
			best, found = d, true
		}
	}
	return best, found
}

// slotFacts is what the rules look at, gathered by the guardian from the server and its own tracking.
type slotFacts struct {
	slot        Slot
	status      string
	connector   string
	inactiveFor time.Duration // 0 while active
	rate        float64
	rateKnown   bool
	toFull      time.Duration
	toFullKnown bool
}

// evaluate returns the alerts the facts raise under cfg's thresholds (Since left for the caller to set).
func evaluate(cfg Config, f slotFacts) []Alert {
	var out []Alert
	add := func(kind AlertKind, severity, format string, args ...any) {
		out = append(out, Alert{Kind: kind, Severity: severity, Message: fmt.Sprintf(format, args...)})
	}
	if f.status == StatusOrphaned {
		add(AlertOrphaned, SeverityWarn, "slot %q was recorded for connector %q, which no longer exists", f.slot.Name, f.connector)
	}
	if r := f.slot.RetainedWALBytes; cfg.RetainedBytes > 0 && r != nil && *r >= cfg.RetainedBytes {
		add(AlertRetained, SeverityWarn, "slot %q retains %d bytes of WAL (threshold %d)", f.slot.Name, *r, cfg.RetainedBytes)
	}
	if cfg.Inactive > 0 && !f.slot.Active && f.inactiveFor >= cfg.Inactive {
		add(AlertInactive, SeverityWarn, "slot %q has been inactive for %s (threshold %s)", f.slot.Name, f.inactiveFor.Round(time.Second), cfg.Inactive)
	}
	if cfg.GrowthPerSecond > 0 && f.rateKnown && f.rate >= cfg.GrowthPerSecond {
		add(AlertGrowth, SeverityWarn, "retained WAL of slot %q grows %.0f bytes/s (threshold %.0f)", f.slot.Name, f.rate, cfg.GrowthPerSecond)
	}
	if w := f.slot.WALStatus; w != nil {
		switch *w {
		case "extended":
			add(AlertWALStatus, SeverityWarn, "slot %q has wal_status extended: it retains more than max_wal_size", f.slot.Name)
		case "unreserved":
			add(AlertWALStatus, SeverityError, "slot %q has wal_status unreserved: its WAL will be removed at the next checkpoint unless its consumer catches up", f.slot.Name)
		case "lost":
			add(AlertWALStatus, SeverityError, "slot %q has wal_status lost: the WAL it needs is gone and the slot can no longer be used", f.slot.Name)
		}
	}
	if cfg.TimeToFull > 0 && f.toFullKnown && f.toFull <= cfg.TimeToFull {
		add(AlertTimeToFull, SeverityError, "slot %q is estimated to reach its WAL limit in %s (threshold %s)", f.slot.Name, f.toFull.Round(time.Second), cfg.TimeToFull)
	}
	return out
}

package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/cdcd/cdcd/schema/configdef"
)

// Configs written for Debezium 1.x (and the few 3.x deprecations) still circulate. Debezium 3.6.1 itself
// ignores the 1.x names silently, which starts a connector with defaults its author never chose (a
// table.whitelist that filters nothing, a database.server.name that leaves topic.prefix missing). cdcd maps
// each old name to today's with advice on what to write, and refuses the few whose meaning changed.

// renamedKeys were renamed without a change of meaning (Debezium 1.x → 2.0).
var renamedKeys = map[string]string{
	"database.server.name":      "topic.prefix",
	"schema.whitelist":          "schema.include.list",
	"schema.blacklist":          "schema.exclude.list",
	"table.whitelist":           "table.include.list",
	"table.blacklist":           "table.exclude.list",
	"column.whitelist":          "column.include.list",
	"column.blacklist":          "column.exclude.list",
	"toasted.value.placeholder": "unavailable.value.placeholder",
}

// Debezium 2.0 moved the schema history settings from database.history.* to schema.history.internal.*.
const (
	legacyHistoryPrefix = "database.history."
	historyPrefix       = "schema.history.internal."
)

// replacedBooleans are deprecated booleans whose value Debezium 3.6.1 still translates into a newer key.
var replacedBooleans = map[string]struct {
	key             string
	ifTrue, ifFalse string
}{
	"slot.seek.to.known.offset.on.start": {"offset.mismatch.strategy", "trust_offset", "no_validation"},
	"flush.lsn.source":                   {"lsn.flush.mode", "connector", "manual"},
}

// legacySnapshotModes are snapshot.mode values Debezium 3.6.1 no longer accepts, with today's equivalent.
var legacySnapshotModes = map[string]string{
	"never":       "no_data",
	"schema_only": "no_data",
	"exported":    "initial",
}

// MapLegacyKeys rewrites old Debezium property names and values into today's. Each rewrite comes with a
// warning telling the user what to write instead; a setting whose meaning changed is refused (err is an
// errors.Join of *ConfigError, one per refused key) with the same advice. mapped is a new map, usable even
// when err is not nil: refused keys are left out of it, so a validator can still check the rest.
func MapLegacyKeys(props map[string]string) (mapped map[string]string, warnings []string, err error) {
	m := legacyMapper{in: props, out: maps.Clone(props)}
	if m.out == nil {
		m.out = map[string]string{}
	}
	for _, key := range slices.Sorted(maps.Keys(props)) {
		value := props[key]
		switch {
		case renamedKeys[key] != "":
			m.move(key, renamedKeys[key], value, "")
		case strings.HasPrefix(key, legacyHistoryPrefix):
			m.move(key, historyPrefix+strings.TrimPrefix(key, legacyHistoryPrefix), value,
				" (the PostgreSQL connector keeps no schema history, so the line can also be deleted)")
		case replacedBooleans[key].key != "":
			m.replaceBoolean(key, value)
		case key == "snapshot.mode":
			m.snapshotMode(value)
		case key == "truncate.handling.mode":
			m.truncateHandling(value)
		case key == "sanitize.field.names":
			m.sanitizeFieldNames(value)
		}
	}
	return m.out, m.warnings, errors.Join(m.errs...)
}

type legacyMapper struct {
	in, out  map[string]string
	warnings []string
	errs     []error
}

func (m *legacyMapper) warn(format string, args ...any) {
	m.warnings = append(m.warnings, fmt.Sprintf(format, args...))
}

func (m *legacyMapper) refuse(key, value, reason string) {
	delete(m.out, key)
	m.errs = append(m.errs, &ConfigError{Key: key, Value: value, Reason: reason})
}

// move renames old to current. When both are set they must agree: which one the user meant is not ours
// to guess.
func (m *legacyMapper) move(old, current, value, note string) {
	delete(m.out, old)
	if existing, set := m.in[current]; set {
		if strings.TrimSpace(existing) != strings.TrimSpace(value) {
			m.refuse(old, value, fmt.Sprintf("%s is the Debezium 1.x name of %s, which is also set (to %s); delete %s", old, current, existing, old))
			return
		}
		m.warn("%s is the Debezium 1.x name of %s, which is also set to the same value; delete %s", old, current, old)
		return
	}
	m.out[current] = value
	m.warn("%s is the Debezium 1.x name of %s: write %s=%s instead%s", old, current, current, value, note)
}

func (m *legacyMapper) replaceBoolean(key, value string) {
	r := replacedBooleans[key]
	var replacement string
	switch strings.ToLower(strings.TrimSpace(value)) {
	case "true":
		replacement = r.ifTrue
	case "false":
		replacement = r.ifFalse
	default:
		m.refuse(key, value, fmt.Sprintf("%s is deprecated and takes true or false; write %s=%s or %s=%s instead", key, r.key, r.ifTrue, r.key, r.ifFalse))
		return
	}
	m.move(key, r.key, replacement, "")
}

func (m *legacyMapper) snapshotMode(value string) {
	old := strings.ToLower(strings.TrimSpace(value))
	if current, ok := legacySnapshotModes[old]; ok {
		m.out["snapshot.mode"] = current
		m.warn("snapshot.mode=%s is a value Debezium no longer accepts: write snapshot.mode=%s instead (the same behaviour)", old, current)
		return
	}
	if old == "schema_only_recovery" || old == "recovery" {
		m.refuse("snapshot.mode", value, "the PostgreSQL connector keeps no schema history to recover; write snapshot.mode=no_data to stream from the slot, or snapshot.mode=when_needed to snapshot again when the slot's position is lost")
	}
}

// truncateHandling translates Debezium 1.x's truncate.handling.mode, which skipped.operations replaced in
// 2.0 (truncates skipped unless the list leaves "t" out).
func (m *legacyMapper) truncateHandling(value string) {
	delete(m.out, "truncate.handling.mode")
	mode := strings.ToLower(strings.TrimSpace(value))
	ops, opsSet := m.in["skipped.operations"]
	switch {
	case mode == "skip" && !opsSet:
		m.warn("truncate.handling.mode was removed in Debezium 2.0; truncates are skipped by default (skipped.operations=t), so delete the line")
	case mode == "include" && !opsSet:
		m.out["skipped.operations"] = "none"
		m.warn("truncate.handling.mode was removed in Debezium 2.0: write skipped.operations=none instead to emit truncate events")
	case mode == "skip" || mode == "include":
		m.refuse("truncate.handling.mode", value, fmt.Sprintf("truncate.handling.mode was removed in Debezium 2.0 and skipped.operations (%s) now decides; delete truncate.handling.mode and list t in skipped.operations to skip truncates", ops))
	default:
		m.refuse("truncate.handling.mode", value, "truncate.handling.mode was removed in Debezium 2.0; use skipped.operations (t skips truncates, none emits them)")
	}
}

// sanitizeFieldNames: Debezium 2.2 replaced sanitize.field.names by schema.name.adjustment.mode and
// field.name.adjustment.mode, whose avro mode maps names differently (unique escapes, not a plain
// underscore), so an old "true" cannot be translated without changing subject and field names.
func (m *legacyMapper) sanitizeFieldNames(value string) {
	delete(m.out, "sanitize.field.names")
	if strings.EqualFold(strings.TrimSpace(value), "false") {
		m.warn("sanitize.field.names was removed in Debezium 2.2 and false is today's default (schema.name.adjustment.mode=none); delete the line")
		return
	}
	m.refuse("sanitize.field.names", value, "sanitize.field.names was removed in Debezium 2.2; its replacements schema.name.adjustment.mode and field.name.adjustment.mode (avro, avro_unicode or none) rename differently, so choose one and check the resulting topic and field names")
}

// legacyWarned remembers the advice already given, per connector: ParseConfig runs at every validation and
// every task (re)start, and the same warning repeated at each restart would bury the log.
var legacyWarned sync.Map // connector name + "\x00" + warning → struct{}

// logLegacyWarnings logs each warning once per connector name. A logger that drops warnings (the callers
// that only validate pass a discard logger) marks nothing, so the connector's own start still warns.
func logLegacyWarnings(connector string, warnings []string, log *slog.Logger) {
	if !log.Enabled(context.Background(), slog.LevelWarn) {
		return
	}
	for _, w := range warnings {
		if _, seen := legacyWarned.LoadOrStore(connector+"\x00"+w, struct{}{}); !seen {
			log.Warn(w)
		}
	}
}

// legacyErrorValues turns MapLegacyKeys's refusals into validate-response values on the refused keys.
func legacyErrorValues(err error) []configdef.Value {
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) {
		return nil
	}
	var values []configdef.Value
	for _, e := range joined.Unwrap() {
		var ce *ConfigError
		if errors.As(e, &ce) {
			values = append(values, configdef.Value{Name: ce.Key, Set: true, Errors: []string{ce.Error()}})
		}
	}
	return values
}

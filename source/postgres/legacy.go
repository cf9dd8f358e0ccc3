package postgres

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cdcd/cdcd/source/props"
)

// pgRenamed are the PostgreSQL connector's renamed keys: the common ones (props.LegacyRenamed) and its
// schema filters'.
var pgRenamed = props.RenamedWith(map[string]string{
	"schema.whitelist": "schema.include.list",
	"schema.blacklist": "schema.exclude.list",
})

// replacedBooleans are deprecated booleans whose value Debezium 3.6.1 still translates into a newer key.
var replacedBooleans = map[string]struct {
	key             string
	ifTrue, ifFalse string
}{
	"slot.seek.to.known.offset.on.start": {"offset.mismatch.strategy", "trust_offset", "no_validation"},
	"flush.lsn.source":                   {"lsn.flush.mode", "connector", "manual"},
}

// otherPlugins are the logical decoding plugins Debezium reads (decoderbufs, its 3.6.1 default) or read
// until 2.0 (wal2json and its variants, whose migration path is pgoutput), which cdcd reads as pgoutput.
var otherPlugins = []string{"decoderbufs", "wal2json", "wal2json_rds", "wal2json_streaming", "wal2json_rds_streaming"}

// legacySnapshotModes are snapshot.mode values Debezium 3.6.1 no longer accepts, with today's equivalent.
var legacySnapshotModes = map[string]string{
	"never":       "no_data",
	"schema_only": "no_data",
	"exported":    "initial",
}

// MapLegacyKeys rewrites old Debezium property names and values into today's (props.MapLegacyKeys), with
// the PostgreSQL connector's own: the deprecated booleans, the snapshot modes it no longer accepts, and
// the schema history's keys, which it has no use for.
func MapLegacyKeys(given map[string]string) (mapped map[string]string, warnings []string, err error) {
	return props.MapLegacyKeys(given, pgRenamed, pgLegacyRule)
}

func pgLegacyRule(m *props.LegacyMapper, key, value string) bool {
	switch {
	case strings.HasPrefix(key, props.LegacyHistoryPrefix):
		m.Drop(key)
		m.Warn("%s is a Debezium 1.x schema history key, and has no effect: the PostgreSQL connector keeps no schema history (Debezium's ignores it too); delete the line", key)
	case replacedBooleans[key].key != "":
		replaceBoolean(m, key, value)
	case key == "snapshot.mode":
		snapshotMode(m, value)
	case key == "plugin.name" && slices.Contains(otherPlugins, strings.ToLower(strings.TrimSpace(value))):
		m.Set(key, "pgoutput")
		m.Warn("plugin.name=%s: cdcd decodes with pgoutput, built into PostgreSQL 10 and later, which gives the same change events without a server extension; it reads through a publication (publication.name, made as publication.autocreate.mode says) on a slot made for pgoutput (a slot made for %s is refused at start: drop it, or set slot.name to a new one). Write plugin.name=pgoutput instead", value, value)
	default:
		return false
	}
	return true
}

func replaceBoolean(m *props.LegacyMapper, key, value string) {
	r := replacedBooleans[key]
	var replacement string
	switch strings.ToLower(strings.TrimSpace(value)) {
	case "true":
		replacement = r.ifTrue
	case "false":
		replacement = r.ifFalse
	default:
		m.Refuse(key, value, fmt.Sprintf("%s is deprecated and takes true or false; write %s=%s or %s=%s instead", key, r.key, r.ifTrue, r.key, r.ifFalse))
		return
	}
	m.Move(key, r.key, replacement)
}

func snapshotMode(m *props.LegacyMapper, value string) {
	old := strings.ToLower(strings.TrimSpace(value))
	if current, ok := legacySnapshotModes[old]; ok {
		m.Set("snapshot.mode", current)
		m.Warn("snapshot.mode=%s is a value Debezium no longer accepts: write snapshot.mode=%s instead (the same behaviour)", old, current)
		return
	}
	if old == "schema_only_recovery" || old == "recovery" {
		m.Refuse("snapshot.mode", value, "the PostgreSQL connector keeps no schema history to recover; write snapshot.mode=no_data to stream from the slot, or snapshot.mode=when_needed to snapshot again when the slot's position is lost")
	}
}

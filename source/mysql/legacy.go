package mysql

import (
	"strings"

	"github.com/cdcd/cdcd/source/mysql/types"
	"github.com/cdcd/cdcd/source/props"
)

// binlogRenamed are the binlog connectors' renamed keys: the common ones (props.LegacyRenamed), their
// database filters', and the schema history's own renames inside database.history.* (1.x → 2.0).
var binlogRenamed = props.RenamedWith(map[string]string{
	"database.whitelist": "database.include.list",
	"database.blacklist": "database.exclude.list",
	"database.history.store.only.monitored.tables.ddl": "schema.history.internal.store.only.captured.tables.ddl",
})

// legacyHistoryClasses are Debezium 1.x's schema history class names (database.history) with today's.
// cdcd keeps the schema history in Kafka only.
var legacyHistoryClasses = map[string]string{
	"io.debezium.relational.history.KafkaDatabaseHistory": kafkaSchemaHistory,
	kafkaSchemaHistory: kafkaSchemaHistory,
}

// kafkaSchemaHistory is schema.history.internal's default, the only schema history cdcd keeps.
const kafkaSchemaHistory = "io.debezium.storage.kafka.history.KafkaSchemaHistory"

// historyNotes are schema history keys cdcd accepts without acting on them (props.NoEffectKeys).
var historyNotes = props.NoEffectKeys{
	"schema.history.internal.kafka.recovery.poll.interval.ms": "cdcd reads the history topic up to its end offset at start, never polling until reads come back empty",
	"schema.history.internal.kafka.recovery.attempts":         "cdcd reads the history topic up to its end offset at start, never polling until reads come back empty",
	"schema.history.internal.kafka.group.id":                  "it is not a setting of Debezium's Kafka schema history either, which ignores it",
}

// legacyBinlogSnapshotModes are snapshot.mode values Debezium 2.x deprecated, with today's equivalent.
var legacyBinlogSnapshotModes = map[string]string{
	"schema_only":          "no_data",
	"never":                "no_data",
	"schema_only_recovery": "recovery",
}

// MapLegacyKeys rewrites old Debezium property names and values into today's (props.MapLegacyKeys), with
// the binlog connectors' own: database.history.* (its producer's and consumer's security settings
// included) under schema.history.internal.*, the deprecated snapshot modes, and the JDBC drivers' TLS
// switches (useSSL…) as the flavor's database.ssl.mode.
func MapLegacyKeys(flavor types.Flavor, given map[string]string) (mapped map[string]string, warnings []string, err error) {
	return props.MapLegacyKeys(given, binlogRenamed, func(m *props.LegacyMapper, key, value string) bool {
		return mapTLSDriverOptions(flavor, m, key) || binlogLegacyRule(m, key, value)
	})
}

func binlogLegacyRule(m *props.LegacyMapper, key, value string) bool {
	rest, isHistory := strings.CutPrefix(key, props.LegacyHistoryPrefix)
	switch {
	case key == "database.history":
		historyClass(m, value)
	case isHistory && binlogRenamed[key] == "":
		current := props.HistoryPrefix + rest
		if strings.HasPrefix(rest, "producer.") || strings.HasPrefix(rest, "consumer.") {
			m.MoveQuietly(key, current, value)
		} else {
			m.Move(key, current, value)
		}
	case key == "snapshot.mode":
		mode := strings.ToLower(strings.TrimSpace(value))
		if current, ok := legacyBinlogSnapshotModes[mode]; ok {
			m.Set(key, current)
			m.Warn("snapshot.mode=%s is a value Debezium deprecated: write snapshot.mode=%s instead (the same behaviour)", mode, current)
		}
	default:
		return false
	}
	return true
}

// historyClass maps database.history, the schema history's class: Kafka's is today's default.
func historyClass(m *props.LegacyMapper, value string) {
	class := strings.TrimSpace(value)
	if current, ok := legacyHistoryClasses[class]; ok {
		m.Move("database.history", "schema.history.internal", current)
		return
	}
	m.Refuse("database.history", value, "cdcd keeps the schema history in a Kafka topic only ("+kafkaSchemaHistory+"); delete database.history and set schema.history.internal.kafka.topic and schema.history.internal.kafka.bootstrap.servers")
}

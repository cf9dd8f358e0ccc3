package mysql

import (
	"strings"

	"github.com/cdcd/cdcd/schema/configdef"
)

// ConfigKeys returns the settings the MySQL and MariaDB connectors read, with Debezium's names, types and
// defaults, for the REST API's plugin config and validate responses. cdcd's own refusals of a value
// come from ParseConfig, which the worker adds to the key concerned.
func ConfigKeys() []configdef.Key {
	str := func(name, def, doc string) configdef.Key {
		k := configdef.Key{Name: name, Type: configdef.String, Importance: configdef.Medium, Group: "Connector", OrderInGroup: -1, Doc: doc}
		if def != "" {
			k.Default = configdef.Ptr(def)
		}
		return k
	}
	typed := func(k configdef.Key, t configdef.Type) configdef.Key { k.Type = t; return k }
	high := func(k configdef.Key) configdef.Key { k.Importance = configdef.High; return k }
	oneOf := func(k configdef.Key, values ...string) configdef.Key { k.Recommended = values; return k }
	return []configdef.Key{
		high(str("topic.prefix", "", "Topic prefix that identifies and provides a namespace for the particular database server/cluster is capturing changes.")),
		high(str("database.hostname", "", "Resolvable hostname or IP address of the database server.")),
		high(typed(str("database.port", "3306", "Port of the database server."), configdef.Int)),
		high(str("database.user", "", "Name of the database user to be used when connecting to the database.")),
		high(typed(str("database.password", "", "Password of the database user to be used when connecting to the database."), configdef.PasswordType)),
		high(typed(str("database.server.id", "", "A numeric ID of this database client, which must be unique across all currently-running database processes in the cluster."), configdef.Long)),
		str("database.include.list", "", "The databases for which changes are to be captured"),
		str("database.exclude.list", "", "A comma-separated list of regular expressions that match database names to be excluded from monitoring"),
		str("table.include.list", "", "The tables for which changes are to be captured"),
		str("table.exclude.list", "", "A comma-separated list of regular expressions that match the fully-qualified names of tables to be excluded from monitoring"),
		str("column.include.list", "", "Regular expressions matching columns to include in change events"),
		str("column.exclude.list", "", "Regular expressions matching columns to exclude from change events"),
		typed(str("include.query", "false", "Whether the connector should include the original SQL query that generated the change event."), configdef.Boolean),
		typed(str("include.schema.changes", "true", "Whether the connector should publish changes in the database schema to a Kafka topic with the same name as the database server ID."), configdef.Boolean),
		oneOf(str("snapshot.mode", "initial", "The criteria for running a snapshot upon startup of the connector."), "initial", "initial_only", "no_data", "always", "when_needed", "recovery"),
		oneOf(str("snapshot.locking.mode", "minimal", "Controls how long the connector holds onto the global read lock while it is performing a snapshot."), "minimal", "extended", "none"),
		typed(str("snapshot.fetch.size", "", "The maximum number of records that should be loaded into memory while performing a snapshot."), configdef.Int),
		oneOf(str("bigint.unsigned.handling.mode", "long", "Specify how BIGINT UNSIGNED columns should be represented in change events."), "long", "precise"),
		oneOf(str("decimal.handling.mode", "precise", "Specify how DECIMAL and NUMERIC columns should be represented in change events."), "precise", "string", "double"),
		oneOf(str("time.precision.mode", "adaptive_time_microseconds", "Time, date and timestamps can be represented with different kinds of precisions."), "adaptive_time_microseconds", "connect"),
		oneOf(str("binary.handling.mode", "bytes", "Specify how binary (blob, binary, etc.) columns should be represented in change events."), "bytes", "base64", "base64-url-safe", "hex"),
		str("gtid.source.includes", "", "The source UUIDs used to include GTID ranges when determine the starting position in the binlog."),
		str("gtid.source.excludes", "", "The source UUIDs used to exclude GTID ranges when determine the starting position in the binlog."),
		typed(str("heartbeat.interval.ms", "0", "Length of an interval in milli-seconds in in which the connector periodically sends heartbeat messages to a heartbeat topic."), configdef.Int),
		typed(str("tombstones.on.delete", "true", "Whether delete operations should be represented by a delete event and a subsequent tombstone event (true) or only by a delete event (false)."), configdef.Boolean),
		typed(str("skipped.operations", "t", "The comma-separated list of operations to skip during streaming."), configdef.List),
		high(str("schema.history.internal.kafka.topic", "", "The name of the topic for the database schema history")),
		high(str("schema.history.internal.kafka.bootstrap.servers", "", "A list of host/port pairs that the connector will use for establishing the initial connection to the Kafka cluster for retrieving database schema history previously stored by the connector.")),
		typed(str("schema.history.internal.skip.unparseable.ddl", "false", "Controls the action Debezium will take when it meets a DDL statement it cannot parse."), configdef.Boolean),
		oneOf(str("schema.name.adjustment.mode", "none", "Specify how schema names should be adjusted for compatibility with the message converter used by the connector."), "none", "avro", "avro_unicode"),
		oneOf(str("field.name.adjustment.mode", "none", "Specify how field names should be adjusted for compatibility with the message converter used by the connector."), "none", "avro", "avro_unicode"),
	}
}

// requiredKeys are the settings the binlog connectors refuse to start without.
var requiredKeys = []string{"topic.prefix", "database.hostname", "database.user", "database.server.id",
	"schema.history.internal.kafka.topic", "schema.history.internal.kafka.bootstrap.servers"}

// ValidateConfig reports, per key of ConfigKeys, Debezium's "A value is required" for a missing required key;
// value errors come from ParseConfig.
func ValidateConfig(props map[string]string) configdef.Result {
	var res configdef.Result
	for _, k := range ConfigKeys() {
		raw, set := props[k.Name]
		v := configdef.Value{Name: k.Name, Set: set}
		for _, req := range requiredKeys {
			if req == k.Name && strings.TrimSpace(raw) == "" {
				v.Errors = []string{"The '" + k.Name + "' value is invalid: A value is required"}
			}
		}
		res.Values = append(res.Values, v)
	}
	return res
}

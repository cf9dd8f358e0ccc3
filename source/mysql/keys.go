package mysql

import (
	"slices"
	"strings"

	"github.com/cdcd/cdcd/schema/configdef"
	"github.com/cdcd/cdcd/source/columns"
	"github.com/cdcd/cdcd/source/mysql/types"
	"github.com/cdcd/cdcd/source/props"
	"github.com/cdcd/cdcd/source/signal"
)

// Keys is the flavor's accounting of Debezium 3.6.1's keys: every key of ConfigKeys (and of Debezium's
// keys outside its ConfigDef) is read by ParseConfig, and so honoured, or named in refusedKeys, refused
// unless at its default. TestKeysAccounted holds that against what ParseConfig reads; the README's key
// table is generated from it.
func Keys(flavor types.Flavor) props.Keys {
	refused := refusedKeys
	if flavor == types.MariaDB {
		refused = slices.DeleteFunc(slices.Clone(refused), func(k string) bool { return slices.Contains(mysqlOnlyKeys, k) })
	}
	return props.Keys{
		Declared: append(ConfigKeys(flavor), props.ExtraKeys(
			props.Extra("binary.handling.mode", configdef.String, "bytes"),
			props.Extra("snapshot.locking.mode.custom.name", configdef.String, ""),
			props.Extra("unavailable.value.placeholder", configdef.String, "__debezium_unavailable_value"))...),
		Refused:   refused,
		Families:  keyFamilies,
		Honoured:  honouredUndeclared,
		Instances: []string{"converters", "post.processors"},
	}
}

// keyFamilies are the prefixes under which Debezium reads keys it does not declare one by one, with the
// schema history's; under each, ParseConfig honours (jdbcOptions, the column mappers') or refuses every key,
// so the runtime reports none of them as unknown. schema.history.internal.producer.* and .consumer.* are the
// history's Kafka clients', which the runtime's log opener honours or refuses (source.LogSpec).
var keyFamilies = append(slices.Clone(props.CommonFamilies), "schema.history.internal.")

// jdbcOptions are the Connector/J and MariaDB Connector/J options (database.<option>, both drivers' names
// and units) cdcd maps to go-mysql's query connections; any other database.<option> not declared by the
// connector is refused by name, unless noEffectOptions accepts it with a note. Each is read in ParseConfig
// (parseDriverOptions).
var jdbcOptions = []string{"database.connectTimeout", "database.socketTimeout", "database.tcpKeepAlive",
	"database.connectionTimeZone", "database.serverTimezone", "database.timezone", "database.zeroDateTimeBehavior"}

// honouredUndeclared claims the keys under keyFamilies that ParseConfig reads, or leaves to the runtime,
// without ConfigKeys declaring them one by one.
func honouredUndeclared(key string) bool {
	return slices.Contains(jdbcOptions, key) || noEffectOptions.Claims(key) || columns.IsOptionKey(key) || key == "signal.file" || signal.IsKafkaKey(key) || historyNotes[key] != "" || strings.HasPrefix(key, "schema.history.internal.producer.") ||
		strings.HasPrefix(key, "schema.history.internal.consumer.") || strings.HasPrefix(key, props.SelectOverridesKey+".")
}

// refusedKeys are Debezium's keys cdcd does not implement yet. Each passes at its default (Debezium's, from
// ConfigKeys) and is refused otherwise, so a config that relies on one fails at validation instead of
// running with a behaviour its author did not choose.
var refusedKeys = append(slices.DeleteFunc(slices.Clone(props.CommonRefused), func(k string) bool { return k == "converters" }),
	"database.server.id.offset", "database.jdbc.driver", "database.protocol",
	"connect.keep.alive", "connect.keep.alive.interval.ms", "use.nongraceful.disconnect",
	"binlog.net.write.timeout", "binlog.net.read.timeout", "min.row.count.to.stream.results",
	"incremental.snapshot.allow.schema.changes", "ddl.parser.type", "schema.history.internal",
	"binlog.buffer.size",
	"event.deserialization.failure.handling.mode", "inconsistent.schema.handling.mode", "gtid.ignore.on.recovery",
	"schema.history.internal.kafka.query.timeout.ms", "schema.history.internal.kafka.create.timeout.ms",
	"schema.history.internal.kafka.buffer.batch.size", "schema.history.internal.prefer.ddl",
	"internal.schema.history.internal.ddl.filter", "topic.heartbeat.name",
	"unavailable.value.placeholder",
)

package postgres

import (
	"slices"
	"strings"

	"github.com/cdcd/cdcd/schema/configdef"
	"github.com/cdcd/cdcd/source/columns"
	"github.com/cdcd/cdcd/source/props"
	"github.com/cdcd/cdcd/source/signal"
)

// Keys is the PostgreSQL connector's accounting of Debezium 3.6.1's keys: every key of ConfigKeys is read
// by ParseConfig (and so honoured) or named in refusedKeys, refused unless at its default. TestKeysAccounted
// holds that against what ParseConfig reads; the README's key table is generated from it.
func Keys() props.Keys {
	return props.Keys{
		Declared: append(ConfigKeys(), props.ExtraKeys(
			props.Extra("money.fraction.digits", configdef.Int, "2"),
			props.Extra("offset.mismatch.strategy", configdef.String, "no_validation"))...),
		Refused:   refusedKeys,
		Families:  keyFamilies,
		Honoured:  honouredUndeclared,
		Instances: []string{"converters", "post.processors"},
	}
}

// keyFamilies are the prefixes under which Debezium reads keys it does not declare one by one; under each,
// ParseConfig honours (jdbcOptions, the column mappers') or refuses every key, so the runtime reports none
// of them as unknown.
var keyFamilies = props.CommonFamilies

// jdbcOptions are the pgjdbc connection options (database.<option>) cdcd maps to the driver it uses (see
// parseDriverOptions); noEffectOptions are accepted with a note; any other database.<option> not declared
// by the connector is refused by name. database.tcpKeepAlive is a declared key. Each is read in ParseConfig.
var jdbcOptions = []string{"database.connectTimeout", "database.loginTimeout", "database.socketTimeout",
	"database.ApplicationName", "database.applicationName", "database.options", "database.sslfactory"}

// honouredUndeclared claims the keys under keyFamilies that ParseConfig reads without ConfigKeys declaring
// them one by one.
func honouredUndeclared(key string) bool {
	return slices.Contains(jdbcOptions, key) || noEffectOptions.Claims(key) || columns.IsOptionKey(key) || key == "signal.file" || signal.IsKafkaKey(key) ||
		strings.HasPrefix(key, props.SelectOverridesKey+".")
}

// refusedKeys are Debezium's keys cdcd does not implement yet. Each passes at its default (Debezium's, from
// ConfigKeys) and is refused otherwise, so a config that relies on one fails at validation instead of
// running with a behaviour its author did not choose.
var refusedKeys = append(slices.Clone(props.CommonRefused),
	"lsn.flush.timeout.ms",
	"lsn.flush.timeout.action", "snapshot.locking.mode",
	"schema.refresh.mode", "include.unknown.datatypes",
)

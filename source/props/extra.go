package props

import "github.com/cdcd/cdcd/schema/configdef"

// ExtraKeys are keys Debezium 3.6.1's connectors read without listing them in their ConfigDef, so that
// neither a validate response nor ConfigKeys shows them: the topic naming strategy's (AbstractTopicNamingStrategy)
// and CommonConnectorConfig fields left out of the definition, with Debezium's defaults. A connector's Keys
// account for them like the declared ones.
func ExtraKeys(more ...configdef.Key) []configdef.Key {
	return append([]configdef.Key{
		Extra("field.name.adjustment.mode", configdef.String, "none"),
		Extra("topic.delimiter", configdef.String, "."),
		Extra("topic.cache.size", configdef.Int, "10000"),
		Extra("topic.heartbeat.prefix", configdef.String, "__debezium-heartbeat"),
		Extra("topic.heartbeat.name", configdef.String, ""),
		Extra("topic.transaction", configdef.String, "transaction"),
		Extra("event.converting.failure.handling.mode", configdef.String, "warn"),
		Extra("queue.provider.type", configdef.String, "memory"),
		Extra("skip.messages.without.change", configdef.Boolean, "false"),
		Extra("read.only", configdef.Boolean, "false"),
	}, more...)
}

// Extra is the definition of a key outside Debezium's ConfigDef; an empty def is no default.
func Extra(name string, t configdef.Type, def string) configdef.Key {
	k := configdef.Key{Name: name, Type: t, OrderInGroup: -1}
	if def != "" {
		k.Default = configdef.Ptr(def)
	}
	return k
}

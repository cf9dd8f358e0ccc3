// Package cluster is the storage and membership layer of distributed mode, speaking Kafka Connect's
// own formats so that a cluster can move from Kafka Connect to cdcd and back.
//
//   - TopicLog reads a compacted topic to its end and then tails it, and writes to it with acks=all,
//     as Connect's KafkaBasedLog does; CreateTopic creates Connect's internal topics with their settings.
//   - ConfigStore is config.storage.topic: connector configs, task configs with their commit records,
//     target states, in KafkaConfigBackingStore's keys and JSON values.
//   - OffsetStore is offset.storage.topic: offset keys and values as connect/offsets encodes them,
//     placed by murmur2 of the key as Java's producer places them.
//   - StatusStore is status.storage.topic: connector and task states.
//   - OpenStores opens all three from a distributed worker config, and MemberConfigFor derives a
//     member's group settings from it.
//   - Member joins group.id with protocol type "connect" and Connect's incremental cooperative
//     protocol (sessioned/compatible metadata and assignments, byte for byte), assigns connectors and
//     tasks when it leads, and fences itself when it loses its session.
//
// Every internal record goes through Connect's internal JsonConverter, which runs with
// schemas.enable=false: values are plain compact JSON and keys are plain strings (offset keys are JSON).
package cluster

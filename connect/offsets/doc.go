// Package offsets reads and writes source offsets in Kafka Connect's formats.
//
// An offset record is a pair of byte strings. The key is the compact JSON of
// [connectorName, partitionMap] and the value is the compact JSON of the
// offset map, both as Connect's schemaless JsonConverter writes them (see Key,
// EncodeValue). Connect looks offsets up by the exact key bytes, so the bytes
// must match Java's, including the order of object fields, which for
// Debezium's java.util.HashMap maps is HashMap iteration order
// (javacompat.HashMapOrder).
//
// Standalone Connect (and Debezium Server) keeps these pairs in a file written
// by org.apache.kafka.connect.storage.FileOffsetBackingStore: a Java-serialized
// HashMap<byte[],byte[]>. FileStore reads and writes exactly that stream and
// keeps the file durably; Dump prints it.
package offsets

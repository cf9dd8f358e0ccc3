package source

import "context"

// DurableLog is an append-only log of opaque records that a reader keeps beside its change stream, such as
// the binlog connectors' schema history (one JSON document per DDL). The reader never reaches the log's
// storage itself: the runtime opens it through a LogOpener, so the log uses the runtime's client, its
// settings and its security, and obeys the same durability rule as offsets.
//
// A DurableLog is used by the one goroutine that owns its reader; it is not safe for concurrent use.
type DurableLog interface {
	// ReadAll returns every record appended before the call, in append order. It blocks until the log has
	// been read to the end it had when the call began; ctx bounds the wait. An empty log returns nil.
	ReadAll(ctx context.Context) ([][]byte, error)
	// Append adds one record and returns only once the record is durable (on Kafka: acknowledged by every
	// in-sync replica). A reader appends a record before it emits any event that depends on it, so a
	// crash never leaves an emitted event whose schema the log lacks. An error means the record may or
	// may not be stored; the reader must fail rather than continue.
	Append(ctx context.Context, record []byte) error
	// Close releases the log's connections. It does not block on the network for longer than ctx allows.
	Close(ctx context.Context) error
}

// LogSpec says which log to open and how it must look when it has to be created.
type LogSpec struct {
	// Name is the log's name: the Kafka topic (schema.history.internal.kafka.topic).
	Name string
	// Servers overrides the runtime's servers for this log (schema.history.internal.kafka.bootstrap.servers);
	// empty uses the runtime's own.
	Servers []string
	// ProducerSettings and ConsumerSettings are the client settings of this log with their prefix removed,
	// the way Kafka clients name them (from schema.history.internal.producer.* and .consumer.*; when a
	// reader leaves both nil, the runtime adds its connector's). The opener honours each or refuses it; it
	// never ignores one.
	ProducerSettings, ConsumerSettings map[string]string
	// Settings are the log's own settings when the opener creates it (cleanup.policy, retention.ms, …).
	Settings map[string]string
}

// LogOpener opens durable logs for readers. OpenLog creates the log when it is missing (one partition, with
// spec.Settings) and refuses an existing one that cannot keep its records in order (more than one
// partition). It may be called concurrently by several tasks.
type LogOpener interface {
	OpenLog(ctx context.Context, spec LogSpec) (DurableLog, error)
}

// Package sink is the contract between the runtime and whatever receives its records: Kafka today
// (sink/kafka), and any sink Debezium Server users run (NATS, Redis, HTTP) as one more package beside it.
// A new sink is a package under sink/ that implements Opener, registered by one line in cmd/cdcd.
package sink

import (
	"context"
	"log/slog"
	"time"
)

// Header is one record header, already encoded by the worker's header converter.
type Header struct {
	Key   string
	Value []byte
}

// Record is one encoded record. A nil Key is a null key; an empty non-nil Key is a key like any other. A nil
// Value is a tombstone.
type Record struct {
	Topic   string
	Key     []byte
	Value   []byte
	Headers []Header
	// Time is the record's timestamp; zero lets the sink stamp it with the send time.
	Time time.Time
}

// Sink delivers one task's records.
//
// Ordering: records of one Send keep their order, and records of a later Send never overtake those of an
// earlier one that share their topic and key, retries included (on Kafka: per partition).
//
// Acknowledgement: done is called exactly once per Send that returned nil, from any goroutine, after every
// record of that Send is durably stored by the sink's own rule (on Kafka: acks=all), or with the error that
// made one of them fail for good. Callbacks of Sends that share a topic and key run in Send order. The
// runtime records a source position only after done(nil) for every Send up to it: a sink must never call
// done(nil) for records it has not stored.
//
// Send, Flush and Close may be called concurrently.
type Sink interface {
	// Send hands recs over in order. It blocks while the sink holds too much that is not yet acknowledged
	// (backpressure), and returns ctx's error if ctx ends first; it then calls no done. A non-nil error
	// means no record of recs was sent and done will not be called.
	Send(ctx context.Context, recs []Record, done func(error)) error
	// Flush blocks until every Send that returned before Flush was called has had its done called, or ctx
	// ends (its error is returned; delivery goes on).
	Flush(ctx context.Context) error
	// Close stops accepting Sends, waits for outstanding ones until ctx ends, and fails the rest: every
	// done is called before Close returns.
	Close(ctx context.Context) error
}

// IdleAware is a Sink that wants to know when its caller has nothing more ready to send: one that holds
// records back to batch them with later ones (Kafka's linger.ms) may then send them at once, since no
// later ones are coming soon. SourceIdle does not block and is safe to call concurrently with Send.
type IdleAware interface {
	Sink
	SourceIdle()
}

// Transactional is a Sink whose Sends are grouped into atomic transactions (on Kafka: a transactional
// producer), for exactly-once delivery: the runtime commits each transaction together with the offset
// record that stands for it, so that after any crash a reader of committed data sees every record once.
//
// Commit sends recs after the Sends since the last Commit and makes all of them visible at once. It
// blocks until the transaction is committed, failed, or ctx ends; it must not run concurrently with
// Send. After an error the sink has failed: the runtime opens a new one (which aborts what the old one
// left open) and restarts from the last committed offset.
type Transactional interface {
	Sink
	Commit(ctx context.Context, recs []Record) error
}

// Config is what the runtime tells a sink about the task it serves.
type Config struct {
	// Connector is the connector's name; ClientID the client id the runtime gives this task's producer
	// (Connect's connector-producer-<connector>-<task>).
	Connector, ClientID string
	// Servers are the worker's bootstrap.servers.
	Servers []string
	// Settings are the task's producer settings, prefix removed: the worker's producer.*, overridden by the
	// connector's producer.override.*. A sink honours each or refuses it in OpenSink; it never ignores one.
	Settings map[string]string
	// AdminSettings are the security settings (security.*, ssl.*, sasl.*) of the task's admin client, the
	// one that creates topics, prefix removed, as Connect's Worker.adminConfigs merges them: the worker's
	// top-level keys, overridden by its admin.*, overridden by the connector's admin.override.*.
	AdminSettings map[string]string
	// ConnectorConfig is the task's resolved connector config (topic.creation.* and the like).
	ConnectorConfig map[string]string
	// TopicCreationEnabled is the worker's topic.creation.enable.
	TopicCreationEnabled bool
	// TransactionalID, when not "", asks for a Transactional sink (exactly.once.source.support=enabled):
	// Connect's <group.id>-<connector>-<task>. A sink that has no transactions refuses it in OpenSink.
	TransactionalID string
}

// Fencer is an Opener whose sinks have transactions and can fence zombies: Fence makes every sink opened
// earlier with cfg.TransactionalID fail its next Commit, and aborts the transaction it left open (Kafka
// Connect's zombie fencing, Admin.fenceProducers). It blocks until done or ctx ends.
type Fencer interface {
	Fence(ctx context.Context, cfg Config) error
}

// Opener opens a sink for each task. It may be called concurrently.
type Opener interface {
	// OpenSink checks cfg and returns a sink for one task; it does not block on the network. An error means
	// the settings cannot be honoured: a restart will not fix it.
	OpenSink(cfg Config, log *slog.Logger) (Sink, error)
}

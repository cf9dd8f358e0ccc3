package source

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/cdcd/cdcd/schema/configdef"
	"github.com/cdcd/cdcd/source/signal"
)

// Connector is one connector class cdcd runs (Debezium's PostgresConnector, MariaDbConnector, …): what the
// runtime needs of a database reader, whatever its database. A new reader is a package under source/ that
// returns a Connector, registered by one line in cmd/cdcd; the runtime (connect/) knows no reader by name.
//
// A Connector holds no per-connector state: its methods may be called concurrently, by the REST API's
// validation and by every running task.
type Connector interface {
	// Class is the connector.class users write (e.g. io.debezium.connector.postgresql.PostgresConnector).
	Class() string
	// TaskClass is the task.class Connect records in task configs (e.g. …PostgresConnectorTask).
	TaskClass() string
	// ConfigKeys are the connector's own keys with their types, defaults and docs, in the order Debezium's
	// ConfigDef lists them (what GET /connector-plugins/{plugin}/config shows).
	ConfigKeys() []configdef.Key
	// Validate checks each key of an unresolved config as Debezium's ConfigDef does; it does not connect to
	// anything. Its values carry no resolved secret.
	Validate(props map[string]string) configdef.Result
	// NewTask reads a resolved config the way the task will run it. It does not connect to the database.
	// Errors about one key implement KeyError; several wrong keys come joined with errors.Join.
	NewTask(name string, resolved map[string]string, log *slog.Logger) (Task, error)
}

// Task is a parsed connector config: where its offsets live and how to open its reader.
type Task interface {
	// Partition is the task's source partition in the offset store (Debezium's {"server": topic.prefix}).
	Partition() map[string]any
	// OpenReader builds a reader that resumes from stored, the decoded offset of Partition (nil when none is
	// stored). It must not block on the network: connections are made in Reader.Run. An error is about the
	// stored offset or the environment, and a restart will not fix it unless it is retriable.
	OpenReader(stored map[string]any, env Env) (Reader, error)
}

// ServerPartition is the source partition of a Debezium-family connector whose topic.prefix is
// topicPrefix ({"server": topicPrefix}): the key its offsets are stored under, which Debezium's own
// tasks read and write too.
func ServerPartition(topicPrefix string) map[string]any { return map[string]any{"server": topicPrefix} }

// ResumeOffset decodes, with parse, the stored offset a Task.OpenReader resumes from. It returns nil
// and no error when nothing is stored: the connector's first start, which snapshot.mode decides.
func ResumeOffset[O any](stored map[string]any, parse func(map[string]any) (O, error)) (*O, error) {
	if stored == nil {
		return nil, nil
	}
	o, err := parse(stored)
	if err != nil {
		return nil, err
	}
	return &o, nil
}

// Env is what the runtime lends a reader: its logger and the runtime's own clients.
type Env struct {
	Log *slog.Logger
	// Logs opens the durable logs a reader keeps beside its stream (the binlog schema history) through the
	// runtime's client and its security settings.
	Logs LogOpener
	// Signals opens the consumer of a connector's Kafka signal topic (the kafka signal channel) through
	// the runtime's Kafka client; nil when the runtime has none.
	Signals signal.KafkaOpener
	// Waiting, when not nil, is told what the reader waits for while it cannot go on by itself (a slot
	// creation held back by other transactions), in a sentence an operator acts on, and "" once it no
	// longer waits: the runtime shows it in the task's status. It does not block and may be called from
	// any goroutine.
	Waiting func(what string)
}

// Reader reads one database's change log. One goroutine — the one that calls Run — owns the database
// connection; the runtime talks to it only through out and Release.
type Reader interface {
	// Run reads from the database and sends batches on out until ctx is cancelled (it then returns ctx.Err())
	// or the stream fails (an error carrying the stream position). It blocks while out is full, but keeps its
	// database connection alive meanwhile (status updates, keepalives). Called once per Reader.
	Run(ctx context.Context, out chan<- Batch) error
	// Release tells the reader that everything up to pos is durable in the offset store, so the database may
	// discard it (a PostgreSQL slot confirms it). The runtime calls it only after the Kafka ack of every batch
	// up to pos and the durable write of pos's offset. Safe to call concurrently with Run; never blocks.
	Release(pos Position)
}

// Signaler is a Reader that takes Debezium signals from outside its database: the signal file and cdcd's
// POST /connectors/{name}/signals. Optional. Signal never blocks and may be called from any goroutine; an
// error means the signal was not queued (the connector's rest channel is off, a bad signal, or too many
// waiting) and says why. A queued signal is
// acted on by the reader's own goroutine, and a signal it cannot carry out is logged there.
type Signaler interface {
	Signal(id, kind, data string) error
}

// SchemaLister is a Task that can list its tables' current Connect schemas without reading the change stream
// (for the schema registry pre-flight check). Optional.
type SchemaLister interface {
	CurrentSchemas(ctx context.Context, log *slog.Logger) ([]TableSchemas, error)
}

// KeyError is a config error about one key, which the REST API reports against that key.
type KeyError interface {
	error
	ConfigKey() string
}

// Fatal marks err as one a restart cannot fix (a wrong setting, a dropped slot, undecodable data): the task
// fails and says what to change instead of retrying. nil stays nil.
func Fatal(err error) error {
	if err == nil {
		return nil
	}
	return fatalError{err}
}

// IsFatal reports whether err, or an error it wraps, was marked by Fatal or has a Fatal() bool method that
// says so (errors of other packages, such as the registry client's, mark themselves that way).
func IsFatal(err error) bool {
	var marked interface{ Fatal() bool }
	return errors.As(err, &marked) && marked.Fatal()
}

type fatalError struct{ error }

func (e fatalError) Fatal() bool   { return true }
func (e fatalError) Unwrap() error { return e.error }

// NamesClass reports whether name names the connector class: the class itself, its simple name, or that
// without "Connector" (Connect's plugin aliases: PostgresConnector, Postgres).
func NamesClass(name, class string) bool {
	simple := class[strings.LastIndexByte(class, '.')+1:]
	return name == class || name == simple || name == strings.TrimSuffix(simple, "Connector")
}

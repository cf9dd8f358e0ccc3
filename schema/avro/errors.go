package avro

import "errors"

// Errors returned by the converter. AvroConverter raises a DataException or a ConfigException in the same
// situations; a caller tells them apart with errors.Is. They come wrapped with the path to the offending
// schema or value, or with the registry URL and subject.
var (
	// ErrConfig is a converter setting that cannot be parsed or that cdcd does not implement.
	ErrConfig = errors.New("avro: invalid converter setting")
	// ErrSchema is a Connect schema that has no Avro form (a bad name, a Decimal without a scale, …).
	ErrSchema = errors.New("avro: schema cannot be converted")
	// ErrValueType is a value whose Go type does not fit its schema.
	ErrValueType = errors.New("avro: value does not match its schema")
	// ErrNullRequired is a null value for a required schema.
	ErrNullRequired = errors.New("avro: null value for a required schema")
	// ErrRegistry is a schema registry that could not be reached, refused a request, or answered
	// something cdcd cannot use. The pipeline restarts from its durable offset on it.
	ErrRegistry = errors.New("avro: schema registry")
	// ErrIncompatible is the registry refusing a schema as incompatible with the subject's history
	// (HTTP 409). It also wraps ErrRegistry, but unlike the other registry errors it is fatal: the
	// same record meets the same refusal after every restart, so the task fails, as Kafka Connect's
	// does, until an operator changes the table, the subject's compatibility or the converter.
	ErrIncompatible = errors.New("avro: schema incompatible with the subject")
)

// fatalError marks an error that restarting the task cannot fix; the connect runtime fails the task
// on any error in the chain whose Fatal method reports true.
type fatalError struct{ error }

func (fatalError) Fatal() bool { return true }

func (e fatalError) Unwrap() error { return e.error }

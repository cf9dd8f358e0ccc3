package transforms

import "fmt"

// ConfigError is a transforms or predicates setting that cdcd cannot run: an unknown type, a bad value, a
// missing required setting, or a Debezium setting cdcd does not implement yet. It names the key and value so
// the connector's owner can fix the config; a restart cannot, so it is fatal to the task.
type ConfigError struct {
	Key, Value string
	Problem    string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("%s=%q: %s", e.Key, e.Value, e.Problem)
}

// Fatal reports that restarting the task cannot fix the error.
func (e *ConfigError) Fatal() bool { return true }

// TransformError is a transform that failed on a record: the record's data does not fit what the
// transform requires. Connect's errors.tolerance decides whether the task fails or skips the record.
type TransformError struct {
	Alias string // the alias in "transforms"
	Class string // the transform's class, as its "type" names it
	Err   error
}

func (e *TransformError) Error() string {
	return fmt.Sprintf("transform %q (%s): %v", e.Alias, e.Class, e.Err)
}

func (e *TransformError) Unwrap() error { return e.Err }

package slotguard

import (
	"errors"
	"fmt"
)

var (
	// ErrSlotNotFound: the server has no replication slot of that name.
	ErrSlotNotFound = errors.New("replication slot not found")
	// ErrSlotActive: a consumer is streaming from the slot, so dropping it would break that consumer; stop it first.
	ErrSlotActive = errors.New("replication slot is active")
	// ErrUnknownServer: the guardian has no connection details for the server (no connector, configured DSN
	// or earlier refresh named it).
	ErrUnknownServer = errors.New("unknown PostgreSQL server")
)

// ConfigError names the worker property whose value is unusable.
type ConfigError struct {
	Key, Value, Reason string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("worker property %s: invalid value %q: %s", e.Key, e.Value, e.Reason)
}

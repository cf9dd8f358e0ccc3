package source

import (
	"fmt"
	"runtime/debug"
)

// PanicError is an unexpected panic of a goroutine that reads or moves a connector's data, caught at that
// goroutine's boundary so that it fails the connector's task (FAILED, with this error as its trace) instead
// of the whole process. It is the last line of defence, not the handling of bad input: decoders return
// errors. It is fatal: the same data would panic again after a restart.
type PanicError struct {
	Value any // what was passed to panic
	// Position is the end of the batch the catching goroutine was handling or had last handed on; nil when
	// it knew of none.
	Position Position
	Stack    []byte // the panicking goroutine's stack
}

// Recovered wraps a value recover returned. Call it in the deferred function that called recover, so that
// the stack it records is the panicking one:
//
//	defer func() {
//		if v := recover(); v != nil {
//			err = source.Recovered(v, last)
//		}
//	}()
func Recovered(v any, pos Position) *PanicError {
	return &PanicError{Value: v, Position: pos, Stack: debug.Stack()}
}

// Error is the panic, where it happened in the stream, and the stack: a task's trace, as Connect shows a
// Java exception's.
func (e *PanicError) Error() string {
	at := "stream position unknown"
	if e.Position != nil {
		at = "near the batch ending @ " + e.Position.String()
	}
	return fmt.Sprintf("panic: %v (%s)\n%s", e.Value, at, e.Stack)
}

// Fatal marks a panic as fatal (see IsFatal).
func (e *PanicError) Fatal() bool { return true }

// Unwrap returns the panic's value when it is an error (a runtime error, for one).
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

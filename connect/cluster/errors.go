package cluster

import (
	"errors"
	"fmt"
)

// ErrClosed is returned by a store or log used after Close.
var ErrClosed = errors.New("cluster: closed")

// TopicError reports an internal topic that exists with settings Connect refuses to run with.
type TopicError struct {
	Topic  string
	Reason string
}

func (e *TopicError) Error() string {
	return fmt.Sprintf("topic %s: %s", e.Topic, e.Reason)
}

// RecordError reports a record of an internal topic that is not in Connect's format. Readers skip
// such records, as Connect does, after logging this error.
type RecordError struct {
	Topic  string
	Key    string
	Reason string
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("topic %s: record %q: %s", e.Topic, e.Key, e.Reason)
}

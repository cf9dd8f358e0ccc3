package kafka

import (
	"errors"
	"fmt"
	"strings"
)

// ErrClosed is returned by Send after Close has started, and passed to done for records that
// Close had to abandon because its context ended before Kafka acknowledged them.
var ErrClosed = errors.New("kafka writer closed")

// ErrWriterFailed is returned by Send once an earlier Send failed for good. The failed records
// are missing from their partition, so the caller must restart from its last durable position;
// refusing new records keeps the gap as small as possible (Connect fails the task the same way).
var ErrWriterFailed = errors.New("kafka writer failed earlier")

// DeliveryError is what done receives when Kafka rejected a batch for good (after the producer's
// own retries). It names the partition so the operator can find the broker-side cause.
type DeliveryError struct {
	Topic     string
	Partition int
	Records   int // records of the failed batch (it may hold records of several Sends)
	Err       error
}

func (e *DeliveryError) Error() string {
	return fmt.Sprintf("delivering %d records to topic %q partition %d: %v", e.Records, e.Topic, e.Partition, e.Err)
}

func (e *DeliveryError) Unwrap() error { return e.Err }

// unreachableError explains a failure to get metadata from the cluster in terms an operator can act on.
func unreachableError(brokers []string, err error) error {
	return fmt.Errorf("kafka brokers %s did not answer (check bootstrap.servers, that the brokers run, "+
		"and that their advertised.listeners resolve and are reachable from this host): %w",
		strings.Join(brokers, ","), err)
}

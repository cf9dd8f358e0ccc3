package kafka

import (
	"errors"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/source"
	kafkago "github.com/segmentio/kafka-go"
)

// The coordinator's refusals are named with what to do about them: an ACL the task's principal lacks (the
// errors Connect's task fails with, TransactionalIdAuthorizationException and TopicAuthorizationException),
// a fence, and INVALID_PRODUCER_EPOCH, which ExactlyOnceWorkerSourceTask reports as a possible transaction
// timeout with its advice.
func TestTransactionAnswersNameTheirCause(t *testing.T) {
	cases := []struct {
		request string
		code    kafkago.Error
		want    []string
		fatal   bool // the task fails for good, as Connect's does; else it restarts from its last offset
	}{
		{"InitProducerId", kafkago.TransactionalIDAuthorizationFailed, []string{"InitProducerId", `"g-c-0"`, "WRITE and DESCRIBE on the TransactionalId"}, true},
		{"AddPartitionsToTxn", kafkago.TopicAuthorizationFailed, []string{"WRITE on the connector's topics and on the offsets topic"}, true},
		{"InitProducerId", kafkago.ClusterAuthorizationFailed, []string{"IDEMPOTENT_WRITE on the Cluster"}, true},
		{"EndTxn", kafkago.ProducerFenced, []string{"was fenced: another instance of this task took over"}, false},
		{"EndTxn", kafkago.InvalidProducerEpoch, []string{"fenced or its transaction expired", "increase the transaction timeout", "'poll' transaction boundary"}, false},
		{"EndTxn", kafkago.GroupCoordinatorNotAvailable, []string{"EndTxn", `"g-c-0"`}, false},
	}
	for _, c := range cases {
		err := transactionAnswer("g-c-0", c.request, c.code)
		if !errors.Is(err, c.code) {
			t.Errorf("%s %v: %v does not wrap the code", c.request, c.code, err)
			continue
		}
		if source.IsFatal(err) != c.fatal {
			t.Errorf("%s %v: fatal %v, want %v", c.request, c.code, source.IsFatal(err), c.fatal)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %v: %q lacks %q", c.request, c.code, err, w)
			}
		}
	}
	if transactionAnswer("g-c-0", "EndTxn", 0) != nil {
		t.Error("no error code is no error")
	}
}

package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/addpartitionstotxn"
	"github.com/segmentio/kafka-go/protocol/endtxn"
	"github.com/segmentio/kafka-go/protocol/findcoordinator"
	"github.com/segmentio/kafka-go/protocol/initproducerid"

	"github.com/cdcd/cdcd/source"
)

// A transactional producer (Config.TransactionalID) is the idempotent producer plus what the Java
// producer's TransactionManager does, for Kafka Connect's exactly-once source tasks (KIP-618):
//
//   - its identity comes from InitProducerId with the transactional.id, asked of the id's transaction
//     coordinator. That call fences every earlier producer with the same id (a zombie task: its next
//     request is refused with PRODUCER_FENCED) and aborts the transaction it left open, so that a
//     read_committed consumer never sees what a killed task produced after its last commit.
//   - a partition joins the open transaction (AddPartitionsToTxn) before its first batch of the
//     transaction goes out: the loop holds such batches back and asks the coordinator for the whole set
//     at once (requestAddPartitions).
//   - batches carry the transactional bit, and produce requests the transactional.id.
//   - Writer.Commit ends the transaction (EndTxn) once every batch of it is acknowledged.
//   - what an idempotent producer heals by bumping its epoch itself (a batch given up after it was sent,
//     a lost sequence) cannot be healed inside a transaction: the producer fails, and the runtime
//     restarts the task from its last committed offset; the new producer's InitProducerId aborts the
//     transaction. So does a fence.

// transactionCoordinator sends a transactional producer's requests to its transactional.id's
// coordinator, which it finds (FindCoordinator) and finds again when the coordinator moves. It is safe
// for concurrent use; requests wait for each other.
type transactionCoordinator struct {
	id       string
	find     *syncConn // any broker: FindCoordinator
	dialer   *dialer
	timeout  time.Duration
	backoff  time.Duration
	mu       sync.Mutex
	addr     string    // "" until found
	conn     *syncConn // to addr
	lastSeen error     // the last retriable failure, for the error when ctx ends
}

// coordinatorMoved are the answers after which the coordinator is looked up again; concurrentTxns the
// one after which the same request is retried (the coordinator is still completing the last transaction).
var coordinatorMoved = map[kafkago.Error]bool{
	kafkago.GroupLoadInProgress:          true, // COORDINATOR_LOAD_IN_PROGRESS
	kafkago.GroupCoordinatorNotAvailable: true, // COORDINATOR_NOT_AVAILABLE
	kafkago.NotCoordinatorForGroup:       true, // NOT_COORDINATOR
}

// concurrentTransactionsBackoff is the first wait before a request answered CONCURRENT_TRANSACTIONS is
// sent again, doubled on each further such answer up to maxConcurrentTransactionsBackoff, the Java
// producer's TransactionManager.ADD_PARTITIONS_RETRY_BACKOFF_MS. The answer comes when the next
// transaction's AddPartitionsToTxn reaches the coordinator while it still writes the last one's markers,
// which takes a few milliseconds after EndTxn returned; Java's fixed 20 ms idled the producer for longer
// than that once every few commits.
const (
	concurrentTransactionsBackoff    = 2 * time.Millisecond
	maxConcurrentTransactionsBackoff = 20 * time.Millisecond
)

// roundTrip sends req to the coordinator and returns its answer and the answer's error code, retrying
// lost connections, a moved coordinator and CONCURRENT_TRANSACTIONS with backoff until ctx ends. code
// extracts the error code of req's response.
func (c *transactionCoordinator) roundTrip(ctx context.Context, req protocol.Message, code func(protocol.Message) (kafkago.Error, bool)) (protocol.Message, kafkago.Error, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	backoff, concurrentBackoff := c.backoff, concurrentTransactionsBackoff
	for {
		msg, kerr, err := c.tryLocked(ctx, req, code)
		switch {
		case err == nil && kerr == 0:
			return msg, 0, nil
		case err == nil && !coordinatorMoved[kerr] && kerr != kafkago.ConcurrentTransactions:
			return msg, kerr, nil
		case err != nil && !retriableMetadataError(err):
			return nil, 0, err
		}
		if err == nil {
			err = kerr
		}
		c.lastSeen = err
		wait := backoff
		if kerr == kafkago.ConcurrentTransactions {
			// The coordinator is still writing the last transaction's markers: retry soon.
			wait, concurrentBackoff = concurrentBackoff, min(2*concurrentBackoff, maxConcurrentTransactionsBackoff)
		} else {
			c.forgetLocked()
			backoff = min(2*backoff, time.Second)
		}
		select {
		case <-ctx.Done():
			return nil, 0, fmt.Errorf("kafka: transaction coordinator of transactional.id %q: %w (last error: %w)", c.id, ctx.Err(), c.lastSeen)
		case <-time.After(wait):
		}
	}
}

func (c *transactionCoordinator) tryLocked(ctx context.Context, req protocol.Message, code func(protocol.Message) (kafkago.Error, bool)) (protocol.Message, kafkago.Error, error) {
	if c.addr == "" {
		msg, err := c.find.roundTrip(ctx, &findcoordinator.Request{Key: c.id, KeyType: 1}, c.timeout) // 1: a transaction
		if err != nil {
			return nil, 0, err
		}
		resp, ok := msg.(*findcoordinator.Response)
		if !ok {
			return nil, 0, fmt.Errorf("a %T answered FindCoordinator", msg)
		}
		if resp.ErrorCode != 0 {
			return nil, kafkago.Error(resp.ErrorCode), nil
		}
		addr := net.JoinHostPort(resp.Host, strconv.Itoa(int(resp.Port)))
		c.addr, c.conn = addr, &syncConn{dialer: c.dialer, addrs: func() []string { return []string{addr} }}
	}
	msg, err := c.conn.roundTrip(ctx, req, c.timeout)
	if err != nil {
		return nil, 0, err
	}
	kerr, ok := code(msg)
	if !ok {
		return nil, 0, fmt.Errorf("a %T answered %T", msg, req)
	}
	return msg, kerr, nil
}

func (c *transactionCoordinator) forgetLocked() {
	if c.conn != nil {
		c.conn.close()
	}
	c.addr, c.conn = "", nil
}

func (c *transactionCoordinator) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgetLocked()
}

// fencedError explains an answer that means another producer took over the transactional.id. An
// INVALID_PRODUCER_EPOCH is also what a producer whose transaction the coordinator aborted after
// transaction.timeout.ms gets, which ExactlyOnceWorkerSourceTask reports as a possible transaction timeout
// with this advice.
func fencedError(id string, code kafkago.Error) error {
	if code == kafkago.InvalidProducerEpoch {
		return fmt.Errorf("kafka: the producer of transactional.id %q was fenced or its transaction expired: another "+
			"instance of this task took over, or the task was unable to finish writing records to Kafka before its "+
			"producer transaction expired. For the latter, tune the connector's producer configuration for higher "+
			"throughput, increase the transaction timeout for the connector's producers (producer.override.transaction.timeout.ms), "+
			"decrease the offset commit interval (if using interval-based transaction boundaries), or use the 'poll' "+
			"transaction boundary: %w", id, code)
	}
	return fmt.Errorf("kafka: the producer of transactional.id %q was fenced: another instance of this task "+
		"took over (a newer generation of the connector's tasks, or a task restarted elsewhere): %w", id, code)
}

// initTransactions is InitProducerId for the transactional.id: a new epoch that fences earlier
// producers of the id and aborts their open transaction.
func (c *transactionCoordinator) initTransactions(ctx context.Context, timeout time.Duration) (identity, error) {
	req := &initproducerid.Request{TransactionalID: c.id, TransactionTimeoutMs: int32(timeout.Milliseconds()), ProducerID: noProducerID, ProducerEpoch: noProducerID}
	msg, kerr, err := c.roundTrip(ctx, req, func(m protocol.Message) (kafkago.Error, bool) {
		r, ok := m.(*initproducerid.Response)
		if !ok {
			return 0, false
		}
		return kafkago.Error(r.ErrorCode), true
	})
	if err != nil {
		return identity{}, err
	}
	if kerr != 0 {
		return identity{}, transactionAnswer(c.id, "InitProducerId", kerr)
	}
	resp := msg.(*initproducerid.Response)
	return identity{id: resp.ProducerID, epoch: resp.ProducerEpoch}, nil
}

// addPartitions adds parts to the open transaction of id.
func (c *transactionCoordinator) addPartitions(ctx context.Context, id identity, parts []topicPartition) error {
	req := &addpartitionstotxn.Request{TransactionalID: c.id, ProducerID: id.id, ProducerEpoch: id.epoch}
	for _, tp := range parts {
		i := len(req.Topics) - 1
		if i < 0 || req.Topics[i].Name != tp.topic {
			req.Topics = append(req.Topics, addpartitionstotxn.RequestTopic{Name: tp.topic})
			i++
		}
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, tp.partition)
	}
	_, kerr, err := c.roundTrip(ctx, req, func(m protocol.Message) (kafkago.Error, bool) {
		r, ok := m.(*addpartitionstotxn.Response)
		if !ok {
			return 0, false
		}
		// The coordinator answers per partition; one code for the request is what decides. The
		// partitions that were fine answer OPERATION_NOT_ATTEMPTED when another one failed.
		var worst kafkago.Error
		for _, t := range r.Results {
			for _, part := range t.Results {
				if code := kafkago.Error(part.ErrorCode); code != 0 && code != operationNotAttempted {
					worst = code
				}
			}
		}
		return worst, true
	})
	if err != nil {
		return err
	}
	return transactionAnswer(c.id, "AddPartitionsToTxn", kerr)
}

// endTransaction commits (or aborts) the open transaction of id.
func (c *transactionCoordinator) endTransaction(ctx context.Context, id identity, commit bool) error {
	req := &endtxn.Request{TransactionalID: c.id, ProducerID: id.id, ProducerEpoch: id.epoch, Committed: commit}
	_, kerr, err := c.roundTrip(ctx, req, func(m protocol.Message) (kafkago.Error, bool) {
		r, ok := m.(*endtxn.Response)
		if !ok {
			return 0, false
		}
		return kafkago.Error(r.ErrorCode), true
	})
	if err != nil {
		return err
	}
	return transactionAnswer(c.id, "EndTxn", kerr)
}

const operationNotAttempted = kafkago.Error(55)

// transactionAnswer turns a coordinator's final answer into an error naming what it means.
func transactionAnswer(id, request string, code kafkago.Error) error {
	switch code {
	case 0:
		return nil
	case kafkago.ProducerFenced, kafkago.InvalidProducerEpoch:
		return fencedError(id, code)
	// A missing ACL fails the task for good, as the task of Connect fails on a TransactionalIdAuthorizationException
	// or a TopicAuthorizationException: retrying cannot help until an operator grants it.
	case kafkago.TransactionalIDAuthorizationFailed:
		return source.Fatal(fmt.Errorf("kafka: %s for transactional.id %q: %w; grant the task's principal WRITE and DESCRIBE on the TransactionalId", request, id, code))
	case kafkago.TopicAuthorizationFailed:
		return source.Fatal(fmt.Errorf("kafka: %s for transactional.id %q: %w; grant the task's principal WRITE on the connector's topics and on the offsets topic", request, id, code))
	case kafkago.ClusterAuthorizationFailed:
		return source.Fatal(fmt.Errorf("kafka: %s for transactional.id %q: %w; grant the task's principal IDEMPOTENT_WRITE on the Cluster", request, id, code))
	}
	return fmt.Errorf("kafka: %s for transactional.id %q: %w", request, id, code)
}

// errTransactionBroken is why a transactional producer stops where an idempotent one would bump its epoch.
var errTransactionBroken = errors.New("the open transaction cannot be completed (a batch's fate is unknown, or the broker lost its sequence); " +
	"the task restarts from its last committed offset and the transaction is aborted")

// Package kafka is cdcd's producer: it writes already-encoded records to Kafka the way Kafka
// Connect's producer for source tasks does (acks=all, the Java partitioner, Connect's topic
// creation) and tells the caller when each Send is fully acknowledged, so the pipeline can advance
// its durable position only behind Kafka.
//
// The producer itself (producer.go) is built on kafka-go's protocol package: its own pipelined
// connections (conn.go), record batches encoded by kafka-go and stamped with a producer id, epoch and
// sequence (batch.go), and the Java producer's handling of the broker's answers. Order per partition,
// retries included, and no duplicates under enable.idempotence are its properties; producer.go says
// how. kafka-go's Writer is not used: it keeps one request in flight per partition and cannot stamp
// batches for idempotence.
//
// What this file adds around the producer: a bound on buffered bytes (backpressure), per-Send
// completion, topic creation, and the admin client (topic creation, Ping) on kafka-go's Transport.
package kafka

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cdcd/cdcd/sink"
	kafkago "github.com/segmentio/kafka-go"
)

// recordSize is what a record costs against the in-flight budget.
func recordSize(r sink.Record) int64 {
	n := int64(len(r.Key) + len(r.Value))
	for _, h := range r.Headers {
		n += int64(len(h.Key) + len(h.Value))
	}
	return n
}

// Config configures a Writer.
type Config struct {
	// Brokers is the worker's bootstrap.servers. A producer bootstrap.servers overrides it.
	Brokers []string
	// ClientID is the default client.id, e.g. Connect's "connector-producer-<connector>-<task>".
	// A producer client.id overrides it.
	ClientID string
	// Producer holds the producer.* settings (worker, then producer.override.* of the connector)
	// with the prefix stripped. Java producer keys are honoured as the Java producer reads them; keys that would change
	// what lands in Kafka and cannot be honoured (transactional.id, partitioner.class, …) make
	// NewWriter fail, the others are logged. Its security keys (security.protocol, ssl.*, sasl.*) are
	// the producer's TLS and SASL (ParseClientSecurity): each is honoured or NewWriter fails.
	Producer map[string]string
	// Admin holds the security settings of the client that creates topics and answers Ping: Connect's
	// source-task admin client (Worker.adminConfigs) takes the worker's top-level settings, then its
	// admin.* settings, then the connector's admin.override.*, prefixes stripped. Nil: the producer's
	// security. Keys outside the security family are not read.
	Admin map[string]string
	// AdminClientID is the admin client's client.id (Connect's connector-adminclient-<connector>-<task>);
	// "" uses the producer's.
	AdminClientID string
	// TopicCreation comes from ParseTopicCreation; the zero value leaves topic creation to the broker.
	TopicCreation TopicCreation
	// TransactionalID, when not "", makes the Writer transactional (Kafka Connect's exactly-once source
	// support): its Sends join a Kafka transaction that Commit ends. It is the runtime's, never the
	// user's (a producer transactional.id is refused).
	TransactionalID string
	// MaxInFlightBytes bounds the record bytes handed to Send and not yet acknowledged; Send blocks
	// beyond it. 0 means the producer's buffer.memory if set, else DefaultMaxInFlightBytes.
	MaxInFlightBytes int64
}

// DefaultMaxInFlightBytes is the in-flight bound when neither Config.MaxInFlightBytes nor
// buffer.memory is set. It is a quarter of Java's buffer.memory default: five requests of up to
// max.request.size in flight plus the batch being filled is what keeps a partition busy, and in a backlog
// drain 8, 16, 32 and 64 MiB gave the same throughput within noise while each doubling added 20-40 MB
// to the peak RSS (the bound's bytes are live heap, which the garbage collector lets grow to twice).
const DefaultMaxInFlightBytes = 8 << 20

// Writer produces records to Kafka. Its methods are safe for concurrent use.
type Writer struct {
	log      *slog.Logger
	brokers  []string
	producer *producer
	topics   *topicCreator // nil when topic creation is disabled
	admin    *kafkago.Client
	budget   *byteBudget

	adminTransport *Transport
	maxBlock       time.Duration

	// lifetime ends when Close starts; it interrupts Sends blocked on the budget or metadata.
	lifetime context.Context
	stop     context.CancelFunc

	mu      sync.Mutex
	closed  bool
	sending sync.WaitGroup // Sends between the closed check and handing records to the producer

	failed atomic.Pointer[error] // first permanent delivery failure

	// outstanding holds the Sends whose done has not been called yet, for Flush.
	outstandingMu sync.Mutex
	outstanding   map[*sendToken]struct{}
}

var (
	_ sink.Transactional = (*Writer)(nil)
	_ sink.IdleAware     = (*Writer)(nil)
)

// NewWriter validates cfg and builds a Writer that logs to log (slog.Default() if nil). It does
// not contact Kafka (use Ping for an early check); an error means the configuration cannot be
// honoured.
func NewWriter(cfg Config, log *slog.Logger) (*Writer, error) {
	if log == nil {
		log = slog.Default()
	}
	// Errors name the keys as the producer.* and admin.* families name them.
	var errs []error
	settings, err := parseProducerSettings(cfg, log)
	if err != nil {
		errs = append(errs, fmt.Errorf("kafka producer: %w", WithKeyPrefix(err, "producer.")))
	}
	producerSecurity, err := ParseClientSecurity(cfg.Producer)
	if err != nil {
		errs = append(errs, fmt.Errorf("kafka producer: %w", WithKeyPrefix(err, "producer.")))
	}
	adminSecurity := producerSecurity
	if cfg.Admin != nil {
		if adminSecurity, err = ParseClientSecurity(cfg.Admin); err != nil {
			errs = append(errs, fmt.Errorf("kafka admin client (topic creation): %w", WithKeyPrefix(err, "admin.")))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	limit := cfg.MaxInFlightBytes
	if limit <= 0 {
		limit = settings.bufferMemory
	}
	if limit <= 0 {
		limit = DefaultMaxInFlightBytes
	}

	// Topic creation and Ping go through the admin client, on kafka-go's Transport with the admin's
	// security and client id, as Connect's TopicAdmin is a client of its own.
	adminClientID := cmp.Or(cfg.AdminClientID, settings.clientID)
	adminTransport := NewTransport(adminSecurity, adminClientID)
	adminTransport.DialTimeout, adminTransport.IdleTimeout, adminTransport.MetadataTTL = settings.requestTimeout, settings.idleTimeout, settings.metadataTTL

	lifetime, stop := context.WithCancel(context.Background())
	w := &Writer{
		log:            log,
		brokers:        settings.brokers,
		budget:         newByteBudget(limit),
		adminTransport: adminTransport,
		maxBlock:       settings.maxBlock,
		lifetime:       lifetime,
		stop:           stop,

		outstanding: map[*sendToken]struct{}{},
		admin:       &kafkago.Client{Addr: kafkago.TCP(settings.brokers...), Transport: adminTransport, Timeout: settings.requestTimeout},
	}
	w.producer = newProducer(settings, producerSecurity, log, w.complete)
	if cfg.TopicCreation.Enabled() {
		w.topics = &topicCreator{creation: cfg.TopicCreation, client: w.admin, brokers: w.brokers, log: log, known: map[string]bool{}}
	}
	return w, nil
}

// Ping asks the cluster for its metadata. It blocks until the brokers answer or ctx is done, may
// run concurrently with anything, and returns an error naming the brokers and what to check.
func (w *Writer) Ping(ctx context.Context) error {
	if _, err := w.admin.Metadata(ctx, &kafkago.MetadataRequest{}); err != nil {
		return unreachableError(w.brokers, err)
	}
	return nil
}

// Send hands recs to the producer and arranges for done to be called exactly once, from any
// goroutine, when every record of this call is acknowledged by the brokers (err == nil) or as soon
// as any of them failed for good (err != nil, usually a *DeliveryError naming topic and partition;
// ErrClosed if Close abandoned them). After a failure, other records of the call may still land;
// the caller must restart from its last durable position, and later Sends return ErrWriterFailed.
//
// Records of one call keep their order within each partition, and calls made one after another
// keep theirs; calls made concurrently have no defined order between them. Send may be called
// concurrently with other Sends, Ping and Close.
//
// Send blocks while the in-flight bound is reached (until earlier records are acknowledged), while
// a new topic is created, and while no broker answers for the topics' metadata. If ctx is done (or
// max.block.ms passes, or Close starts) first, or Kafka rejects the call up front (a record larger
// than max.request.size, a topic that cannot be created), Send returns an error, none of recs were
// handed over, and done is never called. With a nil error, done will be called. Cancelling ctx
// after Send returned changes nothing.
func (w *Writer) Send(ctx context.Context, recs []sink.Record, done func(err error)) error {
	if failed := w.failed.Load(); failed != nil {
		return fmt.Errorf("%w: %w", ErrWriterFailed, *failed)
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	w.sending.Add(1)
	w.mu.Unlock()
	defer w.sending.Done()

	if len(recs) == 0 {
		done(nil)
		return nil
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(w.lifetime, cancel)()
	if w.maxBlock > 0 {
		var cancelTimeout context.CancelFunc
		ctx, cancelTimeout = context.WithTimeout(ctx, w.maxBlock)
		defer cancelTimeout()
	}
	err := w.send(ctx, recs, done)
	if err != nil && w.lifetime.Err() != nil {
		return ErrClosed
	}
	return err
}

func (w *Writer) send(ctx context.Context, recs []sink.Record, done func(err error)) error {
	if w.topics != nil {
		if err := w.topics.ensure(ctx, recs); err != nil {
			return fmt.Errorf("kafka: %w", err)
		}
	}

	var total int64
	for _, r := range recs {
		total += recordSize(r)
	}
	// A call larger than the whole budget waits until nothing else is in flight, then goes alone.
	charge := min(max(total, 1), w.budget.limit)
	if err := w.budget.acquire(ctx, charge); err != nil {
		return fmt.Errorf("kafka: waiting for in-flight records to be acknowledged: %w", err)
	}

	tok := &sendToken{done: done, charge: charge, resolved: make(chan struct{})}
	tok.remaining.Store(int64(len(recs)))
	w.outstandingMu.Lock()
	w.outstanding[tok] = struct{}{}
	w.outstandingMu.Unlock()
	if err := w.producer.append(ctx, recs, tok); err != nil {
		w.forget(tok)
		w.budget.release(charge)
		return err
	}
	return nil
}

// forget drops a Send from the outstanding set once its done was called (or it was never handed over).
func (w *Writer) forget(tok *sendToken) {
	w.outstandingMu.Lock()
	delete(w.outstanding, tok)
	w.outstandingMu.Unlock()
}

// Flush blocks until every Send that returned before the call has had its done called, or ctx ends. The
// producer sends a partition's batch once it is full or linger.ms passed, so Flush waits at most one linger
// beyond the acks; it does not cut batches short.
func (w *Writer) Flush(ctx context.Context) error {
	w.outstandingMu.Lock()
	waiting := make([]chan struct{}, 0, len(w.outstanding))
	for tok := range w.outstanding {
		waiting = append(waiting, tok.resolved)
	}
	w.outstandingMu.Unlock()
	for _, resolved := range waiting {
		select {
		case <-resolved:
		case <-ctx.Done():
			return fmt.Errorf("kafka: flushing with %d bytes unacknowledged: %w", w.budget.inUse(), ctx.Err())
		}
	}
	return nil
}

// Commit ends the transaction that the Sends since the last Commit opened, with recs — the offsets that
// stand for them — inside it: it sends recs, waits until every record of the transaction is
// acknowledged, and commits (EndTxn). Once it returns nil, a read_committed consumer sees all of the
// transaction's records or, had it failed, none. The caller must not Send while Commit runs.
//
// An error means the transaction did not commit, or its outcome is unknown: the Writer has failed, and
// the caller restarts from its last committed offset with a new Writer, whose producer aborts what
// was left open. Only a Writer made with Config.TransactionalID commits.
func (w *Writer) Commit(ctx context.Context, recs []sink.Record) error {
	if w.producer.txn == nil {
		return errors.New("kafka: Commit on a Writer without a transactional.id")
	}
	if err := w.Send(ctx, recs, func(error) {}); err != nil { // its outcome is Flush's and failed's
		return err
	}
	drained := w.producer.drain()
	err := w.Flush(ctx)
	drained()
	if err != nil {
		return err
	}
	if failed := w.failed.Load(); failed != nil {
		return fmt.Errorf("%w: %w", ErrWriterFailed, *failed)
	}
	if err := w.producer.endTransaction(ctx); err != nil {
		return fmt.Errorf("kafka: committing the transaction: %w", err)
	}
	return nil
}

// SourceIdle sends the records held back for linger.ms now, unless the user set linger.ms: the caller has
// nothing more ready, so waiting would add latency to every change of a quiet source and batch nothing.
// (Java's default of 5 ms is what Kafka 4.0 chose for clients that keep sending; Connect's source tasks
// hand a change over as it comes.) A linger.ms set explicitly is honoured as Java's.
func (w *Writer) SourceIdle() {
	if !w.producer.settings.lingerSet {
		w.producer.sendOpen()
	}
}

// InFlightBytes reports the bytes handed to Send and not yet resolved (for metrics).
func (w *Writer) InFlightBytes() int64 { return w.budget.inUse() }

// Close stops accepting Sends, flushes what is buffered and waits until every outstanding record
// is acknowledged or failed, so every done has been called. It blocks; calling it again returns
// ErrClosed. Sends blocked in Send return ErrClosed.
//
// If ctx ends first, Close abandons the rest: requests in flight are cancelled, nothing is retried,
// the remaining done callbacks get an error wrapping ErrClosed shortly after, and Close returns
// ctx's error without waiting for them.
func (w *Writer) Close(ctx context.Context) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	w.closed = true
	w.mu.Unlock()
	w.stop()
	w.sending.Wait() // no Send is adding records while the producer drains

	w.producer.close()
	defer w.adminTransport.CloseIdleConnections()
	select {
	case <-w.producer.stopped:
		return nil
	case <-ctx.Done():
		w.producer.abandon()
		return fmt.Errorf("kafka: closing with %d bytes unacknowledged: %w", w.budget.inUse(), ctx.Err())
	}
}

// complete is the producer's resolution of one batch, called from its loop in queue order per partition.
func (w *Writer) complete(b *batch, err error) {
	if err != nil {
		derr := &DeliveryError{Topic: b.tp.topic, Partition: int(b.tp.partition), Records: len(b.tokens), Err: err}
		if w.failed.CompareAndSwap(nil, new(error(derr))) {
			w.log.Error("kafka rejected a batch for good; records after the last durable position must be re-sent",
				"topic", derr.Topic, "partition", derr.Partition, "records", derr.Records, "error", err)
		}
		err = derr
	}
	for _, tok := range b.tokens {
		if tok.resolve(err) {
			w.forget(tok)
			w.budget.release(tok.charge)
		}
	}
}

// sendToken tracks one Send: how many of its records are unresolved, and whether done was called.
type sendToken struct {
	remaining atomic.Int64
	once      sync.Once
	done      func(error)
	charge    int64         // budget bytes, returned when the last record resolves
	resolved  chan struct{} // closed once every record is resolved, for Flush
}

// resolve accounts for one record. The first error calls done at once; otherwise the last record
// calls done(nil). It reports whether this was the token's last record.
func (t *sendToken) resolve(err error) (last bool) {
	if err != nil {
		t.once.Do(func() { t.done(err) })
	}
	if t.remaining.Add(-1) != 0 {
		return false
	}
	t.once.Do(func() { t.done(nil) })
	close(t.resolved)
	return true
}

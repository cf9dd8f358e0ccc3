// Package kafka is cdcd's producer: it writes already-encoded records to Kafka the way Kafka
// Connect's producer for source tasks does (acks=all, one request in flight per partition, the
// Java partitioner, Connect's topic creation) and tells the caller when each Send is fully
// acknowledged, so the pipeline can advance its durable position only behind Kafka.
//
// Ordering, the property everything else rests on, comes from kafka-go v0.4.51's Writer
// (writer.go): each topic-partition has exactly one partitionWriter whose single goroutine
// (writeBatches) takes batches off a FIFO queue one at a time, and writeBatch retries a failed
// batch inline — sleeping, then producing the same batch again — before it takes the next one. So
// at most one produce request per partition is ever in flight, retries included, and a partition
// receives batches in the order Send enqueued their records. That is Connect's
// max.in.flight.requests.per.connection=1 guarantee; writer_test.go's fault tests check it against
// an in-process broker that fails and delays chosen batches.
//
// What kafka-go does not give, and this package adds: a bound on buffered bytes (backpressure),
// per-Send completion, topic creation, and Java-compatible placement of keyless records.
package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
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
	// with the prefix stripped. Java producer keys are mapped to kafka-go; keys that would change
	// what lands in Kafka and cannot be honoured (transactional.id, partitioner.class,
	// security.protocol other than PLAINTEXT, …) make NewWriter fail, the others are logged.
	Producer map[string]string
	// TopicCreation comes from ParseTopicCreation; the zero value leaves topic creation to the broker.
	TopicCreation TopicCreation
	// MaxInFlightBytes bounds the record bytes handed to Send and not yet acknowledged; Send blocks
	// beyond it. 0 means the producer's buffer.memory if set, else DefaultMaxInFlightBytes.
	MaxInFlightBytes int64
}

// DefaultMaxInFlightBytes is the in-flight bound when neither Config.MaxInFlightBytes nor
// buffer.memory is set.
const DefaultMaxInFlightBytes = 64 << 20

// kafka-go also cuts batches by record count, which Java does not. 1000 records lets batches of
// small records grow to a useful size while bounding what kafka-go preallocates per batch.
const batchRecords = 1000

// Writer produces records to Kafka. Its methods are safe for concurrent use.
type Writer struct {
	log      *slog.Logger
	brokers  []string
	producer *kafkago.Writer
	topics   *topicCreator // nil when topic creation is disabled
	admin    *kafkago.Client
	budget   *byteBudget

	transport *abandonableTransport
	maxBlock  time.Duration

	// lifetime ends when Close starts; it interrupts Sends blocked on the budget or metadata.
	lifetime context.Context
	stop     context.CancelFunc

	mu      sync.Mutex
	closed  bool
	sending sync.WaitGroup // Sends between the closed check and handing records to kafka-go

	failed atomic.Pointer[error] // first permanent delivery failure

	// outstanding holds the Sends whose done has not been called yet, for Flush.
	outstandingMu sync.Mutex
	outstanding   map[*sendToken]struct{}
}

var _ sink.Sink = (*Writer)(nil)

// NewWriter validates cfg and builds a Writer that logs to log (slog.Default() if nil). It does
// not contact Kafka (use Ping for an early check); an error means the configuration cannot be
// honoured.
func NewWriter(cfg Config, log *slog.Logger) (*Writer, error) {
	if log == nil {
		log = slog.Default()
	}
	settings, err := parseProducerSettings(cfg, log)
	if err != nil {
		return nil, fmt.Errorf("kafka producer: %w", err)
	}
	limit := cfg.MaxInFlightBytes
	if limit <= 0 {
		limit = settings.bufferMemory
	}
	if limit <= 0 {
		limit = DefaultMaxInFlightBytes
	}

	transport := &abandonableTransport{
		Transport: &kafkago.Transport{
			ClientID:    settings.clientID,
			DialTimeout: settings.requestTimeout,
			IdleTimeout: settings.idleTimeout,
			MetadataTTL: settings.metadataTTL,
		},
	}
	transport.abandoned, transport.abandon = context.WithCancel(context.Background())

	lifetime, stop := context.WithCancel(context.Background())
	w := &Writer{
		log:       log,
		brokers:   settings.brokers,
		budget:    newByteBudget(limit),
		transport: transport,
		maxBlock:  settings.maxBlock,
		lifetime:  lifetime,
		stop:      stop,

		outstanding: map[*sendToken]struct{}{},
		admin:       &kafkago.Client{Addr: kafkago.TCP(settings.brokers...), Transport: transport, Timeout: settings.requestTimeout},
	}
	w.producer = &kafkago.Writer{
		Addr:            kafkago.TCP(settings.brokers...),
		Balancer:        newJavaPartitioner(settings.stickyBytes),
		MaxAttempts:     settings.maxAttempts,
		WriteBackoffMin: settings.backoffMin,
		WriteBackoffMax: settings.backoffMax,
		BatchSize:       batchRecords,
		BatchBytes:      settings.batchBytes,
		BatchTimeout:    settings.linger,
		ReadTimeout:     settings.requestTimeout,
		WriteTimeout:    settings.requestTimeout,
		RequiredAcks:    settings.acks,
		Async:           true,
		Completion:      w.complete,
		Compression:     settings.compression,
		ErrorLogger:     kafkago.LoggerFunc(w.logKafkaGoError),
		Transport:       newTopicMetadataCache(transport, partitionCountTTL),
		// The Java producer's metadata requests allow auto-creation; topics under Connect's topic
		// creation are created explicitly before their first record, so this only matters
		// when topic creation is off — where the broker's auto.create.topics.enable decides.
		AllowAutoTopicCreation: true,
	}
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
	refs := make([]recordRef, len(recs)) // one allocation per call, not per record
	msgs := make([]kafkago.Message, len(recs))
	for i, r := range recs {
		refs[i] = recordRef{token: tok, partition: -1}
		msgs[i] = kafkago.Message{Topic: r.Topic, Key: r.Key, Value: r.Value, Time: r.Time, WriterData: &refs[i]}
		if len(r.Headers) > 0 {
			msgs[i].Headers = make([]kafkago.Header, len(r.Headers))
			for j, h := range r.Headers {
				msgs[i].Headers[j] = kafkago.Header{Key: h.Key, Value: h.Value}
			}
		}
	}

	if err := w.enqueue(ctx, msgs); err != nil {
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

// Flush blocks until every Send that returned before the call has had its done called, or ctx ends. kafka-go
// sends a partition's batch once it is full or linger.ms passed, so Flush waits at most one linger beyond
// the acks; it does not cut batches short.
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

// enqueue hands msgs to kafka-go. In async mode WriteMessages only looks up partition counts and
// appends to the partition queues, all or nothing: it fails before queueing anything if any
// message is too large or any topic's metadata is unavailable. Metadata errors that heal by
// themselves (an auto-created topic without a leader yet, a broker restarting) are retried here,
// like the Java producer's wait for metadata in send().
func (w *Writer) enqueue(ctx context.Context, msgs []kafkago.Message) error {
	backoff := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := w.producer.WriteMessages(ctx, msgs...)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, io.ErrClosedPipe):
			return ErrClosed
		case !retriableMetadataError(err):
			return fmt.Errorf("kafka: %w", err)
		}
		if attempt%20 == 0 {
			w.log.Warn("still waiting for Kafka metadata", "brokers", w.brokers, "attempts", attempt, "error", err)
		}
		select {
		case <-ctx.Done():
			return unreachableError(w.brokers, fmt.Errorf("%w (last error: %w)", ctx.Err(), err))
		case <-time.After(backoff):
			backoff = min(2*backoff, time.Second)
		}
	}
}

func retriableMetadataError(err error) bool {
	var kerr kafkago.Error
	if errors.As(err, &kerr) {
		return kerr.Temporary()
	}
	var nerr net.Error
	return errors.As(err, &nerr) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
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
	w.sending.Wait() // no Send can be adding to kafka-go's queues while it closes them

	flushed := make(chan struct{})
	go func() {
		_ = w.producer.Close() // always nil in v0.4.51
		w.transport.CloseIdleConnections()
		close(flushed)
	}()
	select {
	case <-flushed:
		return nil
	case <-ctx.Done():
		w.transport.abandon()
		return fmt.Errorf("kafka: closing with %d bytes unacknowledged: %w", w.budget.inUse(), ctx.Err())
	}
}

// complete is kafka-go's Completion callback: all messages are one batch of one partition, with
// their tokens in WriterData. kafka-go calls it from the partition's goroutine, once per batch.
func (w *Writer) complete(messages []kafkago.Message, err error) {
	if err != nil {
		ref := messages[0].WriterData.(*recordRef)
		if errors.Is(err, errAbandoned) {
			err = ErrClosed
		}
		derr := &DeliveryError{Topic: messages[0].Topic, Partition: ref.partition, Records: len(messages), Err: err}
		if w.failed.CompareAndSwap(nil, new(error(derr))) {
			w.log.Error("kafka rejected a batch for good; records after the last durable position must be re-sent",
				"topic", derr.Topic, "partition", derr.Partition, "records", derr.Records, "error", err)
		}
		err = derr
	}
	for i := range messages {
		ref := messages[i].WriterData.(*recordRef)
		if ref.token.resolve(err) {
			w.forget(ref.token)
			w.budget.release(ref.token.charge)
		}
	}
}

func (w *Writer) logKafkaGoError(format string, args ...any) {
	w.log.Warn("kafka producer: "+fmt.Sprintf(format, args...), "brokers", w.brokers)
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

// recordRef is a message's WriterData: its Send's token and the partition the partitioner chose.
type recordRef struct {
	token     *sendToken
	partition int
}

// errAbandoned fails the requests of a writer whose Close gave up waiting.
var errAbandoned = errors.New("kafka writer abandoned by Close")

// abandonableTransport lets Close stop kafka-go's retries. kafka-go retries a batch up to
// MaxAttempts with no way to cancel it (writeBatch's own TODO); after abandon, every round trip,
// including those in flight, fails at once with an error kafka-go does not retry.
type abandonableTransport struct {
	*kafkago.Transport
	abandoned context.Context
	abandon   context.CancelFunc
}

func (t *abandonableTransport) RoundTrip(ctx context.Context, addr net.Addr, req kafkago.Request) (kafkago.Response, error) {
	if t.abandoned.Err() != nil {
		return nil, errAbandoned
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(t.abandoned, cancel)()
	resp, err := t.Transport.RoundTrip(ctx, addr, req)
	if err != nil && t.abandoned.Err() != nil {
		return nil, errAbandoned
	}
	return resp, err
}

package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/cdcd/cdcd/sink"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/initproducerid"
	metadataAPI "github.com/segmentio/kafka-go/protocol/metadata"
	"github.com/segmentio/kafka-go/protocol/rawproduce"
)

// producer is the pipelined, idempotent producer under Writer, built on kafka-go's protocol package.
//
// Shape (the Java producer's RecordAccumulator and Sender, in Go):
//
//   - append (Send's goroutine) places records on partitions and adds them to each partition's open
//     batch; a batch closes when it reaches batch.size, when linger.ms passed since its first record, or
//     when Close drains. Partitions keep their batches in a FIFO queue until each is acknowledged.
//   - one sender loop (run) owns the connections and every decision about the wire: which batches go
//     into the next request to each broker, their sequence numbers, retries, metadata refreshes and the
//     producer id. It never blocks on the network: dialling, writing and reading happen in each
//     brokerConn's goroutines, metadata and InitProducerId in short-lived goroutines whose answers come
//     back on channels.
//   - one connection per broker (brokerConn) carries up to max.in.flight.requests.per.connection requests
//     at once. A request holds at most one batch per partition, so that is also the bound per partition.
//
// Ordering and exactly-once-per-record, the properties the runtime relies on:
//
//   - a partition's batches are written to the wire in queue order: a batch is sent only when every
//     batch before it is in flight or acknowledged, and on one connection, which the broker reads in
//     order.
//   - with enable.idempotence (the default), each batch carries the producer id, epoch and its base
//     sequence. The broker appends a batch only if its sequence follows the last one it appended, answers
//     DUPLICATE_SEQUENCE_NUMBER for one it already has (a success here: the retry of a batch whose answer
//     was lost), and OUT_OF_ORDER_SEQUENCE_NUMBER for one that arrives ahead of a missing one (retried
//     once the earlier one is resent). So a retry neither duplicates nor reorders, with five requests in
//     flight. Without idempotence only one request per connection is allowed (validated), so a retry can
//     duplicate (at-least-once) but never reorder.
//   - when a partition's sequence can no longer be trusted (a batch given up after it was sent, an
//     OUT_OF_ORDER_SEQUENCE_NUMBER or UNKNOWN_PRODUCER_ID for the partition's first unacknowledged batch),
//     the loop bumps the epoch (KIP-360): it stops sending, waits for what is in flight, takes the next
//     epoch of its producer id (bumpEpoch), and restamps every unacknowledged batch with sequences
//     from 0. The producer id and epoch live in one place (identity), which is where a
//     transactional producer will keep its transactional.id's.
//   - completions: batches are resolved only from the head of their partition's queue, by the loop, so
//     the callbacks of one partition run in queue order — the Sink contract's "callbacks in Send order
//     per key", on which "Kafka ack → durable offset → release to the database" rests.
//
// Errors follow the Java producer: retriable broker errors (kafkago.Error.Temporary) and lost
// connections are retried with exponential backoff (retry.backoff.ms up to retry.backoff.max.ms) until
// retries or delivery.timeout.ms run out; NOT_LEADER_OR_FOLLOWER and its kin, and lost connections,
// refresh the metadata first; anything else fails the batch for good (the Writer then fails).
type producer struct {
	settings producerSettings
	log      *slog.Logger
	meta     *syncConn               // metadata and InitProducerId
	txn      *transactionCoordinator // nil without a transactional.id; see txn.go
	dialer   *dialer                 // the brokerConns'
	place    *javaPartitioner
	resolve  func(b *batch, err error) // called by the loop, in queue order per partition, outside mu

	// abandoned ends when Close gives up: dials stop, connections close, everything left fails.
	abandoned context.Context
	abandon   context.CancelFunc
	stopped   chan struct{} // closed when the loop has resolved every batch and exited
	wake      chan struct{} // cap 1: something changed that the loop should look at

	mu        sync.Mutex
	topics    map[string]*topicMeta
	brokers   map[int32]string // node id → host:port
	parts     map[topicPartition]*partitionState
	order     []*partitionState // parts in creation order: the loop's deterministic iteration
	closing   bool
	draining  int             // Commits waiting for their transaction's batches: open batches go without linger.ms
	fatal     error           // the producer cannot go on (no producer id can be had); appends fail
	staleMeta map[string]bool // topics whose leaders the loop must refresh
	metaAt    time.Time       // last successful refresh

	// Owned by the loop goroutine.
	conns        map[int32]*brokerConn
	results      chan *produceCall
	metaDone     chan error
	metaPending  bool
	metaRetryAt  time.Time
	metaFailures int
	identity     identity
	idDone       chan identityResult
	idPending    bool
	idRetryAt    time.Time
	idFailures   int
	bumpWanted   bool
	addDone      chan error // AddPartitionsToTxn's outcome (transactional only)
	addPending   bool
	addRetryAt   time.Time
	addFailures  int
	rotate       int       // where the next request's partitions start, for fairness between partitions
	unreported   int       // produce calls handed to connections and not yet reported back
	progressAt   time.Time // when a produce call was last handed over or reported (see stallReport)
	stalledAt    time.Time // when the last stall was reported
}

// stallReport is how long the loop may hold batches without handing a produce call over or hearing one
// back before it logs what it waits for, and how often it says so again: a producer that waits in
// silence is what an operator cannot tell from a healthy one.
var stallReport = 30 * time.Second

type topicPartition struct {
	topic     string
	partition int32
}

type topicMeta struct {
	leaders []int32 // by partition; -1 while a partition has no leader
}

// partitionState is one partition's batches. Guarded by producer.mu.
type partitionState struct {
	tp      topicPartition
	open    *batch   // accumulating records; nil when none
	queue   []*batch // closed and not yet resolved, in sequence order
	nextSeq int32    // the base sequence of the next batch sent for the first time
	// confirmed is the identity under which the broker acknowledged a batch of this partition. Until
	// then the broker has no sequence state for the producer there and takes any first sequence
	// (KAFKA-15591): a later batch could land while the first is being retried after
	// NOT_LEADER_OR_FOLLOWER, which a just-created partition answers, and the first would then land
	// behind it. So a partition has one batch in flight until one is confirmed.
	confirmed identity
	// inTxn: the partition is in the open transaction (transactional only); its batches are held back
	// until it is.
	inTxn bool
}

// batch is the unit of sending, retrying and resolving: records of one partition, in order.
type batch struct {
	tp      topicPartition
	recs    []sink.Record // until the batch is encoded
	tokens  []*sendToken  // of each record
	size    int64         // estimated encoded size
	created time.Time

	// Set by the loop when the batch is first sent.
	encoded  []byte // the record set, stamped with the current identity and seq
	seq      int32  // base sequence; -1 until assigned
	stamped  identity
	attempts int  // the attempts that count against retries
	sent     bool // whether it ever went on the wire
	inflight bool
	retryAt  time.Time
	lastErr  error

	resolved bool
	err      error // with resolved: why it failed; nil: acknowledged
}

// identity is an idempotent producer's id and epoch (noProducerID when idempotence is off). It is
// managed only by the loop: InitProducerId at the start, InitProducerId with the current pair for an
// epoch bump. A transactional producer will add its transactional.id and coordinator here.
type identity struct {
	id    int64
	epoch int16
}

type identityResult struct {
	identity identity
	err      error
}

// Errors that send a batch back for another attempt and make the loop ask for the partitions' leaders
// again (the Java producer's InvalidMetadataException family).
var staleMetadataErrors = map[kafkago.Error]bool{
	kafkago.UnknownTopicOrPartition: true,
	kafkago.LeaderNotAvailable:      true,
	kafkago.NotLeaderForPartition:   true, // NOT_LEADER_OR_FOLLOWER
	kafkago.FencedLeaderEpoch:       true,
	kafkago.UnknownLeaderEpoch:      true,
	kafkago.KafkaStorageError:       true,
}

const (
	duplicateSequenceNumber  = kafkago.Error(46)
	outOfOrderSequenceNumber = kafkago.Error(45)
	unknownProducerID        = kafkago.Error(59)
)

func newProducer(settings producerSettings, sec ClientSecurity, log *slog.Logger, resolve func(*batch, error)) *producer {
	d := &dialer{security: sec, clientID: settings.clientID, timeout: settings.requestTimeout}
	p := &producer{
		settings: settings,
		log:      log,
		dialer:   d,
		place:    newJavaPartitioner(settings.stickyBytes),
		resolve:  resolve,
		stopped:  make(chan struct{}),
		wake:     make(chan struct{}, 1),
		topics:   map[string]*topicMeta{},
		brokers:  map[int32]string{},
		parts:    map[topicPartition]*partitionState{},

		staleMeta: map[string]bool{},
		conns:     map[int32]*brokerConn{},
		// Each connection reports at most cap(outgoing) calls before the loop hears of them; this only
		// saves the readers a wait while the loop is busy.
		results:    make(chan *produceCall, 4*settings.maxInFlight),
		metaDone:   make(chan error, 1),
		idDone:     make(chan identityResult, 1),
		addDone:    make(chan error, 1),
		identity:   identity{id: noProducerID, epoch: noProducerID},
		progressAt: time.Now(),
	}
	// Its own dialer, so that a test's wrapConn on the produce connections leaves metadata alone.
	p.meta = &syncConn{dialer: &dialer{security: sec, clientID: settings.clientID, timeout: settings.requestTimeout}, addrs: p.metadataAddrs}
	if settings.transactionalID != "" {
		p.txn = &transactionCoordinator{id: settings.transactionalID, find: p.meta, dialer: p.meta.dialer, timeout: settings.requestTimeout, backoff: settings.backoffMin}
	}
	p.abandoned, p.abandon = context.WithCancel(context.Background())
	go p.run()
	return p
}

// metadataAddrs are where metadata is asked: the brokers metadata named, then bootstrap.servers.
func (p *producer) metadataAddrs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.brokers)+len(p.settings.brokers))
	for _, a := range p.brokers {
		out = append(out, a)
	}
	return append(out, p.settings.brokers...)
}

func (p *producer) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// append adds recs, all belonging to tok, to their partitions' batches. It blocks only while it learns
// the partition count of a topic it has not seen (until ctx ends; retriable metadata errors are retried
// as the Java producer waits for metadata in send()). All or nothing: on an error no record was added.
// It may be called concurrently; records of one call stay together in order per partition, and calls
// are ordered by when they took the lock.
func (p *producer) append(ctx context.Context, recs []sink.Record, tok *sendToken) error {
	for _, r := range recs {
		if size := recordWireSize(r) + batchHeaderSize; size > p.settings.maxRequestSize {
			return fmt.Errorf("kafka: a record of %d bytes for topic %q exceeds max.request.size (%d): %w",
				size, r.Topic, p.settings.maxRequestSize, kafkago.MessageSizeTooLarge)
		}
	}
	for i, r := range recs {
		if i > 0 && r.Topic == recs[i-1].Topic {
			continue
		}
		if err := p.awaitTopic(ctx, r.Topic); err != nil {
			return err
		}
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fatal != nil {
		return fmt.Errorf("%w: %w", ErrWriterFailed, p.fatal)
	}
	if p.closing {
		return ErrClosed
	}
	now := time.Now()
	for _, r := range recs {
		meta := p.topics[r.Topic]
		part := int32(p.place.place(r.Topic, r.Key, int64(len(r.Value)), len(meta.leaders)))
		tp := topicPartition{r.Topic, part}
		ps := p.parts[tp]
		if ps == nil {
			ps = &partitionState{tp: tp}
			p.parts[tp] = ps
			p.order = append(p.order, ps)
		}
		size := recordWireSize(r)
		// A batch closes before a record would take it past batch.size or max.request.size; a record
		// larger than batch.size goes alone, as in Java.
		if ps.open != nil && ps.open.size+size > min(p.settings.batchSize, p.settings.maxRequestSize) {
			ps.closeOpen()
		}
		if ps.open == nil {
			ps.open = &batch{tp: tp, created: now, seq: -1, size: batchHeaderSize}
		}
		b := ps.open
		b.recs = append(b.recs, r)
		b.tokens = append(b.tokens, tok)
		b.size += size
		if b.size >= p.settings.batchSize {
			ps.closeOpen()
		}
	}
	p.signal() // a full batch may go, or a new open one needs its linger timer
	return nil
}

func (ps *partitionState) closeOpen() {
	if ps.open != nil {
		ps.queue = append(ps.queue, ps.open)
		ps.open = nil
	}
}

// awaitTopic returns once topic's partition count is known.
func (p *producer) awaitTopic(ctx context.Context, topic string) error {
	p.mu.Lock()
	_, known := p.topics[topic]
	p.mu.Unlock()
	if known {
		return nil
	}
	backoff := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := p.refreshMetadata(ctx, []string{topic})
		if err == nil {
			p.mu.Lock()
			_, known = p.topics[topic]
			p.mu.Unlock()
			if known {
				return nil
			}
			err = kafkago.LeaderNotAvailable
		}
		if !retriableMetadataError(err) {
			return fmt.Errorf("kafka: metadata of topic %q: %w", topic, err)
		}
		if attempt%20 == 0 {
			p.log.Warn("still waiting for Kafka metadata", "brokers", p.settings.brokers, "topic", topic, "attempts", attempt, "error", err)
		}
		select {
		case <-ctx.Done():
			return unreachableError(p.settings.brokers, fmt.Errorf("%w (last error: %w)", ctx.Err(), err))
		case <-time.After(backoff):
			backoff = min(2*backoff, time.Second)
		}
	}
}

// retriableMetadataError reports whether a metadata failure may heal by itself (an auto-created topic
// without a leader yet, a broker restarting) rather than needing a setting to change.
func retriableMetadataError(err error) bool {
	if errors.Is(err, ErrSecurity) {
		return false
	}
	var kerr kafkago.Error
	if errors.As(err, &kerr) {
		return kerr.Temporary()
	}
	var nerr net.Error
	return errors.As(err, &nerr) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// refreshMetadata asks for topics' partitions and leaders and the brokers' addresses, and records them.
// A topic that has no partitions yet, or whose partitions lack a leader, is recorded only once it has
// them all (a just-created topic), so append waits for it. An error of the topic itself is returned.
func (p *producer) refreshMetadata(ctx context.Context, topics []string) error {
	msg, err := p.meta.roundTrip(ctx, &metadataAPI.Request{TopicNames: topics, AllowAutoTopicCreation: true}, p.settings.requestTimeout)
	if err != nil {
		return err
	}
	resp, ok := msg.(*metadataAPI.Response)
	if !ok {
		return fmt.Errorf("a %T answered a metadata request", msg)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.metaAt = time.Now()
	for _, b := range resp.Brokers {
		p.brokers[b.NodeID] = net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
	}
	var errs []error
	for _, t := range resp.Topics {
		if t.ErrorCode != 0 {
			errs = append(errs, fmt.Errorf("topic %q: %w", t.Name, kafkago.Error(t.ErrorCode)))
			continue
		}
		if len(t.Partitions) == 0 {
			continue
		}
		leaders := make([]int32, len(t.Partitions))
		for i := range leaders {
			leaders[i] = -1
		}
		for _, part := range t.Partitions {
			if int(part.PartitionIndex) < len(leaders) && part.ErrorCode == 0 {
				leaders[part.PartitionIndex] = part.LeaderID
			}
		}
		if old, known := p.topics[t.Name]; known || !slicesContains(leaders, -1) {
			if known && len(old.leaders) > len(leaders) {
				continue // an answer from a broker that has not heard of added partitions yet
			}
			p.topics[t.Name] = &topicMeta{leaders: leaders}
		}
	}
	return errors.Join(errs...)
}

func slicesContains(s []int32, v int32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// close makes the loop send every batch without waiting for linger.ms and exit once all are resolved.
func (p *producer) close() {
	p.mu.Lock()
	p.closing = true
	p.mu.Unlock()
	p.signal()
}

// run is the sender loop; see producer.
func (p *producer) run() {
	defer close(p.stopped)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next, done := p.step(time.Now())
		if done {
			p.shutdown(nil)
			return
		}
		timer.Reset(max(time.Until(next), 0))
		select {
		case <-p.wake:
		case call := <-p.results:
			p.handle(call)
		case err := <-p.metaDone:
			p.metaPending = false
			p.metaFailures = failures(p.log, "kafka metadata refresh failed; retrying", p.metaFailures, err, p.settings.brokers)
			if err != nil {
				p.metaRetryAt = time.Now().Add(p.settings.backoffMin)
			}
		case r := <-p.idDone:
			p.applyIdentity(r)
		case err := <-p.addDone:
			p.addPending = false
			p.addFailures = failures(p.log, "kafka AddPartitionsToTxn failed; retrying", p.addFailures, err, p.settings.brokers)
			if err != nil {
				p.addRetryAt = time.Now().Add(p.settings.backoffMin)
			}
		case <-timer.C:
		case <-p.abandoned.Done():
			p.shutdown(ErrClosed)
			return
		}
	}
}

// step does what can be done now and returns when it must look again, or done when closing and nothing
// is left.
func (p *producer) step(now time.Time) (next time.Time, done bool) {
	next = now.Add(time.Hour)
	soon := func(t time.Time) {
		if t.Before(next) {
			next = t
		}
	}
	var finished []*batch

	p.mu.Lock()
	idempotent := p.settings.idempotent
	pending := false // batches waiting
	for _, ps := range p.order {
		if ps.open != nil {
			if p.closing || p.draining > 0 || !now.Before(ps.open.created.Add(p.settings.linger)) {
				ps.closeOpen()
			} else {
				soon(ps.open.created.Add(p.settings.linger))
				pending = true
			}
		}
		if len(ps.queue) > 0 {
			pending = true
		}
		// Only the partition's next batch to send can be due for giving up: the ones behind it are
		// younger and have been tried no more often, and it is checked again each time it comes back.
		for b, _ := ps.sendable(); b != nil && p.giveUpIfDue(b, now); b, _ = ps.sendable() {
		}
		finished = ps.popResolved(finished)
	}

	if p.fatal != nil {
		for _, ps := range p.order {
			ps.closeOpen()
			for _, b := range ps.queue {
				if !b.inflight && !b.resolved {
					b.resolved, b.err = true, p.fatal
				}
			}
			finished = ps.popResolved(finished)
		}
	}
	if p.txn != nil && p.bumpWanted && p.fatal == nil {
		p.fatal = errTransactionBroken
		p.log.Error("kafka transactional producer cannot go on", "transactional_id", p.settings.transactionalID, "error", p.fatal)
	}
	ready := pending && p.fatal == nil
	if ready && idempotent && p.identity.id == noProducerID && !p.idPending && !now.Before(p.idRetryAt) {
		p.requestIdentity()
	}
	if ready && p.bumpWanted && p.unreported == 0 && !p.idPending && !now.Before(p.idRetryAt) {
		p.bumpEpoch()
	}
	if !p.idPending && now.Before(p.idRetryAt) {
		soon(p.idRetryAt)
	}
	canSend := ready && (!idempotent || (p.identity.id != noProducerID && !p.bumpWanted && !p.idPending))
	if canSend {
		p.sendReady(now, soon)
	}
	if (len(p.staleMeta) > 0 || (len(p.topics) > 0 && now.Sub(p.metaAt) > p.settings.metadataTTL)) && !p.metaPending {
		if now.Before(p.metaRetryAt) {
			soon(p.metaRetryAt)
		} else {
			p.requestMetadata()
		}
	}
	if len(p.topics) > 0 {
		soon(p.metaAt.Add(p.settings.metadataTTL))
	}
	if pending {
		p.reportStall(now, soon)
	}
	done = p.closing && !pending && p.unreported == 0
	p.mu.Unlock()

	for _, b := range finished {
		p.finish(b)
	}
	return next, done
}

// giveUpIfDue fails b for good when retries or delivery.timeout.ms ran out, and reports whether it did.
// Called with mu held, for a batch neither in flight nor resolved.
func (p *producer) giveUpIfDue(b *batch, now time.Time) bool {
	expired := now.After(b.created.Add(p.settings.deliveryTimeout))
	switch {
	case !b.sent && expired:
		b.resolved, b.err = true, fmt.Errorf("not sent within delivery.timeout.ms (%d)", p.settings.deliveryTimeout.Milliseconds())
	case b.sent && (b.attempts > p.settings.retries || expired):
		b.resolved, b.err = true, fmt.Errorf("giving up after %d attempts (retries=%d, delivery.timeout.ms=%d): %w",
			b.attempts, p.settings.retries, p.settings.deliveryTimeout.Milliseconds(), b.lastErr)
		// It was sent: the broker may hold it or not, so its sequence is unresolved, and the
		// batches behind it can only go on under a new epoch.
		if p.settings.idempotent {
			p.bumpWanted = true
		}
	default:
		return false
	}
	return true
}

// popResolved moves the resolved batches at the head of the queue to out, in order.
func (ps *partitionState) popResolved(out []*batch) []*batch {
	n := 0
	for n < len(ps.queue) && ps.queue[n].resolved {
		n++
	}
	if n == 0 {
		return out
	}
	out = append(out, ps.queue[:n]...)
	clear(ps.queue[:n])
	ps.queue = ps.queue[n:]
	return out
}

// sendReady builds requests from the batches that may go now and hands them to their leaders'
// connections. Called by the loop with mu held.
func (p *producer) sendReady(now time.Time, soon func(time.Time)) {
	type plan struct {
		conn    *brokerConn
		batches []*batch
		size    int64
	}
	plans := map[int32]*plan{}
	var joining []topicPartition // partitions whose batches wait to join the open transaction
	n := len(p.order)
	for i := range n {
		ps := p.order[(p.rotate+i)%n]
		b, inflight := ps.sendable()
		limit := p.settings.maxInFlight
		if p.settings.idempotent && ps.confirmed != p.identity {
			limit = 1 // see partitionState.confirmed
		}
		if b == nil || inflight >= limit {
			continue
		}
		if b.retryAt.After(now) {
			soon(b.retryAt)
			continue
		}
		if p.txn != nil && !ps.inTxn {
			joining = append(joining, ps.tp)
			continue
		}
		meta := p.topics[ps.tp.topic]
		leader := int32(-1)
		if meta != nil && int(ps.tp.partition) < len(meta.leaders) {
			leader = meta.leaders[ps.tp.partition]
		}
		addr, known := p.brokers[leader]
		if leader < 0 || !known {
			p.staleMeta[ps.tp.topic] = true
			continue
		}
		pl := plans[leader]
		if pl == nil {
			c := p.conns[leader]
			// A connection whose failure has no call left to report it is replaced here; one with calls
			// outstanding is replaced once they are reported (handle).
			// So is one idle for connections.max.idle.ms, before the broker closes it under a request.
			if c != nil && (c.addr != addr || (c.inflight == 0 && (c.failure() != nil || now.Sub(c.lastUsed) > p.settings.idleTimeout))) {
				c.retire(errors.New("replaced"))
				c = nil
			}
			if c == nil {
				c = newBrokerConn(p.abandoned, leader, addr, p.dialer, p.settings.requestTimeout, p.settings.acks, p.settings.maxInFlight, p.results)
				p.conns[leader] = c
			}
			pl = &plan{conn: c}
			plans[leader] = pl
		}
		if !pl.conn.usable() || (len(pl.batches) > 0 && pl.size+b.size > p.settings.maxRequestSize) {
			continue
		}
		if err := p.prepare(ps, b); err != nil {
			b.resolved, b.err = true, err
			continue
		}
		pl.batches = append(pl.batches, b)
		pl.size += b.size
		b.inflight, b.sent = true, true
		b.attempts++
	}
	p.rotate++
	if len(joining) > 0 && !p.addPending {
		if now.Before(p.addRetryAt) {
			soon(p.addRetryAt)
		} else {
			p.requestAddPartitions(joining)
		}
	}
	sent := false
	for _, pl := range plans {
		if len(pl.batches) == 0 {
			continue
		}
		pl.conn.send(&produceCall{req: p.request(pl.batches), batches: pl.batches})
		pl.conn.lastUsed = now
		p.unreported++
		sent = true
	}
	if sent {
		p.progressAt = now
		p.signal() // the partitions' next batches may fit into the connections' free slots
	}
}

// reportStall logs the loop's state once batches have waited stallReport with no produce call handed over
// or reported, and again every stallReport while that lasts. Called by the loop with mu held.
func (p *producer) reportStall(now time.Time, soon func(time.Time)) {
	// Waiting starts at the last progress, or when the oldest batch held was made if that is later (the
	// producer was idle before it).
	var oldest time.Time
	for _, ps := range p.order {
		head := ps.open
		for _, b := range ps.queue {
			if !b.resolved {
				head = b
				break
			}
		}
		if head != nil && (oldest.IsZero() || head.created.Before(oldest)) {
			oldest = head.created
		}
	}
	since := maxTime(p.progressAt, oldest)
	if now.Sub(since) < stallReport {
		soon(since.Add(stallReport))
		return
	}
	if now.Sub(p.stalledAt) >= stallReport {
		p.stalledAt = now
		p.log.Warn("kafka producer holds batches and has sent none for a while; what it waits for:", p.stallState(now)...)
	}
	soon(p.stalledAt.Add(stallReport))
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// stallState describes what decides whether the loop sends: the producer id, the background requests,
// the connections and the head batch of each partition (the first few).
func (p *producer) stallState(now time.Time) []any {
	state := []any{
		"last_progress", now.Sub(p.progressAt).Round(time.Second), "producer_id", p.identity.id, "epoch", p.identity.epoch,
		"epoch_bump_wanted", p.bumpWanted, "producer_id_pending", p.idPending, "unreported_calls", p.unreported,
		"metadata_pending", p.metaPending, "stale_topics", len(p.staleMeta), "brokers", fmt.Sprint(p.brokers),
	}
	var conns []string
	for id, c := range p.conns {
		conns = append(conns, fmt.Sprintf("broker %d %s: %d in flight, retired %v, failure %v", id, c.addr, c.inflight, c.retired, c.failure()))
	}
	state = append(state, "connections", conns)
	var heads []string
	for _, ps := range p.order {
		if len(heads) == 5 {
			break
		}
		for _, b := range ps.queue {
			if b.resolved {
				continue
			}
			leader := int32(-1)
			if meta := p.topics[ps.tp.topic]; meta != nil && int(ps.tp.partition) < len(meta.leaders) {
				leader = meta.leaders[ps.tp.partition]
			}
			heads = append(heads, fmt.Sprintf("%s-%d: %d queued, head in flight %v, attempts %d, retry in %s, leader %d, confirmed %v, last error %v",
				ps.tp.topic, ps.tp.partition, len(ps.queue), b.inflight, b.attempts, b.retryAt.Sub(now).Round(time.Millisecond),
				leader, ps.confirmed == p.identity, b.lastErr))
			break
		}
	}
	return append(state, "partitions", heads)
}

// sendable returns the partition's first batch that is neither in flight nor resolved — the next to go
// on the wire, since every batch before it is in flight or done — and how many are in flight.
func (ps *partitionState) sendable() (*batch, int) {
	inflight := 0
	for _, b := range ps.queue {
		switch {
		case b.inflight:
			inflight++
		case !b.resolved:
			return b, inflight
		}
	}
	return nil, inflight
}

// prepare encodes b the first time it is sent and stamps it with the current identity and, the first
// time under this identity, the partition's next sequence.
func (p *producer) prepare(ps *partitionState, b *batch) error {
	if b.encoded == nil {
		attributes := protocol.Attributes(p.settings.compression)
		if p.txn != nil {
			attributes |= protocol.Transactional
		}
		enc, err := encodeBatch(b.recs, attributes)
		if err != nil {
			return err
		}
		b.encoded = enc
		// The encoded batch is what retries resend: the records' own bytes can go now, which halves
		// what a batch in flight keeps (tokens stays, one per record, for the count and the callbacks).
		clear(b.recs)
		b.recs = nil
	}
	if !p.settings.idempotent {
		return nil
	}
	if b.seq < 0 || b.stamped != p.identity {
		b.seq = ps.nextSeq
		ps.nextSeq = nextSequence(ps.nextSeq, len(b.tokens))
		b.stamped = p.identity
		stampBatch(b.encoded, p.identity.id, p.identity.epoch, b.seq)
	}
	return nil
}

// nextSequence is seq advanced by n records; sequences wrap from MaxInt32 to 0, as the broker expects.
func nextSequence(seq int32, n int) int32 {
	return int32((int64(seq) + int64(n)) % (1 << 31))
}

func (p *producer) request(batches []*batch) *rawproduce.Request {
	req := &rawproduce.Request{Acks: p.settings.acks, Timeout: int32(p.settings.requestTimeout.Milliseconds()), TransactionalID: p.settings.transactionalID}
	for _, b := range batches {
		var t *rawproduce.RequestTopic
		for i := range req.Topics {
			if req.Topics[i].Topic == b.tp.topic {
				t = &req.Topics[i]
			}
		}
		if t == nil {
			req.Topics = append(req.Topics, rawproduce.RequestTopic{Topic: b.tp.topic})
			t = &req.Topics[len(req.Topics)-1]
		}
		t.Partitions = append(t.Partitions, rawproduce.RequestPartition{
			Partition: b.tp.partition,
			RecordSet: protocol.RawRecordSet{Reader: bytes.NewReader(b.encoded)},
		})
	}
	return req
}

// handle applies the outcome of one produce request. Called by the loop.
func (p *producer) handle(call *produceCall) {
	now := time.Now()
	p.progressAt = now
	call.conn.inflight--
	p.unreported--
	p.mu.Lock()
	if call.err != nil {
		// The connection failed before the answer: each batch may or may not have been appended.
		// Idempotence makes the retry safe; the leader may have moved, so ask.
		if p.conns[call.conn.id] == call.conn {
			delete(p.conns, call.conn.id)
		}
		call.conn.retire(call.err)
		for _, b := range call.batches {
			if errors.Is(call.err, ErrSecurity) {
				// A TLS or SASL refusal does not heal by retrying, as in the Java producer.
				b.inflight, b.resolved, b.err = false, true, call.err
				if p.settings.idempotent {
					p.bumpWanted = true // the batch's sequence may be a gap; see the broker errors below
				}
				continue
			}
			p.retry(b, now, call.err)
			p.staleMeta[b.tp.topic] = true
		}
		p.mu.Unlock()
		p.signal()
		return
	}
	for _, b := range call.batches {
		code, msg, found := partitionAnswer(call, b.tp)
		b.inflight = false
		switch {
		case call.resp == nil: // acks=0
			b.resolved = true
		case !found:
			p.retry(b, now, fmt.Errorf("broker %d did not answer for the partition", call.conn.id))
		case code == 0 || code == duplicateSequenceNumber:
			b.resolved = true
			if ps := p.parts[b.tp]; p.settings.idempotent && b.stamped == p.identity {
				ps.confirmed = p.identity
			}
		case code == outOfOrderSequenceNumber || code == unknownProducerID:
			// Retried in any case. If it is the partition's first unacknowledged batch, the broker
			// lost track of the sequence (log truncation, expired producer state), not merely a batch
			// ahead of us: start a new epoch so sequences can begin again. Otherwise the broker is
			// waiting for an earlier batch, whose own attempts count: this one's does not, so that
			// retries running out for the earlier batch do not fail the ones behind it too.
			head := p.isHead(b)
			if p.settings.idempotent && head {
				p.bumpWanted = true
			}
			if !head && code == outOfOrderSequenceNumber {
				b.attempts--
			}
			p.retry(b, now, brokerError(code, msg))
		case code.Temporary():
			if staleMetadataErrors[code] {
				p.staleMeta[b.tp.topic] = true
			}
			p.retry(b, now, brokerError(code, msg))
		case p.txn != nil && (code == kafkago.ProducerFenced || code == kafkago.InvalidProducerEpoch):
			b.resolved, b.err = true, fencedError(p.settings.transactionalID, code)
			if p.fatal == nil {
				p.fatal = b.err
			}
		default:
			b.resolved, b.err = true, brokerError(code, msg)
			if p.settings.idempotent {
				// The batch's sequence numbers are a gap the broker would wait for forever.
				p.bumpWanted = true
			}
		}
	}
	p.mu.Unlock()
	p.signal()
}

func brokerError(code kafkago.Error, msg string) error {
	if msg != "" {
		return fmt.Errorf("%w: %s", code, msg)
	}
	return code
}

func partitionAnswer(call *produceCall, tp topicPartition) (kafkago.Error, string, bool) {
	if call.resp == nil {
		return 0, "", true
	}
	for _, t := range call.resp.Topics {
		if t.Topic != tp.topic {
			continue
		}
		for _, part := range t.Partitions {
			if part.Partition == tp.partition {
				return kafkago.Error(part.ErrorCode), part.ErrorMessage, true
			}
		}
	}
	return 0, "", false
}

// isHead reports whether b is the first unresolved batch of its partition.
func (p *producer) isHead(b *batch) bool {
	for _, x := range p.parts[b.tp].queue {
		if !x.resolved {
			return x == b
		}
	}
	return false
}

// retry marks b for another attempt after its backoff; step gives it up when the bounds are reached.
func (p *producer) retry(b *batch, now time.Time, err error) {
	b.inflight = false
	b.lastErr = err
	backoff := p.settings.backoffMin << min(max(b.attempts-1, 0), 20)
	if backoff > p.settings.backoffMax || backoff <= 0 {
		backoff = p.settings.backoffMax
	}
	b.retryAt = now.Add(backoff)
	if b.attempts == 1 || b.attempts%20 == 0 {
		p.log.Debug("kafka produce will be retried", "topic", b.tp.topic, "partition", b.tp.partition, "attempt", b.attempts, "error", err)
	}
}

// requestMetadata refreshes the stale topics (or all known, when the metadata is old) in the background.
// Called by the loop with mu held.
func (p *producer) requestMetadata() {
	topics := make([]string, 0, len(p.topics))
	for t := range p.topics {
		topics = append(topics, t)
	}
	for t := range p.staleMeta {
		if _, known := p.topics[t]; !known {
			topics = append(topics, t)
		}
	}
	clear(p.staleMeta)
	p.metaPending = true
	go func() {
		ctx, cancel := context.WithTimeout(p.abandoned, p.settings.requestTimeout)
		defer cancel()
		p.metaDone <- p.refreshMetadata(ctx, topics)
	}()
}

// bumpEpoch starts a new epoch once nothing is in flight. An idempotent producer without a
// transactional.id bumps its epoch itself, as the Java producer does (KIP-360: the broker accepts a
// higher epoch starting at sequence 0 and drops the old epoch's sequence state); when the epoch is
// exhausted it asks InitProducerId for a new id. A transactional producer will ask InitProducerId with
// its current id and epoch here instead. Called by the loop with mu held.
func (p *producer) bumpEpoch() {
	if p.identity.epoch == math.MaxInt16 {
		p.requestIdentity()
		return
	}
	p.applyIdentityLocked(identity{id: p.identity.id, epoch: p.identity.epoch + 1})
}

// requestIdentity asks InitProducerId for a new producer id: of any broker without a transactional.id,
// of its coordinator with one (initTransactions). Called by the loop with mu held.
func (p *producer) requestIdentity() {
	p.idPending = true
	if p.txn != nil {
		go func() {
			ctx, cancel := context.WithTimeout(p.abandoned, p.settings.requestTimeout)
			defer cancel()
			id, err := p.txn.initTransactions(ctx, p.settings.transactionTimeout)
			p.idDone <- identityResult{identity: id, err: err}
		}()
		return
	}
	req := &initproducerid.Request{TransactionTimeoutMs: -1, ProducerID: noProducerID, ProducerEpoch: noProducerID}
	go func() {
		ctx, cancel := context.WithTimeout(p.abandoned, p.settings.requestTimeout)
		defer cancel()
		msg, err := p.meta.roundTrip(ctx, req, p.settings.requestTimeout)
		var r identityResult
		switch resp, _ := msg.(*initproducerid.Response); {
		case err != nil:
			r.err = err
		case resp == nil:
			r.err = fmt.Errorf("a %T answered InitProducerId", msg)
		case resp.ErrorCode != 0:
			r.err = kafkago.Error(resp.ErrorCode)
		default:
			r.identity = identity{id: resp.ProducerID, epoch: resp.ProducerEpoch}
		}
		p.idDone <- r
	}()
}

// applyIdentity takes a new producer id or epoch: sequences start again from 0 on every partition, and
// every unacknowledged batch is restamped when it is next sent. Called by the loop.
func (p *producer) applyIdentity(r identityResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.idPending = false
	if r.err != nil {
		var kerr kafkago.Error
		if errors.Is(r.err, ErrSecurity) || (errors.As(r.err, &kerr) && !kerr.Temporary()) {
			// CLUSTER_AUTHORIZATION_FAILED and the like: no write can succeed. The Java producer fails
			// for good too; the fix is an ACL, or enable.idempotence=false.
			p.fatal = fmt.Errorf("kafka: getting a producer id for enable.idempotence or transactional.id (InitProducerId): %w", r.err)
			p.log.Error("kafka producer cannot go on", "error", p.fatal)
			return
		}
		p.idFailures = failures(p.log, "kafka InitProducerId failed; retrying", p.idFailures, r.err, p.settings.brokers)
		p.idRetryAt = time.Now().Add(p.settings.backoffMin)
		return
	}
	p.idFailures = 0
	p.applyIdentityLocked(r.identity)
}

// failures counts consecutive failures of a background request and logs the first and every 50th, so
// that an outage is reported without a line per retry. It returns the new count: 0 after a success.
func failures(log *slog.Logger, msg string, n int, err error, brokers []string) int {
	if err == nil {
		return 0
	}
	if n++; n == 1 || n%50 == 0 {
		log.Warn(msg, "brokers", brokers, "failures", n, "error", err)
	}
	return n
}

func (p *producer) applyIdentityLocked(id identity) {
	if p.identity.id != noProducerID {
		p.log.Info("kafka producer starts a new epoch: unacknowledged batches get new sequences",
			"producer_id", id.id, "epoch", id.epoch, "previous_id", p.identity.id, "previous_epoch", p.identity.epoch)
	}
	p.identity = id
	p.bumpWanted = false
	for _, ps := range p.order {
		ps.nextSeq = 0
	}
}

// requestAddPartitions adds parts to the open transaction in the background; their batches go once
// they are in. A refusal other than a retriable one (a fence, a missing ACL) fails the producer.
// Called by the loop with mu held.
func (p *producer) requestAddPartitions(parts []topicPartition) {
	p.addPending = true
	id := p.identity
	go func() {
		ctx, cancel := context.WithTimeout(p.abandoned, p.settings.requestTimeout)
		defer cancel()
		err := p.txn.addPartitions(ctx, id, parts)
		p.mu.Lock()
		switch {
		case err == nil && p.identity == id:
			for _, tp := range parts {
				p.parts[tp].inTxn = true
			}
		case err != nil && !retriableMetadataError(err) && p.fatal == nil:
			p.fatal = err
			p.log.Error("kafka transactional producer cannot go on", "transactional_id", p.settings.transactionalID, "error", err)
		}
		p.mu.Unlock()
		if err != nil && !retriableMetadataError(err) {
			err = nil // not retried: the producer failed
		}
		p.addDone <- err
	}()
}

// sendOpen closes every partition's open batch, so the loop sends it without waiting for the rest of
// linger.ms.
func (p *producer) sendOpen() {
	p.mu.Lock()
	for _, ps := range p.order {
		ps.closeOpen()
	}
	p.mu.Unlock()
	p.signal()
}

// drain makes the loop send every open batch without waiting for linger.ms until the returned func is
// called: a commit waits for all of its transaction's records, so lingering would only delay it.
func (p *producer) drain() (done func()) {
	p.mu.Lock()
	p.draining++
	p.mu.Unlock()
	p.signal()
	return func() {
		p.mu.Lock()
		p.draining--
		p.mu.Unlock()
	}
}

// endTransaction commits the open transaction once every batch of it is resolved (the caller flushed
// and sends nothing meanwhile). A transaction without a partition has nothing to commit. A failure
// fails the producer: the transaction's fate is then the coordinator's (the next InitProducerId of the
// transactional.id aborts it if it did not commit).
func (p *producer) endTransaction(ctx context.Context) error {
	p.mu.Lock()
	joined := 0
	for _, ps := range p.order {
		if ps.open != nil || len(ps.queue) > 0 {
			p.mu.Unlock()
			return fmt.Errorf("kafka: committing a transaction with batches of %s/%d not yet acknowledged", ps.tp.topic, ps.tp.partition)
		}
		if ps.inTxn {
			joined++
		}
	}
	id, fatal := p.identity, p.fatal
	p.mu.Unlock()
	if fatal != nil {
		return fmt.Errorf("%w: %w", ErrWriterFailed, fatal)
	}
	if joined == 0 {
		return nil
	}
	err := p.txn.endTransaction(ctx, id, true)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		if p.fatal == nil {
			p.fatal = err
		}
		return err
	}
	for _, ps := range p.order {
		ps.inTxn = false
	}
	return nil
}

// shutdown ends the loop: with err (Close gave up) every unresolved batch fails with it; the connections
// are retired and their outstanding calls drained so no goroutine is left writing to results.
func (p *producer) shutdown(err error) {
	p.abandon() // ends the helpers' requests and the dials
	for _, c := range p.conns {
		c.retire(ErrClosed)
	}
	for ; p.unreported > 0; p.unreported-- {
		call := <-p.results // prompt: every connection is closed
		call.conn.retire(ErrClosed)
	}
	p.meta.close()
	if p.txn != nil {
		p.txn.close()
	}
	if err == nil {
		return
	}
	var failed []*batch
	p.mu.Lock()
	p.closing = true
	for _, ps := range p.order {
		ps.closeOpen()
		for _, b := range ps.queue {
			b.resolved, b.err = true, err
		}
		failed = ps.popResolved(failed)
	}
	p.mu.Unlock()
	for _, b := range failed {
		p.finish(b)
	}
}

// finish reports a resolved batch, which no request refers to any more, and recycles its buffer.
// Called by the loop, outside mu, in queue order per partition.
func (p *producer) finish(b *batch) {
	p.resolve(b, b.err)
	releaseEncoded(b.encoded)
	b.encoded = nil
}

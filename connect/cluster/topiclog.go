package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/fetch"
)

// LogConfig says where a TopicLog lives.
type LogConfig struct {
	Brokers []string
	// Transport carries every request of the log, e.g. one set up with TLS and SASL and shared by
	// all of a worker's clients. nil uses a kafka-go Transport with its defaults, of the log's own,
	// closed with the log.
	Transport kafkago.RoundTripper
	// ClientID is sent with every request of the log's own transport; Connect uses
	// "<group.id>-configs" and the like. A Transport given above sends its own.
	ClientID string
	Topic    TopicSpec
	Logger   *slog.Logger
	// ReadCommitted reads with isolation.level=read_committed, as Connect's offsets consumer does under
	// exactly.once.source.support=enabled: the records of aborted transactions (a fenced or killed
	// task's) are skipped, and the end ReadToEnd waits for is the last stable offset.
	ReadCommitted bool
}

// Record is one record read from a TopicLog. Key and Value are nil when null: a nil Value is a
// tombstone, an empty one is not.
type Record struct {
	Topic      string
	Partition  int32
	Offset     int64
	Key, Value []byte
}

// TopicLog is a compacted topic read from its beginning and then tailed, and written with acks=all:
// Connect's KafkaBasedLog. Every record read, its own writes included, goes to the apply function
// given to OpenLog, in partition order, from a single goroutine.
//
// Writes use the producer settings of Connect's internal topics: acks=all, no idempotence, one
// request in flight, and Java's murmur2 placement of keyed records, so a key lands in the partition
// a Java worker would pick.
//
// The log reads and writes the partitions the topic had when it was opened, as KafkaBasedLog
// assigns its consumer the partitions it found at start: every record it writes goes to a
// partition it reads.
type TopicLog struct {
	cl         client
	topic      string
	partitions int32
	all        []int // 0 … partitions-1
	log        *slog.Logger
	isolation  kafkago.IsolationLevel

	// writeMu keeps one produce request in flight (max.in.flight.requests.per.connection=1), so
	// the records of one partition are written in the order Write was called, retries included.
	writeMu sync.Mutex

	mu        sync.Mutex
	positions map[int32]int64 // next offset to read per partition; only tail moves them
	advanced  chan struct{}   // closed and replaced whenever positions move

	life context.Context // ends with Close: stops tail and any Write under way
	stop context.CancelFunc
	done chan struct{} // closed when tail returned
}

// The fetch settings of Connect's consumers (fetch.max.wait.ms, fetch.max.bytes,
// max.partition.fetch.bytes).
const (
	fetchMaxWait           = 500 * time.Millisecond
	fetchMaxBytes          = 50 << 20
	fetchPartitionMaxBytes = 1 << 20
)

// OpenLog creates the topic if it is missing (or checks it), reads it to its end through apply, and
// keeps tailing it until Close. apply must not block for long and must not call back into the log.
func OpenLog(ctx context.Context, cfg LogConfig, apply func(Record)) (*TopicLog, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	cl := newClient(cfg.Brokers, cfg.Transport, cfg.ClientID, []string{cfg.Topic.Name})
	partitions, err := ensureTopic(ctx, cl, cfg.Topic)
	if err != nil {
		cl.close()
		return nil, err
	}
	all := make([]int, partitions)
	for p := range all {
		all[p] = p
	}
	life, stop := context.WithCancel(context.Background())
	l := &TopicLog{
		cl:         cl,
		topic:      cfg.Topic.Name,
		partitions: partitions,
		all:        all,
		log:        logger.With("topic", cfg.Topic.Name),
		isolation:  kafkago.ReadUncommitted,
		positions:  map[int32]int64{},
		advanced:   make(chan struct{}),
		life:       life,
		stop:       stop,
		done:       make(chan struct{}),
	}
	if cfg.ReadCommitted {
		l.isolation = kafkago.ReadCommitted
	}
	go l.tail(apply)
	if err := l.ReadToEnd(ctx); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// Partitions is the topic's partition count as found when the log was opened.
func (l *TopicLog) Partitions() int32 { return l.partitions }

// transientFetchErrors is how many fetches in a row may fail with an error that may pass before it
// is worth a warning (about 5 s): a new topic's leader getting ready and a leader moving cause them.
const transientFetchErrors = 20

// tail fetches from every partition's position until Close. Positions start at 0, the beginning of
// a compacted topic; a partition whose beginning is gone starts over from its log start offset.
func (l *TopicLog) tail(apply func(Record)) {
	defer close(l.done)
	failures := 0
	for l.life.Err() == nil {
		err := l.poll(apply)
		if err == nil {
			failures = 0
			continue
		}
		if l.life.Err() != nil {
			return
		}
		failures++
		level := slog.LevelDebug
		if failures == 1 && !retriable(err) || failures == transientFetchErrors {
			level = slog.LevelWarn
		}
		l.log.Log(l.life, level, "reading internal topic", "err", err, "failures", failures)
		_ = sleep(l.life, retryBackoff)
	}
}

// poll fetches once from every partition's position, one request per partition leader (kafka-go's
// fetch request goes to a single broker), the requests sent together, and applies what they return.
// The leaders come from the transport's metadata cache; a request sent to a former leader fails
// and is sent again after the cache caught up.
func (l *TopicLog) poll(apply func(Record)) error {
	t, err := topicMetadata(l.life, l.cl, l.topic)
	if err != nil {
		return err
	}
	var errs []error
	byLeader := map[int32][]fetch.RequestPartition{}
	l.mu.Lock()
	for _, p := range t.Partitions {
		switch {
		case p.PartitionIndex >= l.partitions: // added after the log was opened: not read
		case p.LeaderID < 0:
			errs = append(errs, fmt.Errorf("%s[%d]: %w", l.topic, p.PartitionIndex, kafkago.LeaderNotAvailable))
		default:
			byLeader[p.LeaderID] = append(byLeader[p.LeaderID], fetch.RequestPartition{
				Partition:          p.PartitionIndex,
				CurrentLeaderEpoch: -1,
				FetchOffset:        l.positions[p.PartitionIndex],
				LogStartOffset:     -1,
				PartitionMaxBytes:  fetchPartitionMaxBytes,
			})
		}
	}
	l.mu.Unlock()

	type result struct {
		resp kafkago.Response
		err  error
	}
	results := make(chan result, len(byLeader)) // buffered: no sender waits once poll returns
	for _, partitions := range byLeader {
		go func() {
			resp, err := l.cl.roundTrip(l.life, fetchMaxWait+requestTimeout, &fetch.Request{
				ReplicaID:   -1,
				MaxWaitTime: int32(fetchMaxWait.Milliseconds()),
				MinBytes:    1,
				MaxBytes:    fetchMaxBytes,
				// read_uncommitted, Connect's default for KafkaBasedLog, unless ReadCommitted.
				IsolationLevel: int8(l.isolation),
				// Session 0 with epoch -1 is a full fetch outside any fetch session (KIP-227).
				SessionID:    0,
				SessionEpoch: -1,
				Topics:       []fetch.RequestTopic{{Topic: l.topic, Partitions: partitions}},
			})
			results <- result{resp, err}
		}()
	}
	for range byLeader {
		r := <-results
		if r.err != nil {
			errs = append(errs, fmt.Errorf("fetch from topic %s: %w", l.topic, r.err))
			continue
		}
		resp := r.resp.(*fetch.Response)
		if err := kafkaError(resp.ErrorCode); err != nil {
			errs = append(errs, fmt.Errorf("fetch from topic %s: %w", l.topic, err))
			continue
		}
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				if err := l.consume(rp, apply); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// consume applies one partition's fetched records from the partition's position on and moves the
// position past them. The broker returns whole batches, so a batch may begin before the position.
// Control batches (transaction markers) are not applied but take offsets, and are read past: a
// partition ending in one still counts as read to its end. Under read_committed the broker returns
// the records of aborted transactions too, with the list of those transactions: their batches are
// read past unapplied, as the Java consumer skips them (from a transaction's first offset to its
// abort marker).
func (l *TopicLog) consume(p fetch.ResponsePartition, apply func(Record)) error {
	switch err := kafkaError(p.ErrorCode); {
	case errors.Is(err, kafkago.OffsetOutOfRange):
		// The partition's first records are gone (deleted records, or a topic that also deletes):
		// start from the first one left, as Connect's consumers do (auto.offset.reset=earliest).
		starts, err := listOffsets(l.life, l.cl, l.topic, []int{int(p.Partition)}, kafkago.FirstOffset, l.isolation)
		if err != nil {
			return fmt.Errorf("restart %s[%d] from its log start: %w", l.topic, p.Partition, err)
		}
		l.advance(p.Partition, starts[p.Partition])
		return nil
	case err != nil:
		return fmt.Errorf("fetch from %s[%d]: %w", l.topic, p.Partition, err)
	}
	var batches []protocol.RecordReader
	switch rs := p.RecordSet.Records.(type) {
	case nil: // nothing new
	case *protocol.RecordStream: // how kafka-go decodes a fetched record set: its batches in order
		batches = rs.Records
	default:
		batches = []protocol.RecordReader{rs}
	}
	l.mu.Lock()
	start := l.positions[p.Partition]
	l.mu.Unlock()
	next := start
	aborted := newAbortedTransactions(p.AbortedTransactions)
	var err error
	for _, batch := range batches {
		skip := aborted.skips(batch)
		if next, err = l.applyBatch(p.Partition, batch, next, skip, apply); err != nil {
			break
		}
	}
	if next != start {
		l.advance(p.Partition, next)
	}
	return err
}

// applyBatch applies one batch's records from offset next on and returns the offset after the last
// one read. After an error it returns the bad record's offset, so that the records before it count
// as read and the next fetch starts from it. A skipped batch (an aborted transaction's) is read past.
func (l *TopicLog) applyBatch(partition int32, batch protocol.RecordReader, next int64, skip bool, apply func(Record)) (int64, error) {
	_, control := batch.(*protocol.ControlBatch)
	control = control || skip
	for {
		r, err := batch.ReadRecord()
		switch {
		case errors.Is(err, io.EOF):
			return next, nil
		case err != nil:
			return next, fmt.Errorf("read %s[%d] at offset %d: %w", l.topic, partition, next, err)
		}
		key, keyErr := readBytes(r.Key)
		value, valueErr := readBytes(r.Value)
		switch {
		case keyErr != nil || valueErr != nil:
			return next, fmt.Errorf("read %s[%d] at offset %d: %w", l.topic, partition, r.Offset, errors.Join(keyErr, valueErr))
		case r.Offset < next: // the batch began before the position
		case control:
			next = r.Offset + 1
		default:
			apply(Record{Topic: l.topic, Partition: partition, Offset: r.Offset, Key: key, Value: value})
			next = r.Offset + 1
		}
	}
}

// abortedTransactions is what a read_committed fetch says about one partition's aborted transactions:
// the producers whose transactions starting at those offsets were aborted. skips is called for the
// fetched batches in order.
type abortedTransactions struct {
	pending []fetch.ResponseTransaction // by first offset, not yet reached
	open    map[int64]bool              // producers inside an aborted transaction, until its marker
}

func newAbortedTransactions(list []fetch.ResponseTransaction) *abortedTransactions {
	pending := slices.Clone(list)
	slices.SortFunc(pending, func(a, b fetch.ResponseTransaction) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	return &abortedTransactions{pending: pending, open: map[int64]bool{}}
}

// skips reports whether batch belongs to an aborted transaction. A transaction's first offset is the
// base offset of its first batch in the partition, and its abort marker (a control batch of the same
// producer) ends it.
func (a *abortedTransactions) skips(batch protocol.RecordReader) bool {
	var base, producer int64
	var transactional, control bool
	switch b := batch.(type) {
	case *protocol.RecordBatch:
		base, producer, transactional = b.BaseOffset, b.ProducerID, b.Attributes.Transactional()
	case *protocol.ControlBatch:
		base, producer, transactional, control = b.BaseOffset, b.ProducerID, true, true
	default:
		return false
	}
	for len(a.pending) > 0 && a.pending[0].FirstOffset <= base {
		a.open[a.pending[0].ProducerID] = true
		a.pending = a.pending[1:]
	}
	if !transactional || !a.open[producer] {
		return false
	}
	if control {
		delete(a.open, producer) // the abort marker: the producer's later batches are a new transaction
	}
	return true
}

// readBytes copies a record's key or value out of kafka-go's fetch buffer and releases its share of
// the buffer. nil (a null key, a tombstone) stays nil.
func readBytes(b protocol.Bytes) ([]byte, error) {
	if b == nil {
		return nil, nil
	}
	defer b.Close()
	return protocol.ReadAll(b)
}

// advance sets a partition's position and wakes ReadToEnd.
func (l *TopicLog) advance(partition int32, next int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.positions[partition] = next
	close(l.advanced)
	l.advanced = make(chan struct{})
}

// ReadToEnd blocks until every record written before the call was handed to apply: it takes each
// partition's end offset from the broker and waits for the reader to pass it. ctx bounds the wait.
func (l *TopicLog) ReadToEnd(ctx context.Context) error {
	ends, err := listOffsets(ctx, l.cl, l.topic, l.all, kafkago.LastOffset, l.isolation)
	if err != nil {
		return fmt.Errorf("reading topic %s to its end: %w", l.topic, err)
	}
	for {
		l.mu.Lock()
		caughtUp := true
		for p, end := range ends {
			if l.positions[p] < end {
				caughtUp = false
				break
			}
		}
		advanced := l.advanced
		l.mu.Unlock()
		if caughtUp {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("reading topic %s to its end: %w", l.topic, ctx.Err())
		case <-l.done:
			return fmt.Errorf("reading topic %s to its end: %w", l.topic, ErrClosed)
		case <-advanced:
		}
	}
}

// Message is one record to write: a nil Value is a tombstone.
type Message struct {
	Key, Value []byte
}

// Write produces msgs and returns once the broker acknowledged all of them with acks=all, or with
// the first error. Records of one partition are written in msgs' order, one produce request per
// partition. It does not wait for the records to be read back (see ReadToEnd).
func (l *TopicLog) Write(ctx context.Context, msgs ...Message) error {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if l.life.Err() != nil {
		return fmt.Errorf("write to topic %s: %w", l.topic, ErrClosed)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(l.life, cancel)() // Close abandons the write
	for _, part := range l.place(msgs) {
		err := l.produce(ctx, part.partition, part.msgs)
		if err != nil && l.life.Err() != nil {
			err = ErrClosed // the cancellation came from Close
		}
		if err != nil {
			return fmt.Errorf("write to topic %s: %w", l.topic, err)
		}
	}
	return nil
}

// placed are the messages of one Write that go to one partition, in their order.
type placed struct {
	partition int
	msgs      []Message
}

// place groups msgs by partition, partitions in the order their first message came. A key goes
// where Java's producer puts it: murmur2 of the key bytes, positive, modulo the partition count
// (kafka-go's Murmur2Balancer with Consistent set, which also hashes an empty key).
func (l *TopicLog) place(msgs []Message) []placed {
	balancer := kafkago.Murmur2Balancer{Consistent: true}
	var out []placed
	index := map[int]int{} // partition → its entry in out
	for _, m := range msgs {
		p := balancer.Balance(kafkago.Message{Key: m.Key}, l.all...)
		i, ok := index[p]
		if !ok {
			i = len(out)
			index[p] = i
			out = append(out, placed{partition: p})
		}
		out[i].msgs = append(out[i].msgs, m)
	}
	return out
}

// produce writes msgs to one partition with acks=all, and sends them again after errors that may
// pass (a leader moving, a broken connection) until ctx ends. Without idempotence a retry after a
// lost answer may write them twice, as Connect's internal producers may: readers keep the last
// record of a key, so a repeat changes nothing.
func (l *TopicLog) produce(ctx context.Context, partition int, msgs []Message) error {
	for {
		// Fresh records each time: kafka-go reads their keys and values as it encodes them.
		records := make([]kafkago.Record, len(msgs))
		for i, m := range msgs {
			records[i] = kafkago.Record{Key: kafkago.NewBytes(m.Key), Value: kafkago.NewBytes(m.Value)}
		}
		resp, err := l.cl.Produce(ctx, &kafkago.ProduceRequest{
			Topic:        l.topic,
			Partition:    partition,
			RequiredAcks: kafkago.RequireAll,
			Records:      kafkago.NewRecordReader(records...),
		})
		if err == nil {
			err = resp.Error
		}
		if err == nil || !retriable(err) {
			return err
		}
		if serr := sleep(ctx, retryBackoff); serr != nil {
			return fmt.Errorf("%w (gave up: %w)", err, serr)
		}
	}
}

// Close stops tailing, abandons writes under way and releases the client. Writes after Close fail.
func (l *TopicLog) Close() {
	l.stop()
	<-l.done
	// Taking writeMu waits out an abandoned Write, so that none reopens a connection after this.
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	l.cl.close()
}

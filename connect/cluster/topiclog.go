package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// LogConfig says where a TopicLog lives.
type LogConfig struct {
	Brokers  []string
	ClientID string // sent with every request; Connect uses "<group.id>-configs" and the like
	Topic    TopicSpec
	Logger   *slog.Logger
}

// TopicLog is a compacted topic read from its beginning and then tailed, and written with acks=all:
// Connect's KafkaBasedLog. Every record read, its own writes included, goes to the apply function
// given to OpenLog, in partition order, from a single goroutine.
//
// Writes use the producer settings of Connect's internal topics: acks=all, no idempotence, one
// request in flight, and Java's murmur2 placement of keyed records, so a key lands in the partition
// a Java worker would pick.
type TopicLog struct {
	cl         *kgo.Client
	topic      string
	partitions int32
	log        *slog.Logger

	mu        sync.Mutex
	positions map[int32]int64 // next offset to read per partition
	advanced  chan struct{}   // closed and replaced whenever positions move

	stop context.CancelFunc
	done chan struct{}
}

// OpenLog creates the topic if it is missing (or checks it), reads it to its end through apply, and
// keeps tailing it until Close. apply must not block for long and must not call back into the log.
func OpenLog(ctx context.Context, cfg LogConfig, apply func(*kgo.Record)) (*TopicLog, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.DisableIdempotentWrite(),
		kgo.MaxProduceRequestsInflightPerBroker(1),
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)), // murmur2, as Java's producer
		kgo.ConsumeTopics(cfg.Topic.Name),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		// Control records are handed over so that a partition ending in a transaction marker still
		// counts as read to its end.
		kgo.KeepControlRecords(),
	}
	if cfg.ClientID != "" {
		opts = append(opts, kgo.ClientID(cfg.ClientID))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("topic log %s: %w", cfg.Topic.Name, err)
	}
	partitions, err := ensureTopic(ctx, cl, cfg.Topic)
	if err != nil {
		cl.Close()
		return nil, err
	}
	tailCtx, stop := context.WithCancel(context.Background())
	l := &TopicLog{
		cl:         cl,
		topic:      cfg.Topic.Name,
		partitions: partitions,
		log:        logger.With("topic", cfg.Topic.Name),
		positions:  map[int32]int64{},
		advanced:   make(chan struct{}),
		stop:       stop,
		done:       make(chan struct{}),
	}
	go l.tail(tailCtx, apply)
	if err := l.ReadToEnd(ctx); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// Partitions is the topic's partition count as found when the log was opened.
func (l *TopicLog) Partitions() int32 { return l.partitions }

func (l *TopicLog) tail(ctx context.Context, apply func(*kgo.Record)) {
	defer close(l.done)
	for {
		fetches := l.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return
		}
		fetches.EachError(func(topic string, partition int32, err error) {
			if !errors.Is(err, context.Canceled) {
				l.log.Warn("reading internal topic", "partition", partition, "err", err)
			}
		})
		moved := map[int32]int64{}
		fetches.EachRecord(func(r *kgo.Record) {
			if !r.Attrs.IsControl() {
				apply(r)
			}
			moved[r.Partition] = r.Offset + 1
		})
		if len(moved) == 0 {
			continue
		}
		l.mu.Lock()
		for p, next := range moved {
			l.positions[p] = next
		}
		close(l.advanced)
		l.advanced = make(chan struct{})
		l.mu.Unlock()
	}
}

// ReadToEnd blocks until every record written before the call was handed to apply: it takes each
// partition's end offset from the broker and waits for the reader to pass it. ctx bounds the wait.
func (l *TopicLog) ReadToEnd(ctx context.Context) error {
	ends, err := endOffsets(ctx, l.cl, l.topic, l.partitions)
	if err != nil {
		return err
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

// Write produces msgs in order and returns once the broker acknowledged all of them with acks=all,
// or with the first error. It does not wait for the records to be read back (see ReadToEnd).
func (l *TopicLog) Write(ctx context.Context, msgs ...Message) error {
	recs := make([]*kgo.Record, len(msgs))
	for i, m := range msgs {
		recs[i] = &kgo.Record{Topic: l.topic, Key: m.Key, Value: m.Value}
	}
	if err := l.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("write to topic %s: %w", l.topic, err)
	}
	return nil
}

// Close stops tailing and closes the client. Writes after Close fail.
func (l *TopicLog) Close() {
	l.stop()
	<-l.done
	l.cl.Close()
}

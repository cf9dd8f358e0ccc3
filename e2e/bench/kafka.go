package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// broker is the benchmark's view of Kafka: single-partition topics stamped with the broker's append time.
type broker struct {
	client *kgo.Client
	seeds  []string
}

func newBroker(seeds []string) (*broker, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	return &broker{client: cl, seeds: seeds}, nil
}

func (b *broker) close() { b.client.Close() }

// createTopic creates topic with one partition whose records carry the broker's append time, so their
// timestamps measure when each event reached Kafka whatever the producer set.
func (b *broker) createTopic(ctx context.Context, topic string) error {
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic = topic
	rt.NumPartitions = 1
	rt.ReplicationFactor = 1
	cfg := kmsg.NewCreateTopicsRequestTopicConfig()
	cfg.Name, cfg.Value = "message.timestamp.type", kmsg.StringPtr("LogAppendTime")
	rt.Configs = append(rt.Configs, cfg)
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 30000
	resp, err := req.RequestWith(ctx, b.client)
	if err != nil {
		return fmt.Errorf("creating topic %s: %w", topic, err)
	}
	for _, t := range resp.Topics {
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return fmt.Errorf("creating topic %s: %w", topic, err)
		}
	}
	return nil
}

// deleteTopics deletes every topic named prefix or starting with prefix (the benchmark's own topics).
func (b *broker) deleteTopics(ctx context.Context, prefix string) error {
	meta, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, b.client)
	if err != nil {
		return fmt.Errorf("listing topics: %w", err)
	}
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.TimeoutMillis = 30000
	for _, t := range meta.Topics {
		if t.Topic != nil && strings.HasPrefix(*t.Topic, prefix) {
			dt := kmsg.NewDeleteTopicsRequestTopic()
			dt.Topic = t.Topic
			req.Topics = append(req.Topics, dt)
			req.TopicNames = append(req.TopicNames, *t.Topic)
		}
	}
	if len(req.Topics) == 0 {
		return nil
	}
	resp, err := req.RequestWith(ctx, b.client)
	if err != nil {
		return fmt.Errorf("deleting topics: %w", err)
	}
	var errs []error
	for _, t := range resp.Topics {
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
			errs = append(errs, fmt.Errorf("deleting topic %v: %w", t.Topic, err))
		}
	}
	return errors.Join(errs...)
}

// endOffset is the end of what a read_committed consumer may read of the topic's only partition: the
// offset the next record will get, or, while a transaction is open, its first offset (the last stable
// offset).
func (b *broker) endOffset(ctx context.Context, topic string) (int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.IsolationLevel = 1 // read_committed
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition = 0
	rp.Timestamp = -1 // latest
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, b.client)
	if err != nil {
		return 0, fmt.Errorf("end offset of %s: %w", topic, err)
	}
	if len(resp.Topics) == 0 || len(resp.Topics[0].Partitions) == 0 {
		return 0, fmt.Errorf("end offset of %s: no partition in the answer", topic)
	}
	p := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return 0, fmt.Errorf("end offset of %s: %w", topic, err)
	}
	return p.Offset, nil
}

// waitForRecords polls until the topic holds at least want records, or fails after timeout. A topic
// the broker does not know yet (one a connector's first record will create, or one just created that
// the broker's metadata does not show yet) holds none. A transactional topic's records are counted
// (its markers are not records), committed ones only. alive, when not nil, is asked about once a
// second whether the records can still come (a connector whose task failed will send none); its error
// ends the wait.
func (b *broker) waitForRecords(ctx context.Context, topic string, want int64, timeout time.Duration, alive func(context.Context) error, transactional bool) error {
	deadline := time.Now().Add(timeout)
	nextCheck := time.Now().Add(time.Second)
	var have int64
	var counted, countedTo int64 // transactional: the records in [0, countedTo)
	for {
		end, err := b.endOffset(ctx, topic)
		if err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
			return err
		}
		have = end
		// Markers take offsets too, so offsets can only say when to start counting: from then on the
		// records are read (after the drain is as good as done, so the reading does not slow it).
		if transactional && end >= want {
			n, err := b.countRecords(ctx, topic, countedTo, end)
			if err != nil {
				return err
			}
			counted, countedTo = counted+n, end
			have = counted
		}
		if have >= want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("topic %s has %d records after %v, want %d", topic, have, timeout, want)
		}
		if alive != nil && time.Now().After(nextCheck) {
			if err := alive(ctx); err != nil {
				return fmt.Errorf("topic %s has %d records, want %d: %w", topic, have, want, err)
			}
			nextCheck = time.Now().Add(time.Second)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// countRecords counts the committed records of the topic in [from, end).
func (b *broker) countRecords(ctx context.Context, topic string, from, end int64) (int64, error) {
	var n int64
	err := b.readRange(ctx, topic, from, end, func(*kgo.Record) error { n++; return nil })
	return n, err
}

// readRange calls fn for each committed record of the topic from offset from up to (not including) end
// (an end offset endOffset gave). Transaction markers are passed over; they are kept in the fetches
// only so that an end just past a marker is seen to be reached.
func (b *broker) readRange(ctx context.Context, topic string, from, end int64, fn func(*kgo.Record) error) error {
	if from >= end {
		return nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.seeds...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(from)}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords(), kgo.FetchMaxBytes(64<<20))
	if err != nil {
		return fmt.Errorf("kafka consumer: %w", err)
	}
	defer cl.Close()
	next := from
	for next < end {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fetches.Err(); err != nil {
			return fmt.Errorf("reading %s: %w", topic, err)
		}
		var fnErr error
		fetches.EachRecord(func(r *kgo.Record) {
			if fnErr != nil || r.Offset >= end {
				return
			}
			next = r.Offset + 1
			if !r.Attrs.IsControl() {
				fnErr = fn(r)
			}
		})
		if fnErr != nil {
			return fnErr
		}
	}
	return nil
}

// recordShape is what the Kafka ceiling reproduces of a delivered record: its sizes and headers (the
// broker does not look at the bytes, so their content does not matter).
type recordShape struct {
	keyLen, valueLen int // valueLen -1: a tombstone
	headers          []kgo.RecordHeader
}

func shapeOf(r *kgo.Record) recordShape {
	s := recordShape{keyLen: len(r.Key), valueLen: len(r.Value), headers: r.Headers}
	if r.Value == nil {
		s.valueLen = -1
	}
	return s
}

// produceCeiling writes records of the given shapes to a new one-partition topic with Kafka Connect's
// producer guarantees (acks=all, one request in flight, no idempotence, 1 MB requests, linger 5 ms) and
// returns how long it took until the last one was acknowledged: the most any source can deliver to this
// broker and partition under those guarantees, the Kafka counterpart of the pg_recvlogical ceiling.
func (b *broker) produceCeiling(ctx context.Context, topic string, shapes []recordShape) (time.Duration, error) {
	if err := b.createTopic(ctx, topic); err != nil {
		return 0, err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.seeds...), kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DisableIdempotentWrite(), kgo.MaxProduceRequestsInflightPerBroker(1),
		kgo.ProducerBatchMaxBytes(1<<20), kgo.ProducerLinger(5*time.Millisecond), kgo.MaxBufferedBytes(64<<20),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return 0, fmt.Errorf("kafka producer: %w", err)
	}
	defer cl.Close()
	maxLen := 0
	for _, s := range shapes {
		maxLen = max(maxLen, s.keyLen, s.valueLen)
	}
	filler := make([]byte, maxLen)
	for i := range filler {
		filler[i] = 'a' + byte(i%26)
	}
	var failed error
	var mu sync.Mutex
	start := time.Now()
	for _, s := range shapes {
		r := &kgo.Record{Key: filler[:s.keyLen], Headers: s.headers}
		if s.valueLen >= 0 {
			r.Value = filler[:s.valueLen]
		}
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				failed = errors.Join(failed, err)
				mu.Unlock()
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return 0, err
	}
	elapsed := time.Since(start)
	mu.Lock()
	defer mu.Unlock()
	if failed != nil {
		return 0, fmt.Errorf("producing the Kafka ceiling to %s: %w", topic, failed)
	}
	return elapsed, nil
}

package capture

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Selection names the topics a capture reads: the listed Topics, plus every non-internal topic that is
// Prefix itself or starts with Prefix followed by "." (Connect's topic.prefix naming). An empty
// Selection selects nothing.
type Selection struct {
	Topics []string
	Prefix string
}

func (s Selection) matches(topic string) bool {
	for _, t := range s.Topics {
		if t == topic {
			return true
		}
	}
	return s.Prefix != "" && (topic == s.Prefix || strings.HasPrefix(topic, s.Prefix+"."))
}

// Broker reads whole topics from a Kafka cluster for captures. Reads are read_committed, so records of
// aborted transactions never appear.
type Broker struct {
	client *kgo.Client
	seeds  []string
	// IdleTimeout ends a read when no record arrives for this long although some partition has not reached
	// its end offset (a transaction marker at the end of a partition occupies an offset no record fills).
	IdleTimeout time.Duration
}

// NewBroker connects to the cluster at seeds; Close releases it.
func NewBroker(seeds []string) (*Broker, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	return &Broker{client: cl, seeds: seeds, IdleTimeout: 5 * time.Second}, nil
}

// Close closes the admin connection.
func (b *Broker) Close() { b.client.Close() }

// partitionEnds maps topic → partition → end offset (the last stable offset).
type partitionEnds map[string]map[int32]int64

// Topics lists the topics of the selection that exist now, sorted.
func (b *Broker) Topics(ctx context.Context, sel Selection) ([]string, error) {
	req := kmsg.NewPtrMetadataRequest() // no topics: all of them
	resp, err := req.RequestWith(ctx, b.client)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	var names []string
	for _, t := range resp.Topics {
		if t.Topic == nil || t.IsInternal || !sel.matches(*t.Topic) {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return nil, fmt.Errorf("metadata for %s: %w", *t.Topic, err)
		}
		names = append(names, *t.Topic)
	}
	sort.Strings(names)
	return names, nil
}

// Count is how many records the selected topics hold: the sum of their partitions' end offsets (their
// last stable offsets), which is the number of records written to topics that were never compacted or
// truncated.
func (b *Broker) Count(ctx context.Context, sel Selection) (int64, error) {
	ends, err := b.ends(ctx, sel)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, parts := range ends {
		for _, end := range parts {
			n += end
		}
	}
	return n, nil
}

// ErrNoTopic is a listed topic that does not exist (yet).
var ErrNoTopic = errors.New("topic does not exist")

// ends returns the end offsets of every partition of the selected topics; a listed topic that does not
// exist is an error.
func (b *Broker) ends(ctx context.Context, sel Selection) (partitionEnds, error) {
	names, err := b.Topics(ctx, sel)
	if err != nil {
		return nil, err
	}
	for _, want := range sel.Topics {
		if !contains(names, want) {
			return nil, fmt.Errorf("topic %s: %w", want, ErrNoTopic)
		}
	}
	if len(names) == 0 {
		return partitionEnds{}, nil // a metadata request without topics would describe all of them
	}
	meta := kmsg.NewPtrMetadataRequest()
	for _, name := range names {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(name)
		meta.Topics = append(meta.Topics, rt)
	}
	metaResp, err := meta.RequestWith(ctx, b.client)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	list := kmsg.NewPtrListOffsetsRequest()
	list.IsolationLevel = 1 // read_committed: the last stable offset
	for _, t := range metaResp.Topics {
		lt := kmsg.NewListOffsetsRequestTopic()
		lt.Topic = *t.Topic
		for _, p := range t.Partitions {
			lp := kmsg.NewListOffsetsRequestTopicPartition()
			lp.Partition = p.Partition
			lp.Timestamp = -1 // latest
			lt.Partitions = append(lt.Partitions, lp)
		}
		list.Topics = append(list.Topics, lt)
	}
	listResp, err := list.RequestWith(ctx, b.client)
	if err != nil {
		return nil, fmt.Errorf("list offsets: %w", err)
	}
	ends := partitionEnds{}
	for _, t := range listResp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, fmt.Errorf("list offsets %s/%d: %w", t.Topic, p.Partition, err)
			}
			if ends[t.Topic] == nil {
				ends[t.Topic] = map[int32]int64{}
			}
			ends[t.Topic][p.Partition] = p.Offset
		}
	}
	return ends, nil
}

func contains(sorted []string, s string) bool {
	i := sort.SearchStrings(sorted, s)
	return i < len(sorted) && sorted[i] == s
}

// Read returns every record of the selected topics from the beginning up to the end offsets seen when it
// starts, in topic, partition, offset order.
func (b *Broker) Read(ctx context.Context, sel Selection) ([]Record, error) {
	ends, err := b.ends(ctx, sel)
	if err != nil {
		return nil, err
	}
	start := map[string]map[int32]kgo.Offset{}
	remaining := map[string]map[int32]int64{} // partitions not yet read to their end
	for topic, parts := range ends {
		for p, end := range parts {
			if end <= 0 {
				continue
			}
			if start[topic] == nil {
				start[topic], remaining[topic] = map[int32]kgo.Offset{}, map[int32]int64{}
			}
			start[topic][p] = kgo.NewOffset().AtStart()
			remaining[topic][p] = end
		}
	}
	if len(start) == 0 {
		return nil, nil
	}
	consumer, err := kgo.NewClient(kgo.SeedBrokers(b.seeds...), kgo.ConsumePartitions(start),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return nil, fmt.Errorf("kafka consumer: %w", err)
	}
	defer consumer.Close()

	var records []Record
	for len(remaining) > 0 {
		pollCtx, cancel := context.WithTimeout(ctx, b.IdleTimeout)
		fetches := consumer.PollFetches(pollCtx)
		cancel()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if fetches.Empty() {
			slog.Warn("capture: no records for the idle timeout; ending read early", "unfinished", remaining)
			break
		}
		var fetchErr error
		fetches.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				fetchErr = errors.Join(fetchErr, fmt.Errorf("fetch %s/%d: %w", topic, p, err))
			}
		})
		if fetchErr != nil {
			return nil, fetchErr
		}
		fetches.EachRecord(func(r *kgo.Record) {
			end, open := remaining[r.Topic][r.Partition]
			if !open || r.Offset >= end {
				return // past the end captured at start
			}
			records = append(records, recordOf(r))
			if r.Offset+1 >= end {
				delete(remaining[r.Topic], r.Partition)
				if len(remaining[r.Topic]) == 0 {
					delete(remaining, r.Topic)
				}
			}
		})
	}
	SortRecords(records)
	return records, nil
}

func recordOf(r *kgo.Record) Record {
	rec := Record{
		Topic:     r.Topic,
		Partition: r.Partition,
		Offset:    r.Offset,
		Key:       Bytes(r.Key),
		Value:     Bytes(r.Value),
		Timestamp: r.Timestamp.UnixMilli(),
		Headers:   make([]Header, 0, len(r.Headers)),
	}
	for _, h := range r.Headers {
		rec.Headers = append(rec.Headers, Header{Key: h.Key, Value: Bytes(h.Value)})
	}
	return rec
}

// WaitQuiet returns once the selected topics' end offsets have not moved for quiet, checking every poll.
// It blocks until then or until ctx ends.
func (b *Broker) WaitQuiet(ctx context.Context, sel Selection, quiet, poll time.Duration) error {
	var last string
	stableSince := time.Now()
	for {
		ends, err := b.ends(ctx, sel)
		if err != nil {
			return err
		}
		now := fmt.Sprint(ends) // fmt prints maps sorted by key, so equal ends print equally
		if now != last {
			last, stableSince = now, time.Now()
		} else if time.Since(stableSince) >= quiet {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
}

// DeleteTopics deletes the selected topics and waits until the cluster no longer lists them, so a
// following run starts from empty topics. It returns the names deleted.
func (b *Broker) DeleteTopics(ctx context.Context, sel Selection) ([]string, error) {
	names, err := b.Topics(ctx, sel)
	if err != nil || len(names) == 0 {
		return nil, err
	}
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.TimeoutMillis = 30000
	for _, name := range names {
		rt := kmsg.NewDeleteTopicsRequestTopic()
		rt.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, rt)
		req.TopicNames = append(req.TopicNames, name)
	}
	resp, err := req.RequestWith(ctx, b.client)
	if err != nil {
		return nil, fmt.Errorf("delete topics: %w", err)
	}
	for _, t := range resp.Topics {
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
			return nil, fmt.Errorf("delete topic %v: %w", t.Topic, err)
		}
	}
	for {
		left, err := b.Topics(ctx, Selection{Topics: names})
		if err != nil {
			return nil, err
		}
		if len(left) == 0 {
			return names, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

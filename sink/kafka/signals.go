package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	metadataAPI "github.com/segmentio/kafka-go/protocol/metadata"

	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/signal"
)

// SignalOpener implements signal.KafkaOpener with kafka-go: the consumer of a connector's signal topic
// (the kafka signal channel), as Debezium 3.6.1's KafkaSignalChannel builds it.
//
//   - The consumer reads partition 0 of the topic, assigned rather than subscribed: it never joins its
//     group, which only stores its committed offset. Commits are simple commits (generation -1, no member
//     id), as a Java consumer's commitSync of an assigned partition; the broker refuses them while the
//     group has active members.
//   - The first poll asks the group's committed offset (OffsetFetch) and starts there; with none, or one
//     the topic no longer holds, at the first record (earliest) or the end (latest). It asks the topic's
//     metadata allowing auto-creation first, as a Java consumer does (allow.auto.create.topics=true): a
//     broker with auto.create.topics.enable creates a missing signal topic.
//   - The consumer's TLS and SASL are those of its own settings (signal.consumer.security.*, ssl.*,
//     sasl.*), parsed by ParseClientSecurity; with none it connects in plaintext, as Debezium's consumer
//     does: the worker's security is not the signal consumer's.
//   - Each request is bounded by requestTimeout (30 s) and ctx; a poll waits for records at most
//     signal.kafka.poll.timeout.ms. Errors are returned, not retried: the channel polls again at its next
//     interval. Errors name the topic; none carries a secret.
//
// OpenSignals and CheckSignals may be called concurrently; a consumer is for one goroutine.
type SignalOpener struct {
	requestTimeout time.Duration
	fetchMaxBytes  int
}

var _ signal.KafkaOpener = (*SignalOpener)(nil)

// NewSignalOpener returns an opener. It contacts nothing.
func NewSignalOpener() *SignalOpener {
	return &SignalOpener{requestTimeout: 30 * time.Second, fetchMaxBytes: 1 << 20}
}

// CheckSignals refuses what OpenSignals would refuse, without contacting Kafka: validation calls it when a
// connector is created. The refusals name the connector's keys (signal.consumer.<key>).
func (o *SignalOpener) CheckSignals(spec signal.KafkaSpec) error {
	_, err := o.security(spec)
	return err
}

func (o *SignalOpener) security(spec signal.KafkaSpec) (ClientSecurity, error) {
	sec, err := ParseClientSecurity(spec.Security)
	if err != nil {
		return ClientSecurity{}, source.Fatal(fmt.Errorf("topic %s: %w", spec.Topic, WithKeyPrefix(err, "signal.consumer.")))
	}
	return sec, nil
}

// OpenSignals returns a consumer of spec.Topic's partition 0, logging to log. It contacts nothing.
func (o *SignalOpener) OpenSignals(spec signal.KafkaSpec, log *slog.Logger) (signal.KafkaConsumer, error) {
	if spec.Topic == "" || spec.GroupID == "" {
		return nil, source.Fatal(errors.New("the signal consumer needs a topic and a group"))
	}
	if len(spec.Servers) == 0 {
		return nil, source.Fatal(fmt.Errorf("topic %s: no bootstrap servers to read signals from", spec.Topic))
	}
	sec, err := o.security(spec)
	if err != nil {
		return nil, err
	}
	clientID := spec.ClientID
	if clientID == "" {
		clientID = uuid.NewString() // Debezium's consumer's default client.id
	}
	t := NewTransport(sec, clientID)
	addr := kafkago.TCP(spec.Servers...)
	return &signalConsumer{
		spec: spec, transport: t, next: -1, maxBytes: o.fetchMaxBytes,
		client: &kafkago.Client{Addr: addr, Transport: t, Timeout: o.requestTimeout},
		log:    log.With("group", spec.GroupID),
	}, nil
}

// signalConsumer is one signal topic's signal.KafkaConsumer.
type signalConsumer struct {
	spec      signal.KafkaSpec
	transport *Transport
	client    *kafkago.Client
	log       *slog.Logger
	maxBytes  int
	next      int64 // the offset of the next record to read; -1 until the first poll found it
}

// start finds where reading begins: the group's committed offset, else the reset policy's.
func (c *signalConsumer) start(ctx context.Context) error {
	// A Java consumer's metadata request lets the broker auto-create the topic; it also fills the
	// transport's metadata cache with the topic, which an offset request needs.
	if _, err := c.transport.RoundTrip(ctx, c.client.Addr, &metadataAPI.Request{TopicNames: []string{c.spec.Topic}, AllowAutoTopicCreation: true}); err != nil {
		return fmt.Errorf("topic %s: looking it up: %w", c.spec.Topic, err)
	}
	resp, err := c.client.OffsetFetch(ctx, &kafkago.OffsetFetchRequest{GroupID: c.spec.GroupID, Topics: map[string][]int{c.spec.Topic: {0}}})
	if err != nil {
		return fmt.Errorf("topic %s: reading group %s's committed offset: %w", c.spec.Topic, c.spec.GroupID, err)
	}
	// A group that never committed is unknown to some brokers (GROUP_ID_NOT_FOUND) and answers offset -1
	// on others: both mean no committed offset.
	if resp.Error != nil && !errors.Is(resp.Error, kafkago.GroupIdNotFound) {
		return fmt.Errorf("topic %s: reading group %s's committed offset: %w", c.spec.Topic, c.spec.GroupID, resp.Error)
	}
	for _, p := range resp.Topics[c.spec.Topic] {
		if p.Partition != 0 {
			continue
		}
		if p.Error != nil {
			return fmt.Errorf("topic %s: reading group %s's committed offset: %w", c.spec.Topic, c.spec.GroupID, p.Error)
		}
		if p.CommittedOffset >= 0 {
			c.next = p.CommittedOffset
			c.log.Info("reading signals from the group's committed offset", "offset", c.next)
			return nil
		}
	}
	return c.reset(ctx, "the group has no committed offset")
}

// reset moves to the first or the last offset of the partition, as auto.offset.reset says.
func (c *signalConsumer) reset(ctx context.Context, why string) error {
	req := kafkago.FirstOffsetOf(0)
	policy := "earliest"
	if c.spec.Latest {
		req, policy = kafkago.LastOffsetOf(0), "latest"
	}
	resp, err := c.client.ListOffsets(ctx, &kafkago.ListOffsetsRequest{Topics: map[string][]kafkago.OffsetRequest{c.spec.Topic: {req}}})
	if err != nil {
		return fmt.Errorf("topic %s: listing its offsets: %w", c.spec.Topic, err)
	}
	for _, p := range resp.Topics[c.spec.Topic] {
		if p.Partition != 0 {
			continue
		}
		if p.Error != nil {
			return fmt.Errorf("topic %s: listing its offsets: %w", c.spec.Topic, p.Error)
		}
		c.next = p.FirstOffset
		if c.spec.Latest {
			c.next = p.LastOffset
		}
		c.log.Info("reading signals from the "+policy+" offset (auto.offset.reset)", "reason", why, "offset", c.next)
		return nil
	}
	return fmt.Errorf("topic %s: listing its offsets: the broker did not answer for partition 0", c.spec.Topic)
}

// Poll fetches the records after the position, waiting at most the poll timeout for them.
func (c *signalConsumer) Poll(ctx context.Context) ([]signal.KafkaRecord, error) {
	if c.next < 0 {
		if err := c.start(ctx); err != nil {
			return nil, err
		}
	}
	resp, err := c.client.Fetch(ctx, &kafkago.FetchRequest{
		Topic: c.spec.Topic, Partition: 0, Offset: c.next,
		// kafka-go reads a MaxWait of 0 as its own default; a millisecond is the broker's "do not wait".
		MinBytes: 1, MaxBytes: int64(c.maxBytes), MaxWait: max(c.spec.PollTimeout, time.Millisecond),
	})
	if err != nil {
		return nil, fmt.Errorf("topic %s: fetching from offset %d: %w", c.spec.Topic, c.next, err)
	}
	if errors.Is(resp.Error, kafkago.OffsetOutOfRange) {
		return nil, c.reset(ctx, fmt.Sprintf("offset %d is not in the topic any more", c.next))
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("topic %s: fetching from offset %d: %w", c.spec.Topic, c.next, resp.Error)
	}
	recs, next, err := signalRecords(resp.Records, c.next)
	if err != nil {
		return nil, fmt.Errorf("topic %s: reading the records from offset %d: %w", c.spec.Topic, c.next, err)
	}
	c.next = next
	return recs, nil
}

// signalRecords are the records of a fetch response from offset next on, and the offset after them. A
// response may start before next (it holds whole batches); control batches (transaction markers) take
// offsets and hold no signal.
func signalRecords(records kafkago.RecordReader, next int64) ([]signal.KafkaRecord, int64, error) {
	batches := []kafkago.RecordReader{records}
	if s, ok := records.(*protocol.RecordStream); ok {
		batches = s.Records
	}
	var out []signal.KafkaRecord
	for _, batch := range batches {
		_, control := batch.(*protocol.ControlBatch)
		for {
			rec, err := batch.ReadRecord()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return out, next, err
			}
			if rec.Offset < next {
				continue
			}
			next = rec.Offset + 1
			if control {
				continue
			}
			r := signal.KafkaRecord{Offset: rec.Offset}
			if r.Key, err = readBytes(rec.Key); err == nil {
				r.Value, err = readBytes(rec.Value)
			}
			if err != nil {
				return out, next, err
			}
			out = append(out, r)
		}
	}
	return out, next, nil
}

func readBytes(b kafkago.Bytes) ([]byte, error) {
	if b == nil {
		return nil, nil
	}
	return protocol.ReadAll(b)
}

// Commit stores next as the group's committed offset of partition 0, without joining the group.
func (c *signalConsumer) Commit(ctx context.Context, next int64) error {
	resp, err := c.client.OffsetCommit(ctx, &kafkago.OffsetCommitRequest{
		GroupID: c.spec.GroupID, GenerationID: -1,
		Topics: map[string][]kafkago.OffsetCommit{c.spec.Topic: {{Partition: 0, Offset: next}}},
	})
	if err != nil {
		return fmt.Errorf("topic %s: committing offset %d for group %s: %w", c.spec.Topic, next, c.spec.GroupID, err)
	}
	for _, p := range resp.Topics[c.spec.Topic] {
		if p.Error != nil {
			return fmt.Errorf("topic %s: committing offset %d for group %s: %w", c.spec.Topic, next, c.spec.GroupID, p.Error)
		}
	}
	if !slices.ContainsFunc(resp.Topics[c.spec.Topic], func(p kafkago.OffsetCommitPartition) bool { return p.Partition == 0 }) {
		return fmt.Errorf("topic %s: committing offset %d for group %s: the coordinator did not answer for partition 0", c.spec.Topic, next, c.spec.GroupID)
	}
	return nil
}

// Close closes the consumer's idle connections; it does not wait for the network.
func (c *signalConsumer) Close() error {
	c.transport.CloseIdleConnections()
	return nil
}

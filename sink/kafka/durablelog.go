package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	metadataAPI "github.com/segmentio/kafka-go/protocol/metadata"

	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/props"
)

// LogOpenerConfig configures a LogOpener.
type LogOpenerConfig struct {
	// Brokers is the runtime's bootstrap.servers, used for every log whose LogSpec.Servers is empty.
	Brokers []string
	// Transport carries every request of the opened logs (TLS, SASL and the metadata cache are its
	// business). The opener shares it between logs and never closes it. Nil gives each opened log a
	// kafka-go Transport of its own with kafka-go's defaults and ClientID, closed by the log's Close.
	Transport kafkago.RoundTripper
	// ClientID is the client.id of the Transport the opener makes when Transport is nil; with a
	// Transport, its own ClientID applies.
	ClientID string
	// Log receives topic creation and retry messages; nil means slog.Default().
	Log *slog.Logger
}

// LogOpener implements source.LogOpener on Kafka with kafka-go: each log is one topic of exactly one
// partition, each record one Kafka record with a null key, appended with acks=all.
//
// OpenLog blocks until the topic exists (creating it when missing) and shows in the cluster's
// metadata, at most openTimeout (30 s) or until ctx ends. It may be called concurrently, including
// for the same topic: when two callers race to create it, the loser sees TopicAlreadyExists and
// waits for the winner's topic like for its own.
//
// The DurableLog it returns guarantees:
//   - ReadAll returns the values of every record below the partition's high watermark (the records
//     every in-sync replica has) as it was when ReadAll began, in offset order, from the first
//     offset the partition still holds. It fetches at most 1 MiB per request and loops until it has
//     reached that end, so a history of any size is read completely. It blocks until then.
//   - Append produces one record to partition 0 with acks=all (RequiredAcks -1) and returns only
//     once the broker acknowledged it, that is once every in-sync replica has it. kafka-go has no
//     idempotent producer, so a retry after an ambiguous failure (a timeout, a broken connection,
//     NOT_ENOUGH_REPLICAS_AFTER_APPEND) may store the record twice; the schema history tolerates a
//     repeated record, as it tolerates the repeat a restart causes when it re-reads the binlog from
//     the last durable offset.
//   - Errors the cluster may heal by itself (no leader, a stale metadata cache, a broken connection,
//     a request timeout) are retried with a backoff of 100 ms doubling to 2 s, for at most
//     retryTimeout (2 min, Kafka's delivery.timeout.ms) without progress; every wait also ends with
//     ctx. Other errors are returned at once.
//   - Errors a restart cannot fix (a topic with several partitions, a client setting cdcd does not
//     implement, no servers) are marked with source.Fatal, so the runtime fails the task for good.
//   - The log's producer and consumer honour the security keys (security.protocol, ssl.*, sasl.*) of
//     LogSpec.ProducerSettings and .ConsumerSettings; a client that names none uses the opener's
//     Transport (see clientSecurity).
//   - Every error names the topic ("topic <name> ...").
//
// A DurableLog is for the one goroutine that owns it, as source.DurableLog says; Close may be
// called more than once. ReadAll and Append after Close return an error.
type LogOpener struct {
	brokers   []string
	transport kafkago.RoundTripper
	clientID  string
	log       *slog.Logger

	// Bounds, fixed by NewLogOpener; tests shorten them.
	openTimeout    time.Duration // OpenLog as a whole
	requestTimeout time.Duration // one request (kafka-go halves it for the broker-side wait)
	retryTimeout   time.Duration // retrying without progress
	fetchMaxBytes  int           // per fetch request (Java's max.partition.fetch.bytes)
}

var _ source.LogOpener = (*LogOpener)(nil)

// NewLogOpener returns an opener for cfg. It does not contact Kafka.
func NewLogOpener(cfg LogOpenerConfig) *LogOpener {
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	return &LogOpener{
		brokers:        slices.Clone(cfg.Brokers),
		transport:      cfg.Transport,
		clientID:       cfg.ClientID,
		log:            log,
		openTimeout:    30 * time.Second,
		requestTimeout: 30 * time.Second,
		retryTimeout:   2 * time.Minute,
		fetchMaxBytes:  1 << 20,
	}
}

// OpenLog opens spec.Name, creating it with one partition, the broker's default replication factor
// and spec.Settings as topic configs when it is missing, and refusing an existing topic that does not
// have exactly one partition. See LogOpener for what it blocks on and guarantees.
func (o *LogOpener) OpenLog(ctx context.Context, spec source.LogSpec) (source.DurableLog, error) {
	if spec.Name == "" {
		return nil, source.Fatal(errors.New("a durable log needs a topic name"))
	}
	producer, consumer, err := o.clientSecurity(spec)
	if err != nil {
		return nil, err
	}
	servers := spec.Servers
	if len(servers) == 0 {
		servers = o.brokers
	}
	if len(servers) == 0 {
		return nil, source.Fatal(fmt.Errorf("topic %s: no bootstrap servers to reach it", spec.Name))
	}

	l := &topicLog{
		topic:        spec.Name,
		servers:      slices.Clone(servers),
		addr:         kafkago.TCP(servers...),
		log:          o.log.With("topic", spec.Name),
		retryTimeout: o.retryTimeout,
		maxBytes:     o.fetchMaxBytes,
	}
	// The producer's transport also creates the topic and looks it up, as Debezium's KafkaSchemaHistory
	// builds its admin client from the producer's settings; the consumer's reads.
	l.transport = o.transportFor(l, producer)
	l.readTransport = l.transport
	if consumer != nil || producer != nil {
		l.readTransport = o.transportFor(l, consumer)
	}
	l.client = &kafkago.Client{Addr: l.addr, Transport: l.transport, Timeout: o.requestTimeout}
	l.reader = &kafkago.Client{Addr: l.addr, Transport: l.readTransport, Timeout: o.requestTimeout}

	openCtx, cancel := context.WithTimeout(ctx, o.openTimeout)
	defer cancel()
	err = l.ensureTopic(openCtx, spec.Settings)
	if err == nil && l.readTransport != l.transport {
		err = l.knownToReader(openCtx)
	}
	if err != nil {
		if ctx.Err() == nil && openCtx.Err() != nil {
			err = fmt.Errorf("%w (gave up after %s)", err, o.openTimeout)
		}
		closeCtx, cancelClose := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancelClose()
		_ = l.Close(closeCtx)
		return nil, err
	}
	return l, nil
}

// transportFor is the transport of one of a log's clients: one made from its own security settings
// (sec non-nil), else the opener's, else one of the log's own with kafka-go's defaults. Transports made
// here are closed with the log.
func (o *LogOpener) transportFor(l *topicLog, sec *ClientSecurity) kafkago.RoundTripper {
	switch {
	case sec != nil:
		t := NewTransport(*sec, o.clientID)
		l.owned = append(l.owned, t)
		return t
	case o.transport != nil:
		return o.transport
	}
	if l.plain == nil {
		l.plain = &kafkago.Transport{ClientID: o.clientID}
		l.owned = append(l.owned, l.plain)
	}
	return l.plain
}

// CheckLogSpec refuses the client settings of spec that OpenLog would refuse, without contacting Kafka:
// validation calls it when a connector is created. See clientSecurity.
func (o *LogOpener) CheckLogSpec(spec source.LogSpec) error {
	_, _, err := o.clientSecurity(spec)
	return err
}

// clientSecurity reads the security of the log's producer and consumer (schema.history.internal.
// producer.* and .consumer.*): a client whose settings hold any key of the security family gets its own
// transport with exactly that security, as Debezium's history clients are built from their settings
// alone; a client without any uses the opener's transport, so the history reaches a secured cluster with
// the worker's security when it names none of its own. Every other client setting is refused: none is
// implemented yet, and a setting that is not honoured must not be silently dropped. Errors are fatal.
func (o *LogOpener) clientSecurity(spec source.LogSpec) (producer, consumer *ClientSecurity, err error) {
	var errs []error
	read := func(client string, settings map[string]string) *ClientSecurity {
		var other []string
		for k := range settings {
			if !props.IsKafkaSecurityKey(k) {
				other = append(other, k)
			}
		}
		sort.Strings(other)
		for _, k := range other {
			errs = append(errs, fmt.Errorf("topic %s: %w", spec.Name, settingErr(client+"."+k, "cdcd does not implement this setting yet; remove it")))
		}
		security := props.KafkaSecuritySettings(settings)
		if len(security) == 0 {
			return nil
		}
		sec, err := ParseClientSecurity(security)
		if err != nil {
			errs = append(errs, fmt.Errorf("topic %s: %w", spec.Name, WithKeyPrefix(err, client+".")))
			return nil
		}
		return &sec
	}
	producer = read("producer", spec.ProducerSettings)
	consumer = read("consumer", spec.ConsumerSettings)
	if len(errs) > 0 {
		return nil, nil, source.Fatal(errors.Join(errs...))
	}
	return producer, consumer, nil
}

// topicLog is one topic's source.DurableLog.
type topicLog struct {
	topic         string
	servers       []string
	addr          net.Addr
	transport     kafkago.RoundTripper                  // the producer's: metadata, topic creation, produce
	readTransport kafkago.RoundTripper                  // the consumer's: offsets and fetch (often the same)
	plain         *kafkago.Transport                    // the log's own default transport, when one was made
	owned         []interface{ CloseIdleConnections() } // transports made for this log, closed by Close
	client        *kafkago.Client
	reader        *kafkago.Client
	log           *slog.Logger
	retryTimeout  time.Duration
	maxBytes      int
	closed        atomic.Bool
}

// ensureTopic makes sure the topic exists with exactly one partition and is known to the transport,
// so that produce and fetch requests find its leader.
func (l *topicLog) ensureTopic(ctx context.Context, settings map[string]string) error {
	// Look first, like Debezium and Connect: creating an existing topic may need rights we lack.
	partitions, found, err := l.lookUp(ctx, false)
	if err != nil {
		return err
	}
	if found {
		return l.checkPartitions(partitions)
	}

	configs := make([]kafkago.ConfigEntry, 0, len(settings))
	for k, v := range settings {
		configs = append(configs, kafkago.ConfigEntry{ConfigName: k, ConfigValue: v})
	}
	sort.Slice(configs, func(i, j int) bool { return configs[i].ConfigName < configs[j].ConfigName })
	resp, err := l.client.CreateTopics(ctx, &kafkago.CreateTopicsRequest{Topics: []kafkago.TopicConfig{{
		Topic: l.topic, NumPartitions: 1, ReplicationFactor: -1, ConfigEntries: configs,
	}}})
	if err != nil {
		return fmt.Errorf("topic %s: creating it: %w", l.topic, l.explain(err))
	}
	switch err := resp.Errors[l.topic]; {
	case err == nil:
		l.log.Info("created topic", "partitions", 1, "replication_factor", "broker default", "configs", settings)
	case errors.Is(err, kafkago.TopicAlreadyExists):
		l.log.Debug("topic was created by someone else meanwhile")
	default:
		return fmt.Errorf("topic %s: creating it (1 partition, configs %v): %w; check that this client may create topics, or create the topic yourself",
			l.topic, settings, err)
	}

	// A new topic takes a moment to show in the metadata of every broker, and the transport's cached
	// metadata may predate it. Asking with auto-creation allowed makes kafka-go's Transport fetch the
	// metadata instead of answering from its cache, and wait for the topic to enter its cache; the
	// topic exists, so nothing is auto-created.
	backoff := 50 * time.Millisecond
	for {
		partitions, found, err := l.lookUp(ctx, true)
		if err != nil {
			return err
		}
		if found {
			return l.checkPartitions(partitions)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topic %s: it was created, but the brokers %s do not show it yet: %w",
				l.topic, strings.Join(l.servers, ","), ctx.Err())
		case <-time.After(backoff):
			backoff = min(2*backoff, time.Second)
		}
	}
}

// lookUp asks the cluster's metadata for the topic's partition count. found is false while the topic
// is unknown or has no partitions yet. Errors that heal by themselves are retried.
func (l *topicLog) lookUp(ctx context.Context, refresh bool) (partitions int, found bool, err error) {
	return l.lookUpWith(ctx, l.transport, refresh)
}

// lookUpWith is lookUp through transport.
func (l *topicLog) lookUpWith(ctx context.Context, transport kafkago.RoundTripper, refresh bool) (partitions int, found bool, err error) {
	err = l.retry(ctx, func() error {
		m, err := transport.RoundTrip(ctx, l.addr, &metadataAPI.Request{TopicNames: []string{l.topic}, AllowAutoTopicCreation: refresh})
		if err != nil {
			return err
		}
		resp, ok := m.(*metadataAPI.Response)
		if !ok {
			return fmt.Errorf("unexpected metadata response %T", m)
		}
		for _, t := range resp.Topics {
			if t.Name != l.topic {
				continue
			}
			switch code := kafkago.Error(t.ErrorCode); {
			case code == 0:
				partitions, found = len(t.Partitions), len(t.Partitions) > 0
			case code == kafkago.UnknownTopicOrPartition, code == kafkago.LeaderNotAvailable:
			default:
				return code
			}
		}
		return nil
	})
	if err != nil {
		return 0, false, fmt.Errorf("topic %s: looking it up: %w", l.topic, l.explain(err))
	}
	return partitions, found, nil
}

// knownToReader waits until the consumer's own transport has the topic in its metadata, so the first
// fetch finds the leader (see ensureTopic for why an auto-creating lookup refreshes it).
func (l *topicLog) knownToReader(ctx context.Context) error {
	backoff := 50 * time.Millisecond
	for {
		_, found, err := l.lookUpWith(ctx, l.readTransport, true)
		if err != nil || found {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topic %s: the consumer's connection does not show it yet: %w", l.topic, ctx.Err())
		case <-time.After(backoff):
			backoff = min(2*backoff, time.Second)
		}
	}
}

func (l *topicLog) checkPartitions(n int) error {
	if n != 1 {
		return source.Fatal(fmt.Errorf("topic %s has %d partitions; it must have exactly one so the DDL stays in order: recreate it with one partition", l.topic, n))
	}
	return nil
}

// ReadAll returns every record value below the high watermark the partition had when the call began.
func (l *topicLog) ReadAll(ctx context.Context) ([][]byte, error) {
	if l.closed.Load() {
		return nil, fmt.Errorf("topic %s: reading: the log is closed", l.topic)
	}
	var start, end int64
	err := l.retry(ctx, func() error {
		resp, err := l.reader.ListOffsets(ctx, &kafkago.ListOffsetsRequest{
			Topics: map[string][]kafkago.OffsetRequest{l.topic: {kafkago.FirstOffsetOf(0), kafkago.LastOffsetOf(0)}},
		})
		if err != nil {
			return err
		}
		for _, p := range resp.Topics[l.topic] {
			if p.Partition == 0 {
				if p.Error != nil {
					return p.Error
				}
				start, end = p.FirstOffset, p.LastOffset
				return nil
			}
		}
		return fmt.Errorf("the broker did not answer for partition 0")
	})
	if err != nil {
		return nil, fmt.Errorf("topic %s: reading its end offset: %w", l.topic, l.explain(err))
	}
	if end <= start {
		return nil, nil
	}

	var out [][]byte
	next := start
	for next < end {
		err := l.retry(ctx, func() error {
			resp, err := l.reader.Fetch(ctx, &kafkago.FetchRequest{
				Topic: l.topic, Partition: 0, Offset: next,
				MinBytes: 1, MaxBytes: int64(l.maxBytes), MaxWait: 500 * time.Millisecond,
			})
			if err != nil {
				return err
			}
			if resp.Error != nil {
				return resp.Error
			}
			from := next
			if out, next, err = appendRecords(out, resp.Records, next, end); err != nil {
				return err
			}
			if next == from {
				return errNoProgress
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("topic %s: reading from offset %d (end %d): %w", l.topic, next, end, l.explain(err))
		}
	}
	return out, nil
}

// errNoProgress is a fetch below the high watermark that returned nothing new; retried like a
// transient error, so a partition that never gets there fails after retryTimeout.
var errNoProgress = errors.New("the fetch returned no records below the end offset")

// appendRecords appends the values of the records of a fetch response with offsets in [next, end)
// to out and returns the offset after the last one. A response may start before next (it holds
// whole batches) and run past end. Control batches (transaction markers) hold no values but take
// offsets, so they advance next without adding to out.
func appendRecords(out [][]byte, records kafkago.RecordReader, next, end int64) ([][]byte, int64, error) {
	batches := []kafkago.RecordReader{records}
	if s, ok := records.(*protocol.RecordStream); ok {
		batches = s.Records
	}
	for _, batch := range batches {
		_, control := batch.(*protocol.ControlBatch)
		for next < end {
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
			if rec.Offset >= end {
				return out, next, nil
			}
			next = rec.Offset + 1
			if control {
				continue
			}
			var value []byte
			if rec.Value != nil {
				if value, err = protocol.ReadAll(rec.Value); err != nil {
					return out, next, err
				}
			}
			out = append(out, value)
		}
	}
	return out, next, nil
}

// Append produces record to partition 0 and returns once every in-sync replica has it.
func (l *topicLog) Append(ctx context.Context, record []byte) error {
	if l.closed.Load() {
		return fmt.Errorf("topic %s: appending: the log is closed", l.topic)
	}
	err := l.retry(ctx, func() error {
		resp, err := l.client.Produce(ctx, &kafkago.ProduceRequest{
			Topic: l.topic, Partition: 0, RequiredAcks: kafkago.RequireAll,
			// A zero Time: kafka-go stamps the record with the send time, as the Java producer does.
			Records: kafkago.NewRecordReader(kafkago.Record{Value: nullable(record)}),
		})
		switch {
		case err != nil:
			return err
		case resp.Error != nil:
			return resp.Error
		case len(resp.RecordErrors) > 0:
			return fmt.Errorf("the broker refused the record: %v", resp.RecordErrors)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("topic %s: appending a record: %w", l.topic, l.explain(err))
	}
	return nil
}

func nullable(b []byte) kafkago.Bytes {
	if b == nil {
		return nil
	}
	return kafkago.NewBytes(b)
}

// Close closes the connections of the log's own transport; a transport handed to the opener is left
// open for its other users. It waits for idle connections to close at most until ctx ends.
func (l *topicLog) Close(ctx context.Context) error {
	if l.closed.Swap(true) || len(l.owned) == 0 {
		return nil
	}
	done := make(chan struct{})
	go func() {
		for _, t := range l.owned {
			t.CloseIdleConnections()
		}
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("topic %s: closing its connections: %w", l.topic, ctx.Err())
	}
}

// retry runs op until it succeeds, fails with an error that does not heal by itself, ctx ends, or
// retryTimeout passes since the first attempt.
func (l *topicLog) retry(ctx context.Context, op func() error) error {
	first := time.Now()
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := op()
		if err == nil || !retriable(err) {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w (last error: %w)", ctx.Err(), err)
		}
		if time.Since(first)+backoff > l.retryTimeout {
			return fmt.Errorf("%w (still failing after %d attempts in %s)", err, attempt, time.Since(first).Round(time.Millisecond))
		}
		if attempt%10 == 1 {
			l.log.Warn("kafka request failed; retrying", "attempt", attempt, "error", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %w)", ctx.Err(), err)
		case <-time.After(backoff):
			backoff = min(2*backoff, 2*time.Second)
		}
	}
}

// retriable reports whether err may heal by itself: a Kafka error kafka-go calls temporary (no
// leader, not enough replicas, a timeout), a transport whose cached metadata lacks the topic or its
// leader yet, a broken or refused connection, or a fetch that made no progress.
func retriable(err error) bool {
	if errors.Is(err, ErrSecurity) {
		return false
	}
	var kerr kafkago.Error
	if errors.As(err, &kerr) {
		return kerr.Temporary()
	}
	var nerr net.Error
	return errors.As(err, &nerr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, protocol.ErrNoTopic) || errors.Is(err, protocol.ErrNoPartition) || errors.Is(err, protocol.ErrNoLeader) ||
		errors.Is(err, errNoProgress)
}

// explain adds what to check to an error that means the brokers could not be reached.
func (l *topicLog) explain(err error) error {
	var nerr net.Error
	if errors.As(err, &nerr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return unreachableError(l.servers, err)
	}
	return err
}

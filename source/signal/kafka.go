package signal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cdcd/cdcd/source/props"
)

// The kafka channel is Debezium 3.6.1's KafkaSignalChannel: a consumer of partition 0 of the signal topic
// (signal.kafka.topic, default <topic.prefix>-signal), assigned rather than subscribed, so its group
// (signal.kafka.groupId, default kafka-signal) only stores its committed offset. A record whose key equals
// topic.prefix is a signal; its value is a JSON object {"id", "type", "data"} whose id may be missing
// (Debezium's own examples have none) and whose data is a JSON object. Other keys are another connector's
// signals, skipped. A restart resumes at the group's committed offset, or at auto.offset.reset (earliest)
// when there is none: Debezium 3.6.1 keeps no signal offset in the connector offsets (DBZ-7856 removed
// incremental_snapshot_signal_offset), so the committed offset is the whole hand-over, and cdcd commits
// it to the same group, partition and topic as Debezium's consumer.
//
// The kafka-go consumer is the runtime's (cmd/cdcd wires it in through source.Env); this file holds the
// contract it implements and what the channel does with the records.

// ChannelKafka is signal.enabled.channels' name of the channel.
const ChannelKafka = "kafka"

// KafkaSpec says which signal topic a KafkaOpener consumes and how.
type KafkaSpec struct {
	Topic string
	// Servers are the brokers: signal.consumer.bootstrap.servers, else signal.kafka.bootstrap.servers.
	Servers []string
	// GroupID stores the committed offset: signal.consumer.group.id, else signal.kafka.groupId.
	GroupID string
	// ClientID is signal.consumer.client.id; "" for a random one, as Debezium's consumer has.
	ClientID string
	// Latest is auto.offset.reset=latest: with no committed offset (or one the topic no longer holds)
	// reading starts at the end instead of the first record (earliest, Debezium's default).
	Latest bool
	// PollTimeout is signal.kafka.poll.timeout.ms: how long one poll waits for records (0: not at all).
	PollTimeout time.Duration
	// Security are the consumer's security.*, ssl.* and sasl.* settings (signal.consumer.* with the prefix
	// removed). As Debezium's consumer is built from signal.consumer.* alone, none means PLAINTEXT: the
	// worker's own security does not apply. The opener honours each or refuses it.
	Security map[string]string
}

// KafkaRecord is one record of the signal topic's partition 0.
type KafkaRecord struct {
	Offset     int64
	Key, Value []byte // nil when null
}

// KafkaOpener opens consumers of signal topics; the runtime implements it (with kafka-go) and lends it to
// readers through source.Env. It may be called concurrently by several tasks.
type KafkaOpener interface {
	// OpenSignals returns a consumer of spec.Topic's partition 0 that logs to log (the reader's). It does
	// not contact Kafka. An error is a setting of spec that cannot be honoured; a restart does not fix it.
	OpenSignals(spec KafkaSpec, log *slog.Logger) (KafkaConsumer, error)
}

// KafkaConsumer reads one signal topic's partition 0 for one goroutine: it is not safe for concurrent use.
type KafkaConsumer interface {
	// Poll returns the records after the previous poll's, in offset order (none when there are none yet).
	// The first poll starts at the group's committed offset, or per KafkaSpec.Latest when the group has
	// none. It blocks on the network, for at most KafkaSpec.PollTimeout waiting for records, and returns
	// when ctx ends. An error leaves the position where it was: the next poll tries again.
	Poll(ctx context.Context) ([]KafkaRecord, error)
	// Commit stores next (the offset of the first record not handled yet) as the group's committed offset
	// of partition 0, without joining the group, as a Java consumer's commitSync of an assigned partition.
	// It blocks until the coordinator answers or ctx ends.
	Commit(ctx context.Context, next int64) error
	// Close releases the consumer's connections. It does not block.
	Close() error
}

// KafkaConfig is the kafka channel's settings beside its KafkaSpec.
type KafkaConfig struct {
	Spec KafkaSpec
	// Key is the key of this connector's signals: topic.prefix (Debezium's logical name).
	Key string
	// AutoCommit and CommitInterval are enable.auto.commit (true) and auto.commit.interval.ms (5000): how
	// often the position is committed while the channel runs. It is committed when the channel stops too,
	// as Debezium's consumer is closed with a commitSync.
	AutoCommit     bool
	CommitInterval time.Duration
}

const kafkaConsumerPrefix = "signal.consumer."

// kafkaKeys are the kafka channel's own keys (KafkaSignalChannel's fields).
var kafkaKeys = []string{"signal.kafka.topic", "signal.kafka.bootstrap.servers", "signal.kafka.groupId", "signal.kafka.poll.timeout.ms"}

// IsKafkaKey reports whether key is one ReadConfig reads for the kafka channel, so a connector's key
// accounting claims it: the signal.kafka.* keys and every signal.consumer.* key (honoured, or refused by
// ReadConfig and the runtime's client security parsing).
func IsKafkaKey(key string) bool {
	return slices.Contains(kafkaKeys, key) || strings.HasPrefix(key, kafkaConsumerPrefix)
}

// readKafka reads the kafka channel's keys. They are read whether the channel is on or not (Debezium
// accepts them unused), but only checked when it is.
func readKafka(p *props.Parser, topicPrefix string, on bool) KafkaConfig {
	k := KafkaConfig{Key: topicPrefix, AutoCommit: true, CommitInterval: 5 * time.Second}
	s := &k.Spec
	s.Topic = strings.TrimSpace(p.Str("signal.kafka.topic", ""))
	if s.Topic == "" {
		s.Topic = topicPrefix + "-signal"
	}
	servers := p.Str("signal.kafka.bootstrap.servers", "")
	s.GroupID = p.Str("signal.kafka.groupId", "kafka-signal")
	s.PollTimeout = p.Millis("signal.kafka.poll.timeout.ms", 0)
	consumer := p.WithPrefix(kafkaConsumerPrefix)
	for _, key := range slices.Sorted(maps.Keys(consumer)) {
		v, full := strings.TrimSpace(consumer[key]), kafkaConsumerPrefix+key
		switch {
		case props.IsKafkaSecurityKey(key):
			if s.Security == nil {
				s.Security = map[string]string{}
			}
			s.Security[key] = consumer[key] // the runtime's client security parsing honours or refuses it
		case key == "bootstrap.servers":
			servers = v
		case key == "group.id":
			s.GroupID = v
		case key == "client.id":
			s.ClientID = v
		case key == "auto.offset.reset":
			switch strings.ToLower(v) {
			case "earliest":
			case "latest":
				s.Latest = true
			default:
				p.Fail(full, consumer[key], "cdcd's signal consumer starts at earliest (Debezium's default) or latest; "+
					"none would fail every poll of a topic without a committed offset: use earliest or latest")
			}
		case key == "enable.auto.commit":
			k.AutoCommit = p.Boolean(full, true)
		case key == "auto.commit.interval.ms":
			k.CommitInterval = p.Millis(full, 5000)
		case key == "key.deserializer" || key == "value.deserializer":
			if v != "org.apache.kafka.common.serialization.StringDeserializer" {
				p.Fail(full, consumer[key], "cdcd reads signal keys and values as UTF-8 text, as Debezium's org.apache.kafka.common.serialization.StringDeserializer does; remove the key")
			}
		default:
			p.Add(&props.NotImplementedError{Key: full})
		}
	}
	for _, srv := range strings.Split(servers, ",") {
		if srv = strings.TrimSpace(srv); srv != "" {
			s.Servers = append(s.Servers, srv)
		}
	}
	if on && len(s.Servers) == 0 {
		p.Fail("signal.kafka.bootstrap.servers", servers, "the kafka signal channel (signal.enabled.channels) reads its signals from these brokers; "+
			"set it to host:port[,host:port…], usually the Kafka cluster the worker writes to")
	}
	if on && s.GroupID == "" {
		p.Fail("signal.kafka.groupId", s.GroupID, "the signal consumer's group stores where it stopped reading; name one (the default is kafka-signal)")
	}
	return k
}

// KafkaSpecOf is the KafkaSpec of a connector's config when it enables the kafka channel: what the
// runtime checks at validation, beside the connector's own parse.
func KafkaSpecOf(settings map[string]string) (KafkaSpec, bool) {
	c := ReadConfig(props.NewParser(settings), settings["topic.prefix"])
	return c.KafkaChannel.Spec, c.Kafka
}

// ParseKafka reads a signal record's value as Debezium's KafkaSignalChannel does: a JSON object whose "id"
// and "type" are strings ("id" may be missing: the signal then has none) and whose "data" is a JSON object.
// Other fields are ignored.
func ParseKafka(value []byte) (Signal, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(value, &raw); err != nil || raw == nil {
		if err == nil {
			err = errors.New("null")
		}
		return Signal{}, fmt.Errorf(`a Kafka signal is a JSON object {"id", "type", "data"}: %w`, err)
	}
	str := func(field string) string {
		var s string
		if json.Unmarshal(raw[field], &s) != nil {
			return "" // missing or not a string: Debezium's getString gives null
		}
		return s
	}
	s := Signal{ID: str("id"), Type: str("type"), Channel: ChannelKafka}
	if s.Type == "" {
		return Signal{}, errors.New(`a Kafka signal needs a "type" string`)
	}
	data := bytes.TrimSpace(raw["data"])
	if len(data) == 0 || data[0] != '{' {
		return Signal{}, fmt.Errorf(`signal %q (%s): "data" must be a JSON object (send {} for none)`, s.ID, s.Type)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		return Signal{}, fmt.Errorf("signal %q (%s): data: %w", s.ID, s.Type, err)
	}
	s.Data = compact.String()
	return s, nil
}

// StartKafka opens the kafka channel's consumer and reads it on a goroutine of its own until ctx ends or
// stop is called; stop waits for the goroutine, whose last commit takes at most kafkaFinalCommit. An
// error (no opener, a setting the opener refuses) is the config's.
func (q *Queue) StartKafka(ctx context.Context, opener KafkaOpener, c KafkaConfig, every time.Duration, log *slog.Logger) (stop func(), err error) {
	if opener == nil {
		return nil, errors.New("the kafka signal channel is enabled, but the runtime gives this reader no Kafka consumer")
	}
	log = log.With("signal channel", ChannelKafka, "topic", c.Spec.Topic)
	consumer, err := opener.OpenSignals(c.Spec, log)
	if err != nil {
		return nil, fmt.Errorf("the kafka signal channel (topic %s): %w", c.Spec.Topic, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.ReadKafka(ctx, consumer, c, every, log)
	}()
	return func() { cancel(); <-done }, nil
}

// kafkaFinalCommit bounds the commit of the position when the channel stops.
const kafkaFinalCommit = 5 * time.Second

// ReadKafka polls consumer every interval (signal.poll.interval.ms, as Debezium's SignalProcessor does)
// until ctx ends, queues the signals keyed with c.Key, commits the position, and closes consumer.
//
// A record with another key, a null or empty value, or a value that is not a signal is logged and skipped,
// as Debezium skips it. A signal waits for room in the queue (the reader drains it between two messages,
// so the channel stops reading while the reader cannot take signals). The committed position never passes
// a signal the reader has not taken from the queue yet: a signal still queued when the reader stops is read
// again after the restart instead of being lost. A signal already taken is never read again, by cdcd or by
// Debezium reading the same group.
func (q *Queue) ReadKafka(ctx context.Context, consumer KafkaConsumer, c KafkaConfig, interval time.Duration, log *slog.Logger) {
	r := kafkaRun{q: q, c: consumer, cfg: c, log: log, next: -1, safe: -1, committed: -1}
	defer func() {
		if r.drained() {
			r.safe = r.next
		}
		if r.safe > r.committed {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), kafkaFinalCommit)
			if err := consumer.Commit(cctx, r.safe); err != nil {
				log.Warn("committing the signal topic's position failed; signals after it may be read again at the next start", "offset", r.safe, "error", err)
			}
			cancel()
		}
		_ = consumer.Close()
	}()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	lastCommit := time.Now()
	for {
		r.poll(ctx)
		if ctx.Err() != nil {
			return
		}
		if c.AutoCommit && time.Since(lastCommit) >= c.CommitInterval {
			lastCommit = time.Now()
			r.commit(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// kafkaRun is one ReadKafka's state.
type kafkaRun struct {
	q   *Queue
	c   KafkaConsumer
	cfg KafkaConfig
	log *slog.Logger
	// next is the offset after the last record handled (-1: none yet); safe the highest such offset before
	// which every signal has been taken by the reader; committed the last committed one.
	next, safe, committed int64
	pending               bool // signals queued since the queue was last seen empty
	failing               string
	failures              int
}

// drained reports whether every signal queued so far has been taken by the reader.
func (r *kafkaRun) drained() bool {
	if len(r.q.ch) == 0 {
		r.pending = false
	}
	return !r.pending
}

func (r *kafkaRun) poll(ctx context.Context) {
	recs, err := r.c.Poll(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		// Logged when it starts or changes, then every 60th time: the channel retries at every interval.
		if msg := err.Error(); msg != r.failing || r.failures%60 == 0 {
			r.log.Warn("reading the signal topic failed; retrying", "error", err)
			r.failing = msg
		}
		r.failures++
		return
	}
	if r.failures > 0 {
		r.log.Info("reading the signal topic again", "failed polls", r.failures)
		r.failing, r.failures = "", 0
	}
	for _, rec := range recs {
		if !r.handle(ctx, rec) {
			return
		}
		r.next = rec.Offset + 1
		if r.drained() {
			r.safe = r.next
		}
	}
}

// handle queues the signal of rec, if it is one of this connector's; false when ctx ended first.
func (r *kafkaRun) handle(ctx context.Context, rec KafkaRecord) bool {
	if rec.Key == nil || string(rec.Key) != r.cfg.Key {
		r.log.Info("signal skipped: its key is not this connector's topic.prefix", "offset", rec.Offset, "key", string(rec.Key), "topic.prefix", r.cfg.Key)
		return true
	}
	if len(bytes.TrimSpace(rec.Value)) == 0 {
		return true // a tombstone
	}
	sig, err := ParseKafka(rec.Value)
	if err != nil {
		r.log.Warn("signal skipped", "offset", rec.Offset, "error", err)
		return true
	}
	if err := r.q.put(ctx, sig); err != nil {
		if ctx.Err() != nil {
			return false
		}
		r.log.Warn("signal skipped", "offset", rec.Offset, "signal", sig.ID, "type", sig.Type, "error", err)
		return true
	}
	r.pending = true
	return true
}

// commit stores the safe position, when it moved.
func (r *kafkaRun) commit(ctx context.Context) {
	if r.drained() {
		r.safe = r.next
	}
	if r.safe <= r.committed {
		return
	}
	if err := r.c.Commit(ctx, r.safe); err != nil {
		if ctx.Err() == nil {
			r.log.Warn("committing the signal topic's position failed; retrying at the next commit", "offset", r.safe, "error", err)
		}
		return
	}
	r.committed = r.safe
}

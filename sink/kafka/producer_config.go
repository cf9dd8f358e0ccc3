package kafka

import (
	"fmt"
	"log/slog"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	kafkago "github.com/segmentio/kafka-go"
)

// producerSettings is the producer configuration after Connect's defaults and the user's
// producer.* overrides were applied, in kafka-go's terms.
type producerSettings struct {
	brokers        []string
	clientID       string
	acks           kafkago.RequiredAcks
	compression    kafkago.Compression
	linger         time.Duration
	batchBytes     int64 // max.request.size: largest record and largest per-partition batch
	stickyBytes    int64 // batch.size: how long a nil-key topic stays on one partition
	requestTimeout time.Duration
	maxAttempts    int
	backoffMin     time.Duration
	backoffMax     time.Duration
	bufferMemory   int64         // 0: not set by the user
	maxBlock       time.Duration // 0: block until ctx is done (Connect's Long.MAX_VALUE)
	idleTimeout    time.Duration
	metadataTTL    time.Duration
}

// Defaults: the Java producer's (kafka-clients 4.x ProducerConfig) overlaid with what Connect's
// Worker.baseProducerConfigs forces for source tasks: acks=all, max.in.flight=1,
// delivery.timeout.ms=Integer.MAX_VALUE, max.block.ms=Long.MAX_VALUE, enable.idempotence=false.
func defaultProducerSettings() producerSettings {
	return producerSettings{
		acks:           kafkago.RequireAll,
		linger:         5 * time.Millisecond, // linger.ms default since Kafka 4.0 (KIP-1030)
		batchBytes:     1048576,              // max.request.size
		stickyBytes:    16384,                // batch.size
		requestTimeout: 30 * time.Second,
		backoffMin:     100 * time.Millisecond,
		backoffMax:     time.Second,
		idleTimeout:    9 * time.Minute, // connections.max.idle.ms
		metadataTTL:    5 * time.Minute, // metadata.max.age.ms
	}
}

// producerKeysWithoutEffect are Java producer settings that have no counterpart in kafka-go but
// whose absence changes nothing a consumer can observe; they are accepted with an info log.
var producerKeysWithoutEffect = map[string]string{
	"key.serializer":                           "records arrive already serialized",
	"value.serializer":                         "records arrive already serialized",
	"max.in.flight.requests.per.connection":    "kafka-go always keeps one batch in flight per partition",
	"send.buffer.bytes":                        "kafka-go uses the OS socket buffer sizes",
	"receive.buffer.bytes":                     "kafka-go uses the OS socket buffer sizes",
	"reconnect.backoff.ms":                     "kafka-go reconnects on the next request",
	"reconnect.backoff.max.ms":                 "kafka-go reconnects on the next request",
	"client.dns.lookup":                        "kafka-go resolves with the system resolver",
	"partitioner.adaptive.partitioning.enable": "only affects records without a key",
	"partitioner.availability.timeout.ms":      "only affects records without a key",
	"metric.reporters":                         "cdcd exposes Prometheus metrics instead",
	"metrics.num.samples":                      "cdcd exposes Prometheus metrics instead",
	"metrics.recording.level":                  "cdcd exposes Prometheus metrics instead",
	"metrics.sample.window.ms":                 "cdcd exposes Prometheus metrics instead",
	"enable.metrics.push":                      "cdcd exposes Prometheus metrics instead",
	"compression.gzip.level":                   "kafka-go uses the codec's default level",
	"compression.lz4.level":                    "kafka-go uses the codec's default level",
	"compression.zstd.level":                   "kafka-go uses the codec's default level",
}

// parseProducerSettings applies Config (bootstrap servers, default client id) and its Producer map
// (the producer.* settings with the prefix stripped, Connect precedence already applied by the
// caller) over Connect's defaults. Settings that would silently change what lands in Kafka, or how
// we connect to it, are errors; the rest of what kafka-go cannot do is logged and ignored.
func parseProducerSettings(cfg Config, log *slog.Logger) (producerSettings, error) {
	s := defaultProducerSettings()
	s.brokers = cfg.Brokers
	s.clientID = cfg.ClientID
	deliveryTimeout := time.Duration(math.MaxInt32) * time.Millisecond
	retries := -1 // not set: Java's default is Integer.MAX_VALUE, bounded by delivery.timeout.ms

	keys := make([]string, 0, len(cfg.Producer))
	for k := range cfg.Producer {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic first error and log order

	for _, key := range keys {
		value := strings.TrimSpace(cfg.Producer[key])
		var err error
		switch key {
		case "bootstrap.servers":
			s.brokers = splitList(value)
		case "client.id":
			s.clientID = value
		case "acks":
			s.acks, err = parseAcks(value)
			if err == nil && s.acks != kafkago.RequireAll {
				log.Warn("producer acks is not \"all\": acknowledged records can be lost when a broker fails, "+
					"and positions are committed on acknowledgement", "key", key, "value", value)
			}
		case "compression.type":
			s.compression, err = parseCompression(value)
		case "linger.ms":
			var d time.Duration
			d, err = parseMillis(value)
			// kafka-go treats 0 as "use the 1 s default"; 1 ms is the closest it gets to Java's
			// "send as soon as the previous request is done".
			s.linger = max(d, time.Millisecond)
		case "batch.size":
			// Java caps a partition's batch at batch.size but packs the batches of many
			// partitions into one request of up to max.request.size. kafka-go sends one
			// partition per request and uses one limit for the batch and the largest record,
			// so that limit is max.request.size; batch.size keeps its other role, how long
			// keyless records stick to one partition.
			s.stickyBytes, err = parsePositive(value)
		case "max.request.size":
			s.batchBytes, err = parsePositive(value)
		case "request.timeout.ms":
			s.requestTimeout, err = parseMillis(value)
		case "delivery.timeout.ms":
			deliveryTimeout, err = parseMillis(value)
		case "retries":
			var n int64
			n, err = strconv.ParseInt(value, 10, 32)
			retries = int(n)
		case "retry.backoff.ms":
			s.backoffMin, err = parseMillis(value)
		case "retry.backoff.max.ms":
			s.backoffMax, err = parseMillis(value)
		case "buffer.memory":
			s.bufferMemory, err = parsePositive(value)
		case "max.block.ms":
			s.maxBlock, err = parseMillis(value)
			if s.maxBlock >= time.Duration(math.MaxInt64/2) {
				s.maxBlock = 0 // Connect's Long.MAX_VALUE: no bound but ctx
			}
		case "connections.max.idle.ms":
			s.idleTimeout, err = parseMillis(value)
		case "metadata.max.age.ms":
			s.metadataTTL, err = parseMillis(value)
		case "enable.idempotence":
			if strings.EqualFold(value, "true") {
				log.Warn("producer enable.idempotence=true is not supported by kafka-go and is ignored: "+
					"a retried batch may be written twice (delivery stays at-least-once, order is kept)", "key", key)
			}
		case "transactional.id":
			err = fmt.Errorf("transactions are not supported (exactly.once.source.support must stay disabled)")
		case "partitioner.class":
			if value != "org.apache.kafka.clients.producer.internals.DefaultPartitioner" {
				err = fmt.Errorf("only the default partitioner is supported; %s would place records elsewhere", value)
			}
		case "partitioner.ignore.keys":
			if strings.EqualFold(value, "true") {
				err = fmt.Errorf("ignoring keys would spread a key's records over partitions and break per-key order")
			}
		case "security.protocol":
			if !strings.EqualFold(value, "PLAINTEXT") {
				err = fmt.Errorf("only PLAINTEXT is supported; TLS and SASL are not implemented in cdcd yet")
			}
		case "interceptor.classes":
			if value != "" {
				err = fmt.Errorf("producer interceptors are Java classes, which cdcd cannot run")
			}
		default:
			if reason, ok := producerKeysWithoutEffect[key]; ok {
				log.Info("producer setting has no effect in cdcd", "key", key, "reason", reason)
				continue
			}
			log.Warn("producer setting is not supported by cdcd and is ignored", "key", key, "value", redact(key, value))
		}
		if err != nil {
			return producerSettings{}, fmt.Errorf("producer setting %s=%q: %w", key, redact(key, value), err)
		}
	}
	if len(s.brokers) == 0 {
		return producerSettings{}, fmt.Errorf("no Kafka brokers configured (bootstrap.servers is empty)")
	}
	s.maxAttempts = attemptsFor(deliveryTimeout, s.backoffMax, retries)
	return s, nil
}

// attemptsFor turns Java's time-based delivery bound into kafka-go's attempt count. A failed attempt
// costs at least one backoff (about backoffMax once the backoff has grown), so this many attempts
// keep retrying for at least delivery.timeout.ms when the broker fails fast, and longer when each
// attempt runs into request.timeout.ms. Connect's default (Integer.MAX_VALUE ms) means "retry
// retriable errors for about 25 days", i.e. until someone fixes the cluster or stops the task.
func attemptsFor(deliveryTimeout, backoffMax time.Duration, retries int) int {
	attempts := int64(math.MaxInt32)
	if backoffMax > 0 {
		attempts = min(attempts, int64(deliveryTimeout/backoffMax)+1)
	}
	if retries >= 0 {
		attempts = min(attempts, int64(retries)+1)
	}
	return int(max(attempts, 1))
}

func parseAcks(v string) (kafkago.RequiredAcks, error) {
	switch v {
	case "all", "-1":
		return kafkago.RequireAll, nil
	case "1":
		return kafkago.RequireOne, nil
	case "0":
		return kafkago.RequireNone, nil
	}
	return 0, fmt.Errorf("must be all, -1, 0 or 1")
}

func parseCompression(v string) (kafkago.Compression, error) {
	switch strings.ToLower(v) {
	case "none", "":
		return 0, nil
	case "gzip":
		return kafkago.Gzip, nil
	case "snappy":
		return kafkago.Snappy, nil
	case "lz4":
		return kafkago.Lz4, nil
	case "zstd":
		return kafkago.Zstd, nil
	}
	return 0, fmt.Errorf("must be none, gzip, snappy, lz4 or zstd")
}

func parseMillis(v string) (time.Duration, error) {
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ms < 0 {
		return 0, fmt.Errorf("must be a non-negative number of milliseconds")
	}
	if ms > math.MaxInt64/int64(time.Millisecond) {
		return time.Duration(math.MaxInt64), nil
	}
	return time.Duration(ms) * time.Millisecond, nil
}

func parsePositive(v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("must be a positive integer")
	}
	return n, nil
}

// splitList parses a Java config LIST: comma-separated, blanks trimmed, empty items dropped.
func splitList(v string) []string {
	var out []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// redact hides values of settings that usually carry secrets (sasl.jaas.config, ssl.*.password).
func redact(key, value string) string {
	if strings.Contains(key, "password") || strings.Contains(key, "jaas") || strings.Contains(key, "secret") {
		return "[hidden]"
	}
	return value
}

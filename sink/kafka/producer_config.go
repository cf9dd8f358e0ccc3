package kafka

import (
	"fmt"
	"log/slog"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cdcd/cdcd/source/props"
	kafkago "github.com/segmentio/kafka-go"
)

// producerSettings is the producer configuration after the Java producer's defaults, Connect's and the
// user's producer.* settings were applied.
type producerSettings struct {
	brokers         []string
	clientID        string
	acks            int16 // -1 (all), 0 or 1
	compression     kafkago.Compression
	linger          time.Duration
	lingerSet       bool  // linger.ms was set by the user: honoured as Java's, even when the source is idle
	batchSize       int64 // batch.size: a partition's batch closes at this many bytes
	stickyBytes     int64 // batch.size too: how many bytes nil-key records send to one partition before moving on
	maxRequestSize  int64 // max.request.size: the largest record and the largest request
	maxInFlight     int   // max.in.flight.requests.per.connection
	idempotent      bool  // enable.idempotence
	requestTimeout  time.Duration
	deliveryTimeout time.Duration // from a record's append to giving it up
	retries         int           // attempts after the first
	backoffMin      time.Duration
	backoffMax      time.Duration
	bufferMemory    int64         // 0: not set by the user
	maxBlock        time.Duration // 0: block until ctx is done (Connect's Long.MAX_VALUE)
	idleTimeout     time.Duration
	metadataTTL     time.Duration
	// transactionalID is Config.TransactionalID: "" for a producer without transactions.
	transactionalID    string
	transactionTimeout time.Duration // transaction.timeout.ms
}

// Defaults: the Java producer's (kafka-clients 4.x ProducerConfig) overlaid with what Connect's
// Worker.baseProducerConfigs sets for source tasks: acks=all, delivery.timeout.ms=Integer.MAX_VALUE,
// max.block.ms=Long.MAX_VALUE. Connect also sets max.in.flight.requests.per.connection=1, which its
// producer needs for order only without idempotence; cdcd keeps the Java producer's 5 under idempotence
// (on by default, as in Java), where sequence numbers keep order and prevent duplicates, so a consumer
// sees the same records in the same order, sooner.
//
// batch.size is the one default cdcd does not take from Java: 16384 bytes caps what one request carries
// for a partition (a request holds one batch per partition), which keeps a CDC topic's single hot
// partition at a fraction of what the broker takes (BenchmarkRealKafkaSend: about a sixth). Unset, a
// batch grows to max.request.size, as cdcd's producer always did; set, it is honoured as Java's. The
// stickiness of records without a key keeps Java's 16384 unless batch.size is set.
func defaultProducerSettings() producerSettings {
	return producerSettings{
		acks:            -1,
		linger:          5 * time.Millisecond, // linger.ms default since Kafka 4.0 (KIP-1030)
		batchSize:       1048576,              // max.request.size
		stickyBytes:     16384,
		maxRequestSize:  1048576,
		maxInFlight:     5,
		idempotent:      true,
		requestTimeout:  30 * time.Second,
		deliveryTimeout: time.Duration(math.MaxInt32) * time.Millisecond,
		retries:         math.MaxInt32,
		backoffMin:      100 * time.Millisecond,
		backoffMax:      time.Second,
		idleTimeout:     9 * time.Minute, // connections.max.idle.ms
		metadataTTL:     5 * time.Minute, // metadata.max.age.ms

		transactionTimeout: time.Minute, // transaction.timeout.ms
	}
}

// maxInFlightIdempotent is the most requests per connection the broker's duplicate detection covers
// (it remembers the last five batches of each producer and partition).
const maxInFlightIdempotent = 5

// producerKeysWithoutEffect are Java producer settings that cdcd's producer does not use but whose
// absence changes nothing a consumer can observe; they are accepted with an info log.
var producerKeysWithoutEffect = map[string]string{
	"key.serializer":                           "records arrive already serialized",
	"value.serializer":                         "records arrive already serialized",
	"send.buffer.bytes":                        "cdcd uses the OS socket buffer sizes",
	"receive.buffer.bytes":                     "cdcd uses the OS socket buffer sizes",
	"reconnect.backoff.ms":                     "cdcd reconnects when a batch is retried, after retry.backoff.ms",
	"reconnect.backoff.max.ms":                 "cdcd reconnects when a batch is retried, after retry.backoff.ms",
	"client.dns.lookup":                        "cdcd resolves with the system resolver",
	"partitioner.adaptive.partitioning.enable": "only affects records without a key",
	"partitioner.availability.timeout.ms":      "only affects records without a key",
	"metric.reporters":                         "cdcd exposes Prometheus metrics instead",
	"metrics.num.samples":                      "cdcd exposes Prometheus metrics instead",
	"metrics.recording.level":                  "cdcd exposes Prometheus metrics instead",
	"metrics.sample.window.ms":                 "cdcd exposes Prometheus metrics instead",
	"enable.metrics.push":                      "cdcd exposes Prometheus metrics instead",
	"compression.gzip.level":                   "cdcd uses the codec's default level",
	"compression.lz4.level":                    "cdcd uses the codec's default level",
	"compression.zstd.level":                   "cdcd uses the codec's default level",
}

// parseProducerSettings applies Config (bootstrap servers, default client id) and its Producer map
// (the producer.* settings with the prefix stripped, Connect precedence already applied by the
// caller) over the defaults. Settings that cannot be honoured are errors (a *SettingError naming the
// key, why, and what to set instead); settings without effect are logged. The security keys
// (security.*, ssl.*, sasl.*) are ParseClientSecurity's, which honours or refuses each.
func parseProducerSettings(cfg Config, log *slog.Logger) (producerSettings, error) {
	s := defaultProducerSettings()
	s.brokers = cfg.Brokers
	s.clientID = cfg.ClientID
	s.transactionalID = cfg.TransactionalID
	set := map[string]bool{} // keys the user set, for the rules between keys

	keys := make([]string, 0, len(cfg.Producer))
	for k := range cfg.Producer {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic first error and log order

	for _, key := range keys {
		if props.IsKafkaSecurityKey(key) {
			continue // ParseClientSecurity's
		}
		value := strings.TrimSpace(cfg.Producer[key])
		set[key] = true
		var err error
		switch key {
		case "bootstrap.servers":
			s.brokers = splitList(value)
		case "client.id":
			s.clientID = value
		case "acks":
			s.acks, err = parseAcks(value)
			if err == nil && s.acks != -1 {
				log.Warn("producer acks is not \"all\": acknowledged records can be lost when a broker fails, "+
					"and positions are committed on acknowledgement", "key", key, "value", value)
			}
		case "compression.type":
			s.compression, err = parseCompression(value)
		case "linger.ms":
			s.linger, err = parseMillis(value)
			s.lingerSet = true
		case "batch.size":
			s.batchSize, err = parsePositive(value)
			s.stickyBytes = s.batchSize
		case "max.request.size":
			s.maxRequestSize, err = parsePositive(value)
		case "max.in.flight.requests.per.connection":
			var n int64
			if n, err = parsePositive(value); err == nil {
				s.maxInFlight = int(min(n, math.MaxInt32))
			}
		case "enable.idempotence":
			s.idempotent, err = parseBool(value)
		case "request.timeout.ms":
			s.requestTimeout, err = parseMillis(value)
		case "delivery.timeout.ms":
			s.deliveryTimeout, err = parseMillis(value)
		case "retries":
			var n int64
			n, err = strconv.ParseInt(value, 10, 32)
			if err != nil || n < 0 {
				err = fmt.Errorf("must be a non-negative integer")
			}
			s.retries = int(n)
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
		case "transactional.id":
			err = fmt.Errorf("a task's transactional.id is the runtime's: with exactly.once.source.support=enabled each task's producer gets " +
				"Connect's <group.id>-<connector>-<task>; remove the setting")
		case "transaction.timeout.ms":
			s.transactionTimeout, err = parseMillis(value)
			if err == nil && (s.transactionTimeout < time.Millisecond || s.transactionTimeout > math.MaxInt32*time.Millisecond) {
				err = fmt.Errorf("must be between 1 and %d milliseconds", math.MaxInt32)
			}
		case "partitioner.class":
			if value != "org.apache.kafka.clients.producer.internals.DefaultPartitioner" {
				err = fmt.Errorf("only the default partitioner is supported; %s would place records elsewhere", value)
			}
		case "partitioner.ignore.keys":
			if strings.EqualFold(value, "true") {
				err = fmt.Errorf("ignoring keys would spread a key's records over partitions and break per-key order")
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
			return producerSettings{}, &SettingError{Key: key, Err: fmt.Errorf("%q: %w", redact(key, value), err)}
		}
	}
	if len(s.brokers) == 0 {
		return producerSettings{}, fmt.Errorf("no Kafka brokers configured (bootstrap.servers is empty)")
	}
	if err := s.checkIdempotence(set, log); err != nil {
		return producerSettings{}, err
	}
	if set["delivery.timeout.ms"] && s.deliveryTimeout < s.linger+s.requestTimeout {
		return producerSettings{}, &SettingError{Key: "delivery.timeout.ms", Err: fmt.Errorf(
			"%d must be at least linger.ms + request.timeout.ms (%d), as in the Java producer; raise it or remove it",
			s.deliveryTimeout.Milliseconds(), (s.linger + s.requestTimeout).Milliseconds())}
	}
	if !set["batch.size"] {
		s.batchSize = s.maxRequestSize
	}
	if s.backoffMax < s.backoffMin {
		s.backoffMax = s.backoffMin // the Java producer's rule too
	}
	return s, nil
}

// checkIdempotence applies the Java producer's rules between enable.idempotence, acks, retries and
// max.in.flight.requests.per.connection, and the Sink contract's: no reordering on retries.
func (s *producerSettings) checkIdempotence(set map[string]bool, log *slog.Logger) error {
	conflict := ""
	switch {
	case s.acks != -1:
		conflict = "acks=all"
	case s.maxInFlight > maxInFlightIdempotent:
		conflict = "max.in.flight.requests.per.connection of at most 5"
	case s.retries == 0:
		conflict = "retries above 0"
	}
	if s.transactionalID != "" && (!s.idempotent || conflict != "") {
		if conflict == "" {
			conflict = "enable.idempotence=true"
		}
		return &SettingError{Key: "enable.idempotence", Err: fmt.Errorf(
			"exactly-once delivery (a transactional producer) needs %s, as the Java producer does; change that setting", conflict)}
	}
	if s.idempotent && conflict != "" {
		if set["enable.idempotence"] {
			return &SettingError{Key: "enable.idempotence", Err: fmt.Errorf(
				"true needs %s (as in the Java producer); change that setting, or set enable.idempotence=false", conflict)}
		}
		// Java turns the default off in the same case.
		log.Info("producer idempotence is off: it needs "+conflict, "key", "enable.idempotence")
		s.idempotent = false
	}
	if !s.idempotent && s.maxInFlight > 1 && !set["max.in.flight.requests.per.connection"] {
		s.maxInFlight = 1 // Connect's own setting for source tasks, which keeps order without idempotence
	}
	if !s.idempotent && s.maxInFlight > 1 {
		return &SettingError{Key: "max.in.flight.requests.per.connection", Err: fmt.Errorf(
			"%d without idempotence would let a retried batch land after the ones sent behind it, breaking per-key order; "+
				"set it to 1, or keep enable.idempotence=true with acks=all", s.maxInFlight)}
	}
	return nil
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("must be true or false")
}

func parseAcks(v string) (int16, error) {
	switch v {
	case "all", "-1":
		return -1, nil
	case "1":
		return 1, nil
	case "0":
		return 0, nil
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

package kafka

import (
	"bytes"
	"errors"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
)

func TestProducerSettingsDefaultsAreConnects(t *testing.T) {
	s, err := parseProducerSettings(Config{Brokers: []string{"b:9092"}, ClientID: "connector-producer-inv-0"}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	// The Java producer's defaults, with Connect's acks, delivery.timeout.ms and max.block.ms.
	if s.acks != -1 || s.linger != 5*time.Millisecond || s.retries != math.MaxInt32 ||
		s.deliveryTimeout != math.MaxInt32*time.Millisecond || !s.idempotent || s.maxInFlight != 5 ||
		s.maxRequestSize != 1048576 || s.batchSize != 1048576 || s.stickyBytes != 16384 || s.maxBlock != 0 || s.compression != 0 ||
		s.requestTimeout != 30*time.Second || s.clientID != "connector-producer-inv-0" {
		t.Fatalf("got %+v", s)
	}
}

func TestProducerSettingsAreMapped(t *testing.T) {
	var logs bytes.Buffer
	s, err := parseProducerSettings(Config{Brokers: []string{"worker:9092"}, ClientID: "default", Producer: map[string]string{
		"bootstrap.servers":                     "p1:9092, p2:9092",
		"client.id":                             "mine",
		"acks":                                  "1",
		"compression.type":                      "zstd",
		"linger.ms":                             "0",
		"batch.size":                            "32768",
		"max.request.size":                      "2000000",
		"request.timeout.ms":                    "7000",
		"delivery.timeout.ms":                   "120000",
		"retry.backoff.ms":                      "50",
		"retry.backoff.max.ms":                  "2000",
		"retries":                               "5",
		"buffer.memory":                         "1000000",
		"max.block.ms":                          "9000",
		"enable.idempotence":                    "false",
		"max.in.flight.requests.per.connection": "1",
		"key.serializer":                        "org.apache.kafka.common.serialization.ByteArraySerializer",
	}}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(s.brokers, ",") != "p1:9092,p2:9092" || s.clientID != "mine" || s.acks != 1 ||
		s.compression != kafkago.Zstd || s.linger != 0 || s.batchSize != 32768 || s.stickyBytes != 32768 || s.idempotent || s.maxInFlight != 1 ||
		s.maxRequestSize != 2000000 || s.requestTimeout != 7*time.Second || s.backoffMin != 50*time.Millisecond ||
		s.backoffMax != 2*time.Second || s.retries != 5 || s.deliveryTimeout != 120*time.Second ||
		s.bufferMemory != 1000000 || s.maxBlock != 9*time.Second {
		t.Fatalf("got %+v", s)
	}
	for _, want := range []string{
		`msg="producer acks is not \"all\"`,
		`level=INFO msg="producer setting has no effect in cdcd" key=key.serializer`,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %s:\n%s", want, logs.String())
		}
	}
}

// The Java producer's rules between enable.idempotence, acks, retries and max.in.flight, and the Sink
// contract's: a setting that would let a retry reorder a partition is refused, naming the key and the fix.
func TestIdempotenceRules(t *testing.T) {
	for _, tc := range []struct {
		settings   map[string]string
		idempotent bool
		errKey     string
	}{
		{map[string]string{}, true, ""},
		{map[string]string{"max.in.flight.requests.per.connection": "5"}, true, ""},
		{map[string]string{"acks": "1", "max.in.flight.requests.per.connection": "1"}, false, ""}, // the default gives way, as in Java
		{map[string]string{"acks": "1"}, false, ""},                                               // and one request in flight, as Connect sets it
		{map[string]string{"acks": "1", "max.in.flight.requests.per.connection": "2"}, false, "max.in.flight.requests.per.connection"},
		{map[string]string{"acks": "1", "enable.idempotence": "true"}, false, "enable.idempotence"},
		{map[string]string{"max.in.flight.requests.per.connection": "6", "enable.idempotence": "true"}, false, "enable.idempotence"},
		{map[string]string{"retries": "0", "enable.idempotence": "true"}, false, "enable.idempotence"},
		{map[string]string{"enable.idempotence": "false"}, false, ""},
		{map[string]string{"enable.idempotence": "false", "max.in.flight.requests.per.connection": "5"}, false, "max.in.flight.requests.per.connection"},
		{map[string]string{"enable.idempotence": "false", "max.in.flight.requests.per.connection": "1"}, false, ""},
		{map[string]string{"enable.idempotence": "yes"}, false, "enable.idempotence"},
		{map[string]string{"delivery.timeout.ms": "1000"}, false, "delivery.timeout.ms"}, // < linger.ms + request.timeout.ms
	} {
		s, err := parseProducerSettings(Config{Brokers: []string{"b:9092"}, Producer: tc.settings}, slog.New(slog.DiscardHandler))
		var se *SettingError
		switch {
		case tc.errKey == "" && err != nil:
			t.Errorf("%v: %v", tc.settings, err)
		case tc.errKey != "" && (!errors.As(err, &se) || se.Key != tc.errKey):
			t.Errorf("%v: err = %v, want an error on %s", tc.settings, err, tc.errKey)
		case tc.errKey == "" && s.idempotent != tc.idempotent:
			t.Errorf("%v: idempotent = %v, want %v", tc.settings, s.idempotent, tc.idempotent)
		}
	}
}

func TestUnsafeProducerSettingsAreErrors(t *testing.T) {
	for key, value := range map[string]string{
		"transactional.id":        "tx",
		"partitioner.class":       "org.apache.kafka.clients.producer.RoundRobinPartitioner",
		"partitioner.ignore.keys": "true",
		"security.protocol":       "TLS",
		"interceptor.classes":     "com.example.Interceptor",
		"acks":                    "2",
		"compression.type":        "brotli",
		"linger.ms":               "soon",
		"bootstrap.servers":       " , ",
	} {
		_, err := NewWriter(Config{Brokers: []string{"b:9092"}, Producer: map[string]string{key: value}}, slog.New(slog.DiscardHandler))
		if err == nil || !strings.Contains(err.Error(), key) && key != "bootstrap.servers" {
			t.Errorf("%s=%s: err = %v, want an error naming the key", key, value, err)
		}
	}
}

package kafka

import (
	"bytes"
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
	// delivery.timeout.ms=Integer.MAX_VALUE over backoffs of retry.backoff.max.ms (1 s).
	const attempts = math.MaxInt32/1000 + 1
	if s.acks != kafkago.RequireAll || s.linger != 5*time.Millisecond || s.maxAttempts != attempts ||
		s.batchBytes != 1048576 || s.stickyBytes != 16384 || s.maxBlock != 0 || s.compression != 0 ||
		s.requestTimeout != 30*time.Second || s.clientID != "connector-producer-inv-0" {
		t.Fatalf("got %+v", s)
	}
}

func TestProducerSettingsAreMapped(t *testing.T) {
	var logs bytes.Buffer
	s, err := parseProducerSettings(Config{Brokers: []string{"worker:9092"}, ClientID: "default", Producer: map[string]string{
		"bootstrap.servers":    "p1:9092, p2:9092",
		"client.id":            "mine",
		"acks":                 "1",
		"compression.type":     "zstd",
		"linger.ms":            "0",
		"batch.size":           "32768",
		"max.request.size":     "2000000",
		"request.timeout.ms":   "7000",
		"delivery.timeout.ms":  "120000",
		"retry.backoff.ms":     "50",
		"retry.backoff.max.ms": "2000",
		"retries":              "5",
		"buffer.memory":        "1000000",
		"max.block.ms":         "9000",
		"enable.idempotence":   "true",
		"sasl.jaas.config":     "secret stuff",
		"key.serializer":       "org.apache.kafka.common.serialization.ByteArraySerializer",
	}}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(s.brokers, ",") != "p1:9092,p2:9092" || s.clientID != "mine" || s.acks != kafkago.RequireOne ||
		s.compression != kafkago.Zstd || s.linger != time.Millisecond || s.stickyBytes != 32768 ||
		s.batchBytes != 2000000 || s.requestTimeout != 7*time.Second || s.backoffMin != 50*time.Millisecond ||
		s.backoffMax != 2*time.Second || s.maxAttempts != 6 || s.bufferMemory != 1000000 || s.maxBlock != 9*time.Second {
		t.Fatalf("got %+v", s)
	}
	for _, want := range []string{
		`msg="producer acks is not \"all\"`,
		`key=enable.idempotence`,
		`key=sasl.jaas.config value=[hidden]`,
		`level=INFO msg="producer setting has no effect in cdcd" key=key.serializer`,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %s:\n%s", want, logs.String())
		}
	}
	if strings.Contains(logs.String(), "secret stuff") {
		t.Errorf("logs leak a secret:\n%s", logs.String())
	}
}

func TestAttemptsFollowDeliveryTimeout(t *testing.T) {
	s, err := parseProducerSettings(Config{Brokers: []string{"b"}, Producer: map[string]string{"delivery.timeout.ms": "30000"}}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if s.maxAttempts != 31 {
		t.Fatalf("attempts = %d, want 31 (30 s of 1 s backoffs, plus the first)", s.maxAttempts)
	}
}

func TestUnsafeProducerSettingsAreErrors(t *testing.T) {
	for key, value := range map[string]string{
		"transactional.id":        "tx",
		"partitioner.class":       "org.apache.kafka.clients.producer.RoundRobinPartitioner",
		"partitioner.ignore.keys": "true",
		"security.protocol":       "SASL_SSL",
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

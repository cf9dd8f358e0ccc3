package kafka

// Tests against the real Kafka 4.4 broker of e2e/services.sh; skipped unless CDCD_E2E is set.

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/cdcd/cdcd/sink"
)

func topicCreationFor(t testing.TB, partitions int, extra map[string]string) TopicCreation {
	t.Helper()
	props := map[string]string{
		"topic.creation.default.replication.factor": "1",
		"topic.creation.default.partitions":         strconv.Itoa(partitions),
	}
	for k, v := range extra {
		props[k] = v
	}
	tc, err := ParseTopicCreation(nil, props)
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

func TestRealKafkaDeliversInOrderWithTopicCreation(t *testing.T) {
	brokers := testenv.Kafka(t)
	topic := testenv.NewTopicPrefix(t) + ".events"
	w := newTestWriter(t, Config{
		Brokers:       brokers,
		ClientID:      "connector-producer-test-0",
		TopicCreation: topicCreationFor(t, 4, map[string]string{"topic.creation.default.cleanup.policy": "compact"}),
	})
	if err := w.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}

	const keys, calls, perCall = 7, 30, 50
	res := newResult()
	seq := 0
	for call := range calls {
		recs := make([]sink.Record, perCall)
		for i := range recs {
			recs[i] = sink.Record{Topic: topic, Key: fmt.Appendf(nil, "key-%d", seq%keys), Value: []byte(strconv.Itoa(seq))}
			seq++
		}
		send(t, w, recs, res.done(t, call))
	}
	for call, err := range res.wait(t) {
		if err != nil {
			t.Fatalf("send %d: %v", call, err)
		}
	}
	assertTopic(t, brokers, topic, 4, "compact")

	last := map[string]int{}
	for _, r := range readTopic(t, brokers, topic, seq) {
		n, _ := strconv.Atoi(string(r.Value))
		if prev, ok := last[string(r.Key)]; ok && n <= prev {
			t.Fatalf("key %s: record %d after %d", r.Key, n, prev)
		}
		last[string(r.Key)] = n
	}
	if len(last) != keys {
		t.Fatalf("got %d keys, want %d", len(last), keys)
	}
}

// TestRealKafkaPlacesKeysWhereJavaDoes produces every key of the Java vectors to topics of several
// sizes and checks the real broker holds each in the partition Java's producer would pick.
func TestRealKafkaPlacesKeysWhereJavaDoes(t *testing.T) {
	brokers := testenv.Kafka(t)
	vectors := loadJavaVectors(t)
	for _, partitions := range []int{1, 5, 7, 12} {
		t.Run(strconv.Itoa(partitions), func(t *testing.T) {
			topic := testenv.NewTopicPrefix(t) + ".placement"
			w := newTestWriter(t, Config{Brokers: brokers, TopicCreation: topicCreationFor(t, partitions, nil)})
			recs := make([]sink.Record, len(vectors))
			for i, v := range vectors {
				recs[i] = sink.Record{Topic: topic, Key: v.key, Value: []byte(strconv.Itoa(i))}
			}
			res := newResult()
			send(t, w, recs, res.done(t, 0))
			if err := res.wait(t)[0]; err != nil {
				t.Fatal(err)
			}
			for _, r := range readTopic(t, brokers, topic, len(vectors)) {
				i, _ := strconv.Atoi(string(r.Value))
				if want := vectors[i].partitions[partitions-1]; int(r.Partition) != want {
					t.Fatalf("key %x: partition %d of %d, Java picks %d", vectors[i].key, r.Partition, partitions, want)
				}
			}
		})
	}
}

// BenchmarkRealKafkaSend measures acknowledged records per second against the real broker (acks=all):
// 1 KB records over 6 partitions in Sends of 100 (many keys), and the shape of a PostgreSQL backlog
// drain, 3 KB records (a JSON change event with its schema) into one partition, in Sends of one
// transaction each: 500 changes, or 1 (many small transactions, where batching across Sends counts).
func BenchmarkRealKafkaSend(b *testing.B) {
	for _, bc := range []struct {
		name                       string
		partitions, perCall, bytes int
	}{
		{"1KB-6partitions-100perSend", 6, 100, 1024},
		{"3KB-1partition-500perSend", 1, 500, 3300},
		{"3KB-1partition-1perSend", 1, 1, 3300},
	} {
		b.Run(bc.name, func(b *testing.B) {
			brokers := testenv.Kafka(b)
			topic := testenv.NewTopicPrefix(b) + ".bench"
			w, err := NewWriter(Config{Brokers: brokers, TopicCreation: topicCreationFor(b, bc.partitions, nil)}, slog.New(slog.DiscardHandler))
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close(context.Background())
			// Create the topic and learn its metadata outside the measurement.
			if err := w.Send(b.Context(), []sink.Record{{Topic: topic, Value: []byte("warm-up")}}, func(error) {}); err != nil {
				b.Fatal(err)
			}

			value := make([]byte, bc.bytes)
			errs := make(chan error, 1)
			done := func(err error) {
				if err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
			b.SetBytes(int64(bc.bytes))
			b.ResetTimer()
			for sent := 0; sent < b.N; sent += bc.perCall {
				recs := make([]sink.Record, min(bc.perCall, b.N-sent))
				for i := range recs {
					recs[i] = sink.Record{Topic: topic, Key: strconv.AppendInt(nil, int64((sent+i)%1000), 10), Value: value}
				}
				if err := w.Send(b.Context(), recs, done); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(b.Context()); err != nil { // waits for every acknowledgement
				b.Fatal(err)
			}
			b.StopTimer()
			select {
			case err := <-errs:
				b.Fatal(err)
			default:
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkRealKafkaFranzGoBaseline is the 3KB-1partition case of BenchmarkRealKafkaSend produced by
// franz-go under the same guarantees (acks=all, one request in flight, no idempotence, 1 MB batches,
// linger 5 ms): how fast this broker and partition accept these records from a producer that is not
// kafka-go, to compare the sink with.
func BenchmarkRealKafkaFranzGoBaseline(b *testing.B) {
	brokers := testenv.Kafka(b)
	topic := testenv.NewTopicPrefix(b) + ".bench"
	w, err := NewWriter(Config{Brokers: brokers, TopicCreation: topicCreationFor(b, 1, nil)}, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Send(b.Context(), []sink.Record{{Topic: topic, Value: []byte("create the topic")}}, func(error) {}); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(b.Context()); err != nil {
		b.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DisableIdempotentWrite(), kgo.MaxProduceRequestsInflightPerBroker(1),
		kgo.ProducerBatchMaxBytes(1<<20), kgo.ProducerLinger(5*time.Millisecond), kgo.MaxBufferedBytes(DefaultMaxInFlightBytes))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	value := make([]byte, 3300)
	var failed atomic.Pointer[error]
	b.SetBytes(int64(len(value)))
	b.ResetTimer()
	for i := range b.N {
		cl.Produce(b.Context(), &kgo.Record{Key: strconv.AppendInt(nil, int64(i%1000), 10), Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.CompareAndSwap(nil, &err)
			}
		})
	}
	if err := cl.Flush(b.Context()); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

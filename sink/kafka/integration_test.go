package kafka

// Tests against the real Kafka 4.4 broker of e2e/services.sh; skipped unless CDCD_E2E is set.

import (
	"fmt"
	"log/slog"
	"strconv"
	"testing"

	"github.com/cdcd/cdcd/e2e/testenv"
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
		recs := make([]Record, perCall)
		for i := range recs {
			recs[i] = Record{Topic: topic, Key: fmt.Appendf(nil, "key-%d", seq%keys), Value: []byte(strconv.Itoa(seq))}
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
			recs := make([]Record, len(vectors))
			for i, v := range vectors {
				recs[i] = Record{Topic: topic, Key: v.key, Value: []byte(strconv.Itoa(i))}
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

// BenchmarkRealKafkaSend1KB measures acknowledged 1 KB records per second (acks=all, 6 partitions,
// Sends of 100 records with 1000 distinct keys).
func BenchmarkRealKafkaSend1KB(b *testing.B) {
	brokers := testenv.Kafka(b)
	topic := testenv.NewTopicPrefix(b) + ".bench"
	tc := topicCreationFor(b, 6, nil)
	w, err := NewWriter(Config{Brokers: brokers, TopicCreation: tc}, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close(b.Context())

	const perCall = 100
	value := make([]byte, 1024)
	errs := make(chan error, 1)
	done := func(err error) {
		if err != nil {
			select {
			case errs <- err:
			default:
			}
		}
	}
	b.ResetTimer()
	for sent := 0; sent < b.N; sent += perCall {
		recs := make([]Record, min(perCall, b.N-sent))
		for i := range recs {
			recs[i] = Record{Topic: topic, Key: strconv.AppendInt(nil, int64((sent+i)%1000), 10), Value: value}
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
}

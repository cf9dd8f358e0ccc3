package kafka

// Tests against the real Kafka 4.4 broker of e2e/services.sh; skipped unless CDCD_E2E is set.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

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
// Each case runs on the plaintext listener and on the SASL_SSL one (SCRAM-SHA-512, JKS truststore),
// and with three producers side by side:
//
//   - cdcd: the Writer with its defaults (idempotent, 5 requests in flight, batches up to 1 MiB);
//   - cdcd-16KB: the same with the Java producer's default batch.size=16384;
//   - kafka-go-Writer: kafka-go's Writer as cdcd used it before its own producer (one request in flight
//     per partition, batches of up to 1000 records and max.request.size bytes, linger 5 ms), driven
//     directly, without the Writer's budget and per-Send completion.
func BenchmarkRealKafkaSend(b *testing.B) {
	listeners := []struct {
		name     string
		settings func(b *testing.B) ([]string, map[string]string)
	}{
		{"plaintext", func(b *testing.B) ([]string, map[string]string) { return testenv.Kafka(b), nil }},
		{"SASL_SSL", func(b *testing.B) ([]string, map[string]string) {
			k := testenv.KafkaSASLSSL(b)
			return k.Brokers, secureSettings(k)["SCRAM-SHA-512, JKS truststore"]
		}},
	}
	producers := []struct {
		name string
		open func(b *testing.B, brokers []string, settings map[string]string, partitions int) benchSender
	}{
		{"cdcd", func(b *testing.B, brokers []string, settings map[string]string, partitions int) benchSender {
			return openBenchWriter(b, brokers, settings, partitions)
		}},
		{"cdcd-16KB", func(b *testing.B, brokers []string, settings map[string]string, partitions int) benchSender {
			return openBenchWriter(b, brokers, with(settings, "batch.size", "16384"), partitions)
		}},
		{"kafka-go-Writer", openKafkaGoWriter},
	}
	for _, bc := range []struct {
		name                       string
		partitions, perCall, bytes int
	}{
		{"1KB-6partitions-100perSend", 6, 100, 1024},
		{"3KB-1partition-500perSend", 1, 500, 3300},
		{"3KB-1partition-1perSend", 1, 1, 3300},
	} {
		for _, l := range listeners {
			for _, p := range producers {
				b.Run(bc.name+"/"+l.name+"/"+p.name, func(b *testing.B) {
					brokers, settings := l.settings(b)
					benchmarkSend(b, p.open(b, brokers, settings, bc.partitions), bc.perCall, bc.bytes)
				})
			}
		}
	}
	// The same on a network with a round trip of benchRTT (a broker in another zone, or acks=all
	// waiting for followers), where requests in flight count: the 3 KB backlog drain into one
	// partition, plaintext.
	for _, p := range producers {
		b.Run("3KB-1partition-500perSend/plaintext-5msRTT/"+p.name, func(b *testing.B) {
			benchDelay = benchRTT
			defer func() { benchDelay = 0 }()
			benchmarkSend(b, p.open(b, testenv.Kafka(b), nil, 1), 500, 3300)
		})
	}
}

// benchRTT is the round trip the latency case adds; benchDelay is what the benchmark's producers add
// now (0: nothing).
const benchRTT = 5 * time.Millisecond

var benchDelay time.Duration

// delayedConn delivers what it reads benchDelay late, like a link with that latency one way: a
// goroutine reads ahead and stamps each chunk, Read hands chunks over once their time has come.
type delayedConn struct {
	net.Conn
	chunks chan delayedChunk
	rest   []byte
	err    error
}

type delayedChunk struct {
	b   []byte
	at  time.Time
	err error
}

func delay(c net.Conn, d time.Duration) net.Conn {
	if d == 0 {
		return c
	}
	dc := &delayedConn{Conn: c, chunks: make(chan delayedChunk, 1024)}
	go func() {
		defer close(dc.chunks)
		for {
			buf := make([]byte, 64<<10)
			n, err := c.Read(buf)
			dc.chunks <- delayedChunk{b: buf[:n], at: time.Now().Add(d), err: err}
			if err != nil {
				return
			}
		}
	}()
	return dc
}

func (c *delayedConn) Read(p []byte) (int, error) {
	for len(c.rest) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		chunk, ok := <-c.chunks
		if !ok {
			return 0, io.EOF
		}
		time.Sleep(time.Until(chunk.at))
		c.rest, c.err = chunk.b, chunk.err
	}
	n := copy(p, c.rest)
	c.rest = c.rest[n:]
	return n, nil
}

// benchSender is what benchmarkSend drives: a sink.Sink's Send, and a Close that waits for every
// acknowledgement.
type benchSender interface {
	Send(ctx context.Context, recs []sink.Record, done func(error)) error
	Close(ctx context.Context) error
	topic() string
}

type benchWriter struct {
	*Writer
	name string
}

func (w benchWriter) topic() string { return w.name }

// openBenchWriter opens a Writer on a new topic of partitions partitions, created and warmed up (its
// metadata known) outside the measurement.
func openBenchWriter(b *testing.B, brokers []string, settings map[string]string, partitions int) benchSender {
	topic := testenv.NewTopicPrefix(b) + ".bench"
	w, err := NewWriter(Config{Brokers: brokers, Producer: settings, Admin: settings, TopicCreation: topicCreationFor(b, partitions, nil)}, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = w.Close(context.Background()) })
	if d := benchDelay; d > 0 {
		w.producer.dialer.wrapConn = func(c net.Conn) net.Conn { return delay(c, d) }
	}
	warmed := make(chan error, 1)
	if err := w.Send(b.Context(), []sink.Record{{Topic: topic, Value: []byte("warm-up")}}, func(err error) { warmed <- err }); err != nil {
		b.Fatal(err)
	}
	if err := <-warmed; err != nil {
		b.Fatal(err)
	}
	return benchWriter{w, topic}
}

// kafkaGoWriter drives kafka-go's Writer with the settings cdcd gave it before it had a producer of its
// own; Send's done is called once per record batch kafka-go completes, so it only reports errors.
type kafkaGoWriter struct {
	w    *kafkago.Writer
	name string
	done func(error)
}

func (k *kafkaGoWriter) topic() string { return k.name }

func (k *kafkaGoWriter) Send(ctx context.Context, recs []sink.Record, done func(error)) error {
	k.done = done
	msgs := make([]kafkago.Message, len(recs))
	for i, r := range recs {
		msgs[i] = kafkago.Message{Topic: r.Topic, Key: r.Key, Value: r.Value}
	}
	return k.w.WriteMessages(ctx, msgs...)
}

func (k *kafkaGoWriter) Close(context.Context) error { return k.w.Close() }

func openKafkaGoWriter(b *testing.B, brokers []string, settings map[string]string, partitions int) benchSender {
	created := openBenchWriter(b, brokers, settings, partitions) // creates the topic
	transport, err := NewTransportFrom(settings, "bench")
	if err != nil {
		b.Fatal(err)
	}
	if d := benchDelay; d > 0 {
		var nd net.Dialer
		transport.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := nd.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return delay(c, d), nil
		}
	}
	k := &kafkaGoWriter{name: created.topic()}
	k.w = &kafkago.Writer{
		Addr: kafkago.TCP(brokers...), Balancer: &kafkago.Murmur2Balancer{Consistent: true},
		BatchSize: 1000, BatchBytes: 1048576, BatchTimeout: 5 * time.Millisecond,
		RequiredAcks: kafkago.RequireAll, Async: true, Transport: transport,
		Completion: func(_ []kafkago.Message, err error) {
			if err != nil {
				k.done(err)
			}
		},
	}
	b.Cleanup(func() { _ = k.w.Close(); transport.CloseIdleConnections() })
	if err := k.w.WriteMessages(b.Context(), kafkago.Message{Topic: k.name, Value: []byte("warm-up")}); err != nil {
		b.Fatal(err)
	}
	return k
}

// benchmarkSend is one case of BenchmarkRealKafkaSend: b.N records of size bytes in Sends of perCall,
// timed until the last is acknowledged.
func benchmarkSend(b *testing.B, w benchSender, perCall, size int) {
	topic := w.topic()
	value := make([]byte, size)
	errs := make(chan error, 1)
	done := func(err error) {
		if err != nil {
			select {
			case errs <- err:
			default:
			}
		}
	}
	b.ReportAllocs()
	b.SetBytes(int64(size))
	b.ResetTimer()
	for sent := 0; sent < b.N; sent += perCall {
		recs := make([]sink.Record, min(perCall, b.N-sent))
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

// TestRealKafkaExactlyOnceAfterConnectionDrops drops the producer's connections to the real broker as
// produce answers arrive (the broker appended, the producer never learns it) while five requests are in
// flight: every record is in the topic once, each key's records in order, with their keys, headers and
// timestamps as sent.
func TestRealKafkaExactlyOnceAfterConnectionDrops(t *testing.T) {
	brokers := testenv.Kafka(t)
	const partitions, keys, records, perSend = 3, 10, 1500, 10
	topic := testenv.NewTopicPrefix(t) + ".drops"
	w := newTestWriter(t, Config{Brokers: brokers, TopicCreation: topicCreationFor(t, partitions, nil), Producer: map[string]string{
		"linger.ms": "0", "batch.size": "2048", "retry.backoff.ms": "5", "retry.backoff.max.ms": "50"}})
	watch := watchWire(w)
	const drops = 6
	watch.drop = func(conn, frame int) bool { return conn < drops && frame == 2+conn%3 }

	base := time.UnixMilli(1700000000000)
	res := newResult()
	for call := range records / perSend {
		recs := make([]sink.Record, perSend)
		for i := range recs {
			seq := call*perSend + i
			recs[i] = sink.Record{Topic: topic, Key: fmt.Appendf(nil, "key-%d", seq%keys), Value: []byte(strconv.Itoa(seq)),
				Time: base.Add(time.Duration(seq) * time.Millisecond), Headers: []sink.Header{{Key: "seq", Value: []byte(strconv.Itoa(seq))}, {Key: "empty", Value: []byte{}}}}
		}
		send(t, w, recs, res.done(t, call))
	}
	for call, err := range res.wait(t) {
		if err != nil {
			t.Fatalf("send %d: %v", call, err)
		}
	}
	if dials, most := watch.stats(); dials < drops || most < 2 {
		t.Fatalf("%d connections, at most %d requests in flight: the drops were not tested under pipelining", dials, most)
	}

	if end := endOffsets(t, brokers, topic, partitions); end != records {
		t.Fatalf("the partitions end at %d records in all, want %d", end, records)
	}
	last := map[string]int{}
	seen := map[int]bool{}
	all := readTopic(t, brokers, topic, records)
	for _, r := range all {
		seq, _ := strconv.Atoi(string(r.Value))
		if seen[seq] {
			t.Fatalf("record %d twice", seq)
		}
		seen[seq] = true
		if prev, ok := last[string(r.Key)]; ok && seq <= prev {
			t.Fatalf("key %s: record %d after %d (partition %d offset %d)", r.Key, seq, prev, r.Partition, r.Offset)
		}
		last[string(r.Key)] = seq
		if want := fmt.Sprintf("key-%d", seq%keys); string(r.Key) != want || !r.Timestamp.Equal(base.Add(time.Duration(seq)*time.Millisecond)) ||
			len(r.Headers) != 2 || r.Headers[0].Key != "seq" || string(r.Headers[0].Value) != strconv.Itoa(seq) || r.Headers[1].Key != "empty" || len(r.Headers[1].Value) != 0 {
			t.Fatalf("record %d: key %q, timestamp %v, headers %v", seq, r.Key, r.Timestamp, r.Headers)
		}
	}
}

// endOffsets returns the sum of topic's partitions' end offsets: how many records it holds.
func endOffsets(t *testing.T, brokers []string, topic string, partitions int) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for p := range partitions {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = int32(p), -1 // the latest offset
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				t.Fatal(err)
			}
			sum += rp.Offset
		}
	}
	return sum
}

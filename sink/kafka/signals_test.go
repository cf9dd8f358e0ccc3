package kafka

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/signal"
)

// The kafka signal channel's consumer on kfake: what reaches the queue, where a restart resumes, and
// that the committed offset is where Debezium's consumer (the same group, a simple commit) reads it.

const signalTopic = "srv-signal"

// syncBuffer is a log sink the test reads while the channel writes to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// produceSignals writes records (key, value; an empty key is a null one) to the signal topic.
func produceSignals(t *testing.T, brokers []string, kv ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	for i := 0; i < len(kv); i += 2 {
		r := &kgo.Record{Topic: signalTopic, Value: []byte(kv[i+1])}
		if kv[i] != "" {
			r.Key = []byte(kv[i])
		}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// signalRun is one run of the channel on a consumer of the opener, until stop.
type signalRun struct {
	q    *signal.Queue
	log  *syncBuffer
	stop func()
}

func startSignals(t *testing.T, brokers []string, spec signal.KafkaSpec) *signalRun {
	t.Helper()
	spec.Topic, spec.Servers = signalTopic, brokers
	if spec.GroupID == "" {
		spec.GroupID = "kafka-signal"
	}
	r := &signalRun{q: signal.NewQueue("c", signal.Config{}), log: &syncBuffer{}}
	stop, err := r.q.StartKafka(t.Context(), NewSignalOpener(), signal.KafkaConfig{Spec: spec, Key: "srv", AutoCommit: true, CommitInterval: 5 * time.Second},
		10*time.Millisecond, slog.New(slog.NewTextHandler(r.log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	r.stop = stop
	t.Cleanup(stop)
	return r
}

// take waits for n signals.
func (r *signalRun) take(t *testing.T, n int) []signal.Signal {
	t.Helper()
	var out []signal.Signal
	for len(out) < n {
		select {
		case s := <-r.q.C():
			out = append(out, s)
		case <-time.After(testTimeout):
			t.Fatalf("got signals %+v, want %d; log:\n%s", out, n, r.log.String())
		}
	}
	return out
}

// none fails when a signal arrives within a while.
func (r *signalRun) none(t *testing.T) {
	t.Helper()
	select {
	case s := <-r.q.C():
		t.Fatalf("unexpected signal %+v", s)
	case <-time.After(300 * time.Millisecond):
	}
}

func ids(ss []signal.Signal) string {
	var out []string
	for _, s := range ss {
		out = append(out, s.ID+":"+s.Type)
	}
	return strings.Join(out, ",")
}

// debeziumClient speaks the group requests with the versions of the Kafka 3.x clients Debezium 3.6
// ships with (topics by name, not by topic id).
func debeziumClient(t *testing.T, brokers []string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.MaxVersions(kversion.V3_5_0()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// committed is the group's committed offset of partition 0 as another client (Debezium's) reads it.
func committed(t *testing.T, brokers []string, group string) int64 {
	t.Helper()
	cl := debeziumClient(t, brokers)
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group = group
	rt := kmsg.NewOffsetFetchRequestTopic()
	rt.Topic, rt.Partitions = signalTopic, []int32{0}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(t.Context(), cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range resp.Topics {
		for _, p := range tp.Partitions {
			if p.Partition == 0 {
				return p.Offset
			}
		}
	}
	return -1
}

// commitAsDebezium commits offset for the group as Debezium's assigned consumer does (generation -1).
func commitAsDebezium(t *testing.T, brokers []string, group string, offset int64) {
	t.Helper()
	cl := debeziumClient(t, brokers)
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation = group, -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = signalTopic
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = 0, offset
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(t.Context(), cl)
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("commit: error code %d", code)
	}
}

// TestKafkaSignalsDeliverAndResume: records keyed with topic.prefix reach the queue, others and malformed
// ones are logged and skipped; a restart resumes after the signals already taken (the group's committed
// offset) and acts only on the new ones; the committed offset is the one Debezium's consumer reads.
func TestKafkaSignalsDeliverAndResume(t *testing.T) {
	c := newFakeCluster(t, kfake.SeedTopics(1, signalTopic))
	brokers := c.ListenAddrs()
	produceSignals(t, brokers,
		"srv", `{"type":"execute-snapshot","data":{"data-collections":["public.orders"],"type":"INCREMENTAL"}}`,
		"other", `{"id":"theirs","type":"log","data":{"message":"not ours"}}`,
		"srv", `{"id":"bad","type":"log","data":`,
		"srv", `{"id":"log-1","type":"log","data":{"message":"hello"}}`)

	r := startSignals(t, brokers, signal.KafkaSpec{})
	got := r.take(t, 2)
	if ids(got) != ":execute-snapshot,log-1:log" || got[0].Data != `{"data-collections":["public.orders"],"type":"INCREMENTAL"}` || got[0].Channel != signal.ChannelKafka {
		t.Fatalf("signals %+v", got)
	}
	r.none(t)
	for _, want := range []string{`its key is not this connector's topic.prefix`, `offset=1 key=other topic.prefix=srv`,
		`offset=2 error="a Kafka signal is a JSON object`} {
		if !strings.Contains(r.log.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, r.log.String())
		}
	}
	r.stop()
	if off := committed(t, brokers, "kafka-signal"); off != 4 {
		t.Fatalf("committed offset %d, want 4 (after every record read)", off)
	}

	produceSignals(t, brokers, "srv", `{"id":"log-2","type":"log","data":{"message":"after the restart"}}`)
	r = startSignals(t, brokers, signal.KafkaSpec{})
	if got := r.take(t, 1); ids(got) != "log-2:log" {
		t.Fatalf("after the restart: %+v, want only the new signal", got)
	}
	r.none(t)
	r.stop()

	// Debezium committed further on (it read a signal cdcd never saw): cdcd starts there.
	produceSignals(t, brokers, "srv", `{"id":"dbz","type":"log","data":{"message":"debezium read it"}}`,
		"srv", `{"id":"log-3","type":"log","data":{"message":"new"}}`)
	commitAsDebezium(t, brokers, "kafka-signal", 6)
	r = startSignals(t, brokers, signal.KafkaSpec{})
	if got := r.take(t, 1); ids(got) != "log-3:log" {
		t.Fatalf("after Debezium's commit: %+v, want log-3 only", got)
	}
	r.stop()

	// Another group has no committed offset: it reads from the first record (earliest).
	r = startSignals(t, brokers, signal.KafkaSpec{GroupID: "fresh"})
	if got := r.take(t, 5); ids(got) != ":execute-snapshot,log-1:log,log-2:log,dbz:log,log-3:log" {
		t.Fatalf("a new group: %s", ids(got))
	}
}

// TestKafkaSignalsStartPolicy: auto.offset.reset=latest skips what the topic held before the start; a
// committed offset past the end (a topic recreated since) falls back to the policy.
func TestKafkaSignalsStartPolicy(t *testing.T) {
	c := newFakeCluster(t, kfake.SeedTopics(1, signalTopic))
	brokers := c.ListenAddrs()
	produceSignals(t, brokers, "srv", `{"id":"old","type":"log","data":{"message":"before"}}`)
	r := startSignals(t, brokers, signal.KafkaSpec{Latest: true})
	deadline := time.Now().Add(testTimeout)
	for !strings.Contains(r.log.String(), "latest offset") {
		if time.Now().After(deadline) {
			t.Fatalf("the consumer never started; log:\n%s", r.log.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	produceSignals(t, brokers, "srv", `{"id":"new","type":"log","data":{"message":"after"}}`)
	if got := r.take(t, 1); ids(got) != "new:log" {
		t.Fatalf("latest: %s", ids(got))
	}
	r.stop()

	commitAsDebezium(t, brokers, "gone", 100)
	r = startSignals(t, brokers, signal.KafkaSpec{GroupID: "gone"})
	if got := r.take(t, 2); ids(got) != "old:log,new:log" {
		t.Fatalf("an offset past the end: %s, want the topic from its start", ids(got))
	}
	if !strings.Contains(r.log.String(), "offset 100 is not in the topic any more") {
		t.Errorf("the reset is not logged:\n%s", r.log.String())
	}
}

// TestKafkaSignalsSecurity: the consumer's security settings go through ParseClientSecurity, and a
// refusal names the connector's key.
func TestKafkaSignalsSecurity(t *testing.T) {
	o := NewSignalOpener()
	spec := signal.KafkaSpec{Topic: signalTopic, Servers: []string{"k:9092"}, GroupID: "g",
		Security: map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI"}}
	err := o.CheckSignals(spec)
	var ke source.KeyError
	if err == nil || !errors.As(err, &ke) || !strings.HasPrefix(ke.ConfigKey(), "signal.consumer.sasl.") || !source.IsFatal(err) {
		t.Fatalf("GSSAPI: %v, want a fatal refusal naming signal.consumer.sasl.*", err)
	}
	if _, err := o.OpenSignals(spec, slog.Default()); err == nil {
		t.Fatal("OpenSignals accepted what CheckSignals refuses")
	}
	spec.Security = map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
		"sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="s3cret";`}
	if err := o.CheckSignals(spec); err != nil {
		t.Fatalf("SASL PLAIN: %v", err)
	}
	spec.Security["sasl.mechanism"] = "NOPE"
	if err := o.CheckSignals(spec); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("a refusal must not carry the password: %v", err)
	}
	if _, err := o.OpenSignals(signal.KafkaSpec{Topic: signalTopic, GroupID: "g"}, slog.Default()); err == nil {
		t.Fatal("opened a consumer without servers")
	}
}

package kafka

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	metadataAPI "github.com/segmentio/kafka-go/protocol/metadata"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/cdcd/cdcd/source"
)

// logHistorySettings are the topic settings of Debezium's schema history topic.
var logHistorySettings = map[string]string{
	"cleanup.policy":  "delete",
	"retention.ms":    strconv.FormatInt(math.MaxInt64, 10),
	"retention.bytes": "-1",
}

// logOpen opens spec with o and closes the log at cleanup.
func logOpen(t *testing.T, o *LogOpener, spec source.LogSpec) source.DurableLog {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	l, err := o.OpenLog(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := l.Close(ctx); err != nil {
			t.Errorf("closing the log: %v", err)
		}
	})
	return l
}

func logReadAll(t *testing.T, l source.DurableLog) [][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	recs, err := l.ReadAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func logAppend(t *testing.T, l source.DurableLog, values ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	for _, v := range values {
		if err := l.Append(ctx, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
}

func logStrings(recs [][]byte) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r)
	}
	return out
}

// TestLogOpenerRefusesClientSettings: no producer or consumer setting is implemented, so each is
// refused by name, for good, before any broker is asked (the brokers here do not exist).
func TestLogOpenerRefusesClientSettings(t *testing.T) {
	o := NewLogOpener(LogOpenerConfig{Brokers: []string{"127.0.0.1:1"}, Log: testLogger(t)})
	for _, tc := range []struct {
		name string
		spec source.LogSpec
		want []string
	}{
		{"producer", source.LogSpec{Name: "h", ProducerSettings: map[string]string{"linger.ms": "5", "acks": "1"}},
			[]string{"producer.acks: cdcd does not implement this setting yet; remove it", "producer.linger.ms: cdcd does not implement this setting yet; remove it"}},
		{"consumer", source.LogSpec{Name: "h", ConsumerSettings: map[string]string{"fetch.min.bytes": "1"}},
			[]string{"consumer.fetch.min.bytes: cdcd does not implement this setting yet; remove it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			_, err := o.OpenLog(ctx, tc.spec)
			if err == nil {
				t.Fatal("OpenLog accepted a client setting it does not implement")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if !strings.Contains(err.Error(), "topic h") || !source.IsFatal(err) {
				t.Errorf("error %q: want it to name the topic and be fatal (fatal: %v)", err, source.IsFatal(err))
			}
		})
	}
}

// TestLogOpenerPrefersSpecServers: a spec's servers replace the runtime's, which are used otherwise.
func TestLogOpenerPrefersSpecServers(t *testing.T) {
	c := newFakeCluster(t)
	bogus := NewLogOpener(LogOpenerConfig{Brokers: []string{"127.0.0.1:1"}, Log: testLogger(t)})
	bogus.openTimeout = 5 * time.Second // fail fast if it tries the runtime's servers
	l := logOpen(t, bogus, source.LogSpec{Name: "history", Servers: c.ListenAddrs()})
	logAppend(t, l, "a")

	runtime := NewLogOpener(LogOpenerConfig{Brokers: c.ListenAddrs(), Log: testLogger(t)})
	if got := logStrings(logReadAll(t, logOpen(t, runtime, source.LogSpec{Name: "history"}))); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("records %q, want [a]", got)
	}
}

// logFailProduces makes the broker answer the next n Produce requests with errCode without storing
// their records.
func logFailProduces(c *kfake.Cluster, n int, errCode int16) {
	c.ControlKey(kmsg.Produce.Int16(), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl() // a handled request drops the control function otherwise
		if n--; n == 0 {
			c.DropControl()
		}
		req := kreq.(*kmsg.ProduceRequest)
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewProduceResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, errCode
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
}

// TestDurableLogAppendRetriesRetriableErrors: Append rides out errors that heal (a leader moving, too
// few replicas) and returns the others at once.
func TestDurableLogAppendRetriesRetriableErrors(t *testing.T) {
	c := newFakeCluster(t, kfake.SeedTopics(1, "history"))
	o := NewLogOpener(LogOpenerConfig{Brokers: c.ListenAddrs(), Log: testLogger(t)})
	l := logOpen(t, o, source.LogSpec{Name: "history"})

	logFailProduces(c, 3, kerr.NotLeaderForPartition.Code)
	logAppend(t, l, "after three refusals")
	logFailProduces(c, 1, kerr.NotEnoughReplicas.Code)
	logAppend(t, l, "after too few replicas")
	if got, want := logStrings(logReadAll(t, l)), []string{"after three refusals", "after too few replicas"}; !slices.Equal(got, want) {
		t.Fatalf("records %q, want %q", got, want)
	}

	logFailProduces(c, 1, kerr.InvalidRecord.Code)
	start := time.Now()
	err := l.Append(t.Context(), []byte("refused"))
	if !errors.Is(err, kafkago.InvalidRecord) || !strings.Contains(err.Error(), "topic history") {
		t.Fatalf("Append = %v, want the broker's INVALID_RECORD naming the topic", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Append took %s to return a permanent error; it must not retry it", d)
	}
}

// TestDurableLogRetriesAreBounded: an error that keeps coming is returned after retryTimeout.
func TestDurableLogRetriesAreBounded(t *testing.T) {
	c := newFakeCluster(t, kfake.SeedTopics(1, "history"))
	o := NewLogOpener(LogOpenerConfig{Brokers: c.ListenAddrs(), Log: testLogger(t)})
	o.retryTimeout = time.Second
	l := logOpen(t, o, source.LogSpec{Name: "history"})
	logFailProduces(c, math.MaxInt, kerr.NotLeaderForPartition.Code)
	start := time.Now()
	if err := l.Append(t.Context(), []byte("x")); !errors.Is(err, kafkago.NotLeaderForPartition) {
		t.Fatalf("Append = %v, want NOT_LEADER_FOR_PARTITION after the retries", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Append gave up after %s, want about the 1s retry timeout", d)
	}
}

// laggingMetadata is a transport whose metadata answers do not show topic for the first lag of them,
// as a cluster's metadata may not show a topic for a moment after its creation.
type laggingMetadata struct {
	kafkago.RoundTripper
	topic string
	lag   atomic.Int64
}

func (m *laggingMetadata) RoundTrip(ctx context.Context, addr net.Addr, req kafkago.Request) (kafkago.Response, error) {
	resp, err := m.RoundTripper.RoundTrip(ctx, addr, req)
	mreq, ok := req.(*metadataAPI.Request)
	if err != nil || !ok || !slices.Contains(mreq.TopicNames, m.topic) || m.lag.Add(-1) < 0 {
		return resp, err
	}
	hidden := *resp.(*metadataAPI.Response)
	hidden.Topics = slices.Clone(hidden.Topics)
	for i := range hidden.Topics {
		if hidden.Topics[i].Name == m.topic {
			hidden.Topics[i] = metadataAPI.ResponseTopic{Name: m.topic, ErrorCode: int16(kafkago.UnknownTopicOrPartition)}
		}
	}
	return &hidden, nil
}

// TestLogOpenerWaitsForANewTopicToShow: OpenLog returns only once the metadata shows the topic it
// created, and gives up after its bound when the topic never shows.
func TestLogOpenerWaitsForANewTopicToShow(t *testing.T) {
	c := newFakeCluster(t)
	tr := &kafkago.Transport{}
	t.Cleanup(tr.CloseIdleConnections)

	lagging := &laggingMetadata{RoundTripper: tr, topic: "history"}
	lagging.lag.Store(4) // the look-up before the creation, then three answers after it
	o := NewLogOpener(LogOpenerConfig{Brokers: c.ListenAddrs(), Transport: lagging, Log: testLogger(t)})
	logOpen(t, o, source.LogSpec{Name: "history"})
	if left := lagging.lag.Load(); left > 0 {
		t.Fatalf("OpenLog returned while the metadata did not show the topic yet (%d more answers without it)", left)
	}

	never := &laggingMetadata{RoundTripper: tr, topic: "never"}
	never.lag.Store(math.MaxInt64)
	o = NewLogOpener(LogOpenerConfig{Brokers: c.ListenAddrs(), Transport: never, Log: testLogger(t)})
	o.openTimeout = time.Second
	start := time.Now()
	_, err := o.OpenLog(t.Context(), source.LogSpec{Name: "never"})
	if err == nil || !strings.Contains(err.Error(), "topic never: it was created, but the brokers") {
		t.Fatalf("OpenLog of a topic that never shows = %v, want it to give up", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("OpenLog gave up after %s, want about its 1s bound", d)
	}
}

// logAdmin is a kafka-go client of its own (own transport, fresh metadata) for checking and
// preparing topics behind the opener's back.
func logAdmin(t *testing.T, brokers []string) *kafkago.Client {
	t.Helper()
	tr := &kafkago.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &kafkago.Client{Addr: kafkago.TCP(brokers...), Transport: tr, Timeout: testTimeout}
}

func logCreateTopic(t *testing.T, brokers []string, topic string, partitions int) {
	t.Helper()
	resp, err := logAdmin(t, brokers).CreateTopics(t.Context(), &kafkago.CreateTopicsRequest{Topics: []kafkago.TopicConfig{{
		Topic: topic, NumPartitions: partitions, ReplicationFactor: 1,
	}}})
	if err == nil {
		err = resp.Errors[topic]
	}
	if err != nil {
		t.Fatalf("creating %s: %v", topic, err)
	}
}

// TestRealKafkaLogCreatesTheTopic: a missing topic is created with one partition and the spec's
// settings, and reads back empty.
func TestRealKafkaLogCreatesTheTopic(t *testing.T) {
	brokers := testenv.Kafka(t)
	topic := testenv.NewTopicPrefix(t) + ".history"
	o := NewLogOpener(LogOpenerConfig{Brokers: brokers, ClientID: "cdcd-test", Log: testLogger(t)})
	l := logOpen(t, o, source.LogSpec{Name: topic, Settings: logHistorySettings})
	if recs := logReadAll(t, l); recs != nil {
		t.Fatalf("ReadAll of a new topic = %q, want nil", recs)
	}

	admin := logAdmin(t, brokers)
	meta, err := admin.Metadata(t.Context(), &kafkago.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		t.Fatal(err)
	}
	if len(meta.Topics) != 1 || meta.Topics[0].Error != nil || len(meta.Topics[0].Partitions) != 1 {
		t.Fatalf("metadata of %s: %+v, want one partition", topic, meta.Topics)
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range logHistorySettings {
			if !yield(k) {
				return
			}
		}
	})
	described, err := admin.DescribeConfigs(t.Context(), &kafkago.DescribeConfigsRequest{Resources: []kafkago.DescribeConfigRequestResource{{
		ResourceType: kafkago.ResourceTypeTopic, ResourceName: topic, ConfigNames: names,
	}}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range described.Resources {
		if r.Error != nil {
			t.Fatal(r.Error)
		}
		for _, e := range r.ConfigEntries {
			got[e.ConfigName] = e.ConfigValue
		}
	}
	for k, want := range logHistorySettings {
		if got[k] != want {
			t.Errorf("topic config %s = %q, want %q", k, got[k], want)
		}
	}
}

// TestRealKafkaLogRefusesSeveralPartitions: a topic of three partitions cannot keep records in order.
func TestRealKafkaLogRefusesSeveralPartitions(t *testing.T) {
	brokers := testenv.Kafka(t)
	topic := testenv.NewTopicPrefix(t) + ".history"
	logCreateTopic(t, brokers, topic, 3)
	o := NewLogOpener(LogOpenerConfig{Brokers: brokers, Log: testLogger(t)})
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	l, err := o.OpenLog(ctx, source.LogSpec{Name: topic, Settings: logHistorySettings})
	if err == nil {
		l.Close(ctx)
		t.Fatal("OpenLog accepted a topic of three partitions")
	}
	want := fmt.Sprintf("topic %s has 3 partitions; it must have exactly one so the DDL stays in order: recreate it with one partition", topic)
	if err.Error() != want || !source.IsFatal(err) {
		t.Fatalf("OpenLog = %q (fatal: %v), want the fatal %q", err, source.IsFatal(err), want)
	}
}

// TestRealKafkaLogAppendsInOrderAcrossOpeners: records come back in append order, and what one
// opener appends, another one's log reads.
func TestRealKafkaLogAppendsInOrderAcrossOpeners(t *testing.T) {
	brokers := testenv.Kafka(t)
	topic := testenv.NewTopicPrefix(t) + ".history"
	spec := source.LogSpec{Name: topic, Settings: logHistorySettings}
	first := logOpen(t, NewLogOpener(LogOpenerConfig{Brokers: brokers, Log: testLogger(t)}), spec)
	logAppend(t, first, "create a", "alter a", "", "drop a")
	want := []string{"create a", "alter a", "", "drop a"}
	if got := logStrings(logReadAll(t, first)); !slices.Equal(got, want) {
		t.Fatalf("records %q, want %q", got, want)
	}

	second := logOpen(t, NewLogOpener(LogOpenerConfig{Brokers: brokers, Log: testLogger(t)}), spec)
	if got := logStrings(logReadAll(t, second)); !slices.Equal(got, want) {
		t.Fatalf("the other opener reads %q, want %q", got, want)
	}
	logAppend(t, second, "create b")
	want = append(want, "create b")
	if got := logStrings(logReadAll(t, first)); !slices.Equal(got, want) {
		t.Fatalf("after the other opener appended, records %q, want %q", got, want)
	}
}

// TestRealKafkaLogReadsALargeHistory: a history far larger than one fetch is read to its end.
func TestRealKafkaLogReadsALargeHistory(t *testing.T) {
	brokers := testenv.Kafka(t)
	topic := testenv.NewTopicPrefix(t) + ".history"
	o := NewLogOpener(LogOpenerConfig{Brokers: brokers, Log: testLogger(t)})
	l := logOpen(t, o, source.LogSpec{Name: topic, Settings: logHistorySettings})

	// 6000 records of about 1 KiB: 6 MiB, six times the opener's fetch size. Produced in batches
	// straight to the partition, since appending them one by one with acks=all is slow.
	const n, perBatch = 6000, 500
	pad := strings.Repeat("x", 1000)
	admin := logAdmin(t, brokers)
	for b := 0; b < n; b += perBatch {
		recs := make([]kafkago.Record, perBatch)
		for i := range recs {
			recs[i] = kafkago.Record{Value: kafkago.NewBytes(fmt.Appendf(nil, "%05d-%s", b+i, pad))}
		}
		resp, err := admin.Produce(t.Context(), &kafkago.ProduceRequest{Topic: topic, Partition: 0, RequiredAcks: kafkago.RequireAll,
			Records: kafkago.NewRecordReader(recs...)})
		if err == nil {
			err = resp.Error
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	logAppend(t, l, "last")

	recs := logReadAll(t, l)
	if len(recs) != n+1 {
		t.Fatalf("ReadAll returned %d records, want %d", len(recs), n+1)
	}
	for i, r := range recs[:n] {
		if want := fmt.Sprintf("%05d-%s", i, pad); string(r) != want {
			t.Fatalf("record %d = %.10q…, want %.10q…", i, r, want)
		}
	}
	if string(recs[n]) != "last" {
		t.Fatalf("last record %q, want \"last\"", recs[n])
	}
}

// TestRealKafkaLogTopicCreatedMeanwhile: when the topic appears between the opener's look-up and its
// CreateTopics (here: created behind the back of a transport whose metadata cache predates it), the
// TopicAlreadyExists is the normal path, and the log waits until the topic shows in its metadata.
func TestRealKafkaLogTopicCreatedMeanwhile(t *testing.T) {
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	// A cache that would not refresh by itself during the test.
	tr := &kafkago.Transport{MetadataTTL: 10 * time.Minute}
	t.Cleanup(tr.CloseIdleConnections)
	o := NewLogOpener(LogOpenerConfig{Brokers: brokers, Transport: tr, Log: testLogger(t)})
	logOpen(t, o, source.LogSpec{Name: prefix + ".primer", Settings: logHistorySettings}) // fills the cache

	topic := prefix + ".history"
	logCreateTopic(t, brokers, topic, 1)
	start := time.Now()
	l := logOpen(t, o, source.LogSpec{Name: topic, Settings: logHistorySettings})
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("OpenLog took %s", d)
	}
	logAppend(t, l, "a")
	if got := logStrings(logReadAll(t, l)); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("records %q, want [a]", got)
	}
}

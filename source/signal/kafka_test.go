package signal

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdcd/cdcd/source/props"
)

// TestReadConfigKafka: the kafka channel's keys with Debezium's defaults (topic <topic.prefix>-signal, group
// kafka-signal, poll timeout 0, auto-commit every 5 s, earliest), the consumer settings cdcd honours, and
// each refusal named by its key.
func TestReadConfigKafka(t *testing.T) {
	p := props.NewParser(map[string]string{"signal.enabled.channels": "source,kafka", "signal.kafka.bootstrap.servers": "k1:9092, k2:9092"})
	c := ReadConfig(p, "inventory")
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	want := KafkaConfig{Key: "inventory", AutoCommit: true, CommitInterval: 5 * time.Second,
		Spec: KafkaSpec{Topic: "inventory-signal", Servers: []string{"k1:9092", "k2:9092"}, GroupID: "kafka-signal"}}
	if !c.Kafka || !c.Source || !reflect.DeepEqual(c.KafkaChannel, want) {
		t.Fatalf("kafka %v, channel %+v, want %+v", c.Kafka, c.KafkaChannel, want)
	}

	p = props.NewParser(map[string]string{"signal.enabled.channels": "kafka", "signal.kafka.bootstrap.servers": "k1:9092",
		"signal.kafka.topic": "sigs", "signal.kafka.groupId": "g", "signal.kafka.poll.timeout.ms": "250",
		"signal.consumer.bootstrap.servers": "k3:9093", "signal.consumer.group.id": "g2", "signal.consumer.client.id": "me",
		"signal.consumer.auto.offset.reset": "latest", "signal.consumer.enable.auto.commit": "false",
		"signal.consumer.auto.commit.interval.ms": "100", "signal.consumer.security.protocol": "SASL_SSL",
		"signal.consumer.sasl.mechanism": "PLAIN", "signal.consumer.ssl.truststore.location": "/t.jks",
		"signal.consumer.value.deserializer": "org.apache.kafka.common.serialization.StringDeserializer"})
	c = ReadConfig(p, "inventory")
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	want = KafkaConfig{Key: "inventory", AutoCommit: false, CommitInterval: 100 * time.Millisecond,
		Spec: KafkaSpec{Topic: "sigs", Servers: []string{"k3:9093"}, GroupID: "g2", ClientID: "me", Latest: true, PollTimeout: 250 * time.Millisecond,
			Security: map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "ssl.truststore.location": "/t.jks"}}}
	if !reflect.DeepEqual(c.KafkaChannel, want) {
		t.Fatalf("channel %+v, want %+v", c.KafkaChannel, want)
	}
	for _, k := range []string{"signal.kafka.topic", "signal.consumer.group.id", "signal.consumer.sasl.mechanism"} {
		if !p.Read(k) || !IsKafkaKey(k) {
			t.Errorf("%s is not accounted as read", k)
		}
	}
	if IsKafkaKey("signal.kafka.other") || IsKafkaKey("signal.file") {
		t.Error("IsKafkaKey claims a key the channel does not read")
	}

	// Without the channel, its keys are accepted unused, as Debezium accepts them.
	p = props.NewParser(map[string]string{"signal.kafka.topic": "t"})
	if ReadConfig(p, "x"); p.Err() != nil {
		t.Fatalf("kafka keys without the channel: %v", p.Err())
	}

	for name, tc := range map[string]struct {
		set  map[string]string
		key  string
		want string
	}{
		"no servers":       {map[string]string{}, "signal.kafka.bootstrap.servers", "reads its signals from these brokers"},
		"empty group":      {map[string]string{"signal.kafka.bootstrap.servers": "k:1", "signal.kafka.groupId": ""}, "signal.kafka.groupId", "name one"},
		"reset none":       {map[string]string{"signal.kafka.bootstrap.servers": "k:1", "signal.consumer.auto.offset.reset": "none"}, "signal.consumer.auto.offset.reset", "use earliest or latest"},
		"byte values":      {map[string]string{"signal.kafka.bootstrap.servers": "k:1", "signal.consumer.value.deserializer": "org.apache.kafka.common.serialization.ByteArrayDeserializer"}, "signal.consumer.value.deserializer", "UTF-8 text"},
		"unknown consumer": {map[string]string{"signal.kafka.bootstrap.servers": "k:1", "signal.consumer.fetch.max.bytes": "1"}, "signal.consumer.fetch.max.bytes", "cdcd does not implement signal.consumer.fetch.max.bytes yet"},
		"negative timeout": {map[string]string{"signal.kafka.bootstrap.servers": "k:1", "signal.kafka.poll.timeout.ms": "-1"}, "signal.kafka.poll.timeout.ms", "between 0 and"},
	} {
		settings := map[string]string{"signal.enabled.channels": "kafka"}
		for k, v := range tc.set {
			settings[k] = v
		}
		p := props.NewParser(settings)
		ReadConfig(p, "x")
		err := p.Err()
		if err == nil || !strings.Contains(err.Error(), tc.key) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a refusal of %s saying %q", name, err, tc.key, tc.want)
		}
		var ke interface{ ConfigKey() string }
		if !errors.As(err, &ke) || ke.ConfigKey() != tc.key {
			t.Errorf("%s: the refusal names key %v, want %s", name, ke, tc.key)
		}
	}

	spec, on := KafkaSpecOf(map[string]string{"topic.prefix": "srv", "signal.enabled.channels": "kafka", "signal.kafka.bootstrap.servers": "k:1"})
	if !on || spec.Topic != "srv-signal" {
		t.Fatalf("KafkaSpecOf: %v %+v", on, spec)
	}
	if _, on := KafkaSpecOf(map[string]string{"topic.prefix": "srv"}); on {
		t.Fatal("KafkaSpecOf: the channel is off by default")
	}
}

// TestParseKafka reads record values as Debezium's KafkaSignalChannel does.
func TestParseKafka(t *testing.T) {
	for value, want := range map[string]Signal{
		// Debezium's documented example: no id.
		`{"type":"execute-snapshot","data": {"data-collections": ["schema1.table1"], "type": "INCREMENTAL"}}`: {Type: ExecuteSnapshot, Data: `{"data-collections":["schema1.table1"],"type":"INCREMENTAL"}`},
		`{"id": "s-1", "type": "log", "data": {"message": "hi"}, "extra": 1}`:                                 {ID: "s-1", Type: Log, Data: `{"message":"hi"}`},
		`{"id": 7, "type": "pause-snapshot", "data": {}}`:                                                     {Type: PauseSnapshot, Data: `{}`},
	} {
		want.Channel = ChannelKafka
		got, err := ParseKafka([]byte(value))
		if err != nil || got != want {
			t.Errorf("%s: %+v, %v; want %+v", value, got, err, want)
		}
	}
	for _, bad := range []string{`not json`, `[1]`, `null`, `{"id": "x", "data": {}}`, `{"type": "log"}`, `{"type": "log", "data": "{\"message\": \"x\"}"}`, `{"type": "log", "data": null}`} {
		if s, err := ParseKafka([]byte(bad)); err == nil {
			t.Errorf("%s was read as %+v", bad, s)
		}
	}
}

// scriptedConsumer is a KafkaConsumer over records held in memory, recording its commits.
type scriptedConsumer struct {
	mu      sync.Mutex
	recs    []KafkaRecord
	next    int
	commits []int64
	closed  bool
	fail    error
}

func (c *scriptedConsumer) add(key, value string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := KafkaRecord{Offset: int64(len(c.recs)), Value: []byte(value)}
	if key != "" {
		r.Key = []byte(key)
	}
	c.recs = append(c.recs, r)
}

func (c *scriptedConsumer) Poll(ctx context.Context) ([]KafkaRecord, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail != nil {
		return nil, c.fail
	}
	out := c.recs[c.next:]
	c.next = len(c.recs)
	return slices.Clone(out), nil
}

func (c *scriptedConsumer) Commit(ctx context.Context, next int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.commits = append(c.commits, next)
	return nil
}

func (c *scriptedConsumer) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return nil
}

func (c *scriptedConsumer) lastCommit() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.commits) == 0 {
		return -1
	}
	return c.commits[len(c.commits)-1]
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestReadKafkaQueuesThisConnectorsSignals: records keyed with topic.prefix are queued (a signal without
// an id too), others are skipped, as are tombstones and values that are not signals; the position is
// committed when the channel stops, and the consumer closed.
func TestReadKafkaQueuesThisConnectorsSignals(t *testing.T) {
	c := &scriptedConsumer{}
	c.add("srv", `{"type":"execute-snapshot","data":{"data-collections":["public.a"]}}`)
	c.add("other", `{"id":"theirs","type":"log","data":{"message":"x"}}`)
	c.add("", `{"id":"nokey","type":"log","data":{"message":"x"}}`)
	c.add("srv", `{broken`)
	c.add("srv", ``)
	c.add("srv", `{"id":"w","type":"snapshot-window-open","data":{}}`)
	c.add("srv", `{"id":"log-1","type":"log","data":{"message":"hello"}}`)
	q := NewQueue("c", Config{})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.ReadKafka(ctx, c, KafkaConfig{Key: "srv", AutoCommit: true, CommitInterval: time.Hour}, 5*time.Millisecond, discard())
	}()
	var got []Signal
	for len(got) < 2 {
		select {
		case s := <-q.C():
			got = append(got, s)
		case <-time.After(5 * time.Second):
			t.Fatalf("queued %+v, want two signals", got)
		}
	}
	want := []Signal{{Type: ExecuteSnapshot, Data: `{"data-collections":["public.a"]}`, Channel: ChannelKafka}, {ID: "log-1", Type: Log, Data: `{"message":"hello"}`, Channel: ChannelKafka}}
	if !slices.Equal(got, want) {
		t.Fatalf("queued %+v, want %+v", got, want)
	}
	cancel()
	<-done
	if c.lastCommit() != 7 || !c.closed {
		t.Fatalf("commits %v, closed %v; want 7 committed at the stop and the consumer closed", c.commits, c.closed)
	}
	select {
	case s := <-q.C():
		t.Fatalf("a skipped record was queued: %+v", s)
	default:
	}
}

// TestReadKafkaCommitsOnlyTakenSignals: the committed position never passes a signal still waiting in the
// queue, so one the reader never took is read again after a restart; a full queue holds the channel back
// instead of dropping signals.
func TestReadKafkaCommitsOnlyTakenSignals(t *testing.T) {
	c := &scriptedConsumer{}
	for i := range queueCapacity + 3 {
		_ = i
		c.add("srv", `{"type":"log","data":{"message":"m"}}`)
	}
	q := NewQueue("c", Config{})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.ReadKafka(ctx, c, KafkaConfig{Key: "srv", AutoCommit: true, CommitInterval: time.Millisecond}, time.Millisecond, discard())
	}()
	// The queue fills and the channel waits: nothing is committed while the first signal is still queued.
	time.Sleep(50 * time.Millisecond)
	if n := len(q.C()); n != queueCapacity {
		t.Fatalf("%d signals queued, want a full queue (%d)", n, queueCapacity)
	}
	if last := c.lastCommit(); last > 0 {
		t.Fatalf("committed %d while every signal still waited in the queue", last)
	}
	// The reader takes them all: the channel queues the rest and commits the end.
	for range queueCapacity + 3 {
		select {
		case <-q.C():
		case <-time.After(5 * time.Second):
			t.Fatal("the channel did not queue the signals it held back")
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for c.lastCommit() != int64(queueCapacity+3) {
		if time.Now().After(deadline) {
			t.Fatalf("commits %v, want the end %d once every signal was taken", c.commits, queueCapacity+3)
		}
		time.Sleep(time.Millisecond)
	}
	// Two more, left in the queue when the channel stops: the final commit stays before them.
	c.add("srv", `{"type":"log","data":{"message":"m"}}`)
	c.add("srv", `{"type":"log","data":{"message":"m"}}`)
	for len(q.C()) < 2 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	if last := c.lastCommit(); last != int64(queueCapacity+3) {
		t.Fatalf("final commit %d, want %d: the two signals never taken must be read again", last, queueCapacity+3)
	}
}

// TestReadKafkaRidesOutPollErrors: a failing poll is retried at the next interval; nothing is queued or
// committed meanwhile.
func TestReadKafkaRidesOutPollErrors(t *testing.T) {
	c := &scriptedConsumer{fail: errors.New("broker down")}
	c.add("srv", `{"id":"a","type":"log","data":{"message":"m"}}`)
	q := NewQueue("c", Config{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go q.ReadKafka(ctx, c, KafkaConfig{Key: "srv", AutoCommit: true, CommitInterval: time.Millisecond}, time.Millisecond, discard())
	time.Sleep(30 * time.Millisecond)
	if len(q.C()) != 0 || c.lastCommit() != -1 {
		t.Fatalf("a failing poll queued %d signals or committed %v", len(q.C()), c.commits)
	}
	c.mu.Lock()
	c.fail = nil
	c.mu.Unlock()
	select {
	case s := <-q.C():
		if s.ID != "a" {
			t.Fatalf("got %+v", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the channel did not recover from the failing polls")
	}
}

// TestStartKafka: without an opener the channel cannot start, and says so.
func TestStartKafka(t *testing.T) {
	if _, err := NewQueue("c", Config{}).StartKafka(t.Context(), nil, KafkaConfig{}, time.Second, discard()); err == nil {
		t.Fatal("started without an opener")
	}
}

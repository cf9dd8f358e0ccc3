package cluster

import (
	"context"
	"errors"
	"os"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const kafkaTestTimeout = 60 * time.Second

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), kafkaTestTimeout)
	t.Cleanup(cancel)
	return ctx
}

// testBrokers is the test bed's Kafka when CDCD_E2E is set, and otherwise an in-process kfake
// cluster, so the unit tier runs these tests too.
func testBrokers(t *testing.T) []string {
	t.Helper()
	if os.Getenv(testenv.EnableEnv) != "" {
		return testenv.Kafka(t)
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

func logConfig(brokers []string, spec TopicSpec) LogConfig {
	return LogConfig{Brokers: brokers, Topic: spec}
}

// readRaw returns every record of topic, read with a plain consumer.
func readRaw(t *testing.T, brokers []string, topic string, want int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := testContext(t)
	var recs []*kgo.Record
	for len(recs) < want {
		f := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records from %s", len(recs), want, topic)
		}
		recs = append(recs, f.Records()...)
	}
	return recs
}

func TestTopicLogCreatesCompactedTopicAndReadsItsOwnWrites(t *testing.T) {
	brokers := testBrokers(t)
	ctx := testContext(t)
	topic := testenv.NewTopicPrefix(t) + "-status"
	var seen []string
	l, err := OpenLog(ctx, logConfig(brokers, StatusTopic(topic, 5, 1)), func(r Record) { seen = append(seen, string(r.Key)) })
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Partitions() != 5 {
		t.Fatalf("partitions = %d, want 5", l.Partitions())
	}
	if err := l.Write(ctx, Message{Key: []byte("a"), Value: []byte("1")}, Message{Key: []byte("b"), Value: []byte("2")}); err != nil {
		t.Fatal(err)
	}
	if err := l.ReadToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 {
		t.Fatalf("read back %v", seen)
	}
	if err := checkCleanupPolicy(ctx, l.cl, topic); err != nil {
		t.Fatal(err)
	}

	// A second log on the same topic reads what is there before it returns.
	var again int
	l2, err := OpenLog(ctx, logConfig(brokers, StatusTopic(topic, 5, 1)), func(Record) { again++ })
	if err != nil {
		t.Fatal(err)
	}
	l2.Close()
	if again != 2 {
		t.Fatalf("reopened log read %d records, want 2", again)
	}
}

func TestExistingTopicsWithWrongSettingsAreRefused(t *testing.T) {
	brokers := testBrokers(t)
	ctx := testContext(t)
	prefix := testenv.NewTopicPrefix(t)
	cl, _ := kgo.NewClient(kgo.SeedBrokers(brokers...))
	defer cl.Close()

	deleting := prefix + "-delete"
	createPlainTopic(t, cl, deleting, 1, "delete")
	_, err := OpenLog(ctx, logConfig(brokers, OffsetTopic(deleting, 1, 1)), func(Record) {})
	var te *TopicError
	if !errors.As(err, &te) {
		t.Fatalf("cleanup.policy=delete: err = %v, want a TopicError", err)
	}

	wide := prefix + "-configs"
	createPlainTopic(t, cl, wide, 2, "compact")
	_, err = OpenConfigStore(ctx, ConfigStoreConfig{Log: logConfig(brokers, ConfigTopic(wide, 1))})
	if !errors.As(err, &te) {
		t.Fatalf("two-partition config topic: err = %v, want a TopicError", err)
	}
}

func createPlainTopic(t *testing.T, cl *kgo.Client, topic string, partitions int32, policy string) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, partitions, 1
	c := kmsg.NewCreateTopicsRequestTopicConfig()
	c.Name, c.Value = "cleanup.policy", kmsg.StringPtr(policy)
	rt.Configs = append(rt.Configs, c)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(testContext(t), cl)
	if err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create %s: %v %+v", topic, err, resp)
	}
}

func TestConfigStoreRoundTrip(t *testing.T) {
	brokers := testBrokers(t)
	ctx := testContext(t)
	topic := testenv.NewTopicPrefix(t) + "-configs"
	changed := make(chan string, 16)
	cfg := ConfigStoreConfig{Log: logConfig(brokers, ConfigTopic(topic, 1)), OnChange: func(c string) { changed <- c }}
	w, err := OpenConfigStore(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	props := map[string]string{"connector.class": "io.debezium.connector.postgresql.PostgresConnector", "database.password": "${file:/etc/secrets.properties:pw}", "tasks.max": "1"}
	paused := Paused
	if err := w.PutConnectorConfig(ctx, "inv-1", props, &paused); err != nil {
		t.Fatal(err)
	}
	tasks := []map[string]string{{"task.class": "io.debezium.connector.postgresql.PostgresConnectorTask", "database.password": "${file:/etc/secrets.properties:pw}"}}
	if err := w.PutTaskConfigs(ctx, "inv-1", tasks); err != nil {
		t.Fatal(err)
	}
	if got := <-changed; got != "inv-1" {
		t.Fatalf("OnChange(%q)", got)
	}

	r, err := OpenConfigStore(ctx, ConfigStoreConfig{Log: logConfig(brokers, ConfigTopic(topic, 1))})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	snap := r.Snapshot()
	if !reflect.DeepEqual(snap.Connectors["inv-1"], props) || !reflect.DeepEqual(snap.Tasks["inv-1"], tasks) || snap.TargetStates["inv-1"] != Paused {
		t.Fatalf("snapshot read by a second store: %+v", snap)
	}
	if snap.Offset != w.Snapshot().Offset || snap.Offset != 4 {
		t.Fatalf("offsets: reader %d, writer %d, want 4 (state, config, task, commit)", snap.Offset, w.Snapshot().Offset)
	}

	raw := readRaw(t, brokers, topic, 4)
	want := [][2]string{
		{"target-state-inv-1", `{"state":"PAUSED","state.v2":"PAUSED"}`},
		{"connector-inv-1", string(propertiesValue(props))},
		{"task-inv-1-0", string(propertiesValue(tasks[0]))},
		{"commit-inv-1", `{"tasks":1}`},
	}
	for i, rec := range raw {
		if string(rec.Key) != want[i][0] || string(rec.Value) != want[i][1] {
			t.Errorf("record %d = %s %s, want %s %s", i, rec.Key, rec.Value, want[i][0], want[i][1])
		}
	}

	if err := w.RemoveConnectorConfig(ctx, "inv-1"); err != nil {
		t.Fatal(err)
	}
	if err := r.ReadToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	if snap := r.Snapshot(); len(snap.Connectors) != 0 || len(snap.TargetStates) != 0 {
		t.Fatalf("after delete: %+v", snap)
	}
	for _, rec := range readRaw(t, brokers, topic, 6)[4:] {
		if rec.Value != nil {
			t.Errorf("delete wrote %s = %s, want a tombstone", rec.Key, rec.Value)
		}
	}
}

func TestOffsetStorePlacesKeysAsJavaAndReadsThemBack(t *testing.T) {
	brokers := testBrokers(t)
	ctx := testContext(t)
	topic := testenv.NewTopicPrefix(t) + "-offsets"
	s, err := OpenOffsetStore(ctx, logConfig(brokers, OffsetTopic(topic, 25, 1)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key, err := offsets.Key("inventory-connector", map[string]any{"server": "dbserver1"})
	if err != nil {
		t.Fatal(err)
	}
	value, _ := offsets.EncodeValue(offsets.Fields{{Name: "lsn", Value: int64(24023128)}, {Name: "txId", Value: int64(555)}})
	if err := s.Put(ctx, []offsets.Entry{{Key: key, Value: value}}); err != nil {
		t.Fatal(err)
	}
	rec := readRaw(t, brokers, topic, 1)[0]
	// The partition Java's producer picks for this key (murmur2 & 0x7fffffff % 25), from the spec's vector.
	if rec.Partition != 11 {
		t.Fatalf("partition = %d, want 11", rec.Partition)
	}
	if string(rec.Key) != `["inventory-connector",{"server":"dbserver1"}]` || string(rec.Value) != string(value) {
		t.Fatalf("record %s = %s", rec.Key, rec.Value)
	}

	r, err := OpenOffsetStore(ctx, logConfig(brokers, OffsetTopic(topic, 25, 1)))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got, ok := r.Get(key); !ok || string(got) != string(value) {
		t.Fatalf("Get = %s %v", got, ok)
	}
	if got := r.ConnectorEntries("inventory-connector"); len(got) != 1 {
		t.Fatalf("ConnectorEntries = %v", got)
	}
	if err := s.Put(ctx, []offsets.Entry{{Key: key}}); err != nil {
		t.Fatal(err)
	}
	if err := r.ReadToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Get(key); ok {
		t.Fatal("a tombstone must remove the offset")
	}
}

func TestStatusStoreRoundTrip(t *testing.T) {
	brokers := testBrokers(t)
	ctx := testContext(t)
	topic := testenv.NewTopicPrefix(t) + "-status"
	w, err := OpenStatusStore(ctx, logConfig(brokers, StatusTopic(topic, 5, 1)))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	conn := Status{State: Running, WorkerID: "w1:8083", Generation: 3}
	task := Status{State: Failed, Trace: "java.lang.Exception: x", WorkerID: "w1:8083", Generation: 3}
	if err := w.PutConnector(ctx, "inv-1", conn); err != nil {
		t.Fatal(err)
	}
	if err := w.PutTask(ctx, "inv-1", 0, task); err != nil {
		t.Fatal(err)
	}
	r, err := OpenStatusStore(ctx, logConfig(brokers, StatusTopic(topic, 5, 1)))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got, ok := r.Connector("inv-1"); !ok || got != conn {
		t.Fatalf("connector status = %+v", got)
	}
	if got := r.Tasks("inv-1"); got[0] != task {
		t.Fatalf("task status = %+v", got)
	}
	if err := w.DeleteConnector(ctx, "inv-1"); err != nil {
		t.Fatal(err)
	}
	if err := r.ReadToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Connector("inv-1"); ok {
		t.Fatal("tombstone did not remove the connector's status")
	}
}

func TestOpenStoresFollowsTheWorkerConfig(t *testing.T) {
	brokers := testBrokers(t)
	ctx := testContext(t)
	prefix := testenv.NewTopicPrefix(t)
	w, _, err := config.ParseWorker(map[string]string{
		"bootstrap.servers": brokers[0], "group.id": prefix,
		"key.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
		"config.storage.topic": prefix + "-configs", "offset.storage.topic": prefix + "-offsets", "status.storage.topic": prefix + "-status",
		"config.storage.replication.factor": "1", "offset.storage.replication.factor": "1", "status.storage.replication.factor": "1",
		"offset.storage.partitions": "3", "status.storage.partitions": "2",
	}, config.Distributed)
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenStores(ctx, w, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := []int32{s.Configs.log.Partitions(), s.Offsets.log.Partitions(), s.Status.log.Partitions()}; !reflect.DeepEqual(got, []int32{1, 3, 2}) {
		t.Fatalf("partitions (configs, offsets, status) = %v, want [1 3 2]", got)
	}
	if mc := MemberConfigFor(w); mc.SessionTimeout != 10*time.Second || mc.ScheduledRebalanceMaxDelay != 5*time.Minute || mc.GroupID != prefix {
		t.Fatalf("member config from the worker's defaults: %+v", mc)
	}
}

func TestStatusFromAnOlderGenerationDoesNotOverwriteTheNewOwners(t *testing.T) {
	brokers := testBrokers(t)
	ctx := testContext(t)
	s, err := OpenStatusStore(ctx, logConfig(brokers, StatusTopic(testenv.NewTopicPrefix(t)+"-status", 5, 1)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	owner := Status{State: Running, WorkerID: "new:8083", Generation: 5}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.PutConnector(ctx, "c", owner))
	must(s.PutTask(ctx, "c", 0, owner))
	must(s.ReadToEnd(ctx))
	late := Status{State: Unassigned, WorkerID: "old:8083", Generation: 4}
	must(s.PutConnector(ctx, "c", late))
	must(s.PutTask(ctx, "c", 0, Status{State: Failed, Trace: "x", WorkerID: "old:8083", Generation: 4}))
	must(s.ReadToEnd(ctx))
	if got, _ := s.Connector("c"); got != owner {
		t.Errorf("connector status = %+v, want the new owner's", got)
	}
	if got := s.Tasks("c")[0]; got != owner {
		t.Errorf("task status = %+v, want the new owner's", got)
	}
	// The owner itself may always report, and so may anyone in a newer generation.
	must(s.PutConnector(ctx, "c", Status{State: Failed, Trace: "y", WorkerID: "new:8083", Generation: 5}))
	must(s.ReadToEnd(ctx))
	if got, _ := s.Connector("c"); got.State != Failed {
		t.Errorf("the owner's FAILED was not written: %+v", got)
	}
}

// Under exactly-once the offsets topic is read read_committed: an offset a task wrote in a transaction
// that was aborted (a killed or fenced task's) does not count, one committed does, and a read_uncommitted
// reader sees both (so the test sees the skip, not a missing record).
func TestOffsetStoreReadCommittedSkipsAbortedTransactions(t *testing.T) {
	brokers := testBrokers(t)
	ctx := testContext(t)
	topic := testenv.NewTopicPrefix(t) + "-offsets"
	s, err := OpenOffsetStore(ctx, logConfig(brokers, OffsetTopic(topic, 3, 1)))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	producer, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.TransactionalID(topic+"-task-0"), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	transaction := func(commit bool, keys ...string) {
		t.Helper()
		if err := producer.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if err := producer.ProduceSync(ctx, &kgo.Record{Key: []byte(k), Value: []byte(`{"at":"` + k + `"}`)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := producer.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	transaction(true, "committed-1", "committed-2")
	transaction(false, "aborted-1", "aborted-2", "aborted-3")
	transaction(true, "committed-3")

	for _, readCommitted := range []bool{true, false} {
		cfg := logConfig(brokers, OffsetTopic(topic, 3, 1))
		cfg.ReadCommitted = readCommitted
		r, err := OpenOffsetStore(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, e := range r.Entries() {
			keys = append(keys, string(e.Key))
		}
		r.Close()
		want := []string{"committed-1", "committed-2", "committed-3"}
		if !readCommitted {
			want = []string{"aborted-1", "aborted-2", "aborted-3", "committed-1", "committed-2", "committed-3"}
		}
		if !slices.Equal(keys, want) {
			t.Errorf("read_committed=%v: entries %v, want %v", readCommitted, keys, want)
		}
	}
}

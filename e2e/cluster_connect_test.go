package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdcd/cdcd/connect/cluster"
	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// startConnectDistributed runs the real Kafka Connect 4.4 (ConnectDistributed, with the Debezium plugin)
// with worker props and returns its REST base URL once /health answers 200, which in distributed mode
// means it joined its group and read the config topic.
func startConnectDistributed(t *testing.T, props map[string]string) string {
	return startConnectREST(t, props, "org.apache.kafka.connect.cli.ConnectDistributed")
}

// clusterTopics are one test's internal topics.
type clusterTopics struct{ configs, offsets, status string }

func openClusterStores(t *testing.T, ctx context.Context, brokers []string, topics clusterTopics) (*cluster.ConfigStore, *cluster.OffsetStore, *cluster.StatusStore) {
	t.Helper()
	cs, err := cluster.OpenConfigStore(ctx, cluster.ConfigStoreConfig{Log: cluster.LogConfig{Brokers: brokers, Topic: cluster.ConfigTopic(topics.configs, 1)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cs.Close)
	osx, err := cluster.OpenOffsetStore(ctx, cluster.LogConfig{Brokers: brokers, Topic: cluster.OffsetTopic(topics.offsets, 25, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(osx.Close)
	ss, err := cluster.OpenStatusStore(ctx, cluster.LogConfig{Brokers: brokers, Topic: cluster.StatusTopic(topics.status, 5, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ss.Close)
	return cs, osx, ss
}

// lastRecord returns the value of the last record with key in a single-partition topic.
func lastRecord(t *testing.T, brokers []string, topic, key string) []byte {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var value []byte
	found := false
	for ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			if string(r.Key) == key {
				value, found = r.Value, true
			}
		})
	}
	if !found {
		t.Fatalf("no record %s in %s", key, topic)
	}
	return value
}

func jsonEqual(t *testing.T, what, got string, want any) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%s: %v in %s", what, err, got)
	}
	wb, _ := json.Marshal(want)
	_ = json.Unmarshal(wb, &w)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, got, wb)
	}
}

// TestClusterStoresInteroperateWithKafkaConnect moves a cluster both ways between cdcd's stores and the
// real Kafka Connect 4.4 in distributed mode, sharing one set of config, offset and status topics:
// what cdcd writes, Connect serves through its REST API; what Connect writes (a Debezium connector's
// config, task configs, target states, statuses and offsets), cdcd reads back exactly.
func TestClusterStoresInteroperateWithKafkaConnect(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	connectInstall(t)
	prefix := testenv.NewTopicPrefix(t)
	topics := clusterTopicsOf(prefix)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	execPostgres(t, ctx, dsn, `CREATE TABLE public.items (id int PRIMARY KEY, v text)`)

	// cdcd writes first, as a cdcd cluster handing over to Connect would have: a stopped connector
	// (raw placeholder included), its empty task commit, and an offset.
	configs, offsetStore, statuses := openClusterStores(t, ctx, brokers, topics)
	fromCdcd := pgConnector(t, dsn, "from-cdcd", prefix+"b", "")
	fromCdcd["database.password"] = "${file:/nonexistent/secrets.properties:pw}"
	stopped := cluster.Stopped
	if err := configs.PutConnectorConfig(ctx, "from-cdcd", fromCdcd, &stopped); err != nil {
		t.Fatal(err)
	}
	if err := configs.PutTaskConfigs(ctx, "from-cdcd", nil); err != nil {
		t.Fatal(err)
	}
	partitionB := map[string]any{"server": prefix + "b"}
	keyB, err := offsets.Key("from-cdcd", partitionB)
	if err != nil {
		t.Fatal(err)
	}
	offsetB := offsets.Fields{{Name: "lsn", Value: int64(24023128)}, {Name: "txId", Value: int64(555)}, {Name: "ts_usec", Value: int64(1718000000000000)}}
	valueB, err := offsets.EncodeValue(offsetB)
	if err != nil {
		t.Fatal(err)
	}
	if err := offsetStore.Put(ctx, []offsets.Entry{{Key: keyB, Value: valueB}}); err != nil {
		t.Fatal(err)
	}

	port := freePort(t)
	props := clusterMemberProps(brokers, prefix+"-connect", topics)
	maps.Copy(props, map[string]string{
		"offset.flush.interval.ms":  "500",
		"listeners":                 fmt.Sprintf("http://127.0.0.1:%d", port),
		"rest.advertised.host.name": "127.0.0.1",
		"rest.advertised.port":      fmt.Sprint(port),
	})
	rc := restClient{t: t, base: startConnectDistributed(t, props)}

	// Connect reads what cdcd wrote.
	jsonEqual(t, "Connect's view of cdcd's connector config", rc.expect("GET", "/connectors/from-cdcd/config", "", 200), fromCdcd)
	jsonEqual(t, "Connect's view of cdcd's offsets", rc.expect("GET", "/connectors/from-cdcd/offsets", "", 200),
		map[string]any{"offsets": []any{map[string]any{"partition": partitionB, "offset": offsetB.Map()}}})
	rc.waitTaskState("from-cdcd", "STOPPED")

	// Connect writes: a running Debezium connector (config, task configs, statuses), then stop it and
	// alter its offsets.
	fromConnect := pgConnector(t, dsn, "from-connect", prefix+"a", "public.items")
	fromConnect["snapshot.mode"] = "no_data"
	fromConnect["database.password"] = "${file:/nonexistent/secrets.properties:pw}"
	delete(fromConnect, "name")
	rc.expect("POST", "/connectors", jsonBody(t, map[string]any{"name": "from-connect", "config": fromConnect}), 201)
	rc.waitTaskState("from-connect", "RUNNING")
	fromConnect["name"] = "from-connect" // Connect adds it, as it stores the config

	if err := configs.ReadToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	snap := configs.Snapshot()
	if !reflect.DeepEqual(snap.Connectors["from-connect"], fromConnect) {
		t.Errorf("cdcd's view of Connect's connector config:\n got %v\nwant %v", snap.Connectors["from-connect"], fromConnect)
	}
	tasks := snap.Tasks["from-connect"]
	if len(tasks) != 1 || tasks[0]["task.class"] != "io.debezium.connector.postgresql.PostgresConnectorTask" ||
		tasks[0]["database.password"] != fromConnect["database.password"] {
		t.Errorf("cdcd's view of Connect's task configs: %v", tasks)
	}
	if snap.TargetStates["from-connect"] != cluster.Started || snap.TargetStates["from-cdcd"] != cluster.Stopped {
		t.Errorf("target states: %v", snap.TargetStates)
	}
	if err := statuses.ReadToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	workerID := fmt.Sprintf("127.0.0.1:%d", port)
	if st, ok := statuses.Connector("from-connect"); !ok || st.State != cluster.Running || st.WorkerID != workerID || st.Generation < 0 {
		t.Errorf("connector status written by Connect: %+v (found %v)", st, ok)
	}
	if st := statuses.Tasks("from-connect")[0]; st.State != cluster.Running || st.WorkerID != workerID {
		t.Errorf("task status written by Connect: %+v", st)
	}

	rc.expect("PUT", "/connectors/from-connect/stop", "", 204)
	rc.waitTaskState("from-connect", "STOPPED")
	partitionA := map[string]any{"server": prefix + "a"}
	rc.expect("PATCH", "/connectors/from-connect/offsets",
		`{"offsets":[{"partition":{"server":"`+prefix+`a"},"offset":{"lsn":24023128,"txId":555,"ts_usec":1718000000000000,"lsn_proc":24023128}}]}`, 200)

	if err := offsetStore.ReadToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	keyA, _ := offsets.Key("from-connect", partitionA)
	got, ok := offsetStore.Get(keyA)
	if !ok {
		t.Fatalf("cdcd finds no offset under %s; entries: %v", keyA, offsetStore.Entries())
	}
	wantA, _ := offsets.EncodeValue(offsets.Fields{{Name: "lsn", Value: int64(24023128)}, {Name: "txId", Value: int64(555)},
		{Name: "ts_usec", Value: int64(1718000000000000)}, {Name: "lsn_proc", Value: int64(24023128)}})
	if string(got) != string(wantA) {
		t.Errorf("offset value written by Connect:\n got %s\nwant %s (the bytes cdcd writes for it)", got, wantA)
	}
	if err := configs.ReadToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	snap = configs.Snapshot()
	if snap.TargetStates["from-connect"] != cluster.Stopped || len(snap.Tasks["from-connect"]) != 0 {
		t.Errorf("after stop: state %q, tasks %v", snap.TargetStates["from-connect"], snap.Tasks["from-connect"])
	}
	// Connect's internal converter runs with schemas.enable=false: plain JSON values, no envelope.
	if v := string(lastRecord(t, brokers, topics.configs, "target-state-from-connect")); v != `{"state":"PAUSED","state.v2":"STOPPED"}` {
		t.Errorf("Connect's target-state record: %s", v)
	}

	rc.expect("DELETE", "/connectors/from-connect", "", 204)
	deadline := time.Now().Add(time.Minute)
	for {
		if err := configs.ReadToEnd(ctx); err != nil {
			t.Fatal(err)
		}
		if _, ok := configs.Snapshot().Connectors["from-connect"]; !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("cdcd still sees the connector Connect deleted")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

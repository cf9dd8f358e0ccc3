package e2e

import (
	"bytes"
	"context"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdcd/cdcd/connect/cluster"
	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestDistributedHandoverWithDebezium is the standalone handover (handover_test.go) in distributed mode:
// a Kafka Connect distributed worker runs Debezium and stops; two cdcd workers join the same group on
// the same internal topics and resume exactly where Debezium stopped (no new snapshot); they stop;
// Connect starts again and resumes where cdcd stopped. Rows are written while each runs and in each gap.
func TestDistributedHandoverWithDebezium(t *testing.T) {
	t.Run("at least once", func(t *testing.T) { distributedHandover(t, false) })
	// Both sides with exactly.once.source.support=enabled and a connector that requires it: each reads the
	// offsets the other committed in its transactions (read_committed), and each task takes over the other's
	// transactional.id (<group>-handover-0). cdcd changes the connector's config, so its leader commits a new
	// task generation, fences and writes the task count record before the new task starts; Connect, taking
	// over again, finds that generation fenced and writes no record of its own.
	t.Run("exactly once", func(t *testing.T) { distributedHandover(t, true) })
}

func distributedHandover(t *testing.T, exactlyOnce bool) {
	java, lib, plugins := connectInstall(t)
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	db := connectPostgres(t, ctx, dsn, `CREATE TABLE handover (id int PRIMARY KEY, version bigint NOT NULL); ALTER TABLE handover REPLICA IDENTITY FULL`)
	topics := clusterTopicsOf(prefix)
	configStore, offsetStore, _ := openClusterStores(t, ctx, brokers, topics)
	conn := pgConnector(t, dsn, "handover", prefix, "public.handover")
	conn["snapshot.mode"] = "no_data"
	workerProps := func() map[string]string {
		props := distributedProps(brokers, prefix, topics, freePort(t))
		if exactlyOnce {
			props["exactly.once.source.support"] = "enabled"
		}
		return props
	}
	if exactlyOnce {
		conn["exactly.once.support"] = "required"
	}
	offsetKey, err := offsets.Key("handover", map[string]any{"server": prefix})
	if err != nil {
		t.Fatal(err)
	}
	durable := func() uint64 { return topicOffsetLSN(t, ctx, offsetStore, offsetKey) }

	broker := newBroker(t, brokers)
	h := &handover{t: t, ctx: ctx, db: db, broker: broker, topic: prefix + ".public.handover", rows: map[int]bool{},
		rnd: rand.New(rand.NewPCG(3, 4))}
	dir := t.TempDir()
	startDebezium := func(logName string) (*connectWorker, string) {
		props := workerProps()
		port := strings.TrimPrefix(props["listeners"], "http://127.0.0.1:")
		props["plugin.path"] = plugins
		props["rest.advertised.host.name"], props["rest.advertised.port"] = "127.0.0.1", port
		path := filepath.Join(dir, logName+".properties")
		writeProperties(t, path, props)
		return startConnectMain(t, java, lib, filepath.Join(dir, logName+".log"), dir, "org.apache.kafka.connect.cli.ConnectDistributed", path), props["listeners"]
	}

	// 1. Debezium, created through Connect's REST API, streams a first batch.
	debezium, base := startDebezium("connect-1")
	waitHealthy(t, base, debezium.exited)
	createConnector(t, base, conn)
	debezium.waitRunning(base, conn["name"])
	waitSlotActive(t, ctx, db, conn["slot.name"], nil)
	h.write(20)
	h.waitDelivered(debezium.exited)
	debezium.stop()
	h.endSegment("Debezium", durable())
	// Connect's leader wrote the group's session key (KIP-507), which cdcd reads: its workers sign and verify
	// their internal requests with it instead of writing a key of their own.
	connectKey := sessionKey(t, ctx, configStore)

	// 2. A gap, then two cdcd workers join the group and take the connector over.
	h.write(15)
	var workers []*cdcdWorker
	for range 2 {
		workers = append(workers, startCdcdDistributed(t, workerProps()))
	}
	taskOwner(t, workers[0].url, conn["name"])
	waitSlotActive(t, ctx, db, conn["slot.name"], nil)
	var fencedByCdcd fencingLog
	if exactlyOnce {
		java := readFencingLog(t, ctx, brokers, topics.configs, conn["name"])
		if !java.fenced() {
			t.Fatalf("Connect left no task count record after its last task commit: %+v", java)
		}
		// A new task generation (same behaviour: tombstones.on.delete=true is the default).
		conn["tombstones.on.delete"] = "true"
		if code, body := restCall(t, "PUT", workers[1].url+"/connectors/"+conn["name"]+"/config", conn); code != 200 {
			t.Fatalf("PUT config: %d %s", code, body)
		}
		fencedByCdcd = waitFencingLog(t, ctx, brokers, topics.configs, conn["name"], func(f fencingLog) bool {
			return len(f.commits) > len(java.commits) && f.fenced()
		})
		if fencedByCdcd.lastCount != `{"task-count":1}` {
			t.Fatalf("cdcd's task count record = %s, want Connect's {\"task-count\":1}", fencedByCdcd.lastCount)
		}
		taskOwner(t, workers[0].url, conn["name"])
	}
	h.write(15)
	h.waitDelivered(func() bool { return workers[0].exited() && workers[1].exited() })
	for _, w := range workers {
		w.stop()
	}
	h.endSegment("cdcd", durable())
	if key := sessionKey(t, ctx, configStore); !bytes.Equal(key.Key, connectKey.Key) || !key.Created.Equal(connectKey.Created) {
		t.Errorf("cdcd replaced Connect's fresh session key (%s of %d bytes, created %v) with its own (%s, created %v)",
			connectKey.Algorithm, len(connectKey.Key), connectKey.Created, key.Algorithm, key.Created)
	}

	// 3. A gap, then Debezium again on the offsets cdcd wrote to the offset topic.
	h.write(15)
	debezium, base = startDebezium("connect-2")
	debezium.waitRunning(base, conn["name"])
	waitSlotActive(t, ctx, db, conn["slot.name"], nil)
	h.write(15)
	h.waitDelivered(debezium.exited)
	if exactlyOnce {
		// Connect read cdcd's record as its own: the generation cdcd committed needed no round of its own.
		// (Had Connect committed a new generation, it would have written a record after it.)
		after := readFencingLog(t, ctx, brokers, topics.configs, conn["name"])
		if len(after.commits) == len(fencedByCdcd.commits) && len(after.counts) != len(fencedByCdcd.counts) {
			t.Fatalf("Connect wrote a task count record for the generation cdcd had fenced: before %+v, after %+v", fencedByCdcd, after)
		}
		if !after.fenced() {
			t.Fatalf("no task count record after Connect's last task commit: %+v", after)
		}
	}
	debezium.stop()
	h.endSegment("Debezium again", durable())

	h.check()
}

// topicOffsetLSN is the resume LSN stored under key in the offset topic now; 0 when there is none.
func topicOffsetLSN(t *testing.T, ctx context.Context, store *cluster.OffsetStore, key []byte) uint64 {
	t.Helper()
	if err := store.ReadToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	raw, ok := store.Get(key)
	if !ok {
		return 0
	}
	return offsetLSN(raw)
}

// fencingLog is what the config topic holds about one connector's zombie fencing: the offsets of its commit
// records and of its task count records ("tasks-fencing-<name>"), and the last task count record's value.
type fencingLog struct {
	commits, counts []int64
	lastCount       string
}

// fenced says whether the last task commit is followed by a task count record: its generation's tasks may
// start (Connect's pendingFencing is false).
func (f fencingLog) fenced() bool {
	return len(f.counts) > 0 && (len(f.commits) == 0 || f.counts[len(f.counts)-1] > f.commits[len(f.commits)-1])
}

// readFencingLog reads the config topic to its end, read_committed as an exactly-once worker reads it.
func readFencingLog(t *testing.T, ctx context.Context, brokers []string, topic, name string) fencingLog {
	t.Helper()
	var mu sync.Mutex
	var f fencingLog
	log, err := cluster.OpenLog(ctx, cluster.LogConfig{Brokers: brokers, Topic: cluster.ConfigTopic(topic, 1), ReadCommitted: true},
		func(r cluster.Record) {
			mu.Lock()
			defer mu.Unlock()
			switch string(r.Key) {
			case "commit-" + name:
				f.commits = append(f.commits, r.Offset)
			case "tasks-fencing-" + name:
				f.counts = append(f.counts, r.Offset)
				f.lastCount = string(r.Value)
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	log.Close()
	mu.Lock()
	defer mu.Unlock()
	return f
}

// waitFencingLog waits until the config topic's fencing log for name satisfies ok.
func waitFencingLog(t *testing.T, ctx context.Context, brokers []string, topic, name string, ok func(fencingLog) bool) fencingLog {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		f := readFencingLog(t, ctx, brokers, topic, name)
		if ok(f) {
			return f
		}
		if time.Now().After(deadline) {
			t.Fatalf("the config topic's fencing records of %s did not reach the expected state: %+v", name, f)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// waitHealthy waits until a worker's GET /health answers 200 (a distributed worker joined its group).
func waitHealthy(t *testing.T, base string, exited func() bool) {
	t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	for {
		if code, err := httpGetStatus(base + "/health"); err == nil && code == 200 {
			return
		}
		if exited() || time.Now().After(deadline) {
			t.Fatalf("the worker at %s did not become healthy (exited: %v)", base, exited())
		}
		time.Sleep(500 * time.Millisecond)
	}
}

package e2e

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"strings"
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
	// transactional.id (<group>-handover-0).
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
	_, offsetStore, _ := openClusterStores(t, ctx, brokers, topics)
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

	// 2. A gap, then two cdcd workers join the group and take the connector over.
	h.write(15)
	var workers []*cdcdWorker
	for range 2 {
		workers = append(workers, startCdcdDistributed(t, workerProps()))
	}
	taskOwner(t, workers[0].url, conn["name"])
	waitSlotActive(t, ctx, db, conn["slot.name"], nil)
	h.write(15)
	h.waitDelivered(func() bool { return workers[0].exited() && workers[1].exited() })
	for _, w := range workers {
		w.stop()
	}
	h.endSegment("cdcd", durable())

	// 3. A gap, then Debezium again on the offsets cdcd wrote to the offset topic.
	h.write(15)
	debezium, base = startDebezium("connect-2")
	debezium.waitRunning(base, conn["name"])
	waitSlotActive(t, ctx, db, conn["slot.name"], nil)
	h.write(15)
	h.waitDelivered(debezium.exited)
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

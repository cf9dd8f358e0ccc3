package e2e

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestExactlyOnceSurvivesKills runs one distributed worker with exactly.once.source.support=enabled and a
// PostgreSQL connector that requires it under a continuous insert/update/delete workload, kills the worker
// with SIGKILL ten times at random moments and restarts it each time, then fences its task through the
// REST API (Connect's zombie fencing, signed with the group's session key). A read_committed consumer then sees
// every committed change exactly once and per key in commit order: what a killed task produced after its
// last commit was aborted when its successor's producer took over its transactional.id, and the offset
// the successor resumed from was committed with the records before it.
func TestExactlyOnceSurvivesKills(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	db := createCrashTable(t, ctx, dsn)

	props := distributedProps(brokers, prefix, clusterTopicsOf(prefix), freePort(t))
	props["exactly.once.source.support"] = "enabled"
	w := startCdcdDistributed(t, props)
	cfg := pgConnector(t, dsn, "eos", prefix, "public.crash")
	cfg["exactly.once.support"] = "required"
	createConnector(t, w.url, cfg)
	waitSlotActive(t, ctx, db, cfg["slot.name"], w.cdcdProcess)

	work := startCrashWorkload(ctx, pgWorkload(ctx, dsn))
	const kills = 10
	for i := range kills {
		time.Sleep(time.Duration(300+rand.IntN(1500)) * time.Millisecond) // a random moment of the workload
		w.kill()
		w = startCdcdDistributed(t, props)
		waitSlotActive(t, ctx, db, cfg["slot.name"], w.cdcdProcess)
		t.Logf("kill %d/%d done", i+1, kills)
	}
	// Connect's zombie fencing through the REST API (an internal request, signed with the group's session
	// key as a worker signs it) fences the running task, which restarts from its last committed offset.
	configs, _, _ := openClusterStores(t, ctx, brokers, clusterTopicsOf(prefix))
	key := sessionKey(t, ctx, configs)
	if code, body := internalCall(t, "PUT", w.url+"/connectors/eos/fence", nil, key.Key, "", ""); code != 204 {
		t.Fatalf("PUT /connectors/eos/fence: %d %s", code, body)
	}
	// The fence surfaces at the task's next request to Kafka, and the task restarts; what is checked is
	// that delivery goes on exactly once after it (the Writer's own fence test asserts the error).
	time.Sleep(time.Duration(500+rand.IntN(1000)) * time.Millisecond) // the workload goes on past the fence
	want := work.stop(t)
	got, dups := checkCrashDelivery(t, ctx, brokers, prefix+".public.crash", want)
	if dups != 0 || len(got) != len(want) {
		t.Errorf("exactly-once: %d committed changes, %d events read committed, %d of them duplicates; want each change once", len(want), len(got), dups)
	}
	t.Logf("exactly-once: %d kills, %d committed changes, %d events, %d duplicates", kills, len(want), len(got), dups)
	w.stop()
	// The records were written in transactions, by the task's transactional.id, not merely once by luck.
	for _, r := range readRecords(t, brokers, prefix+".public.crash", 10) {
		if !r.Attrs.IsTransactional() {
			t.Fatalf("record at offset %d of partition %d is not transactional", r.Offset, r.Partition)
		}
	}
}

// readRecords reads the first n records of topic (read_committed), with their batch attributes.
func readRecords(t *testing.T, brokers []string, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n && ctx.Err() == nil {
		out = append(out, cl.PollFetches(ctx).Records()...)
	}
	if len(out) < n {
		t.Fatalf("read %d of %d records of %s", len(out), n, topic)
	}
	return out
}

// TestMariaDBExactlyOnceSchemaOnlySnapshotCommits: under exactly-once, a MariaDB connector whose snapshot
// reads only the structure (snapshot.mode=no_data) on an idle database makes its schema change records
// visible to read_committed consumers at once; they used to wait in an open transaction for the first
// streamed change (none comes) until the coordinator aborted it. Then a change streams exactly once.
func TestMariaDBExactlyOnceSchemaOnlySnapshotCommits(t *testing.T) {
	b := newMariaDBBed(t, context.Background(), "CREATE TABLE idle (id INT PRIMARY KEY, v INT NOT NULL)")
	props := distributedProps(b.brokers, b.prefix, clusterTopicsOf(b.prefix), freePort(t))
	props["exactly.once.source.support"] = "enabled"
	w := startCdcdDistributed(t, props)
	defer w.stop()
	cfg := b.connector("mdb-eos", map[string]string{"snapshot.mode": "no_data", "exactly.once.support": "required"})
	createConnector(t, w.url, cfg)
	// readRecords waits a minute, as long as transaction.timeout.ms: an uncommitted record would stay unseen.
	if schema := readRecords(t, b.brokers, b.prefix, 1); !schema[0].Attrs.IsTransactional() {
		t.Fatalf("the schema change record at offset %d is not transactional", schema[0].Offset)
	}
	b.exec(b.db, "INSERT INTO idle VALUES (1, 10)")
	rows := readRecords(t, b.brokers, b.prefix+"."+b.dsn.DB+".idle", 1)
	if !rows[0].Attrs.IsTransactional() || !strings.Contains(string(rows[0].Value), `"v":10`) {
		t.Fatalf("the streamed change: transactional=%v, value %s", rows[0].Attrs.IsTransactional(), rows[0].Value)
	}
}

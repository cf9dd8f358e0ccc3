package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestDistributedConnectorOffsetsTopic runs a connector with its own offsets.storage.topic (KIP-618) on a
// distributed worker, with and without exactly-once support. Its offsets land in its own topic (read back
// with franz-go; under exactly-once inside the task's transactions) and, as Connect's secondary store, in the
// worker's. A restart resumes from the connector's topic: the worker's copy is erased before it, and yet
// nothing is delivered again and no new snapshot runs.
func TestDistributedConnectorOffsetsTopic(t *testing.T) {
	for _, exactlyOnce := range []bool{false, true} {
		t.Run(map[bool]string{false: "at_least_once", true: "exactly_once"}[exactlyOnce], func(t *testing.T) {
			dsn := testenv.NewPostgresDB(t)
			brokers := testenv.Kafka(t)
			prefix := testenv.NewTopicPrefix(t)
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
			defer cancel()
			db := connectPostgres(t, ctx, dsn, `CREATE TABLE ot (id int PRIMARY KEY)`, `INSERT INTO ot SELECT generate_series(1, 5)`)
			topics := clusterTopicsOf(prefix)
			_, workerOffsets, _ := openClusterStores(t, ctx, brokers, topics)

			props := distributedProps(brokers, prefix, topics, freePort(t))
			if exactlyOnce {
				props["exactly.once.source.support"] = "enabled"
			}
			w := startCdcdDistributed(t, props)
			cfg := pgConnector(t, dsn, "ot", prefix, "public.ot")
			own := prefix + "-ot-offsets"
			cfg["offsets.storage.topic"] = own
			createConnector(t, w.url, cfg)
			waitSlotActive(t, ctx, db, cfg["slot.name"], w.cdcdProcess)
			lsn := currentLSN(t, ctx, db)
			execAll(t, ctx, db, `INSERT INTO ot SELECT generate_series(6, 10)`)
			data := prefix + ".public.ot"
			waitEvents(t, ctx, brokers, data, 10, w.cdcdProcess)

			key, err := offsets.Key("ot", map[string]any{"server": prefix})
			if err != nil {
				t.Fatal(err)
			}
			// The offset of the last change, in the connector's topic.
			rec := waitOffsetRecord(t, ctx, brokers, own, key, func(r *kgo.Record) bool { return offsetLSN(r.Value) >= lsn })
			if exactlyOnce != rec.Attrs.IsTransactional() {
				t.Errorf("the offset record in %s: transactional %v, want %v", own, rec.Attrs.IsTransactional(), exactlyOnce)
			}
			// And in the worker's, as Connect's secondary store, outside any transaction.
			rec = waitOffsetRecord(t, ctx, brokers, topics.offsets, key, func(r *kgo.Record) bool { return offsetLSN(r.Value) >= lsn })
			if rec.Attrs.IsTransactional() {
				t.Errorf("the offset record in the worker's topic %s is transactional", topics.offsets)
			}

			// A restart with the worker's copy erased: the task resumes from the connector's topic.
			w.stop()
			if err := workerOffsets.Put(ctx, []offsets.Entry{{Key: key}}); err != nil {
				t.Fatal(err)
			}
			w = startCdcdDistributed(t, props)
			waitSlotActive(t, ctx, db, cfg["slot.name"], w.cdcdProcess)
			execAll(t, ctx, db, `INSERT INTO ot SELECT generate_series(11, 15)`)
			events := waitEvents(t, ctx, brokers, data, 15, w.cdcdProcess)
			for id, ops := range events {
				want := "c"
				if id <= 5 {
					want = "r"
				}
				if len(ops) != 1 || ops[0] != want {
					t.Errorf("row %d: events %v, want one %q (nothing delivered again, no new snapshot)", id, ops, want)
				}
			}
			w.stop()
		})
	}
}

// TestDistributedConnectorOffsetsTopicAddedLater gives a connector that ran on the worker's offsets topic a
// topic of its own, and checks Connect 4.4's behaviour, which cdcd copies: the worker's offset is not used
// (ConnectorOffsetBackingStore.get lays the connector topic's null over it), so GET /offsets lists the
// partition with a null offset and the task starts over with a new snapshot. Then the REST offsets endpoints
// work on the connector's topic: DELETE erases the offset in both topics, PATCH writes it to both, and the
// task resumes from it.
func TestDistributedConnectorOffsetsTopicAddedLater(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	db := connectPostgres(t, ctx, dsn, `CREATE TABLE ot (id int PRIMARY KEY)`, `INSERT INTO ot SELECT generate_series(1, 3)`)
	topics := clusterTopicsOf(prefix)
	w := startCdcdDistributed(t, distributedProps(brokers, prefix, topics, freePort(t)))
	cfg := pgConnector(t, dsn, "ot", prefix, "public.ot")
	createConnector(t, w.url, cfg)
	waitSlotActive(t, ctx, db, cfg["slot.name"], w.cdcdProcess)
	lsn := currentLSN(t, ctx, db)
	execAll(t, ctx, db, `INSERT INTO ot SELECT generate_series(4, 5)`)
	data := prefix + ".public.ot"
	waitEvents(t, ctx, brokers, data, 5, w.cdcdProcess)
	key, err := offsets.Key("ot", map[string]any{"server": prefix})
	if err != nil {
		t.Fatal(err)
	}
	before := waitOffsetRecord(t, ctx, brokers, topics.offsets, key, func(r *kgo.Record) bool { return offsetLSN(r.Value) >= lsn }).Value

	connector := w.url + "/connectors/ot"
	stop := func() {
		t.Helper()
		if code, body := restCall(t, http.MethodPut, connector+"/stop", nil); code != http.StatusAccepted && code != http.StatusNoContent {
			t.Fatalf("PUT stop: %d %s", code, body)
		}
		waitConnectorState(t, connector, "STOPPED")
	}
	stop()
	own := prefix + "-ot-offsets"
	cfg["offsets.storage.topic"] = own
	if code, body := restCall(t, http.MethodPut, connector+"/config", cfg); code != http.StatusOK {
		t.Fatalf("PUT config: %d %s", code, body)
	}
	partition := fmt.Sprintf(`{"server":%q}`, prefix)
	if got := getOffsets(t, connector); got != `[{"partition":`+partition+`,"offset":null}]` {
		t.Errorf("GET offsets with a new own topic = %s, want the partition with a null offset, as Connect lists it", got)
	}

	// Resumed, the task finds no offset (Connect does not fall back to the worker's) and snapshots again.
	if code, body := restCall(t, http.MethodPut, connector+"/resume", nil); code != http.StatusAccepted {
		t.Fatalf("PUT resume: %d %s", code, body)
	}
	events := waitEventsWhere(t, ctx, brokers, data, w.cdcdProcess, func(events map[int][]string) bool {
		for id := 1; id <= 5; id++ {
			if ops := events[id]; len(ops) == 0 || ops[len(ops)-1] != "r" {
				return false
			}
		}
		return true
	})
	t.Logf("after the own topic was set: %v", events)
	waitLog(t, w.cdcdProcess, "the offset in the worker's offsets topic is not used")
	waitOffsetRecord(t, ctx, brokers, own, key, func(r *kgo.Record) bool { return r.Value != nil })

	// DELETE: tombstones in both topics (the worker's first).
	stop()
	if code, body := restCall(t, http.MethodDelete, connector+"/offsets", nil); code != http.StatusOK {
		t.Fatalf("DELETE offsets: %d %s", code, body)
	}
	for _, topic := range []string{own, topics.offsets} {
		waitOffsetRecord(t, ctx, brokers, topic, key, func(r *kgo.Record) bool { return r.Value == nil })
	}
	if got := getOffsets(t, connector); got != `[]` {
		t.Errorf("GET offsets after DELETE = %s, want none", got)
	}

	// PATCH the offset the connector had before: it lands in both topics, and the task resumes from it.
	patch := fmt.Sprintf(`{"offsets":[{"partition":%s,"offset":%s}]}`, partition, before)
	if code, body := restCall(t, http.MethodPatch, connector+"/offsets", json.RawMessage(patch)); code != http.StatusOK {
		t.Fatalf("PATCH offsets: %d %s", code, body)
	}
	for _, topic := range []string{own, topics.offsets} {
		rec := waitOffsetRecord(t, ctx, brokers, topic, key, func(r *kgo.Record) bool { return r.Value != nil })
		if offsetLSN(rec.Value) != offsetLSN(before) {
			t.Errorf("%s after PATCH: %s, want %s", topic, rec.Value, before)
		}
	}
	if got, want := getOffsets(t, connector), `[{"partition":`+partition+`,"offset":`+string(before)+`}]`; !jsonSame(got, want) {
		t.Errorf("GET offsets after PATCH = %s, want %s", got, want)
	}
	snapshots := countOps(events, "r")
	if code, body := restCall(t, http.MethodPut, connector+"/resume", nil); code != http.StatusAccepted {
		t.Fatalf("PUT resume: %d %s", code, body)
	}
	waitSlotActive(t, ctx, db, cfg["slot.name"], w.cdcdProcess)
	execAll(t, ctx, db, `INSERT INTO ot VALUES (6)`)
	events = waitEvents(t, ctx, brokers, data, 6, w.cdcdProcess)
	if got := countOps(events, "r"); got != snapshots {
		t.Errorf("resumed from the PATCHed offset: %d snapshot reads, want %d (no new snapshot); events %v", got, snapshots, events)
	}
	w.stop()
}

// TestStandaloneRefusesOffsetsTopic: a standalone worker keeps offsets in its file, so a connector's
// offsets.storage.topic, which Connect ignores there, is refused by name, with the reason and the fix.
func TestStandaloneRefusesOffsetsTopic(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	dir := t.TempDir()
	cfg := pgConnector(t, dsn, "ot", prefix, "public.ot")
	cfg["offsets.storage.topic"] = prefix + "-ot-offsets"
	p := startStandalone(t, dir, workerProps(brokers, filepath.Join(dir, "offsets.dat")), cfg)
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		t.Fatalf("cdcd standalone ran a connector with offsets.storage.topic; log:\n%s", tail(p.log.String(), 4000))
	}
	log := p.log.String()
	for _, want := range []string{"offsets.storage.topic", "offset.storage.file.filename", "remove offsets.storage.topic"} {
		if !strings.Contains(log, want) {
			t.Errorf("the refusal does not say %q; log:\n%s", want, tail(log, 4000))
		}
	}
}

// waitEvents reads the change events of topic (read_committed) until rows 1 to n have one, and returns the
// ops of each row's events in order.
func waitEvents(t *testing.T, ctx context.Context, brokers []string, topic string, n int, p *cdcdProcess) map[int][]string {
	t.Helper()
	return waitEventsWhere(t, ctx, brokers, topic, p, func(events map[int][]string) bool {
		for id := 1; id <= n; id++ {
			if len(events[id]) == 0 {
				return false
			}
		}
		return true
	})
}

// waitEventsWhere reads the change events of topic from its start (read_committed) until done holds for
// them, and returns them: row id → the ops of its events, in order.
func waitEventsWhere(t *testing.T, ctx context.Context, brokers []string, topic string, p *cdcdProcess, done func(map[int][]string) bool) map[int][]string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	events := map[int][]string{}
	for !done(events) {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("events of %s: %v; cdcd log:\n%s", topic, events, tail(p.log.String(), 4000))
		}
		fetches.EachRecord(func(r *kgo.Record) {
			if id, op, ok := rowEvent(r.Value); ok && op != "" {
				events[id] = append(events[id], op)
			}
		})
	}
	return events
}

func countOps(events map[int][]string, op string) int {
	n := 0
	for _, ops := range events {
		for _, o := range ops {
			if o == op {
				n++
			}
		}
	}
	return n
}

// waitOffsetRecord reads an offsets topic from its start with franz-go (read_committed) until the last
// record of key satisfies ok, and returns that record.
func waitOffsetRecord(t *testing.T, ctx context.Context, brokers []string, topic string, key []byte, ok func(*kgo.Record) bool) *kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var last *kgo.Record
	for last == nil || !ok(last) {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("no offset record %s in %s as wanted; the last: %+v", key, topic, last)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			if string(r.Key) == string(key) {
				last = r
			}
		})
	}
	return last
}

// currentLSN is the server's current WAL position: an offset past it stands for a change written after.
func currentLSN(t *testing.T, ctx context.Context, db *pgx.Conn) uint64 {
	t.Helper()
	var lsn uint64
	if err := db.QueryRow(ctx, `SELECT (pg_current_wal_lsn() - '0/0')::bigint`).Scan(&lsn); err != nil {
		t.Fatal(err)
	}
	return lsn
}

// getOffsets is the offsets array of GET /connectors/{name}/offsets.
func getOffsets(t *testing.T, connector string) string {
	t.Helper()
	code, body := restCall(t, http.MethodGet, connector+"/offsets", nil)
	if code != http.StatusOK {
		t.Fatalf("GET offsets: %d %s", code, body)
	}
	var got struct {
		Offsets json.RawMessage `json:"offsets"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	return string(got.Offsets)
}

// waitConnectorState waits until the connector's status reports state.
func waitConnectorState(t *testing.T, connector, state string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		_, body := restCall(t, http.MethodGet, connector+"/status", nil)
		var st struct {
			Connector struct {
				State string `json:"state"`
			} `json:"connector"`
		}
		if json.Unmarshal(body, &st) == nil && st.Connector.State == state {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("connector state: %s, want %s", body, state)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func jsonSame(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

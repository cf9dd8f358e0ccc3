package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// Signals cannot be turned into SQL (issue 35): POST /connectors/{name}/signals is refused unless the
// connector lists rest in signal.enabled.channels, and an additional-conditions filter that is not a
// condition over the table's columns is refused, by the REST API at once (400) and by the reader for the
// other channels (logged); no such query reaches the database. A condition that is one runs as cdcd printed
// it, and a query that runs longer than snapshot.query.timeout.ms is stopped by the server.

// executeWithFilter is the body of a REST execute-snapshot of table with filter as its additional condition.
func executeWithFilter(table, filter string) string {
	return fmt.Sprintf(`{"type": "execute-snapshot", "data": {"data-collections": [%q], "additional-conditions": [{"data-collection": %q, "filter": %q}]}}`, table, table, filter)
}

// snapshotIDs waits until topic holds n incremental snapshot rows and returns their ids, sorted.
func snapshotIDs(t *testing.T, ctx context.Context, broker *capture.Broker, topic string, n int, p *cdcdProcess) []int {
	t.Helper()
	waitSnapshotRows(t, ctx, broker, topic, n, p)
	recs, err := broker.Read(ctx, capture.Selection{Topics: []string{topic}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	for id, times := range rebuildTable(t, recs).snapshot {
		for range times {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// pgQueriesLike counts the other sessions of the test's database whose query holds text.
func pgQueriesLike(t *testing.T, ctx context.Context, db *pgx.Conn, text string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND position($1 in query) > 0", text).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// signalBed is a PostgreSQL database with the signal table and cdcd streaming it with incrementalConnector.
type signalBed struct {
	db      *pgx.Conn // the superuser's
	brokers []string
	prefix  string
	p       *cdcdProcess
}

// startSignalBed runs setup in a new database, then cdcd with incrementalConnector for table in chunks of
// chunk rows and the settings of set, and waits for it to stream.
func startSignalBed(t *testing.T, ctx context.Context, table string, chunk int, set map[string]string, setup ...string) signalBed {
	t.Helper()
	dsn := testenv.NewPostgresDB(t)
	b := signalBed{brokers: testenv.Kafka(t), prefix: testenv.NewTopicPrefix(t)}
	b.db = connectPostgres(t, ctx, dsn, append([]string{signalTableDDL}, setup...)...)
	conn := incrementalConnector(t, dsn, b.prefix, table, chunk)
	maps.Copy(conn, set)
	b.p = startStandalone(t, t.TempDir(), workerProps(b.brokers, filepath.Join(t.TempDir(), "offsets.dat")), conn)
	waitSlotActive(t, ctx, b.db, conn["slot.name"], b.p)
	return b
}

func TestSignalAttackPostgres(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	b := startSignalBed(t, ctx, "public.items", 10, nil,
		"CREATE TABLE public.items (id int PRIMARY KEY, v bigint NOT NULL)",
		"INSERT INTO public.items SELECT g, g FROM generate_series(1, 50) g",
		"CREATE TABLE public.victim (id int)")
	db, p := b.db, b.p
	api := p.restAPI()

	for filter, construct := range map[string]string{
		"pg_sleep(1e6) IS NULL":                "the function pg_sleep",
		"pg_terminate_backend(1) IS NULL":      "the function pg_terminate_backend",
		"1=1; DROP TABLE public.victim":        "';' at offset 3",
		"id IN (SELECT id FROM public.victim)": "IN's list holds literals only",
		"id = (SELECT 1)":                      "a subquery",
		"id = 1 -- ":                           "a comment",
		"victim.id = 1":                        "qualified name",
	} {
		if reply := api.expect("POST", "/connectors/inc/signals", executeWithFilter("public.items", filter), 400); !strings.Contains(reply, construct) {
			t.Errorf("filter %q refused with %s, which does not name %q", filter, reply, construct)
		}
	}
	// Through the signal table, the same signal is refused by the reader and logged.
	execAll(t, ctx, db, `INSERT INTO public.debezium_signal VALUES ('evil-1', 'execute-snapshot', '{"data-collections": ["public.items"], "additional-conditions": [{"data-collection": "public.items", "filter": "pg_sleep(1e6) IS NULL"}]}')`)
	waitLog(t, p, "signal refused")
	if !strings.Contains(p.log.String(), "the function pg_sleep") {
		t.Fatalf("the refusal does not name the function; log:\n%s", tail(p.log.String(), 4000))
	}
	if n := pgQueriesLike(t, ctx, db, "pg_sleep"); n != 0 {
		t.Fatalf("%d sessions run pg_sleep", n)
	}
	var victim bool
	if err := db.QueryRow(ctx, "SELECT to_regclass('public.victim') IS NOT NULL").Scan(&victim); err != nil || !victim {
		t.Fatalf("public.victim is gone (%v)", err)
	}

	// A condition over the columns runs as printed: the snapshot reads the rows it selects, and only them.
	api.expect("POST", "/connectors/inc/signals", executeWithFilter("public.items", `"v" > 40 AND ID <= 45 AND lower('X') = 'x'`), 202)
	waitLog(t, p, "incremental snapshot completed")
	broker := newBroker(t, b.brokers)
	topic := b.prefix + ".public.items"
	ids := snapshotIDs(t, ctx, broker, topic, 5, p)
	if want := []int{41, 42, 43, 44, 45}; !slices.Equal(ids, want) {
		t.Fatalf("the snapshot read rows %v, want %v", ids, want)
	}
	blockingWithCondition(t, ctx, api, broker, "public.items", topic, p)
}

// blockingWithCondition runs a blocking snapshot of table with the condition id <= 3 after an incremental
// one that put 5 rows on topic: its 3 rows follow them, and no more.
func blockingWithCondition(t *testing.T, ctx context.Context, api restClient, broker *capture.Broker, table, topic string, p *cdcdProcess) {
	t.Helper()
	body := fmt.Sprintf(`{"type": "execute-snapshot", "data": {"type": "blocking", "data-collections": [%q], "additional-conditions": [{"data-collection": %q, "filter": "id <= 3"}]}}`, table, table)
	before := len(p.log.String())
	api.expect("POST", "/connectors/inc/signals", body, 202)
	for deadline := time.Now().Add(time.Minute); !strings.Contains(p.log.String()[before:], `msg="snapshot finished"`); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) || p.exited() {
			t.Fatalf("the blocking snapshot did not finish; log:\n%s", tail(p.log.String(), 4000))
		}
	}
	waitSnapshotRows(t, ctx, broker, topic, 8, p)
	if n, err := broker.Count(ctx, capture.Selection{Topics: []string{topic}}); err != nil || n != 8 {
		t.Fatalf("%s holds %d records (%v), want the 5 of the incremental snapshot and the 3 of the blocking one", topic, n, err)
	}
}

// TestSignalConditionInOffsetIsChecked: a client of the REST API that may alter offsets writes an
// incremental snapshot with a sleeping condition into a stopped connector's offset; resumed, the snapshot
// checks the condition again and skips the table, and nothing sleeps in the database.
func TestSignalConditionInOffsetIsChecked(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	b := startSignalBed(t, ctx, "public.items", 10, nil,
		"CREATE TABLE public.items (id int PRIMARY KEY, v bigint NOT NULL)",
		"INSERT INTO public.items SELECT g, g FROM generate_series(1, 50) g")
	api := b.p.restAPI()
	api.expect("POST", "/connectors/inc/signals", executeWithFilter("public.items", "v > 45"), 202)
	waitLog(t, b.p, "incremental snapshot completed")
	api.expect("PUT", "/connectors/inc/stop", "", 204)
	api.waitTaskState("inc", "STOPPED")
	var stored struct {
		Offsets []struct {
			Partition map[string]any `json:"partition"`
			Offset    map[string]any `json:"offset"`
		} `json:"offsets"`
	}
	if err := json.Unmarshal([]byte(api.expect("GET", "/connectors/inc/offsets", "", 200)), &stored); err != nil || len(stored.Offsets) != 1 {
		t.Fatalf("the connector's offsets: %+v, %v", stored, err)
	}
	stored.Offsets[0].Offset["incremental_snapshot_collections"] = `[{"incremental_snapshot_collections_id":"public.items","incremental_snapshot_collections_additional_condition":"(pg_sleep(1e6) IS NULL)","incremental_snapshot_collections_surrogate_key":null}]`
	stored.Offsets[0].Offset["incremental_snapshot_primary_key"] = ""
	stored.Offsets[0].Offset["incremental_snapshot_maximum_key"] = ""
	patch, err := json.Marshal(stored)
	if err != nil {
		t.Fatal(err)
	}
	api.expect("PATCH", "/connectors/inc/offsets", string(patch), 200)
	api.expect("PUT", "/connectors/inc/resume", "", 202)
	waitLog(t, b.p, "incremental snapshot of a table skipped")
	if !strings.Contains(b.p.log.String(), "the function pg_sleep") {
		t.Fatalf("the resumed snapshot's table was skipped for another reason; log:\n%s", tail(b.p.log.String(), 4000))
	}
	if n := pgQueriesLike(t, ctx, b.db, "pg_sleep"); n != 0 {
		t.Fatalf("%d sessions run pg_sleep", n)
	}
}

// TestReadOnlyConnectorRefusesRESTSignals is the reproduction: a read.only connector with the
// default signal.enabled.channels (source) is sent a REST signal whose filter sleeps. It is refused with the
// key to change, and nothing runs in the database.
func TestReadOnlyConnectorRefusesRESTSignals(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := newReadOnlyBed(t, ctx, 10, [2]int{1, 100})
	delete(b.conn, "signal.enabled.channels")
	p := b.start(t, ctx)
	reply := p.restAPI().expect("POST", "/connectors/ro/signals", executeWithFilter("public.ro", "pg_sleep(1e6) IS NULL"), 400)
	if !strings.Contains(reply, "add rest to signal.enabled.channels") {
		t.Fatalf("the refusal %s does not say how to enable the channel", reply)
	}
	if n := pgQueriesLike(t, ctx, b.db, "pg_sleep"); n != 0 {
		t.Fatalf("%d sessions run pg_sleep", n)
	}
	if strings.Contains(p.log.String(), "incremental snapshot requested") {
		t.Fatalf("a refused signal started a snapshot; log:\n%s", tail(p.log.String(), 4000))
	}
}

// TestSnapshotQueryTimeout: with snapshot.query.timeout.ms=1, an incremental snapshot's query that scans a
// large table is stopped by the server, and the table is skipped with the key to raise named.
func TestSnapshotQueryTimeout(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	p := startSignalBed(t, ctx, "public.big", 1000, map[string]string{"snapshot.query.timeout.ms": "1"},
		"CREATE TABLE public.big (id int PRIMARY KEY, note text NOT NULL)",
		"INSERT INTO public.big SELECT g, repeat('x', 100) FROM generate_series(1, 300000) g").p
	// No row matches: the largest-key query reads the whole table.
	p.restAPI().expect("POST", "/connectors/inc/signals", executeWithFilter("public.big", "upper(note) = 'NEVER'"), 202)
	waitLog(t, p, "incremental snapshot of a table skipped")
	if log := p.log.String(); !strings.Contains(log, "statement timeout") || !strings.Contains(log, "snapshot.query.timeout.ms=1") {
		t.Fatalf("the skipped table's reason is not the timeout; log:\n%s", tail(log, 4000))
	}
}

func TestSignalAttackMariaDB(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	b := newMariaDBIncrementalBed(t, ctx, "items", 50, "CREATE TABLE victim (id INT)")
	p := b.start(workerProps(b.brokers, filepath.Join(b.dir, "offsets.dat")), b.incrementalConnector(10, nil))
	api := p.restAPI()
	items := b.dsn.DB + ".items"
	for filter, construct := range map[string]string{
		"SLEEP(1000000) IS NULL":         "the function SLEEP",
		"BENCHMARK(1e9, MD5('x')) = 0":   "the function BENCHMARK",
		"1=1; DROP TABLE victim":         "';' at offset 3",
		"id IN (SELECT id FROM victim)":  "IN's list holds literals only",
		"id = 1 # ":                      "a comment",
		`name = 'a\' OR SLEEP(100) -- '`: "backslash",
	} {
		if reply := api.expect("POST", "/connectors/inc/signals", executeWithFilter(items, filter), 400); !strings.Contains(reply, construct) {
			t.Errorf("filter %q refused with %s, which does not name %q", filter, reply, construct)
		}
	}
	b.exec(b.db, fmt.Sprintf(`INSERT INTO debezium_signal VALUES ('evil-1', 'execute-snapshot', '{"data-collections": ["%s"], "additional-conditions": [{"data-collection": "%s", "filter": "SLEEP(1000000) IS NULL"}]}')`, items, items))
	waitLog(t, p, "signal refused")
	res, err := b.db.Execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '%SLEEP(1000000)%' AND ID <> CONNECTION_ID()")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.GetInt(0, 0); n != 0 {
		t.Fatalf("%d sessions run SLEEP", n)
	}
	b.exec(b.db, "SELECT COUNT(*) FROM victim") // still there

	api.expect("POST", "/connectors/inc/signals", executeWithFilter(items, "`V` > 40 AND id <= 45 AND \"x\" = lower('X')"), 202)
	waitLog(t, p, "incremental snapshot completed")
	ids := snapshotIDs(t, ctx, b.broker, b.prefix+"."+items, 5, p)
	if want := []int{41, 42, 43, 44, 45}; !slices.Equal(ids, want) {
		t.Fatalf("the snapshot read rows %v, want %v", ids, want)
	}
	blockingWithCondition(t, ctx, api, b.broker, items, b.prefix+"."+items, p)
}

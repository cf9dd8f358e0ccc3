package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestMetricsInBothModes reads GET /metrics while a PostgreSQL and a MariaDB connector stream in a standalone
// worker, then from a distributed worker: Debezium's MBean facts (events per operation, transactions,
// milliseconds behind the source, connected, snapshot tables, queue) per connector and task, and the
// worker's own (REST requests; rebalances and assignment in distributed mode).
func TestMetricsInBothModes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pgDSN := testenv.NewPostgresDB(t)
	db := connectPostgres(t, ctx, pgDSN, "CREATE TABLE m (id int PRIMARY KEY, v int)")
	mdb := newMariaDBCase(t)
	mdb.conn["name"] = "mdbm"

	dir := t.TempDir()
	pgPath, mdbPath := filepath.Join(dir, "pg.properties"), filepath.Join(dir, "mdb.properties")
	writeProperties(t, pgPath, pgConnector(t, pgDSN, "pgm", testenv.NewTopicPrefix(t)+"pg", "public.m"))
	writeProperties(t, mdbPath, mdb.conn)
	p := startCdcd(t, mdb.workerPath, pgPath, mdbPath)
	defer p.stop()
	base := "http://" + listeningAddress(t, p)
	for _, conn := range []string{"pgm", "mdbm"} { // streaming: what is written now is read from the log
		waitMetric(t, base, fmt.Sprintf(`cdcd_connected{connector="%s",task="0"}`, conn), 1)
	}

	for i := range 5 {
		if _, err := db.Exec(ctx, "INSERT INTO m VALUES ($1, 1)", i); err != nil {
			t.Fatal(err)
		}
		mdb.run(fmt.Sprintf("INSERT INTO t VALUES (%d, '2026-01-01', '2026-01-02')", i))
	}
	for _, conn := range []string{"pgm", "mdbm"} {
		labels := fmt.Sprintf(`connector="%s",op="c",task="0"`, conn)
		waitMetric(t, base, "cdcd_events_total{"+labels+"}", 5)
		waitMetric(t, base, fmt.Sprintf(`cdcd_transactions_total{connector="%s",task="0"}`, conn), 5)
		waitMetric(t, base, fmt.Sprintf(`cdcd_queue_capacity{connector="%s",task="0"}`, conn), 1)
		waitMetric(t, base, fmt.Sprintf(`cdcd_snapshot_tables{connector="%s",state="total",task="0"}`, conn), 1)
	}
	text := scrape(t, base)
	for _, name := range []string{`cdcd_milliseconds_behind_source{connector="mdbm",task="0"}`, `cdcd_last_event_timestamp_seconds{connector="pgm",task="0"}`,
		`cdcd_rest_requests_total{code="200",method="GET"}`} {
		if _, ok := metricValue(text, name); !ok {
			t.Errorf("GET /metrics has no %s", name)
		}
	}

	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	w := startCdcdDistributed(t, distributedProps(brokers, prefix+"g", clusterTopicsOf(prefix), freePort(t)))
	defer w.stop()
	waitMetric(t, w.url, "cdcd_worker_rebalances_total", 1)
	if _, ok := metricValue(scrape(t, w.url), `cdcd_worker_assigned{kind="connectors"}`); !ok {
		t.Error("the distributed worker's GET /metrics has no cdcd_worker_assigned")
	}
}

func scrape(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d %v", resp.StatusCode, err)
	}
	return string(body)
}

// metricValue finds a sample by its exact name and labels in Prometheus text.
func metricValue(text, sample string) (float64, bool) {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(sample) + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	return v, err == nil
}

// waitMetric waits until sample is at least min.
func waitMetric(t *testing.T, base, sample string, min float64) {
	t.Helper()
	var last float64
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if v, ok := metricValue(scrape(t, base), sample); ok {
			if last = v; v >= min {
				return
			}
		}
	}
	t.Errorf("%s stayed at %v, want at least %v", sample, last, min)
}

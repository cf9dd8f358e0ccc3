package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// deployDir holds the dashboard, the alerting rules and the Kubernetes manifests shipped with cdcd.
var deployDir = filepath.Join(repoRoot, "cmd", "cdcd", "deploy")

// TestCdcdDashboardAndAlertSeries runs a PostgreSQL connector that snapshots and streams, with a slot guardian
// whose thresholds every slot crosses (so its alert and time-to-full series exist), and checks that every metric
// the Grafana dashboard (cmd/cdcd/deploy/grafana) and the alerting rules (cmd/cdcd/deploy/prometheus) read is in
// GET /metrics: a renamed or removed series breaks this test, not an operator's panel or alert.
func TestCdcdDashboardAndAlertSeries(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	names := map[string]string{} // metric → where it is read
	dash := loadDashboard(t, filepath.Join(deployDir, "grafana", "cdcd-dashboard.json"))
	for _, e := range dash.expressions() {
		for _, sel := range selectors(e.expr) {
			names[metricName(sel)] = "dashboard panel " + e.panel
		}
	}
	for _, v := range dash.Templating.List {
		if m := regexp.MustCompile(`^label_values\((\w+),`).FindStringSubmatch(v.Query); m != nil {
			names[m[1]] = "dashboard variable " + v.Name
		}
	}
	for alert, expr := range alertExpressions(t) {
		for _, sel := range selectors(expr) {
			names[metricName(sel)] = "alert " + alert
		}
	}
	delete(names, "up") // Prometheus's own series of every scrape
	if len(names) < 20 {
		t.Fatalf("only %d metrics read by the dashboard and the rules: %v", len(names), names)
	}

	dsn := testenv.NewPostgresDB(t)
	db := connectPostgres(t, ctx, dsn, "CREATE TABLE dash (id int PRIMARY KEY, v int)", "INSERT INTO dash VALUES (1, 1), (2, 2)")
	var keepSize string
	if err := db.QueryRow(ctx, "SHOW max_slot_wal_keep_size").Scan(&keepSize); err != nil {
		t.Fatal(err)
	}
	if keepSize == "-1" {
		// safe_wal_size, and so this series, exists only where the server bounds the WAL a slot keeps.
		delete(names, "cdcd_slot_safe_wal_size_bytes")
	}
	brokers := testenv.Kafka(t)
	dir := t.TempDir()
	worker := workerProps(brokers, filepath.Join(dir, "offsets"))
	worker["cdcd.slots.refresh.interval.ms"] = "300"
	worker["cdcd.slots.alert.retained.bytes"] = "1" // every slot alerts: cdcd_slot_alert
	worker["cdcd.slots.wal.capacity.bytes"] = "1"   // every slot is full: cdcd_slot_time_to_full_seconds
	const name = "dashseries"
	p := startStandalone(t, dir, worker, pgConnector(t, dsn, name, testenv.NewTopicPrefix(t)+"dash", "public.dash"))
	defer p.stop()
	base := "http://" + listeningAddress(t, p)
	waitMetric(t, base, `cdcd_connected{connector="`+name+`",task="0"}`, 1)
	execAll(t, ctx, db, "INSERT INTO dash VALUES (3, 3)", "UPDATE dash SET v = 4 WHERE id = 1")
	waitMetric(t, base, `cdcd_events_total{connector="`+name+`",op="u",task="0"}`, 1)

	var missing []string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(300 * time.Millisecond) {
		series := parseExposition(t, scrape(t, base))
		missing = missing[:0]
		for n := range names {
			if !slices.ContainsFunc(series, func(s sample) bool { return s.name == n }) {
				missing = append(missing, n)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
	}
	slices.Sort(missing)
	for _, n := range missing {
		t.Errorf("%s reads %s, which GET /metrics does not serve", names[n], n)
	}
}

// metricName is a vector selector's metric name (without its label matchers).
func metricName(selector string) string {
	name, _, _ := strings.Cut(selector, "{")
	return strings.TrimSpace(name)
}

// alertExpressions are the alerting rules' expressions by alert name.
func alertExpressions(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(deployDir, "prometheus", "cdcd-alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			out[r.Alert] = r.Expr
		}
	}
	return out
}

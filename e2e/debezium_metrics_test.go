package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestDebeziumDashboardSeries runs a PostgreSQL connector, snapshots and changes its table, and checks that
// every PromQL expression of Debezium's example Grafana dashboard (testdata/debezium-monitoring, copied from
// debezium-examples) selects at least one series of GET /metrics: its template variables (the connector
// type and name, picked out of debezium_metrics_TotalNumberOfEventsSeen), the streaming and snapshot
// panels, Kafka Connect's network traffic and the JVM row. Then it deletes the connector, whose series go.
func TestDebeziumDashboardSeries(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dash := loadDashboard(t, filepath.Join("testdata", "debezium-monitoring", "debezium-dashboard.json"))

	dsn := testenv.NewPostgresDB(t)
	db := connectPostgres(t, ctx, dsn, "CREATE TABLE dm (id int PRIMARY KEY, v int)", "INSERT INTO dm VALUES (1, 1), (2, 2), (3, 3)")
	brokers := testenv.Kafka(t)
	dir := t.TempDir()
	prefix := testenv.NewTopicPrefix(t) + "dbz"
	const name = "dbzmetrics"
	p := startStandalone(t, dir, workerProps(brokers, filepath.Join(dir, "offsets")), pgConnector(t, dsn, name, prefix, "public.dm"))
	defer p.stop()
	base := "http://" + listeningAddress(t, p)

	labels := fmt.Sprintf(`name="%s",plugin="postgres"`, prefix)
	waitMetric(t, base, `debezium_metrics_Connected{context="streaming",`+labels+`}`, 1)
	waitMetric(t, base, `debezium_metrics_SnapshotCompleted{context="snapshot",`+labels+`}`, 1)
	execAll(t, ctx, db, "INSERT INTO dm VALUES (4, 4)", "UPDATE dm SET v = 5 WHERE id = 1", "DELETE FROM dm WHERE id = 2")
	waitMetric(t, base, `debezium_metrics_TotalNumberOfEventsSeen{context="streaming",`+labels+`}`, 3)

	series := parseExposition(t, scrape(t, base))
	// The values the dashboard's panels show for this connector.
	for sel, want := range map[string]float64{
		`debezium_metrics_TotalNumberOfCreateEventsSeen{context="streaming",` + labels + `}`: 1,
		`debezium_metrics_TotalNumberOfUpdateEventsSeen{context="streaming",` + labels + `}`: 1,
		`debezium_metrics_TotalNumberOfDeleteEventsSeen{context="streaming",` + labels + `}`: 1,
		`debezium_metrics_TotalTableCount{context="snapshot",` + labels + `}`:                1,
		`debezium_metrics_RemainingTableCount{context="snapshot",` + labels + `}`:            0,
		`debezium_metrics_SnapshotRunning{context="snapshot",` + labels + `}`:                0,
		`debezium_metrics_SnapshotAborted{context="snapshot",` + labels + `}`:                0,
		`debezium_metrics_TotalNumberOfEventsSeen{context="snapshot",` + labels + `}`:        3,
		`debezium_metrics_RowsScanned{context="snapshot",` + labels + `,table="public.dm"}`:  3,
		`kafka_connect_worker_metrics_connector_count`:                                       1,
		`kafka_connect_worker_metrics_task_count`:                                            1,
	} {
		got := series.match(t, sel)
		if len(got) != 1 || got[0].value != want {
			t.Errorf("%s: %v, want one series of %v", sel, got, want)
		}
	}
	for _, sel := range []string{`cdcd_connected{connector="` + name + `"}`, `go_goroutines`, `process_cpu_seconds_total`,
		`process_resident_memory_bytes`, `debezium_metrics_MilliSecondsBehindSource{context="streaming"}`} {
		if len(series.match(t, sel)) == 0 {
			t.Errorf("GET /metrics has no %s", sel)
		}
	}

	// The template variables, as Grafana fills them: a query's series, rendered name{labels}, through the
	// variable's regex.
	vars := map[string]string{}
	for _, v := range dash.Templating.List {
		query := substitute(v.Query, vars)
		re := regexp.MustCompile(strings.TrimSuffix(strings.TrimPrefix(v.Regex, "/"), "/"))
		var values []string
		for _, s := range series.match(t, query) {
			if m := re.FindStringSubmatch(s.String()); m != nil {
				values = append(values, m[1])
			}
		}
		if len(values) == 0 {
			t.Fatalf("template variable %s: no series of %s yields a value through %s", v.Name, query, v.Regex)
		}
		vars[v.Name] = values[0]
	}
	if vars["connector_type"] != "postgres" || vars["connector_name"] != prefix {
		t.Errorf("the dashboard's variables are %v, want connector_type postgres and connector_name %s", vars, prefix)
	}

	exprs := dash.expressions()
	if len(exprs) != 19 { // the copy under testdata has 19 expressions in 13 panels
		t.Fatalf("%d expressions in the dashboard, want 19", len(exprs))
	}
	for _, e := range exprs {
		expr := substitute(e.expr, vars)
		sels := selectors(expr)
		if len(sels) == 0 {
			t.Errorf("panel %q: no selector in %s", e.panel, expr)
		}
		for _, sel := range sels {
			if len(series.match(t, sel)) == 0 {
				t.Errorf("panel %q: %s selects no series of GET /metrics", e.panel, sel)
			}
		}
	}

	// A deleted connector's series go, its Debezium-named ones with its cdcd_* ones.
	p.restAPI().expect(http.MethodDelete, "/connectors/"+name, "", http.StatusNoContent)
	var left []sample
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		s := parseExposition(t, scrape(t, base))
		left = append(s.match(t, `{name="`+prefix+`"}`), s.match(t, `{connector="`+name+`"}`)...)
		if len(left) == 0 {
			break
		}
	}
	if len(left) > 0 {
		t.Errorf("after the connector's deletion GET /metrics still has %v", left)
	}
}

// dashboard is what the test reads of a Grafana dashboard JSON.
type dashboard struct {
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Query string `json:"query"`
			Regex string `json:"regex"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	Title   string  `json:"title"`
	Panels  []panel `json:"panels"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

type dashExpr struct{ panel, expr string }

func loadDashboard(t *testing.T, path string) dashboard {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// expressions are the dashboard's PromQL expressions with their panels' titles, rows' panels included.
func (d dashboard) expressions() []dashExpr {
	var out []dashExpr
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, tg := range p.Targets {
				if tg.Expr != "" {
					out = append(out, dashExpr{p.Title, tg.Expr})
				}
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

// substitute replaces Grafana's $variable references.
func substitute(expr string, vars map[string]string) string {
	return regexp.MustCompile(`\$(\w+)`).ReplaceAllStringFunc(expr, func(ref string) string {
		if v, ok := vars[ref[1:]]; ok {
			return v
		}
		return ref
	})
}

var (
	// A metric name, perhaps with label matchers, or label matchers alone.
	selectorRE = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)?\s*(\{[^}]*\})|([a-zA-Z_:][a-zA-Z0-9_:]*)`)
	matcherRE  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')`)
	keywords   = []string{"offset", "bool", "and", "or", "unless"}
)

// selectors are the vector selectors of a PromQL expression: what it reads, whatever functions and
// operators it applies (range durations, grouping labels, functions and numbers are not selectors).
func selectors(expr string) []string {
	expr = regexp.MustCompile(`\[[^\]]*\]`).ReplaceAllString(expr, "")
	expr = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`).ReplaceAllString(expr, "")
	var out []string
	for _, loc := range selectorRE.FindAllStringSubmatchIndex(expr, -1) {
		sel := expr[loc[0]:loc[1]]
		rest := strings.TrimSpace(expr[loc[1]:])
		if loc[6] >= 0 { // a bare name: a function when a parenthesis follows, or a keyword
			if strings.HasPrefix(rest, "(") || slices.Contains(keywords, sel) {
				continue
			}
		}
		out = append(out, strings.TrimSpace(sel))
	}
	return out
}

// sample is one series of an exposition.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// String renders the series as Prometheus shows it, labels sorted.
func (s sample) String() string {
	keys := make([]string, 0, len(s.labels))
	for k := range s.labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%q", k, s.labels[k])
	}
	return s.name + "{" + strings.Join(parts, ",") + "}"
}

type exposition []sample

var (
	sampleRE = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)(\s+\S+)?$`)
	labelRE  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)
)

// parseExposition reads Prometheus's text format.
func parseExposition(t *testing.T, text string) exposition {
	t.Helper()
	var out exposition
	for line := range strings.SplitSeq(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := sampleRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("GET /metrics: cannot read %q", line)
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			t.Fatalf("GET /metrics: %q: %v", line, err)
		}
		s := sample{name: m[1], labels: map[string]string{}, value: v}
		for _, l := range labelRE.FindAllStringSubmatch(m[2], -1) {
			val, err := strconv.Unquote(`"` + l[2] + `"`)
			if err != nil {
				val = l[2]
			}
			s.labels[l[1]] = val
		}
		out = append(out, s)
	}
	return out
}

// match returns the series a vector selector (name{label op "value",…}, either part optional) selects.
func (e exposition) match(t *testing.T, selector string) []sample {
	t.Helper()
	m := selectorRE.FindStringSubmatch(selector)
	if m == nil {
		t.Fatalf("not a selector: %s", selector)
	}
	name := m[1] + m[3]
	type matcher struct {
		label, op string
		value     string
		re        *regexp.Regexp
	}
	var ms []matcher
	for _, l := range matcherRE.FindAllStringSubmatch(m[2], -1) {
		v := l[3]
		if v[0] == '\'' {
			v = `"` + strings.ReplaceAll(v[1:len(v)-1], `"`, `\"`) + `"`
		}
		val, err := strconv.Unquote(v)
		if err != nil {
			t.Fatalf("selector %s: %v", selector, err)
		}
		mt := matcher{label: l[1], op: l[2], value: val}
		if mt.op == "=~" || mt.op == "!~" {
			mt.re = regexp.MustCompile("^(?:" + val + ")$") // PromQL's regular expressions are anchored
		}
		ms = append(ms, mt)
	}
	var out []sample
	for _, s := range e {
		if name != "" && s.name != name {
			continue
		}
		ok := true
		for _, mt := range ms {
			v := s.labels[mt.label]
			switch mt.op {
			case "=":
				ok = ok && v == mt.value
			case "!=":
				ok = ok && v != mt.value
			case "=~":
				ok = ok && mt.re.MatchString(v)
			case "!~":
				ok = ok && !mt.re.MatchString(v)
			}
		}
		if ok {
			out = append(out, s)
		}
	}
	return out
}

// TestDashboardSelectors: the selectors read out of PromQL expressions.
func TestDashboardSelectors(t *testing.T) {
	for expr, want := range map[string][]string{
		`jvm_memory_bytes_used{area='heap'}`:                                 {`jvm_memory_bytes_used{area='heap'}`},
		`sum by (name) (rate(debezium_metrics_TotalNumberOfEventsSeen[5m]))`: {`debezium_metrics_TotalNumberOfEventsSeen`},
		`a{x=~"(b|c)"} / on (x) b`:                                           {`a{x=~"(b|c)"}`, `b`},
	} {
		if got := selectors(expr); !slices.Equal(got, want) {
			t.Errorf("selectors(%s) = %q, want %q", expr, got, want)
		}
	}
}

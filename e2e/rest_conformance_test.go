package e2e

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// The real Kafka Connect 4.4 standalone worker with Debezium 3.6.1, as e2e/debezium/connect.sh installs it.
// The test starts its own worker (its own REST port, offsets file and run directory) instead of calling
// connect.sh run, which allows one reference worker at a time and may be in use for goldens.
func connectInstall(t *testing.T) (java, lib, plugins string) {
	t.Helper()
	state := os.Getenv("CDCD_E2E_DIR")
	if state == "" {
		state = "/var/tmp/cdcd-e2e"
	}
	java = filepath.Join(os.Getenv("CDCD_DEBEZIUM_JAVA_HOME"), "bin", "java")
	if os.Getenv("CDCD_DEBEZIUM_JAVA_HOME") == "" {
		java = "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java"
	}
	lib = filepath.Join(state, "debezium", "lib")
	plugins = filepath.Join(state, "debezium", "plugins")
	for _, need := range []string{java, filepath.Join(lib, "connect-runtime-4.4.0.jar"), filepath.Join(plugins, "debezium-connector-postgres")} {
		if _, err := os.Stat(need); err != nil {
			t.Skipf("this test needs the reference Connect worker (%s missing): run `e2e/debezium/connect.sh install`", need)
		}
	}
	return java, lib, plugins
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startConnect runs ConnectStandalone with worker props and no connector, and returns its REST base URL.
func startConnect(t *testing.T, props map[string]string) string {
	return startConnectREST(t, props, "org.apache.kafka.connect.cli.ConnectStandalone")
}

// startConnectREST runs a Kafka Connect worker (mainClass) with worker props and returns its REST base URL
// once /health answers 200, which in distributed mode means it joined its group and read the config topic.
func startConnectREST(t *testing.T, props map[string]string, mainClass string) string {
	t.Helper()
	java, lib, plugins := connectInstall(t)
	dir := t.TempDir()
	props["plugin.path"] = plugins
	writeProperties(t, filepath.Join(dir, "worker.properties"), props)
	w := startConnectMain(t, java, lib, filepath.Join(dir, "connect.log"), dir, mainClass, "worker.properties")
	base := props["listeners"]
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		if code, err := httpGetStatus(base + "/health"); err == nil && code == 200 {
			return base
		}
		if w.exited() || time.Now().After(deadline) {
			t.Fatalf("the Connect worker (%s) did not become healthy at %s:\n%s", mainClass, base, w.logTail())
		}
	}
}

func httpGetStatus(url string) (int, error) {
	code, _, err := httpGet(url)
	return code, err
}

// httpGet returns the status and body of a GET of url.
func httpGet(url string) (int, []byte, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// conformanceCall is one REST call of the sequence both workers get.
type conformanceCall struct {
	method, path, body string
	// contentType replaces application/json; "none" sends no Content-Type.
	contentType string
	// waitFor, when set, waits until the connector's task (or, for STOPPED, the connector) is in that
	// state on both sides before the call: states that depend on timing are compared only once settled.
	waitFor string
	// codeOnly compares the status code only (see the differences listed in TestRESTConformance).
	codeOnly bool
	// validate compares a ConfigInfos body by its definitions and error count only.
	validate bool
	// distributedCodeOnly compares the status code only in distributed mode (see
	// TestDistributedRESTConformance).
	distributedCodeOnly bool
}

// TestRESTConformance sends the same REST calls to the real Connect standalone worker running Debezium and
// to cdcd, with equivalent connector configs (each its own slot and publication), and compares status
// codes and bodies after normalising versions, worker ids, traces and side-specific names.
//
// Differences that remain, and are therefore not compared (or compared by status code only):
//   - A body Jackson cannot parse: both answer 500, with Jackson's text in Connect and Go's in cdcd.
//   - An invalid connector config on create: Connect 4.4 + Debezium 3.6.1 answers 500 with a
//     NullPointerException text (Debezium leaves some ConfigValues null); cdcd answers 400 with Connect's
//     "Connector configuration is invalid…" message listing the errors. Not in the sequence.
//   - POST /connectors/{unknown}/restart without flags: Connect answers 500 with an NPE text; cdcd 404
//     "Connector x not found". Not in the sequence.
//   - Validate: Debezium reports some messages twice (e.g. an integer check), and marks
//     schema.exclude.list invisible; cdcd reports each message once and every defined key visible. The
//     converter keys' recommended values list the installed plugins in Connect, cdcd's converters in cdcd.
//     Compared: the definitions (names, types, defaults, docs, groups, order) and values without errors.
//   - GET /connector-plugins?connectorsOnly=false lists Connect's transformations and converters; cdcd
//     lists its connector and converters. Not in the sequence.
//   - POST /connectors/{name}/tasks/5/restart (no such task): Connect 4.4's StandaloneHerder answers 404
//     "Task conf-5 not found" but then goes on to start the task with a null config, so a FAILED task 5
//     with a NullPointerException trace appears in the status; cdcd answers the 404 only. Not in the
//     sequence, since it breaks the reference's later states (the unit tests cover cdcd's answer).
//   - GET /connector-plugins: the reference lists the plugins installed in its plugin path (the
//     PostgreSQL connector); cdcd's other connectors (MySQL, MariaDB) are set aside before comparing.
//   - JSON object member order (config maps are Java LinkedHashMaps/HashMaps in Connect, sorted in cdcd)
//     is not compared: bodies are compared as JSON values.
func TestRESTConformance(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	connectInstall(t)
	execPostgres(t, context.Background(), dsn, `CREATE TABLE public.items (id int PRIMARY KEY, v text)`)

	dir := t.TempDir()
	prefix := fmt.Sprintf("conf%d", time.Now().UnixNano()%1e9)

	// The reference.
	connectProps := workerProps(brokers, filepath.Join(dir, "connect-offsets.dat"))
	connectProps["listeners"] = fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	ref := restClient{t: t, base: startConnect(t, connectProps)}

	// cdcd.
	ours := startStandalone(t, dir, workerProps(brokers, filepath.Join(dir, "cdcd-offsets.dat"))).restAPI()

	compareREST(t, dsn, prefix, ref, ours, false)
}

// compareREST sends the conformance sequence to the reference Connect worker and to cdcd, each running
// a connector "conf" on the table public.items of dsn (topic prefix prefix, a slot of its own), and
// reports every difference that is not listed in TestRESTConformance.
func compareREST(t *testing.T, dsn, prefix string, ref, ours restClient, distributed bool) {
	t.Helper()
	configFor := func(side string) map[string]string {
		cfg := pgConnector(t, dsn, "conf", prefix+side, "public.items")
		cfg["topic.prefix"] = prefix
		cfg["snapshot.mode"] = "no_data"
		delete(cfg, "status.update.interval.ms")
		delete(cfg, "slot.retry.delay.ms")
		delete(cfg, "name")
		return cfg
	}

	sides := map[string]restClient{"connect": ref, "cdcd": ours}
	create := func(side string) string {
		return jsonBody(t, map[string]any{"name": "conf", "config": configFor(side)})
	}
	update := func(side string) string { return jsonBody(t, configFor(side)) }
	offsetsBody := `{"offsets":[{"partition":{"server":"` + prefix + `"},"offset":{"lsn":1234,"txId":7,"ts_usec":1700000000000000}}]}`
	validateBody := func(side string) string {
		cfg := configFor(side)
		cfg["name"] = "conf"
		return jsonBody(t, cfg)
	}

	calls := []struct {
		conformanceCall
		bodyFor func(side string) string
	}{
		{conformanceCall{method: "GET", path: "/"}, nil},
		{conformanceCall{method: "GET", path: "/connectors"}, nil},
		{conformanceCall{method: "GET", path: "/connector-plugins"}, nil},
		{conformanceCall{method: "GET", path: "/connector-plugins/Postgres/config"}, nil},
		{conformanceCall{method: "GET", path: "/connector-plugins/Foo/config"}, nil},
		{conformanceCall{method: "PUT", path: "/connector-plugins/PostgresConnector/config/validate", validate: true}, validateBody},
		{conformanceCall{method: "PUT", path: "/connector-plugins/Postgres/config/validate", body: `{"connector.class":"Other"}`}, nil},
		{conformanceCall{method: "POST", path: "/connectors"}, create},
		{conformanceCall{method: "POST", path: "/connectors"}, create},
		{conformanceCall{method: "POST", path: "/connectors", body: `{"name":"y","config":{"name":"z"}}`}, nil},
		{conformanceCall{method: "POST", path: "/connectors", body: `{"name":"y","config":{}}`}, nil},
		{conformanceCall{method: "POST", path: "/connectors", body: `not json`, codeOnly: true}, nil},
		{conformanceCall{method: "GET", path: "/connectors/conf/status", waitFor: "RUNNING"}, nil},
		{conformanceCall{method: "GET", path: "/connectors/conf"}, nil},
		{conformanceCall{method: "GET", path: "/connectors/conf/config"}, nil},
		{conformanceCall{method: "GET", path: "/connectors/conf/tasks"}, nil},
		{conformanceCall{method: "GET", path: "/connectors/conf/tasks/0/status"}, nil},
		{conformanceCall{method: "GET", path: "/connectors/conf/tasks/1/status"}, nil},
		{conformanceCall{method: "GET", path: "/connectors/conf/tasks/abc/status"}, nil},
		{conformanceCall{method: "GET", path: "/connectors?expand=status&expand=info"}, nil},
		{conformanceCall{method: "PATCH", path: "/connectors/conf/offsets", body: offsetsBody}, nil},
		{conformanceCall{method: "DELETE", path: "/connectors/conf/offsets"}, nil},
		{conformanceCall{method: "PUT", path: "/connectors/conf/pause"}, nil},
		{conformanceCall{method: "GET", path: "/connectors/conf/status", waitFor: "PAUSED"}, nil},
		{conformanceCall{method: "PUT", path: "/connectors/conf/resume"}, nil},
		{conformanceCall{method: "GET", path: "/connectors/conf/status", waitFor: "RUNNING"}, nil},
		{conformanceCall{method: "POST", path: "/connectors/conf/restart"}, nil},
		{conformanceCall{method: "POST", path: "/connectors/conf/restart?includeTasks=true&onlyFailed=true", waitFor: "RUNNING"}, nil},
		{conformanceCall{method: "POST", path: "/connectors/conf/tasks/0/restart"}, nil},
		{conformanceCall{method: "PUT", path: "/connectors/conf/stop"}, nil},
		{conformanceCall{method: "GET", path: "/connectors/conf/status", waitFor: "STOPPED"}, nil},
		{conformanceCall{method: "GET", path: "/connectors/conf"}, nil},
		{conformanceCall{method: "GET", path: "/connectors/conf/tasks"}, nil},
		{conformanceCall{method: "PUT", path: "/connectors/conf/stop"}, nil},
		{conformanceCall{method: "PATCH", path: "/connectors/conf/offsets", body: offsetsBody}, nil},
		{conformanceCall{method: "GET", path: "/connectors/conf/offsets"}, nil},
		{conformanceCall{method: "PATCH", path: "/connectors/conf/offsets", body: `{"offsets":[{"partition":{"server":"x"},"offset":{"a":[1]}}]}`}, nil},
		{conformanceCall{method: "PATCH", path: "/connectors/conf/offsets", body: `{"offsets":[]}`}, nil},
		{conformanceCall{method: "DELETE", path: "/connectors/conf/offsets"}, nil},
		{conformanceCall{method: "GET", path: "/connectors/conf/offsets"}, nil},
		{conformanceCall{method: "POST", path: "/connectors/conf/restart?includeTasks=true"}, nil},
		{conformanceCall{method: "POST", path: "/connectors/conf/restart?onlyFailed=true", distributedCodeOnly: true}, nil},
		{conformanceCall{method: "PUT", path: "/connectors/conf/config"}, update},
		{conformanceCall{method: "PUT", path: "/connectors/x/config", body: `{"name":"q"}`}, nil},
		{conformanceCall{method: "PATCH", path: "/connectors/x/config", body: `{"a":"b"}`}, nil},
		{conformanceCall{method: "DELETE", path: "/connectors/conf"}, nil},
		{conformanceCall{method: "GET", path: "/connectors"}, nil},
		{conformanceCall{method: "GET", path: "/connectors/x"}, nil},
		{conformanceCall{method: "GET", path: "/connectors/x/status"}, nil},
		{conformanceCall{method: "GET", path: "/connectors/x/config"}, nil},
		{conformanceCall{method: "GET", path: "/connectors/x/offsets"}, nil},
		{conformanceCall{method: "GET", path: "/connectors/x/topics"}, nil},
		{conformanceCall{method: "PUT", path: "/connectors/x/pause"}, nil},
		{conformanceCall{method: "PUT", path: "/connectors/x/resume"}, nil},
		{conformanceCall{method: "PUT", path: "/connectors/x/stop"}, nil},
		{conformanceCall{method: "POST", path: "/connectors/x/restart?includeTasks=true"}, nil},
		{conformanceCall{method: "DELETE", path: "/connectors/x"}, nil},
		{conformanceCall{method: "DELETE", path: "/connectors/x/offsets"}, nil},
		{conformanceCall{method: "PATCH", path: "/connectors/x/offsets", body: `{}`}, nil},
		{conformanceCall{method: "GET", path: "/nope"}, nil},
		{conformanceCall{method: "DELETE", path: "/connectors"}, nil},
		// What a web page may send without a CORS preflight is refused, by both, with Jersey's 415.
		{conformanceCall{method: "POST", path: "/connectors", body: `{"name":"y","config":{}}`, contentType: "none"}, nil},
		{conformanceCall{method: "POST", path: "/connectors", body: `{"name":"y","config":{}}`, contentType: "text/plain"}, nil},
		{conformanceCall{method: "POST", path: "/connectors/x/restart", contentType: "text/plain"}, nil},
		{conformanceCall{method: "PUT", path: "/connectors/x/pause", body: "a=b", contentType: "application/x-www-form-urlencoded"}, nil},
		// Jersey lists the methods in Allow and in a text body; cdcd in Allow only.
		{conformanceCall{method: "OPTIONS", path: "/connectors", codeOnly: true}, nil},
	}
	for i, c := range calls {
		replies := map[string]restReply{}
		for side, api := range sides {
			if c.waitFor != "" {
				api.waitTaskState("conf", c.waitFor)
			}
			b := c.body
			if c.bodyFor != nil {
				b = c.bodyFor(side)
			}
			ct := cmp.Or(c.contentType, "application/json")
			if ct == "none" {
				ct = ""
			}
			replies[side] = api.doAs(c.method, c.path, b, ct)
		}
		label := fmt.Sprintf("call %d: %s %s", i, c.method, c.path)
		want, got := replies["connect"], replies["cdcd"]
		if want.status != got.status {
			t.Errorf("%s: status %d, Connect %d\n cdcd:    %s\n Connect: %s", label, got.status, want.status, got.body, want.body)
			continue
		}
		if c.codeOnly || distributed && c.distributedCodeOnly {
			continue
		}
		norm := func(side string, r restReply) any {
			return normalize(r.body, c.path, c.validate, map[string]string{prefix + side: "<slot>", strings.TrimPrefix(sides[side].base, "http://"): "<host>"})
		}
		w, g := norm("connect", want), norm("cdcd", got)
		if c.path == "/connector-plugins" {
			g = onlyPluginsOf(g, w)
		}
		if !reflect.DeepEqual(w, g) {
			wj, _ := json.Marshal(w)
			gj, _ := json.Marshal(g)
			t.Errorf("%s: bodies differ\n cdcd:    %s\n Connect: %s", label, gj, wj)
		}
		if (want.location == "") != (got.location == "") || (want.location != "" &&
			strings.Replace(want.location, strings.TrimPrefix(ref.base, "http://"), "<host>", 1) != strings.Replace(got.location, strings.TrimPrefix(ours.base, "http://"), "<host>", 1)) {
			t.Errorf("%s: Location %q, Connect %q", label, got.location, want.location)
		}
	}
}

// onlyPluginsOf keeps the entries of a plugin list whose class the reference list has.
func onlyPluginsOf(list, reference any) any {
	classes := map[any]bool{}
	refs, _ := reference.([]any)
	for _, r := range refs {
		if m, ok := r.(map[string]any); ok {
			classes[m["class"]] = true
		}
	}
	entries, ok := list.([]any)
	if !ok {
		return list
	}
	kept := []any{}
	for _, e := range entries {
		if m, ok := e.(map[string]any); ok && classes[m["class"]] {
			kept = append(kept, e)
		}
	}
	return kept
}

// normalize parses a reply body and removes what may differ between two correct workers: versions,
// worker ids, commit and cluster ids, traces, and names that are per-side by construction.
func normalize(body, path string, validate bool, replace map[string]string) any {
	for from, to := range replace {
		body = strings.ReplaceAll(body, from, to)
	}
	var v any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		return body
	}
	if path == "/" {
		if m, ok := v.(map[string]any); ok {
			for k := range m {
				m[k] = "<id>"
			}
		}
		return v
	}
	if validate {
		return normalizeValidate(v)
	}
	return scrub(v)
}

func scrub(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x["name"] == "connector.plugin.version" {
			x["default_value"] = "<version>"
		}
		for k, e := range x {
			switch k {
			case "version", "worker_id", "trace":
				x[k] = "<" + k + ">"
			default:
				x[k] = scrub(e)
			}
		}
	case []any:
		for i := range x {
			x[i] = scrub(x[i])
		}
	}
	return v
}

// normalizeValidate keeps of a ConfigInfos what both sides must agree on (see TestRESTConformance).
func normalizeValidate(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	configs, _ := m["configs"].([]any)
	var defs []any
	for _, c := range configs {
		cm, _ := c.(map[string]any)
		def, _ := cm["definition"].(map[string]any)
		if def["name"] == "connector.plugin.version" {
			def["default_value"] = "<version>"
		}
		defs = append(defs, def)
	}
	return map[string]any{"name": m["name"], "groups": m["groups"], "definitions": defs}
}

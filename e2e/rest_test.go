package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// restClient calls a Connect-compatible REST API.
type restClient struct {
	t    testing.TB
	base string // http://host:port
}

type restReply struct {
	status   int
	body     string
	location string
}

func (c restClient) do(method, path, body string) restReply {
	c.t.Helper()
	return c.doAs(method, path, body, "application/json")
}

// doAs is do with the given Content-Type ("" sends none).
func (c restClient) doAs(method, path, body, contentType string) restReply {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return restReply{status: resp.StatusCode, body: string(b), location: resp.Header.Get("Location")}
}

// expect calls and fails unless the status is want; it returns the body.
func (c restClient) expect(method, path, body string, want int) string {
	c.t.Helper()
	r := c.do(method, path, body)
	if r.status != want {
		c.t.Fatalf("%s %s: %d %s, want %d", method, path, r.status, r.body, want)
	}
	return r.body
}

// waitTaskState polls the connector's status until it and its task (for STOPPED, the connector without
// tasks) are in state.
func (c restClient) waitTaskState(name, state string) {
	c.t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		r := c.do("GET", "/connectors/"+name+"/status", "")
		var st struct {
			Connector struct{ State string }
			Tasks     []struct{ State, Trace string }
		}
		_ = json.Unmarshal([]byte(r.body), &st)
		switch {
		case state == "STOPPED" && st.Connector.State == "STOPPED" && len(st.Tasks) == 0:
			return
		case len(st.Tasks) == 1 && st.Tasks[0].State == state && st.Connector.State == state:
			return
		case len(st.Tasks) == 1 && st.Tasks[0].State == "FAILED":
			c.t.Fatalf("connector %s failed: %s", name, st.Tasks[0].Trace)
		case time.Now().After(deadline):
			c.t.Fatalf("connector %s not %s: %s", name, state, r.body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// listeningAddress waits for cdcd's "REST API listening" log line and returns the bound address.
func listeningAddress(t testing.TB, p *cdcdProcess) string {
	t.Helper()
	re := regexp.MustCompile(`REST API listening.*address=(\S+)`)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(p.log.String()); m != nil {
			return m[1]
		}
		if p.exited() {
			t.Fatalf("cdcd exited:\n%s", p.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("cdcd did not log its REST address:\n%s", p.log.String())
	return ""
}

func jsonBody(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRESTLifecycle drives a connector through cdcd's REST API alone, as a script written for
// connect-standalone would: create, status, pause/resume, stop, offsets read/alter/reset, delete.
func TestRESTLifecycle(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	ctx := context.Background()
	conn := connectPostgres(t, ctx, dsn, `CREATE TABLE public.items (id int PRIMARY KEY, v text)`)

	dir := t.TempDir()
	p := startStandalone(t, dir, workerProps(brokers, filepath.Join(dir, "offsets.dat")))
	api := p.restAPI()

	deadline := time.Now().Add(30 * time.Second)
	for api.do("GET", "/health", "").status != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("GET /health never answered 200")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := api.expect("GET", "/connectors", "", 200); got != "[]" {
		t.Fatalf("connectors at start: %s", got)
	}

	prefix := "rest" + strings.ReplaceAll(strings.ToLower(t.Name()), "/", "")
	cfg := pgConnector(t, dsn, "rest", prefix, "public.items")
	delete(cfg, "name")
	created := api.do("POST", "/connectors", jsonBody(t, map[string]any{"name": "rest", "config": cfg}))
	if created.status != 201 || !strings.HasSuffix(created.location, "/connectors/rest") {
		t.Fatalf("create: %d %s (Location %q)", created.status, created.body, created.location)
	}
	api.expect("POST", "/connectors", jsonBody(t, map[string]any{"name": "rest", "config": cfg}), 409)
	api.waitTaskState("rest", "RUNNING")

	if _, err := conn.Exec(ctx, `INSERT INTO public.items VALUES (1, 'a')`); err != nil {
		t.Fatal(err)
	}
	api.expect("PUT", "/connectors/rest/pause", "", 202)
	api.waitTaskState("rest", "PAUSED")
	api.expect("PUT", "/connectors/rest/resume", "", 202)
	api.waitTaskState("rest", "RUNNING")
	if got := api.expect("DELETE", "/connectors/rest/offsets", "", 400); !strings.Contains(got, "must be in the STOPPED state") {
		t.Fatalf("reset while running: %s", got)
	}

	// The insert's offset is recorded within a flush interval of Kafka's acknowledgement.
	var offsets struct {
		Offsets []struct {
			Partition map[string]any
			Offset    map[string]any
		}
	}
	for deadline := time.Now().Add(time.Minute); len(offsets.Offsets) == 0; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no offset recorded for the insert")
		}
		_ = json.Unmarshal([]byte(api.expect("GET", "/connectors/rest/offsets", "", 200)), &offsets)
	}
	api.expect("PUT", "/connectors/rest/stop", "", 204)
	api.waitTaskState("rest", "STOPPED")
	if got := api.expect("GET", "/connectors/rest/tasks", "", 200); got != "[]" {
		t.Fatalf("tasks of a stopped connector: %s", got)
	}
	if offsets.Offsets[0].Partition["server"] != prefix || offsets.Offsets[0].Offset["lsn"] == nil {
		t.Fatalf("offsets: %+v", offsets)
	}

	alter := `{"offsets":[{"partition":{"server":"` + prefix + `"},"offset":{"lsn":1234,"txId":7}}]}`
	api.expect("PATCH", "/connectors/rest/offsets", alter, 200)
	want := `{"offsets":[{"partition":{"server":"` + prefix + `"},"offset":{"lsn":1234,"txId":7}}]}`
	if got := api.expect("GET", "/connectors/rest/offsets", "", 200); got != want {
		t.Fatalf("offsets after PATCH:\n got %s\nwant %s", got, want)
	}
	api.expect("DELETE", "/connectors/rest/offsets", "", 200)
	if got := api.expect("GET", "/connectors/rest/offsets", "", 200); got != `{"offsets":[]}` {
		t.Fatalf("offsets after reset: %s", got)
	}

	api.expect("DELETE", "/connectors/rest", "", 204)
	api.expect("GET", "/connectors/rest", "", 404)
	if got := api.expect("GET", "/connectors", "", 200); got != "[]" {
		t.Fatalf("connectors after delete: %s", got)
	}
	// cdcd stops cleanly on SIGTERM with its REST server running.
	p.stop()
	if !bytes.Contains([]byte(p.log.String()), []byte("stopping")) {
		t.Errorf("no clean stop in the log")
	}
}

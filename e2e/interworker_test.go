package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/connect/cluster"
	"github.com/cdcd/cdcd/connect/interworker"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// sessionKey waits until the cluster's config topic holds a session key (KIP-507) and returns it: what a
// worker of the group knows, and an attacker without access to the config topic does not.
func sessionKey(t *testing.T, ctx context.Context, configs *cluster.ConfigStore) interworker.SessionKey {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		if err := configs.ReadToEnd(ctx); err != nil {
			t.Fatalf("reading the config topic: %v", err)
		}
		key, ok, changed := configs.SessionKey()
		if ok {
			return key
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatal("no session key in the config topic")
		}
	}
}

// internalCall sends an internal request as a worker does: signed with key under HmacSHA256 unless key is
// nil, with basic credentials when user is set. It returns the status and body.
func internalCall(t *testing.T, method, url string, body []byte, key []byte, user, password string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != nil {
		if err := interworker.Sign(req.Header, key, interworker.DefaultAlgorithm, body); err != nil {
			t.Fatal(err)
		}
	}
	return sendAs(t, http.DefaultClient, req, user, password)
}

// TestInterWorkerRequestsSigned runs two cdcd distributed workers with basic authentication and
// exactly-once source support, and two connectors that require exactly-once: each worker runs one
// connector and one task, so the follower's task starts only after its PUT /connectors/{name}/fence reached
// the leader, which it does without user credentials because it is signed with the group's session key
// (before, it got 401 and the task never ran). The task configs of the connector the follower runs reach
// the leader the same way. Without
// the key, the internal endpoints stay closed: no credentials 401, credentials but no signature 400, a
// signature under another key 403; a request signed with the key from the config topic passes.
func TestInterWorkerRequestsSigned(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	execPostgres(t, ctx, dsn, `CREATE TABLE signed_a (id int PRIMARY KEY); CREATE TABLE signed_b (id int PRIMARY KEY)`)
	credentials := filepath.Join(t.TempDir(), "credentials.properties")
	if err := os.WriteFile(credentials, []byte("admin: s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	topics := clusterTopicsOf(prefix)
	var urls []string
	var procs []*cdcdProcess
	for range 2 {
		props := distributedProps(brokers, prefix, topics, freePort(t))
		props["exactly.once.source.support"] = "enabled"
		props["rest.basic.auth.credentials.file"] = credentials
		path := filepath.Join(t.TempDir(), "worker.properties")
		writeProperties(t, path, props)
		p := startCdcdProcess(t, "distributed", path)
		waitSecuredHealthy(t, http.DefaultClient, props["listeners"], p)
		urls = append(urls, props["listeners"])
		procs = append(procs, p)
	}

	for _, table := range []string{"signed_a", "signed_b"} {
		cfg := pgConnector(t, dsn, table, prefix+"-"+table, "public."+table) // a slot and topics of its own
		cfg["exactly.once.support"] = "required"
		create := jsonBody(t, map[string]any{"name": table, "config": cfg})
		deadline := time.Now().Add(time.Minute)
		for {
			code, body := securedCall(t, http.DefaultClient, "POST", urls[0]+"/connectors", "admin", "s3cret", create)
			if code == 201 {
				break
			}
			if code != 409 || time.Now().After(deadline) {
				t.Fatalf("creating %s: %d %s", table, code, body)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	t.Logf("running on %v", waitSpread(t, urls[0], "admin", "s3cret", []string{"signed_a", "signed_b"}))
	// RUNNING is reported before a task's fencing preflight: what proves both tasks run is a change of each
	// table delivered in a committed transaction.
	execPostgres(t, ctx, dsn, `INSERT INTO signed_a VALUES (1); INSERT INTO signed_b VALUES (1)`)
	for _, table := range []string{"signed_a", "signed_b"} {
		readRecords(t, brokers, prefix+"-"+table+".public."+table, 1)
	}

	configs, _, _ := openClusterStores(t, ctx, brokers, topics)
	key := sessionKey(t, ctx, configs)
	if len(key.Key) != 32 || key.Algorithm != "HmacSHA256" {
		t.Errorf("session key of %d bytes, algorithm %s; want Connect's default HmacSHA256 of 32 bytes", len(key.Key), key.Algorithm)
	}

	// The attacker: without the key, the internal endpoints of both workers stay closed.
	tasks, err := json.Marshal([]map[string]string{{"connector.class": "io.debezium.connector.postgresql.PostgresConnector", "database.hostname": "attacker.example"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, url := range urls {
		for _, tc := range []struct {
			name, method, path string
			key                []byte
			user               string
			want               int
			message            string
		}{
			{"no credentials, unsigned", "POST", "/connectors/signed_a/tasks", nil, "", 401, "User cannot access the resource."},
			{"credentials, unsigned", "POST", "/connectors/signed_a/tasks", nil, "admin", 400, "Internal request missing required signature"},
			{"another key", "POST", "/connectors/signed_a/tasks", []byte("guessed key guessed key guessed!"), "", 403, "Internal request contained invalid signature."},
			{"fence, no credentials, unsigned", "PUT", "/connectors/signed_a/fence", nil, "", 401, "User cannot access the resource."},
			{"fence, another key", "PUT", "/connectors/signed_a/fence", []byte("guessed key guessed key guessed!"), "", 403, "Internal request contained invalid signature."},
		} {
			body := tasks
			if tc.method == "PUT" {
				body = nil
			}
			code, got := internalCall(t, tc.method, url+tc.path, body, tc.key, tc.user, "s3cret")
			if code != tc.want || !strings.Contains(got, tc.message) {
				t.Errorf("%s at %s: %d %s, want %d %q", tc.name, url, code, got, tc.want, tc.message)
			}
		}
	}
	if snap := configs.Snapshot(); strings.Contains(snap.Tasks["signed_a"][0]["database.hostname"], "attacker") {
		t.Fatalf("the attacker's task config was stored: %v", snap.Tasks["signed_a"])
	}
	// A worker's request, signed with the group's key, passes without credentials (through either worker:
	// the follower forwards it with its signature).
	for _, url := range urls {
		if code, got := internalCall(t, "PUT", url+"/connectors/signed_b/fence", nil, key.Key, "", ""); code != 204 {
			t.Errorf("signed fence at %s: %d %s", url, code, got)
		}
	}
	// The key is a secret: no log (at debug level) carries it.
	for _, p := range procs {
		if strings.Contains(p.log.String(), base64.StdEncoding.EncodeToString(key.Key)) {
			t.Error("a worker's log carries the session key")
		}
	}
}

// placement is where a connector's instance and its task run (worker ids).
type placement struct{ connector, task string }

// waitSpread waits until each connector and its one task are RUNNING, no two connector instances and no
// two tasks on the same worker, none on the workers gone (whose last statuses may still say RUNNING), and
// returns where each runs. user and password are the basic credentials to ask with ("" for none).
func waitSpread(t *testing.T, base, user, password string, names []string, gone ...string) map[string]placement {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	var last string
	for time.Now().Before(deadline) {
		out := map[string]placement{}
		connectors, tasks := map[string]bool{}, map[string]bool{}
		for _, name := range names {
			_, body := securedCall(t, http.DefaultClient, "GET", base+"/connectors/"+name+"/status", user, password, "")
			last = body
			var st struct {
				Connector struct {
					State    string `json:"state"`
					WorkerID string `json:"worker_id"`
				} `json:"connector"`
				Tasks []struct {
					State    string `json:"state"`
					WorkerID string `json:"worker_id"`
				} `json:"tasks"`
			}
			if json.Unmarshal([]byte(body), &st) == nil && st.Connector.State == "RUNNING" && len(st.Tasks) == 1 && st.Tasks[0].State == "RUNNING" &&
				!slices.Contains(gone, st.Connector.WorkerID) && !slices.Contains(gone, st.Tasks[0].WorkerID) {
				out[name] = placement{connector: st.Connector.WorkerID, task: st.Tasks[0].WorkerID}
				connectors[st.Connector.WorkerID], tasks[st.Tasks[0].WorkerID] = true, true
			}
		}
		if len(connectors) == len(names) && len(tasks) == len(names) {
			return out
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("the connectors %v and their tasks did not all run, spread over the workers; last status: %s", names, last)
	return nil
}

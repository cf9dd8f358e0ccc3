package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/capture"
)

// distributedProps is a distributed worker of group in topics (cdcd's or Connect's: the keys are
// Connect's), with timeouts short enough for a test: a dead member's work moves within about
// session.timeout.ms + scheduled.rebalance.max.delay.ms.
func distributedProps(brokers []string, group string, topics clusterTopics, port int) map[string]string {
	props := clusterMemberProps(brokers, group, topics)
	maps.Copy(props, map[string]string{
		"offset.flush.interval.ms":         "200",
		"heartbeat.interval.ms":            "1000",
		"session.timeout.ms":               "6000",
		"scheduled.rebalance.max.delay.ms": "2000",
		"listeners":                        fmt.Sprintf("http://127.0.0.1:%d", port),
	})
	return props
}

// clusterMemberProps are what every distributed worker of group needs and nothing more: the brokers,
// the group's internal topics (replication factor 1, the test bed has one broker) and JSON converters.
func clusterMemberProps(brokers []string, group string, topics clusterTopics) map[string]string {
	return map[string]string{
		"bootstrap.servers":                 strings.Join(brokers, ","),
		"group.id":                          group,
		"config.storage.topic":              topics.configs,
		"offset.storage.topic":              topics.offsets,
		"status.storage.topic":              topics.status,
		"config.storage.replication.factor": "1",
		"offset.storage.replication.factor": "1",
		"status.storage.replication.factor": "1",
		"key.converter":                     "org.apache.kafka.connect.json.JsonConverter",
		"value.converter":                   "org.apache.kafka.connect.json.JsonConverter",
	}
}

// clusterTopicsOf are the internal topics of a cluster whose names start with prefix.
func clusterTopicsOf(prefix string) clusterTopics {
	return clusterTopics{configs: prefix + "-configs", offsets: prefix + "-offsets", status: prefix + "-status"}
}

// cdcdWorker is a running `cdcd distributed` and its REST base URL.
type cdcdWorker struct {
	*cdcdProcess
	url string
	id  string // its worker id in statuses
}

// startCdcdDistributed runs `cdcd distributed` with props and waits until it joined its group
// (GET /health answers 200).
func startCdcdDistributed(t *testing.T, props map[string]string) *cdcdWorker {
	t.Helper()
	path := filepath.Join(t.TempDir(), "worker.properties")
	writeProperties(t, path, props)
	p := startCdcdProcess(t, "distributed", path)
	base := props["listeners"]
	w := &cdcdWorker{cdcdProcess: p, url: base, id: strings.TrimPrefix(base, "http://")}
	deadline := time.Now().Add(time.Minute)
	for {
		if code, err := httpGetStatus(base + "/health"); err == nil && code == http.StatusOK {
			return w
		}
		if p.exited() || time.Now().After(deadline) {
			t.Fatalf("cdcd distributed at %s did not become healthy; log:\n%s", base, tail(p.log.String(), 4000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// restCall sends a JSON request and returns the status and body; a 409 (a rebalance is pending) is
// retried, as Connect's clients must.
func restCall(t *testing.T, method, url string, body any) (int, []byte) {
	t.Helper()
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for {
		req, err := http.NewRequest(method, url, bytes.NewReader(payload))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, url, err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusConflict || time.Now().After(deadline) {
			return resp.StatusCode, got
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// createConnector creates a connector through base and fails the test unless it is created.
func createConnector(t *testing.T, base string, cfg map[string]string) {
	t.Helper()
	code, body := restCall(t, http.MethodPost, base+"/connectors", map[string]any{"name": cfg["name"], "config": cfg})
	if code != http.StatusCreated {
		t.Fatalf("creating %s: %d %s", cfg["name"], code, body)
	}
}

// taskOwner returns the worker id of the connector's task 0 once it is RUNNING there.
func taskOwner(t *testing.T, base, name string, not ...string) string {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var last []byte
	for time.Now().Before(deadline) {
		var st struct {
			Tasks []struct {
				State    string `json:"state"`
				WorkerID string `json:"worker_id"`
			} `json:"tasks"`
		}
		code, body := restCall(t, http.MethodGet, base+"/connectors/"+name+"/status", nil)
		last = body
		if code == http.StatusOK && json.Unmarshal(body, &st) == nil && len(st.Tasks) == 1 &&
			st.Tasks[0].State == "RUNNING" && !slices.Contains(not, st.Tasks[0].WorkerID) {
			return st.Tasks[0].WorkerID
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("connector %s has no RUNNING task (other than on %v); last status: %s", name, not, last)
	return ""
}

// statusRecord is one record of the status topic.
type statusRecord struct {
	key      string
	state    string
	workerID string
}

// readStatusTopic returns every record of the status topic, in order per key.
func readStatusTopic(t *testing.T, brokers []string, topic string) []statusRecord {
	t.Helper()
	broker, err := capture.NewBroker(brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	recs, err := broker.Read(t.Context(), capture.Selection{Topics: []string{topic}})
	if err != nil {
		t.Fatal(err)
	}
	var out []statusRecord
	for _, r := range recs {
		var v struct {
			State    string `json:"state"`
			WorkerID string `json:"worker_id"`
		}
		if len(r.Value) > 0 {
			if err := json.Unmarshal(r.Value, &v); err != nil {
				t.Fatalf("status record %s: %v", r.Key, err)
			}
		}
		out = append(out, statusRecord{key: string(r.Key), state: v.State, workerID: v.WorkerID})
	}
	return out
}

// doubleOwners walks each task's status records and reports a task that a worker reported RUNNING
// while another worker, which never reported giving it up (UNASSIGNED) and is not in gone (killed
// workers cannot), still held it.
func doubleOwners(records []statusRecord, gone []string) []string {
	owner := map[string]string{}
	var bad []string
	for _, r := range records {
		if !strings.HasPrefix(r.key, "status-task-") {
			continue
		}
		switch r.state {
		case "RUNNING", "PAUSED":
			if cur := owner[r.key]; cur != "" && cur != r.workerID && !slices.Contains(gone, cur) {
				bad = append(bad, fmt.Sprintf("%s: %s took it while %s held it", r.key, r.workerID, cur))
			}
			owner[r.key] = r.workerID
		case "UNASSIGNED", "FAILED", "":
			if owner[r.key] == r.workerID || r.state == "" {
				owner[r.key] = ""
			}
		}
	}
	return bad
}

package connect

import (
	"context"
	"log/slog"
	"maps"
	"reflect"
	"testing"

	"github.com/cdcd/cdcd/connect/cluster"
	"github.com/cdcd/cdcd/connect/config"
)

func TestNeedsRebalance(t *testing.T) {
	base := cluster.ConfigSnapshot{
		Connectors: map[string]map[string]string{"a": {"k": "1"}},
		Tasks:      map[string][]map[string]string{"a": {{"k": "1"}}},
	}
	tests := []struct {
		name   string
		change func(*cluster.ConfigSnapshot)
		want   bool
	}{
		{"nothing", func(*cluster.ConfigSnapshot) {}, false},
		{"a config value", func(s *cluster.ConfigSnapshot) { s.Connectors["a"] = map[string]string{"k": "2"} }, false},
		{"a target state", func(s *cluster.ConfigSnapshot) { s.TargetStates = map[string]cluster.TargetState{"a": cluster.Paused} }, false},
		{"a task config", func(s *cluster.ConfigSnapshot) { s.Tasks["a"] = []map[string]string{{"k": "2"}} }, false},
		{"a new connector", func(s *cluster.ConfigSnapshot) { s.Connectors["b"] = map[string]string{} }, true},
		{"a deleted connector", func(s *cluster.ConfigSnapshot) { delete(s.Connectors, "a") }, true},
		{"the task count", func(s *cluster.ConfigSnapshot) { s.Tasks["a"] = nil }, true},
	}
	for _, tt := range tests {
		after := cluster.ConfigSnapshot{Connectors: maps.Clone(base.Connectors), Tasks: maps.Clone(base.Tasks)}
		tt.change(&after)
		if got := needsRebalance(base, after); got != tt.want {
			t.Errorf("%s: needsRebalance = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestImpliedTaskConfigs(t *testing.T) {
	props := map[string]string{"name": "pg", "connector.class": "io.debezium.connector.postgresql.PostgresConnector", "database.password": "${file:/s:pw}"}
	want := []map[string]string{{"name": "pg", "connector.class": props["connector.class"], "database.password": "${file:/s:pw}",
		"task.class": "io.debezium.connector.postgresql.PostgresConnectorTask"}}
	if got := testConnectors.impliedTaskConfigs(props, TargetStarted); !reflect.DeepEqual(got, want) {
		t.Errorf("started: %v", got)
	}
	if got := testConnectors.impliedTaskConfigs(props, TargetPaused); !reflect.DeepEqual(got, want) {
		t.Errorf("paused: %v", got)
	}
	if got := testConnectors.impliedTaskConfigs(props, TargetStopped); got == nil || len(got) != 0 {
		t.Errorf("stopped: %v, want no tasks", got)
	}
}

// fixedConfig is a config topic that holds snap.
type fixedConfig struct{ snap cluster.ConfigSnapshot }

func (f *fixedConfig) Snapshot() cluster.ConfigSnapshot { return f.snap }

// testDistributed is a distributed worker without Kafka: its config view is fixed and its status writes
// are counted, not sent. Its tasks' configs name a class no plugin has, so each fails at once without
// touching a database.
func testDistributed(t *testing.T, snap cluster.ConfigSnapshot) (*Distributed, *fixedConfig) {
	t.Helper()
	cfg := parseTestWorker(t, map[string]string{
		"bootstrap.servers": "127.0.0.1:1", "group.id": "g",
		"config.storage.topic": "c", "offset.storage.topic": "o", "status.storage.topic": "s",
		"key.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
	}, config.Distributed)
	d, err := NewDistributed(cfg, testParts(cfg.BootstrapServers), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	view := &fixedConfig{snap}
	d.configs = view
	t.Cleanup(d.w.Shutdown)
	return d, view
}

// testConnectors are the connector classes cmd/cdcd registers.
var testConnectors = connectorSet(testParts(nil).Connectors)

func twoConnectors() cluster.ConfigSnapshot {
	task := func(name string) []map[string]string {
		return []map[string]string{{"name": name, "connector.class": "test.Unknown"}}
	}
	return cluster.ConfigSnapshot{
		Connectors:   map[string]map[string]string{"a": {"name": "a"}, "b": {"name": "b"}},
		TargetStates: map[string]cluster.TargetState{},
		Tasks:        map[string][]map[string]string{"a": task("a"), "b": task("b")},
	}
}

func taskItem(name string) cluster.Item { return cluster.Item{Connector: name, Task: 0} }

func running(d *Distributed) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for name := range d.running {
		out = append(out, name)
	}
	return out
}

func TestAssignmentsStartOnlyOwnedTasksAndStopRevokedOnesFirst(t *testing.T) {
	d, view := testDistributed(t, twoConnectors())
	d.onAssignment(cluster.Assignment{Generation: 1, Assigned: []cluster.Item{taskItem("a")}, Owned: []cluster.Item{taskItem("a")}})
	if got := running(d); !reflect.DeepEqual(got, []string{"a"}) {
		t.Fatalf("after assigning a-0: running %v", got)
	}
	first := d.running["a"].task

	d.onAssignment(cluster.Assignment{Generation: 2, Assigned: []cluster.Item{taskItem("b")}, Revoked: []cluster.Item{taskItem("a")}, Owned: []cluster.Item{taskItem("b")}})
	select {
	case <-first.done: // stopped before onAssignment returned
	default:
		t.Fatal("a revoked task was still running when the assignment callback returned")
	}
	if got := running(d); !reflect.DeepEqual(got, []string{"b"}) {
		t.Fatalf("after moving to b-0: running %v", got)
	}

	// A STOPPED connector's task does not run even while assigned.
	view.snap.TargetStates["b"] = cluster.Stopped
	d.mu.Lock()
	d.reconcileLocked(view.snap)
	d.mu.Unlock()
	if got := running(d); len(got) != 0 {
		t.Fatalf("a stopped connector's task runs: %v", got)
	}
}

func TestChangedTaskConfigRestartsTheTask(t *testing.T) {
	d, view := testDistributed(t, twoConnectors())
	d.onAssignment(cluster.Assignment{Generation: 1, Owned: []cluster.Item{taskItem("a")}})
	before := d.running["a"]
	beforeTask := before.task
	view.snap.Tasks["a"] = []map[string]string{{"name": "a", "connector.class": "test.Unknown", "new": "value"}}
	d.mu.Lock()
	d.reconcileLocked(view.snap)
	d.mu.Unlock()
	after := d.running["a"]
	if after == nil || after == before || after.config["new"] != "value" {
		t.Fatalf("the task was not restarted with its new config: %+v", after)
	}
	select {
	case <-beforeTask.done:
	default:
		t.Error("the task with the old config still runs")
	}
}

func TestFencingStopsEveryTask(t *testing.T) {
	d, _ := testDistributed(t, twoConnectors())
	d.onAssignment(cluster.Assignment{Generation: 3, Leader: true, LeaderURL: "http://l/", Owned: []cluster.Item{taskItem("a"), taskItem("b")}})
	tasks := []*task{d.running["a"].task, d.running["b"].task}
	// The member lost its session: everything is revoked with generation -1.
	d.onAssignment(cluster.Assignment{Generation: -1, Revoked: []cluster.Item{taskItem("a"), taskItem("b")}})
	for _, tk := range tasks {
		select {
		case <-tk.done:
		default:
			t.Fatalf("task %s still runs after fencing", tk.name)
		}
	}
	if got := running(d); len(got) != 0 {
		t.Errorf("running after fencing: %v", got)
	}
	if err := d.leaderOnly(context.Background(), "x"); err == nil {
		t.Error("a fenced worker still acts as leader")
	}
}

func TestLeaderOnlyRefusals(t *testing.T) {
	d, _ := testDistributed(t, twoConnectors())
	ctx := context.Background()
	d.onAssignment(cluster.Assignment{Generation: 1, LeaderURL: "http://leader:8083/"})
	err := d.leaderOnly(ctx, "set connector configs")
	if re, ok := err.(*RequestError); !ok || re.Kind != NotLeader || re.Forward != "http://leader:8083/" {
		t.Errorf("follower: %v", err)
	}
	d.onAssignment(cluster.Assignment{Generation: 2, Leader: true, LeaderURL: "http://me/", ConfigOffset: 10})
	if err := d.leaderOnly(ctx, "x"); err != nil {
		t.Errorf("leader: %v", err)
	}

	// A config change read since the assignment needs a rebalance first: a request waits for an assignment
	// that reached it, as Connect's herder serves requests after its rebalance, and gets 409 if its wait ends
	// before.
	d.markRebalanceNeeded(12)
	expired, cancel := context.WithCancel(ctx)
	cancel()
	if re, ok := d.leaderOnly(expired, "x").(*RequestError); !ok || re.Kind != Conflict || re.Message != StaleConfigMessage {
		t.Errorf("pending rebalance, wait over: %v", re)
	}
	answered := make(chan error, 1)
	go func() { answered <- d.leaderOnly(ctx, "x") }()
	d.onAssignment(cluster.Assignment{Generation: 3, Leader: true, ConfigOffset: 11})
	select {
	case err := <-answered:
		t.Fatalf("an assignment from older configs answered the waiting request: %v", err)
	default:
	}
	d.onAssignment(cluster.Assignment{Generation: 4, Leader: true, ConfigOffset: 12})
	if err := <-answered; err != nil {
		t.Errorf("after the rebalance: %v", err)
	}
}

func TestLeaderStoresOnlyImpliedTaskConfigs(t *testing.T) {
	props := map[string]string{"name": "pg", "connector.class": "io.debezium.connector.postgresql.PostgresConnector"}
	snap := cluster.ConfigSnapshot{Connectors: map[string]map[string]string{"pg": props}, TargetStates: map[string]cluster.TargetState{}}
	implied := testConnectors.impliedTaskConfigs(props, TargetStarted)
	if err := testConnectors.checkTaskConfigs(snap, "pg", implied); err != nil {
		t.Errorf("the implied task configs: %v", err)
	}
	forged := []map[string]string{maps.Clone(implied[0])}
	forged[0]["database.hostname"] = "elsewhere"
	if re, ok := testConnectors.checkTaskConfigs(snap, "pg", forged).(*RequestError); !ok || re.Kind != BadRequest {
		t.Errorf("forged task configs: %v", re)
	}
	if re, ok := testConnectors.checkTaskConfigs(snap, "nope", implied).(*RequestError); !ok || re.Kind != NotFound {
		t.Errorf("unknown connector: %v", re)
	}
	snap.TargetStates["pg"] = cluster.Stopped
	if err := testConnectors.checkTaskConfigs(snap, "pg", []map[string]string{}); err != nil {
		t.Errorf("no tasks for a stopped connector: %v", err)
	}
}

// A round fences the generation the last task count record counted only when fencing is pending and not
// both generations hold one task (doFenceZombieSourceTasks); it writes a record whenever fencing is pending.
func TestFencingPlanIsConnectsRound(t *testing.T) {
	one := []map[string]string{{}}
	cases := []struct {
		name            string
		tasks           []map[string]string
		record          *int
		pending, force  bool
		fence           int
		wantWriteRecord bool
	}{
		{"first round: nothing to fence, record written", one, nil, true, false, 0, true},
		{"one task after one task: the new producer fences the old", one, ptr(1), true, false, 0, true},
		{"one task after a stop (record 0)", one, ptr(0), true, false, 0, true},
		{"one task after three", one, ptr(3), true, false, 3, true},
		{"stopped after one task", nil, ptr(1), true, false, 1, true},
		{"fenced already", one, ptr(3), false, false, 0, false},
		{"forced: every producer, no record when not pending", one, ptr(1), false, true, 1, false},
		{"forced on a larger earlier generation", one, ptr(3), true, true, 3, true},
	}
	for _, c := range cases {
		snap := cluster.ConfigSnapshot{Tasks: map[string][]map[string]string{"c": c.tasks},
			TaskCountRecords: map[string]int{}, PendingFencing: map[string]bool{"c": c.pending}}
		if c.record != nil {
			snap.TaskCountRecords["c"] = *c.record
		}
		fence, write := fencingPlan(snap, "c", c.force)
		if fence != c.fence || write != c.wantWriteRecord {
			t.Errorf("%s: fence %d, write %v; want %d, %v", c.name, fence, write, c.fence, c.wantWriteRecord)
		}
	}
}

func ptr(n int) *int { return &n }

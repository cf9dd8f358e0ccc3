package cluster

import (
	"log/slog"
	"reflect"
	"testing"
)

func TestRecordValuesAreConnectsJSON(t *testing.T) {
	cases := []struct {
		name string
		got  []byte
		want string
	}{
		{"properties", propertiesValue(map[string]string{"name": "inv", "database.password": "${file:/s.properties:pw}", "q": "a\"<b>"}),
			`{"properties":{"database.password":"${file:/s.properties:pw}","name":"inv","q":"a\"<b>"}}`},
		{"started", targetStateValue(Started), `{"state":"STARTED","state.v2":"STARTED"}`},
		{"stopped reads as paused to old workers", targetStateValue(Stopped), `{"state":"PAUSED","state.v2":"STOPPED"}`},
		{"status", statusValue(Status{State: Running, WorkerID: "10.0.0.5:8083", Generation: 7}),
			`{"state":"RUNNING","trace":null,"worker_id":"10.0.0.5:8083","generation":7,"version":null}`},
		{"failed status", statusValue(Status{State: Failed, Trace: "boom\n\tat x", WorkerID: "w:1", Generation: 1, Version: "3.6.1.Final"}),
			`{"state":"FAILED","trace":"boom\n\tat x","worker_id":"w:1","generation":1,"version":"3.6.1.Final"}`},
	}
	for _, c := range cases {
		if string(c.got) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, c.got, c.want)
		}
	}
}

// feed applies records to a config store as if read from the topic, at consecutive offsets.
func feed(s *ConfigStore, records ...[2]string) {
	for _, kv := range records {
		r := Record{Key: []byte(kv[0]), Offset: max(s.offset, 0)}
		if kv[1] != "<nil>" {
			r.Value = []byte(kv[1])
		}
		s.apply(r)
	}
}

func TestTaskConfigsCountOnlyOnceCommitted(t *testing.T) {
	s := newConfigStore(slog.Default(), nil)
	feed(s,
		[2]string{"connector-my-conn", `{"properties":{"connector.class":"X","tasks.max":"2"}}`},
		[2]string{"task-my-conn-0", `{"properties":{"task.class":"T","n":"0"}}`},
		[2]string{"task-my-conn-1", `{"properties":{"task.class":"T","n":"1"}}`},
	)
	snap := s.Snapshot()
	if len(snap.Tasks["my-conn"]) != 0 {
		t.Fatalf("tasks visible before their commit: %v", snap.Tasks)
	}
	if snap.TargetStates["my-conn"] != Started {
		t.Fatalf("a connector without a target-state record is STARTED, got %q", snap.TargetStates["my-conn"])
	}
	feed(s, [2]string{"commit-my-conn", `{"tasks":2}`})
	snap = s.Snapshot()
	want := []map[string]string{{"task.class": "T", "n": "0"}, {"task.class": "T", "n": "1"}}
	if !reflect.DeepEqual(snap.Tasks["my-conn"], want) {
		t.Fatalf("committed tasks = %v, want %v", snap.Tasks["my-conn"], want)
	}
	if snap.Offset != 4 {
		t.Fatalf("offset = %d, want 4 (last record + 1)", snap.Offset)
	}

	// A commit whose task records are missing marks the connector inconsistent and hides its tasks.
	feed(s, [2]string{"task-my-conn-0", `{"properties":{"n":"new0"}}`}, [2]string{"commit-my-conn", `{"tasks":3}`})
	snap = s.Snapshot()
	if _, ok := snap.Tasks["my-conn"]; ok || !reflect.DeepEqual(snap.Inconsistent, []string{"my-conn"}) {
		t.Fatalf("incomplete commit: tasks %v, inconsistent %v", snap.Tasks, snap.Inconsistent)
	}
	// Stopping writes an empty commit, which is complete.
	feed(s, [2]string{"commit-my-conn", `{"tasks":0}`}, [2]string{"target-state-my-conn", `{"state":"PAUSED","state.v2":"STOPPED"}`})
	snap = s.Snapshot()
	if len(snap.Tasks["my-conn"]) != 0 || len(snap.Inconsistent) != 0 || snap.TargetStates["my-conn"] != Stopped {
		t.Fatalf("after stop: tasks %v, inconsistent %v, state %q", snap.Tasks, snap.Inconsistent, snap.TargetStates["my-conn"])
	}
}

func TestTargetStateFallsBackToV1AndTombstonesRestoreStarted(t *testing.T) {
	s := newConfigStore(slog.Default(), nil)
	feed(s,
		[2]string{"target-state-a", `{"state":"PAUSED"}`}, // written by a pre-3.5 worker
		[2]string{"connector-a", `{"properties":{}}`},
	)
	if got := s.Snapshot().TargetStates["a"]; got != Paused {
		t.Fatalf("state = %q, want PAUSED", got)
	}
	feed(s, [2]string{"target-state-a", "<nil>"})
	if got := s.Snapshot().TargetStates["a"]; got != Started {
		t.Fatalf("after a target-state tombstone with the config present: %q, want STARTED", got)
	}
}

func TestDeletionAndLeftOverCommits(t *testing.T) {
	s := newConfigStore(slog.Default(), nil)
	feed(s,
		[2]string{"connector-a", `{"properties":{"k":"v"}}`},
		[2]string{"task-a-0", `{"properties":{}}`},
		[2]string{"commit-a", `{"tasks":1}`},
		[2]string{"session-key", `{"key":"AAAA","algorithm":"HmacSHA256","creation-timestamp":1}`},
		[2]string{"connector-a", "<nil>"},
		[2]string{"target-state-a", "<nil>"},
		// Compaction can leave a commit whose config is gone: it must not resurrect the connector.
		[2]string{"commit-b", `{"tasks":1}`},
		[2]string{"bogus", `{}`},
	)
	snap := s.Snapshot()
	if len(snap.Connectors) != 0 || len(snap.Tasks) != 0 || len(snap.TargetStates) != 0 {
		t.Fatalf("after deletion: %+v", snap)
	}
	if snap.Offset != 8 {
		t.Fatalf("offset = %d, want 8: every record, also one skipped, moves it", snap.Offset)
	}
}

func TestStatusReadKeepsRunningOverAnOlderUnassigned(t *testing.T) {
	s := &StatusStore{logger: slog.Default(), connectors: map[string]Status{}, tasks: map[string]map[int]Status{}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.applyRecord("status-task-my-conn-0", statusValue(Status{State: Running, WorkerID: "b:1", Generation: 5})))
	must(s.applyRecord("status-task-my-conn-0", statusValue(Status{State: Unassigned, WorkerID: "a:1", Generation: 4})))
	if got := s.Tasks("my-conn")[0]; got.State != Running || got.WorkerID != "b:1" {
		t.Fatalf("task status = %+v, want RUNNING on b:1", got)
	}
	must(s.applyRecord("status-connector-my-conn", []byte(`{"state":"FAILED","trace":"x","worker_id":"a:1","generation":3}`)))
	if got, _ := s.Connector("my-conn"); got != (Status{State: Failed, Trace: "x", WorkerID: "a:1", Generation: 3}) {
		t.Fatalf("connector status = %+v", got)
	}
	if err := s.applyRecord("status-connector-x", []byte(`{"state":"RUNNING","worker_id":"a:1","generation":1.5}`)); err == nil {
		t.Fatal("a non-integral generation must be refused, as Java refuses it")
	}
}

// The task count record is KafkaConfigBackingStore's TASK_COUNT_RECORD_V0 under "tasks-fencing-<name>",
// and a connector's fencing is pending from each commit record to the next task count record, as
// processTasksCommitRecord and processTaskCountRecord have it.
func TestTaskCountRecordMarksFencingDone(t *testing.T) {
	if got, want := string(taskCountValue(1)), `{"task-count":1}`; got != want {
		t.Fatalf("task count value = %s, want %s", got, want)
	}
	s := newConfigStore(slog.Default(), nil)
	pending := func() bool { return s.Snapshot().PendingFencing["my-conn"] }
	feed(s,
		[2]string{"connector-my-conn", `{"properties":{"connector.class":"X"}}`},
		[2]string{"task-my-conn-0", `{"properties":{"task.class":"T"}}`},
		[2]string{"commit-my-conn", `{"tasks":1}`},
	)
	snap := s.Snapshot()
	if !pending() || snap.TaskGenerations["my-conn"] != 1 {
		t.Fatalf("after the first commit: pending %v, generation %d; want pending, generation 1", snap.PendingFencing, snap.TaskGenerations["my-conn"])
	}
	if _, ok := snap.TaskCountRecords["my-conn"]; ok {
		t.Fatalf("a task count record before any was written: %v", snap.TaskCountRecords)
	}
	// As a Java leader writes it (its JsonConverter writes an int32 as a JSON number).
	feed(s, [2]string{"tasks-fencing-my-conn", `{"task-count":1}`})
	if snap := s.Snapshot(); pending() || snap.TaskCountRecords["my-conn"] != 1 {
		t.Fatalf("after the task count record: pending %v, records %v", snap.PendingFencing, snap.TaskCountRecords)
	}
	// Records in another shape are skipped: the fencing stays pending.
	feed(s, [2]string{"commit-my-conn", `{"tasks":0}`})
	for _, bad := range []string{"<nil>", `{"tasks":1}`, `{"task-count":"1"}`, `{"task-count":1.5}`, `[1]`, `{`} {
		feed(s, [2]string{"tasks-fencing-my-conn", bad})
		if !pending() || s.Snapshot().TaskCountRecords["my-conn"] != 1 {
			t.Fatalf("record %s was taken as a task count record", bad)
		}
	}
	feed(s, [2]string{"tasks-fencing-my-conn", `{"task-count":0}`})
	if pending() || s.Snapshot().TaskCountRecords["my-conn"] != 0 {
		t.Fatalf("task count 0 not read: %v", s.Snapshot().TaskCountRecords)
	}
	// An incomplete commit needs fencing too; a commit without a connector config does not.
	feed(s, [2]string{"commit-my-conn", `{"tasks":2}`})
	if !pending() {
		t.Fatal("an incomplete commit did not make the fencing pending")
	}
	feed(s, [2]string{"commit-gone", `{"tasks":1}`})
	if s.Snapshot().PendingFencing["gone"] {
		t.Fatal("a commit of a deleted connector made its fencing pending")
	}
	// The record outlives the connector: a connector created again under the name is fenced against it.
	feed(s, [2]string{"tasks-fencing-my-conn", `{"task-count":1}`}, [2]string{"connector-my-conn", "<nil>"})
	if got, ok := s.Snapshot().TaskCountRecords["my-conn"]; !ok || got != 1 {
		t.Fatalf("task count record after deletion = %d, %v; want 1", got, ok)
	}
}

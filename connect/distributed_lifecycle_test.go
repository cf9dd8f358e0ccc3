package connect

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/connect/cluster"
	"github.com/cdcd/cdcd/connect/config"
)

// TestDistributedTaskFailingAtStartReportsWithoutDeadlock: a task whose config placeholder does not
// resolve fails as it starts; its FAILED state reaches the status queue (whose writer takes the worker's
// lock) without the worker's lock held, and GET /health's FailedTasks lists it.
func TestDistributedTaskFailingAtStartReportsWithoutDeadlock(t *testing.T) {
	cfg := parseTestWorker(t, map[string]string{
		"bootstrap.servers": "127.0.0.1:1", "group.id": "g",
		"config.storage.topic": "c", "offset.storage.topic": "o", "status.storage.topic": "s",
		"key.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
		"config.providers": "file", "config.providers.file.class": config.FileProviderClass,
	}, config.Distributed)
	d, err := NewDistributed(cfg, testParts(cfg.BootstrapServers), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.w.Shutdown)
	missing := filepath.Join(t.TempDir(), "absent.properties")
	snap := cluster.ConfigSnapshot{
		Connectors:   map[string]map[string]string{"a": {"name": "a"}},
		TargetStates: map[string]cluster.TargetState{},
		Tasks:        map[string][]map[string]string{"a": {{"name": "a", "connector.class": "test.Unknown", "database.password": "${file:" + missing + ":pw}"}}},
	}
	d.configs = &fixedConfig{snap}
	assigned := make(chan struct{})
	go func() {
		defer close(assigned)
		d.onAssignment(cluster.Assignment{Generation: 1, Assigned: []cluster.Item{taskItem("a")}, Owned: []cluster.Item{taskItem("a")}})
	}()
	select {
	case <-assigned:
	case <-time.After(10 * time.Second):
		t.Fatal("starting a task whose placeholder does not resolve deadlocked the worker")
	}
	if failed := d.FailedTasks(); len(failed) != 1 || failed[0].Connector != "a" || failed[0].State != Failed || !strings.Contains(failed[0].Trace, "absent.properties") {
		t.Fatalf("FailedTasks %+v", failed)
	}
	if len(d.statusQ) == 0 {
		t.Fatal("the FAILED state was not queued for the status topic")
	}
}

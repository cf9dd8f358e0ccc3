package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// A connector whose task failed sends nothing more: the wait ends with the task's trace instead of
// running into its timeout.
func TestWaitForRecordsStopsWhenTheTaskFailed(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "events"))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	kafka, err := newBroker(cluster.ListenAddrs())
	if err != nil {
		t.Fatal(err)
	}
	defer kafka.close()
	rest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/connectors/bench-x/status" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"connector":{"state":"RUNNING"},"tasks":[{"state":"FAILED","trace":"ParsingException: DDL statement couldn't be parsed"}]}`))
	}))
	defer rest.Close()
	sys := &system{name: "debezium", rest: rest.URL, http: rest.Client()}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = kafka.waitForRecords(ctx, "events", 1, time.Hour, sys.tasksAlive("bench-x"))
	if err == nil || !strings.Contains(err.Error(), "DDL statement couldn't be parsed") {
		t.Fatalf("got %v, want the failed task's trace", err)
	}
	// A topic that does not exist yet holds no records; without a check the wait runs to its timeout.
	err = kafka.waitForRecords(ctx, "not-yet", 1, 100*time.Millisecond, nil)
	if err == nil || !strings.Contains(err.Error(), "has 0 records") {
		t.Fatalf("unknown topic: got %v, want a timeout with 0 records", err)
	}
}

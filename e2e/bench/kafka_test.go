package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
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
	err = kafka.waitForRecords(ctx, "events", 1, time.Hour, sys.tasksAlive("bench-x"), false)
	if err == nil || !strings.Contains(err.Error(), "DDL statement couldn't be parsed") {
		t.Fatalf("got %v, want the failed task's trace", err)
	}
	// A topic that does not exist yet holds no records; without a check the wait runs to its timeout.
	err = kafka.waitForRecords(ctx, "not-yet", 1, 100*time.Millisecond, nil, false)
	if err == nil || !strings.Contains(err.Error(), "has 0 records") {
		t.Fatalf("unknown topic: got %v, want a timeout with 0 records", err)
	}
}

// An exactly-once topic's offsets count its transaction markers too: the wait counts committed records,
// and reading ends at an end offset that lies just past a marker.
func TestWaitForRecordsCountsTransactionalRecords(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "events"))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	producer, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.TransactionalID("bench-test"), kgo.DefaultProduceTopic("events"))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	for range 3 { // 3 transactions of 2 records: 6 records and 3 markers
		if err := producer.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := producer.ProduceSync(ctx, &kgo.Record{Value: []byte("a")}, &kgo.Record{Value: []byte("b")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := producer.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatal(err)
		}
	}
	kafka, err := newBroker(cluster.ListenAddrs())
	if err != nil {
		t.Fatal(err)
	}
	defer kafka.close()
	if end, err := kafka.endOffset(ctx, "events"); err != nil || end != 9 {
		t.Fatalf("end offset %d (%v), want 9: 6 records and 3 markers", end, err)
	}
	if err := kafka.waitForRecords(ctx, "events", 6, time.Minute, nil, true); err != nil {
		t.Fatalf("6 committed records: %v", err)
	}
	err = kafka.waitForRecords(ctx, "events", 7, 300*time.Millisecond, nil, true)
	if err == nil || !strings.Contains(err.Error(), "has 6 records") {
		t.Fatalf("want 7: got %v, want a timeout with 6 records (the markers are not records)", err)
	}
	n, err := kafka.countRecords(ctx, "events", 1, 9)
	if err != nil || n != 5 {
		t.Fatalf("records in [1, 9): %d (%v), want 5", n, err)
	}
}

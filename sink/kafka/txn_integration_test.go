package kafka

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/cdcd/cdcd/sink"
)

// A transactional Writer against the real broker: what it commits is what a read_committed consumer
// sees; what it sent without committing is aborted when a new Writer with its transactional.id starts
// (the restart of a killed task), and the old one is fenced: its Commit fails, naming the fence. So is
// the new one after Opener.Fence.
func TestRealKafkaTransactionsCommitAbortAndFence(t *testing.T) {
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	topic, offsetsTopic := prefix+".events", prefix+".offsets"
	cfg := Config{Brokers: brokers, ClientID: "connector-producer-txn-0", TransactionalID: prefix + "-txn-0",
		TopicCreation: topicCreationFor(t, 3, nil)}
	records := func(label string, n int) []sink.Record {
		out := make([]sink.Record, n)
		for i := range out {
			out[i] = sink.Record{Topic: topic, Key: fmt.Appendf(nil, "k%d", i%7), Value: fmt.Appendf(nil, "%s-%d", label, i)}
		}
		return out
	}
	offsetRecord := func(label string) []sink.Record {
		return []sink.Record{{Topic: offsetsTopic, Key: []byte(`["txn",{}]`), Value: fmt.Appendf(nil, `{"at":%q}`, label)}}
	}
	sendAll := func(w *Writer, recs []sink.Record) {
		t.Helper()
		res := newResult()
		send(t, w, recs, res.done(t, 0))
		for _, err := range res.wait(t) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}

	first := newTestWriter(t, cfg)
	sendAll(first, records("committed", 100))
	if err := first.Commit(t.Context(), offsetRecord("committed")); err != nil {
		t.Fatal(err)
	}
	// Sent and acknowledged, never committed: the task is killed here.
	sendAll(first, records("aborted", 50))

	second := newTestWriter(t, cfg)
	sendAll(second, records("after-restart", 10))
	if err := second.Commit(t.Context(), offsetRecord("after-restart")); err != nil {
		t.Fatal(err)
	}
	if err := first.Commit(t.Context(), offsetRecord("zombie")); err == nil || !strings.Contains(err.Error(), "fenced") {
		t.Fatalf("the zombie's commit: got %v, want it refused as fenced", err)
	}

	// Connect's zombie fencing (PUT /connectors/{name}/fence): the live producer of the id is fenced too.
	if err := (Opener{}).Fence(t.Context(), sink.Config{Servers: brokers, ClientID: "fence", TransactionalID: cfg.TransactionalID}); err != nil {
		t.Fatal(err)
	}
	if err := second.Commit(t.Context(), offsetRecord("fenced")); err == nil || !strings.Contains(err.Error(), "fenced") {
		t.Fatalf("a commit after the fence: got %v, want it refused as fenced", err)
	}

	var want []string
	for _, r := range append(records("committed", 100), records("after-restart", 10)...) {
		want = append(want, string(r.Value))
	}
	got := readCommitted(t, brokers, topic, len(want))
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("read_committed saw %d records %v…, want the %d committed ones", len(got), got[:min(5, len(got))], len(want))
	}
	if offs := readCommitted(t, brokers, offsetsTopic, 2); !slices.Equal(offs, []string{`{"at":"committed"}`, `{"at":"after-restart"}`}) {
		t.Fatalf("offset records %v, want the two committed ones in order", offs)
	}
}

// readCommitted consumes topic from the start with isolation.level=read_committed until n records
// arrived, and returns their values.
func readCommitted(t *testing.T, brokers []string, topic string, n int) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	var out []string
	for len(out) < n {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read %d of %d records from %s: %v", len(out), n, topic, err)
		}
		for _, r := range fetches.Records() {
			out = append(out, string(r.Value))
		}
	}
	return out
}

package kafka

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/cdcd/cdcd/sink"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// testTimeout bounds waits that only end early when something is broken.
const testTimeout = 30 * time.Second

// newFakeCluster starts an in-process single-broker cluster (no replication, so acks=all proves
// nothing about durability here; the integration tests use the real broker for that).
func newFakeCluster(t *testing.T, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// newTestWriter builds a Writer whose logs go to the test log, and closes it at cleanup.
func newTestWriter(t *testing.T, cfg Config) *Writer {
	t.Helper()
	w, err := NewWriter(cfg, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		_ = w.Close(ctx)
	})
	return w
}

type testLogWriter struct{ t *testing.T }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// result collects the done callbacks of Sends.
type result struct {
	mu   sync.Mutex
	errs map[int]error
	wg   sync.WaitGroup
}

func newResult() *result { return &result{errs: map[int]error{}} }

// done returns the callback for Send number i; it fails the test if called twice.
func (r *result) done(t *testing.T, i int) func(error) {
	r.wg.Add(1)
	var calls sync.Once
	return func(err error) {
		called := false
		calls.Do(func() { called = true })
		if !called {
			t.Errorf("done of send %d called twice", i)
			return
		}
		r.mu.Lock()
		r.errs[i] = err
		r.mu.Unlock()
		r.wg.Done()
	}
}

func (r *result) wait(t *testing.T) map[int]error {
	t.Helper()
	finished := make(chan struct{})
	go func() { r.wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(testTimeout):
		t.Fatal("done callbacks were not all called")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.errs
}

// send calls w.Send and fails the test on an error.
func send(t *testing.T, w *Writer, recs []sink.Record, done func(error)) {
	t.Helper()
	if err := w.Send(t.Context(), recs, done); err != nil {
		t.Fatal(err)
	}
}

// readTopic consumes topic from the start until n records arrived.
func readTopic(t *testing.T, brokers []string, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read %d of %d records from %s: %v", len(out), n, topic, err)
		}
		fetches.EachError(func(topic string, p int32, err error) { t.Logf("fetch %s/%d: %v", topic, p, err) })
		out = append(out, fetches.Records()...)
	}
	return out
}

// keyedRecords makes n records for topic with the given key and values "<prefix>-<i>".
func keyedRecords(topic, key, prefix string, n int) []sink.Record {
	recs := make([]sink.Record, n)
	for i := range recs {
		recs[i] = sink.Record{Topic: topic, Key: []byte(key), Value: fmt.Appendf(nil, "%s-%d", prefix, i)}
	}
	return recs
}

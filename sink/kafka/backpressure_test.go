package kafka

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cdcd/cdcd/sink"
	"github.com/twmb/franz-go/pkg/kfake"
)

// waitFor polls cond; it fails the test only if cond never holds (no timing is asserted).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestSendBlocksAtTheInFlightBoundUntilAcknowledged(t *testing.T) {
	const topic = "bp"
	c := newFakeCluster(t, kfake.SeedTopics(1, topic))
	w := newTestWriter(t, Config{Brokers: c.ListenAddrs(), MaxInFlightBytes: 100})
	record := func() []sink.Record { return []sink.Record{{Topic: topic, Key: []byte("k"), Value: make([]byte, 59)}} } // 60 bytes

	release := make(chan struct{})
	held := holdNextProduce(c, 0, release)
	res := newResult()
	send(t, w, record(), res.done(t, 0))
	<-held
	if got := w.InFlightBytes(); got != 60 {
		t.Fatalf("in-flight bytes = %d, want 60", got)
	}

	// A Send that does not fit gives up when its context ends, holding nothing.
	ctx, cancel := context.WithCancel(t.Context())
	gaveUp := make(chan error)
	go func() { gaveUp <- w.Send(ctx, record(), func(error) { t.Error("done of an abandoned send called") }) }()
	waitFor(t, "the send to block", func() bool { return w.budget.waiting() == 1 })
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled send: err = %v, want context.Canceled", err)
	}

	// One that waits is let through when the first record is acknowledged.
	sent := make(chan error)
	go func() { sent <- w.Send(t.Context(), record(), res.done(t, 1)) }()
	waitFor(t, "the send to block", func() bool { return w.budget.waiting() == 1 })
	select {
	case err := <-sent:
		t.Fatalf("send returned (%v) while the bound was reached", err)
	default:
	}
	close(release)
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	for i, err := range res.wait(t) {
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	waitFor(t, "the budget to drain", func() bool { return w.InFlightBytes() == 0 })
}

func TestSendLargerThanTheBoundGoesAlone(t *testing.T) {
	c := newFakeCluster(t, kfake.SeedTopics(1, "big"))
	w := newTestWriter(t, Config{Brokers: c.ListenAddrs(), MaxInFlightBytes: 10})
	res := newResult()
	send(t, w, keyedRecords("big", "k", "a-long-value", 3), res.done(t, 0))
	if err := res.wait(t)[0]; err != nil {
		t.Fatal(err)
	}
}

func TestCloseFlushesAndRefusesLaterSends(t *testing.T) {
	c := newFakeCluster(t, kfake.SeedTopics(1, "close"))
	w, err := NewWriter(Config{Brokers: c.ListenAddrs(), Producer: map[string]string{"linger.ms": "60000"}}, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	res := newResult()
	send(t, w, keyedRecords("close", "k", "v", 3), res.done(t, 0))
	if err := w.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Close returned, so done was called although the linger had not expired.
	res.mu.Lock()
	err, called := res.errs[0]
	res.mu.Unlock()
	if !called || err != nil {
		t.Fatalf("after Close: done called = %v, err = %v", called, err)
	}
	if err := w.Send(t.Context(), keyedRecords("close", "k", "w", 1), func(error) {}); !errors.Is(err, ErrClosed) {
		t.Fatalf("send after close: err = %v, want ErrClosed", err)
	}
}

func TestCloseGivesUpWhenItsContextEnds(t *testing.T) {
	c := newFakeCluster(t, kfake.SeedTopics(1, "stuck"))
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // runs before the cluster closes
	w, err := NewWriter(Config{Brokers: c.ListenAddrs()}, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	held := holdNextProduce(c, 0, release)
	res := newResult()
	send(t, w, keyedRecords("stuck", "k", "v", 3), res.done(t, 0))
	<-held

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := w.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("close: err = %v, want context.Canceled", err)
	}
	if err := res.wait(t)[0]; !errors.Is(err, ErrClosed) {
		t.Fatalf("done: err = %v, want ErrClosed", err)
	}
}

package pipeline

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/cdcd/cdcd/sink"
	"github.com/cdcd/cdcd/source"
)

// silentSender is a broker that does not answer: Send takes the records and never acknowledges them;
// Flush waits for its context.
type silentSender struct{}

func (silentSender) Send(context.Context, []sink.Record, func(error)) error { return nil }
func (silentSender) Flush(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}
func (silentSender) Close(context.Context) error { return nil }

// TestStopWithUnacknowledgedBatchesIsBounded: when Kafka acknowledges nothing, a stop waits
// offset.flush.timeout.ms for the acks, records nothing, and logs what it could not record.
func TestStopWithUnacknowledgedBatchesIsBounded(t *testing.T) {
	var logs testenv.LogBuffer
	offsets := make(offsetChan, 16)
	p := &Pipeline{
		Reader:        batchReader{batches: []source.Batch{{Events: []source.Event{{Topic: "t"}}, Offset: off(1), Position: pos(1)}}},
		Encoder:       topicEncoder{},
		Sender:        silentSender{},
		Offsets:       offsets,
		FlushInterval: 10 * time.Millisecond,
		FlushTimeout:  200 * time.Millisecond,
		Log:           slog.New(slog.NewTextHandler(&logs, nil)),
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	time.Sleep(50 * time.Millisecond)
	cancel()
	start := time.Now()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a stop with unacknowledged batches did not return: the final flush is not bounded")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the stop took %v with offset.flush.timeout.ms=200", d)
	}
	if len(offsets) != 0 {
		t.Errorf("an offset was recorded for a batch Kafka never acknowledged: %v", <-offsets)
	}
	if out := logs.String(); !strings.Contains(out, "unacknowledged_batches=1") {
		t.Errorf("the stop did not log what it could not record:\n%s", out)
	}
}

// slowOffsets is an offset store whose first write does not return until its context ends.
type slowOffsets struct {
	offsetChan
	mu    sync.Mutex
	calls int
}

func (s *slowOffsets) WriteOffset(ctx context.Context, o []source.OffsetField) error {
	s.mu.Lock()
	s.calls++
	first := s.calls == 1
	s.mu.Unlock()
	if first {
		<-ctx.Done()
		return ctx.Err()
	}
	return s.offsetChan.WriteOffset(ctx, o)
}

// TestOffsetFlushTimeoutRetriesAtTheNextInterval: an offset write that does not complete within
// offset.flush.timeout.ms is given up, and the offset is written at the next interval; the task goes on.
func TestOffsetFlushTimeoutRetriesAtTheNextInterval(t *testing.T) {
	store := &slowOffsets{offsetChan: make(offsetChan, 16)}
	p := &Pipeline{
		Reader:        batchReader{batches: []source.Batch{{Events: []source.Event{{Topic: "t"}}, Offset: off(1), Position: pos(1)}}},
		Encoder:       topicEncoder{},
		Sender:        &ackingSender{},
		Offsets:       store,
		FlushInterval: 10 * time.Millisecond,
		FlushTimeout:  100 * time.Millisecond,
		Log:           slog.New(slog.DiscardHandler),
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	select {
	case o := <-store.offsetChan:
		if o[0].Value != 1 {
			t.Fatalf("offset %v", o)
		}
	case err := <-done:
		t.Fatalf("Run ended on a timed-out offset flush: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("the offset was never written after the first flush timed out")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
}

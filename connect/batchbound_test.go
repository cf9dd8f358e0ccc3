package connect

import (
	"context"
	"log/slog"
	"testing"

	"github.com/cdcd/cdcd/source"
)

type onePosition string

func (p onePosition) String() string { return string(p) }

// oneBatchReader sends one batch, then waits for the end.
type oneBatchReader struct{ batch source.Batch }

func (r oneBatchReader) Run(ctx context.Context, out chan<- source.Batch) error {
	select {
	case out <- r.batch:
	case <-ctx.Done():
	}
	<-ctx.Done()
	return ctx.Err()
}

func (oneBatchReader) Release(source.Position) {}

// max.batch.size bounds the batches the producer gets: a larger one is passed on in parts, and only the
// last carries its offset and position, so the offset is recorded once all of it is delivered.
func TestGatedReaderSplitsBatchesAtMaxBatchSize(t *testing.T) {
	events := make([]source.Event, 5)
	for i := range events {
		events[i].Topic = string(rune('a' + i))
	}
	offset := []source.OffsetField{{Name: "lsn", Value: 42}}
	inner := oneBatchReader{source.Batch{Events: events, Offset: offset, Position: onePosition("42")}}
	maxBatch := maxBatchSize(map[string]string{"max.batch.size": " 2 "})
	out := make(chan source.Batch)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- gatedReader{Reader: inner, gate: newGate(false), read: &lastPosition{}, maxBatch: maxBatch}.Run(ctx, out)
	}()
	var topics string
	for i, want := range []int{2, 2, 1} {
		b := <-out
		if len(b.Events) != want {
			t.Fatalf("batch %d holds %d events, want %d", i, len(b.Events), want)
		}
		last := i == 2
		if (b.Offset != nil) != last || (b.Position != nil) != last {
			t.Fatalf("batch %d: offset %v position %v; only the last part carries them", i, b.Offset, b.Position)
		}
		for _, e := range b.Events {
			topics += e.Topic
		}
	}
	if topics != "abcde" {
		t.Errorf("events in order %q, want abcde", topics)
	}
	cancel()
	<-done
	if got := maxBatchSize(map[string]string{}); got != 2048 {
		t.Errorf("default max.batch.size %d, want Debezium's 2048", got)
	}
}

// Under exactly-once delivery, a poll-bounded Kafka transaction holds at most max.batch.size records, as
// a Connect transaction holds one poll's.
func TestPollTransactionsHoldMaxBatchSize(t *testing.T) {
	w := newTestWorker(t)
	w.cfg.ExactlyOnceSource = true
	for value, want := range map[string]int{"": 2048, "500": 500} {
		cfg := map[string]string{}
		if value != "" {
			cfg["max.batch.size"] = value
		}
		eos, err := w.exactlyOnce("pg", cfg, slog.New(slog.DiscardHandler))
		if err != nil || eos == nil || eos.maxRecords != want {
			t.Errorf("max.batch.size=%q: %+v, %v; want transactions of at most %d records", value, eos, err, want)
		}
	}
}

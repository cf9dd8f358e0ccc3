package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cdcd/cdcd/sink"
	"github.com/cdcd/cdcd/source"
)

// txnLog is what a transactional run did, in order: the records of each committed transaction and
// each position released.
type txnLog struct {
	mu     sync.Mutex
	open   []string
	events []string
}

func (l *txnLog) add(e string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *txnLog) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}

// txnSink acknowledges every Send at once and logs each Commit with the records it made visible.
type txnSink struct{ log *txnLog }

func (s txnSink) Send(_ context.Context, recs []sink.Record, done func(error)) error {
	s.log.mu.Lock()
	for _, r := range recs {
		s.log.open = append(s.log.open, r.Topic)
	}
	s.log.mu.Unlock()
	done(nil)
	return nil
}

func (s txnSink) Commit(_ context.Context, recs []sink.Record) error {
	s.log.mu.Lock()
	for _, r := range recs {
		s.log.open = append(s.log.open, r.Topic+"="+string(r.Value))
	}
	committed := "commit " + strings.Join(s.log.open, " ")
	s.log.open = nil
	s.log.mu.Unlock()
	s.log.add(committed)
	return nil
}

func (txnSink) Flush(context.Context) error { return nil }
func (txnSink) Close(context.Context) error { return nil }

// stopAndCheckLog waits until log holds len(want) entries, stops the run and checks the log is want.
func stopAndCheckLog(t *testing.T, log *txnLog, cancel context.CancelFunc, done <-chan error, want []string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); len(log.snapshot()) < len(want); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: %v", log.snapshot())
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := log.snapshot(); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// offsetRecord is the offsets-topic record of an offset: its first field's value, on topic "offsets".
func offsetRecord(o []source.OffsetField) (sink.Record, error) {
	return sink.Record{Topic: "offsets", Value: fmt.Appendf(nil, "%v", o[0].Value)}, nil
}

// releasingReader sends its batches, logs each Release, and waits for the end.
type releasingReader struct {
	batchReader
	log *txnLog
}

func (r releasingReader) Release(p source.Position) { r.log.add(fmt.Sprintf("release %d", p)) }

// With transaction.boundary=connector, every batch with an offset ends a transaction that holds its
// offset record; the parts of a split source transaction (no offset) never end one; each position is
// released only after the transaction holding its offset committed.
func TestTransactionsCommitOffsetsWithTheirRecordsAndReleaseAfter(t *testing.T) {
	log := &txnLog{}
	p := &Pipeline{
		Reader: releasingReader{log: log, batchReader: batchReader{batches: []source.Batch{
			{Events: []source.Event{{Topic: "a"}}, Offset: off(1), Position: pos(1)},
			{Events: []source.Event{{Topic: "b1"}}},                                   // a split source transaction…
			{Events: []source.Event{{Topic: "b2"}}, Offset: off(2), Position: pos(2)}, // …and its end
			{Events: []source.Event{{Topic: "c"}, {Topic: "c"}}, Offset: off(3), Position: pos(3)},
		}}},
		Encoder: topicEncoder{},
		Sender:  txnSink{log},
		Transactions: &Transactions{Sink: txnSink{log}, Boundary: BoundaryConnector,
			OffsetRecord: offsetRecord},
		Log: slog.New(slog.DiscardHandler),
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	stopAndCheckLog(t, log, cancel, done, []string{"commit a offsets=1", "release 1", "commit b1 b2 offsets=2", "release 2", "commit c c offsets=3", "release 3"})
}

// With transaction.boundary=interval, a transaction open when the interval passes is committed even
// when no batch follows; on the way out, an open transaction that ends at an offset is committed.
func TestTransactionsIntervalAndFinalCommit(t *testing.T) {
	for _, c := range []struct {
		boundary Boundary
		interval time.Duration
	}{{BoundaryInterval, 20 * time.Millisecond}, {BoundaryPoll, 0}, {BoundaryInterval, time.Hour}} {
		boundary := c.boundary
		log := &txnLog{}
		p := &Pipeline{
			Reader:  releasingReader{log: log, batchReader: batchReader{batches: []source.Batch{{Events: []source.Event{{Topic: "a"}}, Offset: off(1), Position: pos(1)}}}},
			Encoder: topicEncoder{},
			Sender:  txnSink{log},
			Transactions: &Transactions{Sink: txnSink{log}, Boundary: boundary, Interval: c.interval,
				OffsetRecord: offsetRecord},
			Log: slog.New(slog.DiscardHandler),
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- p.Run(ctx) }()
		// An hour's interval never passes here: the stop commits what was sent.
		finalOnly := c.interval == time.Hour
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			log.mu.Lock()
			sent := len(log.open) > 0
			log.mu.Unlock()
			if (finalOnly && sent) || len(log.snapshot()) >= 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("boundary %d: after 10 s: %v", boundary, log.snapshot())
			}
		}
		if finalOnly && len(log.snapshot()) != 0 {
			t.Fatalf("an hour's interval committed early: %v", log.snapshot())
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got, want := log.snapshot(), []string{"commit a offsets=1", "release 1"}; !slices.Equal(got, want) {
			t.Fatalf("boundary %d: got %q, want %q", boundary, got, want)
		}
	}
}

// runUntil runs p until its log holds the entry last (or 10 s pass), then stops it and returns the log.
func runUntil(t *testing.T, p *Pipeline, log *txnLog, last string) []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	for deadline := time.Now().Add(10 * time.Second); !slices.Contains(log.snapshot(), last); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("after 10 s: %v", log.snapshot())
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return log.snapshot()
}

// With transaction.boundary=poll, a reader that hands over one small source transaction at a time, a
// little slower than the pipeline takes them, does not get a Kafka transaction per source transaction:
// the queue between them is empty after almost every batch, and a commit there made a backlog drain at
// the commits' round trips. A transaction ends once the reader stayed dry for PollLinger.
func TestTransactionsPollBoundaryWaitsOutShortGaps(t *testing.T) {
	log := &txnLog{}
	var batches []source.Batch
	for i := 1; i <= 200; i++ {
		batches = append(batches, source.Batch{Events: []source.Event{{Topic: "r"}}, Offset: off(i), Position: pos(i)})
	}
	p := &Pipeline{
		Reader:  releasingReader{log: log, batchReader: batchReader{batches: batches, gap: func(int) time.Duration { return 50 * time.Microsecond }}},
		Encoder: topicEncoder{},
		Sender:  txnSink{log},
		Transactions: &Transactions{Sink: txnSink{log}, Boundary: BoundaryPoll, PollLinger: time.Second,
			OffsetRecord: offsetRecord},
		Log: slog.New(slog.DiscardHandler),
	}
	got := runUntil(t, p, log, "release 200")
	want := []string{"commit " + strings.Repeat("r ", 200) + "offsets=200", "release 200"}
	if !slices.Equal(got, want) {
		t.Fatalf("200 source transactions read within a second of each other: got %d log entries %.300q, want one transaction", len(got), got)
	}
}

// A boundary that comes due by time (the interval's tick, the poll boundary's dry reader) while a split
// source transaction is half sent does not commit: the offset before it would stand for records after
// it, and a crash would then deliver that part twice.
func TestTransactionsNeverCommitInsideASplitSourceTransaction(t *testing.T) {
	for _, c := range []struct {
		name     string
		boundary Boundary
	}{{"interval", BoundaryInterval}, {"poll", BoundaryPoll}} {
		t.Run(c.name, func(t *testing.T) {
			log := &txnLog{}
			p := &Pipeline{
				// a and b1 go at once; b1 is a part of a split source transaction whose end comes 50 ms later.
				Reader: releasingReader{log: log, batchReader: batchReader{gap: func(i int) time.Duration { return time.Duration(i) * 50 * time.Millisecond }, batches: []source.Batch{
					{Events: []source.Event{{Topic: "a"}}, Offset: off(1), Position: pos(1)},
					{Events: []source.Event{{Topic: "b1"}}},
					{Events: []source.Event{{Topic: "b2"}}, Offset: off(2), Position: pos(2)},
				}}},
				Encoder: topicEncoder{},
				Sender:  txnSink{log},
				Transactions: &Transactions{Sink: txnSink{log}, Boundary: c.boundary, Interval: time.Millisecond, PollLinger: time.Millisecond,
					OffsetRecord: offsetRecord},
				Log: slog.New(slog.DiscardHandler),
			}
			got := runUntil(t, p, log, "release 2")
			// Whether a commits alone depends on when the first tick comes; b1 never commits without b2.
			for _, e := range got {
				if strings.Contains(e, "b1") && !strings.Contains(e, "b1 b2 offsets=2") {
					t.Fatalf("a commit inside the split source transaction: %q (log %q)", e, got)
				}
			}
		})
	}
}

// A record bound for the offsets topic fails the task before it is sent, with Connect's message: it would
// sit in the open transaction that the next read of the offsets waits for.
func TestTransactionsRefuseRecordsForTheOffsetsTopic(t *testing.T) {
	log := &txnLog{}
	p := &Pipeline{
		Reader: releasingReader{log: log, batchReader: batchReader{batches: []source.Batch{
			{Events: []source.Event{{Topic: "a"}}, Offset: off(1), Position: pos(1)},
			{Events: []source.Event{{Topic: "connect-offsets"}}, Offset: off(2), Position: pos(2)},
		}}},
		Encoder: topicEncoder{},
		Sender:  txnSink{log},
		Transactions: &Transactions{Sink: txnSink{log}, Boundary: BoundaryConnector, OffsetsTopic: "connect-offsets",
			OffsetRecord: func(o []source.OffsetField) (sink.Record, error) {
				return sink.Record{Topic: "connect-offsets", Value: fmt.Appendf(nil, "%v", o[0].Value)}, nil
			}},
		Log: slog.New(slog.DiscardHandler),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := p.Run(ctx)
	if !errors.Is(err, ErrOwnOffsetsTopic) || !source.IsFatal(err) {
		t.Fatalf("err = %v; want a fatal ErrOwnOffsetsTopic", err)
	}
	if got, want := log.snapshot(), []string{"commit a connect-offsets=1", "release 1"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q: nothing of the refused batch may be sent or committed", got, want)
	}
}

// gatedCommitSink is txnSink whose Commit waits until the test lets it end.
type gatedCommitSink struct {
	txnSink
	started chan struct{} // one value per Commit begun
	gate    chan struct{} // one value lets one Commit end
}

func (s gatedCommitSink) Commit(ctx context.Context, recs []sink.Record) error {
	s.started <- struct{}{}
	<-s.gate
	return s.txnSink.Commit(ctx, recs)
}

// countingEncoder is topicEncoder that counts what it converted.
type countingEncoder struct{ n *atomic.Int64 }

func (e countingEncoder) Encode(ev *source.Event) (sink.Record, error) {
	e.n.Add(1)
	return topicEncoder{}.Encode(ev)
}

// While a commit is in flight, the next batches are read and converted but not sent (they would join
// the committing transaction); once it is committed, they are sent, in order, into the next ones.
func TestTransactionsConvertDuringACommitAndSendAfter(t *testing.T) {
	log := &txnLog{}
	gated := gatedCommitSink{txnSink: txnSink{log}, started: make(chan struct{}, 4), gate: make(chan struct{})}
	var converted atomic.Int64
	p := &Pipeline{
		Reader: releasingReader{log: log, batchReader: batchReader{batches: []source.Batch{
			{Events: []source.Event{{Topic: "a"}}, Offset: off(1), Position: pos(1)},
			{Events: []source.Event{{Topic: "b"}}, Offset: off(2), Position: pos(2)},
			{Events: []source.Event{{Topic: "c"}, {Topic: "c"}}, Offset: off(3), Position: pos(3)},
		}}},
		Encoder: countingEncoder{&converted},
		Sender:  gated,
		Transactions: &Transactions{Sink: gated, Boundary: BoundaryConnector,
			OffsetRecord: offsetRecord},
		Log: slog.New(slog.DiscardHandler),
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	<-gated.started // the first transaction, "a", commits…
	for deadline := time.Now().Add(10 * time.Second); converted.Load() < 4; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("converted %d of 4 records while the commit was in flight", converted.Load())
		}
	}
	log.mu.Lock()
	open := slices.Clone(log.open)
	log.mu.Unlock()
	if !slices.Equal(open, []string{"a"}) {
		t.Fatalf("sent during the commit: %q, want only the committing transaction's a", open)
	}
	for range 3 { // …then b's and c's
		gated.gate <- struct{}{}
	}
	stopAndCheckLog(t, log, cancel, done, []string{"commit a offsets=1", "release 1", "commit b offsets=2", "release 2", "commit c c offsets=3", "release 3"})
}

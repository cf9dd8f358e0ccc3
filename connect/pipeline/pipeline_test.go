package pipeline

import (
	"bytes"
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

	"github.com/cdcd/cdcd/connect/transforms"
	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/avro"
	"github.com/cdcd/cdcd/sink"
	"github.com/cdcd/cdcd/source"
)

// batchReader sends its batches, then waits for the end.
// batchReader sends its batches one by one, batch i+1 once batch i was taken and gap(i) has passed (no
// gap when nil), then waits for the end.
type batchReader struct {
	batches []source.Batch
	gap     func(i int) time.Duration
}

func (r batchReader) Run(ctx context.Context, out chan<- source.Batch) error {
	for i, b := range r.batches {
		select {
		case out <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
		if r.gap != nil {
			time.Sleep(r.gap(i))
		}
	}
	<-ctx.Done()
	return ctx.Err()
}

func (batchReader) Release(source.Position) {}

type topicEncoder struct{}

func (topicEncoder) Encode(ev *source.Event) (sink.Record, error) {
	return sink.Record{Topic: ev.Topic}, nil
}

// ackingSender acknowledges every send at once and remembers the topics it was given.
type ackingSender struct {
	mu     sync.Mutex
	topics []string
}

func (s *ackingSender) Send(_ context.Context, recs []sink.Record, done func(error)) error {
	s.mu.Lock()
	for _, r := range recs {
		s.topics = append(s.topics, r.Topic)
	}
	s.mu.Unlock()
	done(nil)
	return nil
}

// Flush and Close have nothing to wait for: every Send was acknowledged before it returned.
func (s *ackingSender) Flush(context.Context) error { return nil }
func (s *ackingSender) Close(context.Context) error { return nil }

type offsetChan chan []source.OffsetField

func (c offsetChan) WriteOffset(_ context.Context, o []source.OffsetField) error {
	c <- o
	return nil
}

func TestPipelineSkipsFilteredRecordsButCommitsTheirOffsets(t *testing.T) {
	chain, err := transforms.New(map[string]string{
		"transforms":                "drop",
		"transforms.drop.type":      "org.apache.kafka.connect.transforms.Filter",
		"transforms.drop.predicate": "isDrop",
		"predicates":                "isDrop",
		"predicates.isDrop.type":    "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
		"predicates.isDrop.pattern": "drop.*",
	}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	sender := &ackingSender{}
	offsets := make(offsetChan, 16)
	p := &Pipeline{
		Reader: batchReader{batches: []source.Batch{
			{Events: []source.Event{{Topic: "keep"}, {Topic: "drop.a"}}, Offset: off(1), Position: pos(1)},
			{Events: []source.Event{{Topic: "drop.b"}}, Offset: off(2), Position: pos(2)},
		}},
		Transforms:    chain,
		Encoder:       topicEncoder{},
		Sender:        sender,
		Offsets:       offsets,
		FlushInterval: time.Millisecond,
		Log:           slog.New(slog.DiscardHandler),
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	for {
		o := <-offsets
		if o[0].Value == 2 {
			break
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	sender.mu.Lock()
	defer sender.mu.Unlock()
	if len(sender.topics) != 1 || sender.topics[0] != "keep" {
		t.Errorf("produced %v, want only [keep]", sender.topics)
	}
}

// failingEncoder fails, with err, every event whose topic starts with "bad".
type failingEncoder struct{ err error }

func (e failingEncoder) Encode(ev *source.Event) (sink.Record, error) {
	if strings.HasPrefix(ev.Topic, "bad") {
		return sink.Record{}, e.err
	}
	return sink.Record{Topic: ev.Topic}, nil
}

var keyStructSchema = &schema.Schema{Type: schema.StructT, Name: "k", Fields: []schema.Field{{Name: "id", Schema: &schema.Schema{Type: schema.Int32}}}}

// castChain casts the value to int32 on topics "cast.*": a string value that is not a number fails it.
func castChain(t *testing.T) *transforms.Chain {
	t.Helper()
	chain, err := transforms.New(map[string]string{
		"transforms": "num", "transforms.num.type": "org.apache.kafka.connect.transforms.Cast$Value",
		"transforms.num.spec": "int32", "transforms.num.predicate": "cast",
		"predicates": "cast", "predicates.cast.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
		"predicates.cast.pattern": "cast.*",
	}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return chain
}

func stringEvent(topic, value string) source.Event {
	return source.Event{Topic: topic, KeySchema: keyStructSchema, Key: &schema.Struct{Schema: keyStructSchema, Values: []any{int32(7)}},
		ValueSchema: &schema.Schema{Type: schema.String}, Value: value}
}

// runUntilOffset runs p until it records offset n, or returns the error that ended it first.
func runUntilOffset(t *testing.T, p *Pipeline, offsets offsetChan, n int) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	for {
		select {
		case o := <-offsets:
			if o[0].Value == n {
				cancel()
				return <-done
			}
		case err := <-done:
			return err
		}
	}
}

func errorPipeline(batches []source.Batch, tr Transformer, enc Encoder, h ErrorHandling, log *slog.Logger) (*Pipeline, *ackingSender, offsetChan) {
	sender, offsets := &ackingSender{}, make(offsetChan, 16)
	return &Pipeline{Reader: batchReader{batches: batches}, Transforms: tr, Encoder: enc, Sender: sender, Offsets: offsets,
		FlushInterval: time.Millisecond, Errors: h, Log: log}, sender, offsets
}

func TestToleranceNoneFailsTheTaskNamingTheRecordWithoutItsData(t *testing.T) {
	p, sender, offsets := errorPipeline([]source.Batch{
		{Events: []source.Event{stringEvent("cast.a", "12"), stringEvent("cast.b", "twelve")}, Offset: off(1), Position: pos(1)},
	}, castChain(t), topicEncoder{}, ErrorHandling{}, slog.New(slog.DiscardHandler))
	err := runUntilOffset(t, p, offsets, 1)
	if err == nil || !source.IsFatal(err) {
		t.Fatalf("Run = %v, want an error that fails the task", err)
	}
	for _, want := range []string{"cast.b", "columns [id]", "Cast$Value", `"num"`, "TRANSFORMATION", "batch ending at pos"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	// The error is the task's trace, which /status and /health show: the row's data stays out of it.
	for _, data := range []string{"7", "twelve"} {
		if strings.Contains(err.Error(), data) {
			t.Errorf("error %q quotes the record's data %q", err, data)
		}
	}
	if len(sender.topics) != 0 {
		t.Errorf("produced %v from a failed batch", sender.topics)
	}
}

func TestToleranceAllSkipsAndLogsWithoutContent(t *testing.T) {
	for _, includeMessages := range []bool{false, true} {
		var logged bytes.Buffer
		log := slog.New(slog.NewTextHandler(&logged, nil))
		p, sender, offsets := errorPipeline([]source.Batch{
			{Events: []source.Event{stringEvent("cast.a", "12"), stringEvent("cast.b", "secret-value"), stringEvent("bad.c", "x"),
				stringEvent("keep", "y")}, Offset: off(1), Position: pos(1)},
		}, castChain(t), failingEncoder{err: errors.New("cannot encode")},
			ErrorHandling{TolerateAll: true, Log: true, LogRecords: includeMessages}, log)
		if err := runUntilOffset(t, p, offsets, 1); err != nil {
			t.Fatalf("Run = %v", err)
		}
		// The batch's offset was recorded with two of its four records produced: the other two were skipped.
		if got := sender.topics; !slices.Equal(got, []string{"cast.a", "keep"}) {
			t.Errorf("produced %v, want the records that did not fail", got)
		}
		out := logged.String()
		if strings.Count(out, "level=ERROR") != 2 || !strings.Contains(out, "stage=TRANSFORMATION") || !strings.Contains(out, "stage=CONVERSION") {
			t.Errorf("log = %s, want one ERROR line per skipped record", out)
		}
		// The Cast error itself quotes the value, as Kafka's does; the record's own fields appear only with
		// errors.log.include.messages.
		if has := strings.Contains(out, "value=secret-value"); has != includeMessages {
			t.Errorf("include.messages=%v: log carries the record value: %v\n%s", includeMessages, has, out)
		}
	}
}

func TestToleranceAllWithoutLogIsSilent(t *testing.T) {
	var logged bytes.Buffer
	p, sender, offsets := errorPipeline([]source.Batch{{Events: []source.Event{stringEvent("bad.a", "x")}, Offset: off(1), Position: pos(1)}},
		nil, failingEncoder{err: errors.New("cannot encode")}, ErrorHandling{TolerateAll: true},
		slog.New(slog.NewTextHandler(&logged, nil)))
	// Skipped: the batch's offset is recorded and its one record is not produced.
	if err := runUntilOffset(t, p, offsets, 1); err != nil || logged.Len() != 0 || len(sender.topics) != 0 {
		t.Errorf("Run = %v, produced %v, log %q", err, sender.topics, logged.String())
	}
}

func TestUnreachableRegistryIsNeverSkipped(t *testing.T) {
	p, sender, offsets := errorPipeline([]source.Batch{{Events: []source.Event{stringEvent("bad.a", "x")}, Offset: off(1), Position: pos(1)}},
		nil, failingEncoder{err: fmt.Errorf("%w: connection refused", avro.ErrRegistry)}, ErrorHandling{TolerateAll: true},
		slog.New(slog.DiscardHandler))
	// Not skipped: the run ends before the batch's offset is recorded, with nothing produced.
	err := runUntilOffset(t, p, offsets, 1)
	if err == nil || source.IsFatal(err) || len(sender.topics) != 0 || len(offsets) != 0 {
		t.Errorf("Run = %v (fatal %v), produced %v, %d offsets recorded: want a restart from the durable offset",
			err, source.IsFatal(err), sender.topics, len(offsets))
	}
}

func TestParseErrorHandling(t *testing.T) {
	cases := []struct {
		props map[string]string
		want  ErrorHandling
		err   string
	}{
		{map[string]string{}, ErrorHandling{}, ""},
		{map[string]string{"errors.tolerance": "none", "errors.log.enable": "TRUE"}, ErrorHandling{Log: true}, ""},
		{map[string]string{"errors.tolerance": " all ", "errors.log.include.messages": "true"}, ErrorHandling{TolerateAll: true, LogRecords: true}, ""},
		{map[string]string{"errors.tolerance": "ALL"}, ErrorHandling{}, "errors.tolerance"},
		{map[string]string{"errors.log.enable": "yes"}, ErrorHandling{}, "errors.log.enable"},
	}
	for _, tc := range cases {
		got, err := ParseErrorHandling(tc.props)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseErrorHandling(%v) = %v, want an error naming %s", tc.props, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseErrorHandling(%v) = %+v, %v; want %+v", tc.props, got, err, tc.want)
		}
	}
}

// idleAwareSender is ackingSender that counts the times it was told the reader has nothing more ready.
type idleAwareSender struct {
	ackingSender
	idle atomic.Int64
}

func (s *idleAwareSender) SourceIdle() { s.idle.Add(1) }

// Once the reader has nothing more ready, the sink hears of it (it may stop lingering).
func TestPipelineTellsTheSinkWhenTheReaderIsIdle(t *testing.T) {
	sender := &idleAwareSender{}
	p := &Pipeline{
		Reader:        batchReader{batches: []source.Batch{{Events: []source.Event{{Topic: "a"}}, Offset: off(1), Position: pos(1)}}},
		Encoder:       topicEncoder{},
		Sender:        sender,
		Offsets:       make(offsetChan, 16),
		FlushInterval: time.Hour,
		Log:           slog.New(slog.DiscardHandler),
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	for deadline := time.Now().Add(10 * time.Second); sender.idle.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the sink was not told that the reader had nothing more ready")
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
}

package connect

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/cdcd/cdcd/connect/transforms"
	"github.com/cdcd/cdcd/sink/kafka"
	"github.com/cdcd/cdcd/source"
)

// batchReader sends its batches, then waits for the end.
type batchReader struct{ batches []source.Batch }

func (r batchReader) Run(ctx context.Context, out chan<- source.Batch) error {
	for _, b := range r.batches {
		select {
		case out <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	<-ctx.Done()
	return ctx.Err()
}

func (batchReader) Release(source.Position) {}

type topicEncoder struct{}

func (topicEncoder) Encode(ev *source.Event) (kafka.Record, error) {
	return kafka.Record{Topic: ev.Topic}, nil
}

// ackingSender acknowledges every send at once and remembers the topics it was given.
type ackingSender struct {
	mu     sync.Mutex
	topics []string
}

func (s *ackingSender) Send(_ context.Context, recs []kafka.Record, done func(error)) error {
	s.mu.Lock()
	for _, r := range recs {
		s.topics = append(s.topics, r.Topic)
	}
	s.mu.Unlock()
	done(nil)
	return nil
}

type offsetChan chan []source.OffsetField

func (c offsetChan) WriteOffset(o []source.OffsetField) error {
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

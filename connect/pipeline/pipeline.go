// Package pipeline is the runtime's data path: it moves one task's batches from its reader through the
// transforms and the worker's converters to its sink, and records offsets only behind the sink's
// acknowledgements. The control plane (package connect) builds a Pipeline per task and runs it.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/cdcd/cdcd/connect/transforms"
	"github.com/cdcd/cdcd/schema/avro"
	"github.com/cdcd/cdcd/sink"
	"github.com/cdcd/cdcd/source"
)

// OffsetWriter stores a connector's source offset durably.
type OffsetWriter interface {
	// WriteOffset records offset for the connector's partition and returns once it is durable (fsynced, or
	// acknowledged by every in-sync replica). Called from one goroutine at a time.
	WriteOffset(offset []source.OffsetField) error
}

// Encoder turns an event into a Kafka record with the worker's converters.
type Encoder interface {
	Encode(ev *source.Event) (sink.Record, error)
}

// Transformer applies a connector's transforms chain (connect/transforms.Chain) to an event before it is
// encoded, as Connect applies single message transforms before conversion.
type Transformer interface {
	// Transform rewrites ev in place and reports whether it is still to be produced; false means a transform
	// dropped it.
	Transform(ev *source.Event) (keep bool, err error)
}

// Pipeline moves one connector's batches from its reader through the encoder to Kafka, and records offsets.
//
// The invariant that makes it crash-safe: a position is released to the database only after the offset that
// stands for it is durable, and an offset is written only after Kafka acknowledged its batch and every batch
// before it. At any instant the database's confirmed position ≤ the durable offset ≤ what Kafka holds.
type Pipeline struct {
	Reader source.Reader
	// Transforms, when not nil, runs on every event before Encoder.
	Transforms    Transformer
	Encoder       Encoder
	Sender        sink.Sink
	Offsets       OffsetWriter
	FlushInterval time.Duration // offset.flush.interval.ms
	// MaxPendingBatches bounds the batches between read and offset commit (each may be empty, so the sink's
	// byte bound alone does not bound them).
	MaxPendingBatches int
	// Name is the connector's name, which labels its queue metrics.
	Name string
	// Errors is the connector's errors.* handling of records a transform or a converter fails on; the zero
	// value is Connect's default, errors.tolerance=none.
	Errors ErrorHandling
	Log    *slog.Logger
}

// Run runs until ctx is cancelled or a part fails. On the way out it records the offset of everything Kafka
// acknowledged, so a clean stop loses nothing and repeats nothing.
func (p *Pipeline) Run(ctx context.Context) error {
	if p.MaxPendingBatches <= 0 {
		p.MaxPendingBatches = 4096
	}
	tr := newTracker(p.MaxPendingBatches)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	batches := make(chan source.Batch, 4)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if err := p.Reader.Run(ctx, batches); err != nil && !errors.Is(err, context.Canceled) {
			cancel(fmt.Errorf("reader: %w", err))
		}
	}()
	go func() {
		defer wg.Done()
		p.commitLoop(ctx, tr, cancel)
	}()

	err := p.produce(ctx, batches, tr)
	if err != nil {
		cancel(err)
	}
	wg.Wait()
	// Final commit: wait briefly for outstanding acks so a stop records what was delivered.
	flushCtx, cancelFlush := context.WithTimeout(context.Background(), 5*time.Second)
	_ = p.Sender.Flush(flushCtx) // what is still unacknowledged is re-read after the restart
	cancelFlush()
	if cerr := p.commit(tr); cerr != nil && err == nil {
		err = cerr
	}
	if cause := context.Cause(ctx); err == nil && cause != nil && !errors.Is(cause, context.Canceled) {
		err = cause
	}
	if terr := tr.failure(); err == nil && terr != nil {
		err = terr
	}
	return err
}

// produce encodes and sends batches in order until ctx ends.
func (p *Pipeline) produce(ctx context.Context, batches <-chan source.Batch, tr *tracker) error {
	for {
		var b source.Batch
		select {
		case <-ctx.Done():
			return nil
		case b = <-batches:
		}
		recs := make([]sink.Record, 0, len(b.Events))
		for i := range b.Events {
			ev := &b.Events[i]
			// A record that is filtered, or skipped by errors.tolerance=all, is not produced; the batch's offset
			// still counts once the rest is acknowledged.
			if p.Transforms != nil {
				original := *ev
				keep, err := p.Transforms.Transform(ev)
				if err != nil {
					if err := p.recordFailed(stageTransformation, &original, err, b.Position); err != nil {
						return err
					}
					continue
				}
				if !keep {
					continue
				}
			}
			rec, err := p.Encoder.Encode(ev)
			if err != nil {
				if err := p.recordFailed(stageConversion, ev, err, b.Position); err != nil {
					return err
				}
				continue
			}
			recs = append(recs, rec)
		}
		seq, err := tr.add(ctx, b.Offset, b.Position)
		if err != nil {
			return nil // ctx ended while waiting for room
		}
		if len(recs) == 0 {
			tr.ack(seq, nil)
			continue
		}
		if err := p.Sender.Send(ctx, recs, func(err error) { tr.ack(seq, err) }); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("sending to Kafka: %w", err)
		}
	}
}

// commitLoop records offsets every FlushInterval, and reports the queue.
func (p *Pipeline) commitLoop(ctx context.Context, tr *tracker, cancel context.CancelCauseFunc) {
	t := time.NewTicker(p.FlushInterval)
	defer t.Stop()
	queueCapacity.WithLabelValues(p.Name, "0").Set(float64(cap(tr.slots)))
	size := queueSize.WithLabelValues(p.Name, "0")
	for {
		size.Set(float64(len(tr.slots)))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-tr.failed:
			cancel(tr.failure())
			return
		}
		if err := p.commit(tr); err != nil {
			cancel(err)
			return
		}
	}
}

// commit writes the offset of the highest contiguous acknowledged batch, then releases its position.
func (p *Pipeline) commit(tr *tracker) error {
	offset, pos, ok := tr.committable()
	if !ok {
		return nil
	}
	// INVARIANT: Kafka ack (tracker) → durable offset (WriteOffset) → source release (Release). Never reorder.
	if err := p.Offsets.WriteOffset(offset); err != nil {
		return fmt.Errorf("writing the offset at %v: %w", pos, err)
	}
	p.Reader.Release(pos)
	tr.committed(pos)
	return nil
}

// ErrorHandling is how a connector treats a record that a transform or a converter fails on: Connect's
// errors.tolerance, errors.log.enable and errors.log.include.messages. The zero value is Connect's default.
type ErrorHandling struct {
	// TolerateAll is errors.tolerance=all: the record is skipped and the task goes on. With
	// none, the task fails naming the record's topic and key and the failing transform or converter.
	TolerateAll bool
	// Log is errors.log.enable: each tolerated failure is logged at ERROR, without the record's content.
	Log bool
	// LogRecords is errors.log.include.messages: the log line also carries the record's topic, key, value
	// and headers.
	LogRecords bool
}

// ParseErrorHandling reads the errors.* settings of a connector config, as Connect's ConnectorConfig does.
func ParseErrorHandling(props map[string]string) (ErrorHandling, error) {
	var h ErrorHandling
	switch v := strings.TrimSpace(props["errors.tolerance"]); v {
	case "", "none":
	case "all":
		h.TolerateAll = true
	default:
		return h, fmt.Errorf("invalid value %s for configuration errors.tolerance: String must be one of: none, all", v)
	}
	for key, dst := range map[string]*bool{"errors.log.enable": &h.Log, "errors.log.include.messages": &h.LogRecords} {
		switch v := strings.ToLower(strings.TrimSpace(props[key])); v {
		case "", "false":
		case "true":
			*dst = true
		default:
			return h, fmt.Errorf("invalid value %s for configuration %s: Expected value to be either true or false", props[key], key)
		}
	}
	return h, nil
}

// Stages of a source record that errors.tolerance covers, named as Connect's errors.Stage names them.
const (
	stageTransformation = "TRANSFORMATION"
	stageConversion     = "CONVERSION"
)

// recordFailed applies errors.tolerance to a record a transform or converter failed on: nil means skip it,
// otherwise the error ends the run. A schema registry that could not be reached is not the record's fault:
// that error ends the run whatever the tolerance, and the task restarts from its durable offset.
func (p *Pipeline) recordFailed(stage string, ev *source.Event, err error, at source.Position) error {
	if errors.Is(err, avro.ErrRegistry) && !source.IsFatal(err) {
		return fmt.Errorf("encoding an event for topic %s (batch ending at %v): %w", ev.Topic, at, err)
	}
	class := "converter"
	var terr *transforms.TransformError
	if errors.As(err, &terr) {
		class = terr.Class
	}
	if !p.Errors.TolerateAll {
		return source.Fatal(fmt.Errorf("tolerance exceeded in error handler (errors.tolerance=none): stage %s (%s) failed on a record for topic %s with key %s (batch ending at %v): %w",
			stage, class, ev.Topic, recordKeyString(ev), at, err))
	}
	if p.Errors.Log {
		attrs := []any{"stage", stage, "class", class, "error", err}
		if p.Errors.LogRecords {
			attrs = append(attrs, "topic", ev.Topic, "key", recordKeyString(ev), "value", connectString(ev.Value))
			for _, h := range ev.Headers {
				attrs = append(attrs, "header."+h.Key, connectString(h.Value))
			}
		}
		p.Log.Error("Error encountered in task; the record is skipped (errors.tolerance=all)", attrs...)
	}
	return nil
}

// recordKeyString renders a record's key as Connect's toString does ({"id":1} for a struct).
func recordKeyString(ev *source.Event) string { return connectString(ev.Key) }

func connectString(v any) string {
	var b strings.Builder
	if err := appendConnectString(&b, v, false); err != nil {
		return fmt.Sprintf("%v", v)
	}
	return b.String()
}

package connect

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/connect/pipeline"
	"github.com/cdcd/cdcd/sink"
	"github.com/cdcd/cdcd/source"
)

// taskExactlyOnce is how one task delivers under exactly.once.source.support=enabled (Kafka Connect's
// ExactlyOnceWorkerSourceTask): a transactional producer whose transactional.id is Connect's
// <group.id>-<connector>-<task>, and the connector's transaction.boundary.
type taskExactlyOnce struct {
	transactionalID string
	boundary        pipeline.Boundary
	interval        time.Duration
	maxRecords      int
	commitTimeout   time.Duration
}

// exactlyOnce reads a task's exactly-once settings: nil when the worker does not have exactly-once
// source support enabled. Then Connect ignores transaction.boundary and its interval; cdcd says so in
// the log, once per task start, instead of saying nothing.
func (w *Worker) exactlyOnce(name string, props map[string]string, log *slog.Logger) (*taskExactlyOnce, error) {
	boundary := strings.ToLower(strings.TrimSpace(props["transaction.boundary"]))
	if !w.cfg.ExactlyOnceSource {
		for _, key := range []string{"transaction.boundary", "transaction.boundary.interval.ms"} {
			if v, set := props[key]; set && !(key == "transaction.boundary" && boundary == "poll") {
				log.Warn("connector setting has no effect: the worker does not have exactly.once.source.support=enabled", "key", key, "value", v)
			}
		}
		return nil, nil
	}
	eos := &taskExactlyOnce{
		transactionalID: w.taskTransactionalID(name, 0),
		interval:        w.flushInterval,
		// A poll-bounded transaction holds at most what one Debezium poll returns: max.batch.size.
		maxRecords:    maxBatchSize(props),
		commitTimeout: time.Minute,
	}
	switch boundary {
	case "", "poll":
		eos.boundary = pipeline.BoundaryPoll
	case "interval":
		eos.boundary = pipeline.BoundaryInterval
	case "connector":
		eos.boundary = pipeline.BoundaryConnector
	default:
		return nil, fmt.Errorf("invalid value %s for configuration transaction.boundary: String must be one of (case insensitive): poll, interval, connector", props["transaction.boundary"])
	}
	if v := strings.TrimSpace(props["transaction.boundary.interval.ms"]); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms < 0 {
			return nil, fmt.Errorf("invalid value %s for configuration transaction.boundary.interval.ms: Value must be at least 0", v)
		}
		eos.interval = time.Duration(ms) * time.Millisecond
	}
	if eos.interval <= 0 {
		eos.interval = time.Millisecond
	}
	// The producer's transaction.timeout.ms bounds a commit: past it the coordinator aborts anyway.
	if v, err := strconv.ParseInt(strings.TrimSpace(w.sinkConfig(name, props).Settings["transaction.timeout.ms"]), 10, 64); err == nil && v > 0 {
		eos.commitTimeout = time.Duration(v) * time.Millisecond
	}
	return eos, nil
}

// taskTransactionalID is Connect's Worker.taskTransactionalId: <group.id>-<connector>-<task>. cdcd's
// connectors run one task, task 0.
func (w *Worker) taskTransactionalID(name string, task int) string {
	return fmt.Sprintf("%s-%s-%d", w.cfg.GroupID, name, task)
}

// fenceZombies fences the producers of a connector's tasks 0 to tasks-1 (Worker.fenceZombies, Connect's
// zombie fencing): each task's transactional.id is taken over, so a task of an earlier generation still
// running somewhere fails its next commit and its open transaction is aborted.
func (w *Worker) fenceZombies(ctx context.Context, name string, tasks int, props map[string]string) error {
	fencer, ok := w.sinks.(sink.Fencer)
	if !ok {
		return &RequestError{Kind: ServerError, Message: "the sink has no transactions to fence"}
	}
	for task := range tasks {
		cfg := w.sinkConfig(name, props)
		cfg.TransactionalID = w.taskTransactionalID(name, task)
		if err := fencer.Fence(ctx, cfg); err != nil {
			return fmt.Errorf("fencing the producers of connector %s (transactional.id %s): %w", name, cfg.TransactionalID, err)
		}
	}
	return nil
}

// transactions is the pipeline's exactly-once configuration: each transaction ends with the task's
// offset record, written to the connector's offsets topic (its offsets.storage.topic, else the worker's
// offset.storage.topic) by the task's own transactional producer, as Connect's connector store writes
// it. With a secondary store (the connector's own topic is not the worker's), the offset goes to the
// worker's topic too, outside the transaction, once it committed: see connectorOffsets.
func (e *taskExactlyOnce) transactions(s sink.Transactional, offsets storeOffsetWriter, topic string, layered *connectorOffsets) *pipeline.Transactions {
	if layered != nil {
		s = secondaryAfterCommit{Transactional: s, topic: topic, store: layered}
	}
	return &pipeline.Transactions{
		Sink: s,
		OffsetRecord: func(offset []source.OffsetField) (sink.Record, error) {
			value, err := offsets.encode(offset)
			if err != nil {
				return sink.Record{}, err
			}
			return sink.Record{Topic: topic, Key: offsets.key, Value: value}, nil
		},
		OffsetsTopic:  topic,
		Boundary:      e.boundary,
		Interval:      e.interval,
		MaxRecords:    e.maxRecords,
		CommitTimeout: e.commitTimeout,
	}
}

// secondaryAfterCommit is a task's transactional sink whose commits also write the offset records they
// carried to the worker's offsets topic, the connector store's secondary, once the transaction
// committed. Connect issues that write when the primary record is acknowledged, which under exactly-once
// may be before the commit; waiting for it keeps an aborted transaction's offset out of the worker's
// topic.
type secondaryAfterCommit struct {
	sink.Transactional
	topic string // the connector's offsets topic: the records bound for it are offsets
	store *connectorOffsets
}

func (s secondaryAfterCommit) Commit(ctx context.Context, recs []sink.Record) error {
	if err := s.Transactional.Commit(ctx, recs); err != nil {
		return err
	}
	var entries []offsets.Entry
	for _, r := range recs {
		if r.Topic == s.topic {
			entries = append(entries, offsets.Entry{Key: r.Key, Value: r.Value})
		}
	}
	s.store.putSecondary(ctx, entries)
	return nil
}

package mysql

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"time"

	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/mysql/ddl"
	"github.com/cdcd/cdcd/source/mysql/tables"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// history is the schema history topic (schema.history.internal.kafka.topic, spec §4.4): one partition,
// null keys, every DDL the connector applied as a JSON document, kept forever. A restart replays it to
// know every table's structure at the stored offset.
type history struct {
	client  *kgo.Client
	brokers []string
	topic   string
	log     *slog.Logger
}

// openHistory connects to the history's brokers and creates the topic as Debezium does when it is missing.
func openHistory(ctx context.Context, cfg *Config, log *slog.Logger) (*history, error) {
	client, err := kgo.NewClient(kgo.SeedBrokers(cfg.HistoryBrokers...), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(0), kgo.RecordRetries(10), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return nil, fatal(fmt.Errorf("schema.history.internal.kafka.bootstrap.servers %v: %w", cfg.HistoryBrokers, err))
	}
	h := &history{client: client, brokers: cfg.HistoryBrokers, topic: cfg.HistoryTopic, log: log}
	if err := h.ensureTopic(ctx); err != nil {
		client.Close()
		return nil, err
	}
	return h, nil
}

func (h *history) Close() { h.client.Close() }

// ensureTopic creates the topic with one partition, delete cleanup and unlimited retention (Debezium's
// KafkaSchemaHistory settings), and refuses an existing topic with more than one partition.
func (h *history) ensureTopic(ctx context.Context) error {
	adm := kadm.NewClient(h.client)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	details, err := adm.ListTopics(ctx, h.topic)
	if err != nil {
		return fmt.Errorf("schema history topic %s: listing it: %w", h.topic, err)
	}
	if d, ok := details[h.topic]; ok && d.Err == nil {
		if n := len(d.Partitions); n != 1 {
			return fatal(fmt.Errorf("schema history topic %s has %d partitions; it must have exactly one so the DDL stays in order: recreate it with one partition", h.topic, n))
		}
		return nil
	}
	maxRetention := strconv.FormatInt(math.MaxInt64, 10)
	unlimited := "-1"
	deleteCleanup := "delete"
	resp, err := adm.CreateTopic(ctx, 1, -1, map[string]*string{"cleanup.policy": &deleteCleanup, "retention.ms": &maxRetention, "retention.bytes": &unlimited}, h.topic)
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("creating the schema history topic %s: %w", h.topic, err)
	}
	if resp.Err != nil && !errors.Is(resp.Err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("creating the schema history topic %s: %w", h.topic, resp.Err)
	}
	return nil
}

// readAll returns every record value of the topic, in order.
func (h *history) readAll(ctx context.Context) ([][]byte, error) {
	adm := kadm.NewClient(h.client)
	ends, err := adm.ListEndOffsets(ctx, h.topic)
	if err != nil {
		return nil, fmt.Errorf("schema history topic %s: reading its end: %w", h.topic, err)
	}
	end, ok := ends.Lookup(h.topic, 0)
	if !ok || end.Err != nil || end.Offset <= 0 {
		return nil, nil
	}
	consumer, err := kgo.NewClient(kgo.SeedBrokers(h.brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{h.topic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		return nil, err
	}
	defer consumer.Close()
	var out [][]byte
	for {
		fetches := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if errs := fetches.Errors(); len(errs) > 0 {
			return nil, fmt.Errorf("schema history topic %s: %w", h.topic, errs[0].Err)
		}
		done := false
		fetches.EachRecord(func(r *kgo.Record) {
			if r.Offset < end.Offset {
				out = append(out, r.Value)
			}
			done = done || r.Offset >= end.Offset-1
		})
		if done {
			return out, nil
		}
	}
}

// write appends one record and returns once every in-sync replica has it.
func (h *history) write(ctx context.Context, value []byte) error {
	res := h.client.ProduceSync(ctx, &kgo.Record{Topic: h.topic, Partition: 0, Value: value})
	if err := res.FirstErr(); err != nil {
		return fmt.Errorf("writing to the schema history topic %s: %w", h.topic, err)
	}
	return nil
}

// applyDDL applies a DDL statement read at pos to the catalog, records each schema change in the schema
// history (before any event that depends on it is produced), and returns the events it makes: the schema
// change records of the <topic.prefix> topic (when include.schema.changes is on) and truncate events.
// src describes the statement for the events' source block; each change fills in its database and table.
func (r *Reader) applyDDL(ctx context.Context, database, stmt string, pos Offset, src sourceBlock) ([]source.Event, error) {
	changes, err := r.catalog.Apply(database, stmt)
	if err != nil {
		if r.cfg.SkipUnparseableDDL {
			r.log.Warn("skipping a DDL statement cdcd cannot parse (schema.history.internal.skip.unparseable.ddl=true); events of the tables it changes may be wrong",
				"position", pos.String(), "statement", stmt, "error", err)
			return nil, nil
		}
		return nil, fatal(fmt.Errorf("DDL statement at %s could not be parsed: %w. Set schema.history.internal.skip.unparseable.ddl=true to skip statements cdcd cannot read, at the risk of wrong events for the tables they change", pos, err))
	}
	position := hashMapOrdered(pos.Fields())
	var events []source.Event
	for _, ch := range changes {
		if ch.Database != "" && !r.cfg.recordsDatabase(ch.Database) ||
			r.cfg.StoreOnlyCapturedTables && ch.ID.Table != "" && !r.cfg.Filter.IncludeTable(ch.ID.Database, ch.ID.Table) {
			continue
		}
		delete(r.schemas, ch.ID)
		delete(r.schemas, ch.PreviousID)
		block := src
		block.db, block.table = ch.Database, ch.ID.Table
		if ch.Type == ddl.Truncate {
			ev, err := r.truncateEvent(ch.ID, block)
			if err != nil || ev == nil {
				return nil, err
			}
			events = append(events, *ev)
			continue
		}
		now := r.now()
		record, err := ddl.HistoryRecord{Server: r.cfg.TopicPrefix, Position: position, TsMs: now.UnixMilli(), Change: ch}.Encode()
		if err != nil {
			return nil, err
		}
		if err := r.history.write(ctx, record); err != nil {
			return nil, err
		}
		if r.cfg.IncludeSchemaChanges {
			key, value := r.changeSchemas.Record(r.cfg.sourceStruct(r.sourceSchema, block), now.UnixMilli(), ch)
			events = append(events, source.Event{Topic: r.cfg.Topics.SchemaChangeTopic(), KeySchema: r.changeSchemas.Key, Key: key,
				ValueSchema: r.changeSchemas.Value, Value: value, Headers: r.headers})
		}
	}
	return events, nil
}

// truncateEvent is the op "t" event of a captured table's TRUNCATE, nil when truncates are skipped (the
// default) or the table is not captured.
func (r *Reader) truncateEvent(id tables.ID, block sourceBlock) (*source.Event, error) {
	if r.cfg.SkippedOps['t'] || !r.cfg.Filter.IncludeTable(id.Database, id.Table) {
		return nil, nil
	}
	ts, err := r.tableSchema(id)
	if err != nil || ts == nil {
		return nil, err
	}
	ev := ts.event(nil, ts.envelopeValue(schema.OpTruncate, nil, nil, r.cfg.sourceStruct(r.sourceSchema, block), r.now()))
	return &ev, nil
}

// hashMapOrdered puts offset fields in the order a Java HashMap iterates them, the order Debezium's
// history documents show an offset in.
func hashMapOrdered(fields []source.OffsetField) []source.OffsetField {
	names := make([]string, len(fields))
	byName := make(map[string]source.OffsetField, len(fields))
	for i, f := range fields {
		names[i], byName[f.Name] = f.Name, f
	}
	out := make([]source.OffsetField, 0, len(fields))
	for _, name := range offsets.JavaHashMapOrder(names) {
		out = append(out, byName[name])
	}
	return out
}

package mysql

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/javacompat"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/mysql/ddl"
	"github.com/cdcd/cdcd/source/mysql/tables"
)

// history is the schema history topic (schema.history.internal.kafka.topic, spec §4.4): one partition,
// null keys, every DDL the connector applied as a JSON document, kept forever. A restart replays it to
// know every table's structure at the stored offset. The reader never reaches Kafka itself: the runtime's
// source.LogOpener (Reader.HistoryLogs) opens the topic with the runtime's client.
type history struct {
	log   source.DurableLog
	topic string
}

// historyTopicSettings are the settings of a history topic the opener creates: Debezium's
// KafkaSchemaHistory creates it with delete cleanup and unlimited retention, so no DDL is ever lost.
func historyTopicSettings() map[string]string {
	return map[string]string{
		"cleanup.policy":  "delete",
		"retention.ms":    strconv.FormatInt(math.MaxInt64, 10),
		"retention.bytes": "-1",
	}
}

// historySpec is the log spec of cfg's history topic.
func historySpec(cfg *Config) source.LogSpec {
	return source.LogSpec{Name: cfg.HistoryTopic, Servers: cfg.HistoryBrokers, Settings: historyTopicSettings()}
}

// errNoHistoryLogs is Run's error when the runtime did not hand the reader a log opener.
var errNoHistoryLogs = errors.New("the MySQL/MariaDB reader has no schema history log opener: the runtime must set Reader.HistoryLogs before Run")

// openHistory opens the history topic through opener, which creates it as Debezium does when it is
// missing and refuses one with more than one partition. Errors a restart cannot fix are fatal.
func openHistory(ctx context.Context, cfg *Config, opener source.LogOpener) (*history, error) {
	if opener == nil {
		return nil, fatal(errNoHistoryLogs)
	}
	log, err := opener.OpenLog(ctx, historySpec(cfg))
	if err != nil {
		err = fmt.Errorf("opening the schema history topic %s: %w", cfg.HistoryTopic, err)
		if source.IsFatal(err) {
			return nil, fatal(err)
		}
		return nil, err
	}
	return &history{log: log, topic: cfg.HistoryTopic}, nil
}

// Close releases the history's connections, waiting for them at most a few seconds.
func (h *history) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = h.log.Close(ctx)
}

// readAll returns every record value of the topic, in order.
func (h *history) readAll(ctx context.Context) ([][]byte, error) {
	records, err := h.log.ReadAll(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the schema history topic %s: %w", h.topic, err)
	}
	return records, nil
}

// write appends one record and returns once every in-sync replica has it.
func (h *history) write(ctx context.Context, value []byte) error {
	if err := h.log.Append(ctx, value); err != nil {
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
	return javacompat.HashMapOrderFunc(fields, func(f source.OffsetField) string { return f.Name })
}

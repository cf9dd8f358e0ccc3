package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// bench holds what every measurement shares.
type bench struct {
	db          sourceDB
	kafka       *broker
	topicPrefix string // every topic of this run starts with it
	txSize      int
	timeout     time.Duration // for one drain or one latency run to reach Kafka
	log         *slog.Logger
}

// drainResult is one backlog drain by one system.
type drainResult struct {
	Round         int          `json:"round"`
	Workload      string       `json:"workload"`
	System        string       `json:"system"`
	Changes       int          `json:"changes"`
	Records       int64        `json:"records"` // change events plus delete tombstones
	FirstAppendMs int64        `json:"first_append_ms"`
	LastAppendMs  int64        `json:"last_append_ms"`
	EventsPerSec  float64      `json:"events_per_sec"` // changes / (last - first append time)
	WallSeconds   float64      `json:"wall_seconds"`   // resume request to the last record, task start included
	CPUSeconds    float64      `json:"cpu_seconds"`
	CPUPerMillion float64      `json:"cpu_seconds_per_million_events"`
	PeakRSSMB     float64      `json:"peak_rss_mb"`
	Correctness   correctness  `json:"correctness"`
	Ceiling       *ceilingData `json:"ceiling,omitempty"`
	// KafkaCeiling is a plain producer writing records of the same sizes to a new one-partition topic.
	KafkaCeiling *ceilingData `json:"kafka_ceiling,omitempty"`
}

// ceilingData is a client reading the same backlog raw from the database (pg_recvlogical from a slot
// created beside the system's, or a binlog reader), or a plain Kafka producer.
type ceilingData struct {
	Seconds      float64 `json:"seconds"`
	EventsPerSec float64 `json:"events_per_sec"`
}

// latencyResult is one fixed-rate run by one system.
type latencyResult struct {
	Round       int         `json:"round"`
	System      string      `json:"system"`
	Rate        int         `json:"rate"`
	Events      int         `json:"events"`
	P50Ms       float64     `json:"p50_ms"`
	P99Ms       float64     `json:"p99_ms"`
	MaxMs       float64     `json:"max_ms"`
	Correctness correctness `json:"correctness"`
}

// capture is one connector of one system on its own table and topics (and, on PostgreSQL, slot and
// publication named after id).
type capture struct {
	sys    *system
	id     string
	name   string
	table  string
	prefix string // topic.prefix: every topic of the capture starts with it
	topic  string
	writer *writer
}

func (b *bench) newCapture(sys *system, id string) *capture {
	id = strings.ReplaceAll(id, "-", "_") // a table, slot and publication name: "cdcd-eos" is not an identifier
	prefix := b.topicPrefix + "." + id
	table := "t_" + id
	return &capture{
		sys: sys, id: id, name: "bench-" + id, table: table,
		prefix: prefix, topic: b.db.dataTopic(prefix, table), writer: newWriter(b.db, table),
	}
}

// start creates the topic, the table (with populate rows already there) and the connector, and returns
// once a first change made after the connector streams has reached Kafka: from then on the connector
// has an offset to resume from, and nothing of the workload is missed.
func (b *bench) start(ctx context.Context, c *capture, populate int) error {
	if err := b.kafka.createTopic(ctx, c.topic); err != nil {
		return err
	}
	if err := b.db.prepare(ctx, c); err != nil {
		return err
	}
	if populate > 0 {
		if err := c.writer.populate(ctx, populate); err != nil {
			return err
		}
	}
	if err := c.sys.createConnector(ctx, c.name, b.db.connectorConfig(c, c.sys.tuning)); err != nil {
		return err
	}
	if err := c.sys.waitConnectorState(ctx, c.name, "RUNNING", 1, 2*time.Minute); err != nil {
		return err
	}
	if err := b.db.waitStreaming(ctx, c); err != nil {
		return err
	}
	if _, err := c.writer.commit(ctx, insertWorkload, 1); err != nil {
		return err
	}
	return b.kafka.waitForRecords(ctx, c.topic, 1, 2*time.Minute, c.sys.tasksAlive(c.name), c.sys.exactlyOnce)
}

// pause stops the connector (it records its offset) and waits until it has let go of the database.
func (b *bench) pause(ctx context.Context, c *capture) error {
	if err := c.sys.stopConnector(ctx, c.name); err != nil {
		return err
	}
	if err := c.sys.waitConnectorState(ctx, c.name, "STOPPED", 0, 2*time.Minute); err != nil {
		return err
	}
	return b.db.waitReleased(ctx, c)
}

// cleanup removes everything the capture created; it runs even after a failed measurement.
func (b *bench) cleanup(ctx context.Context, c *capture) {
	steps := []func() error{
		func() error { return c.sys.deleteConnector(ctx, c.name) },
		func() error { return b.db.release(ctx, c) },
		// The data topics, and on MariaDB the schema change topic (the prefix) and the schema history.
		func() error { return b.kafka.deleteTopics(ctx, c.prefix) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			b.log.Warn("cleanup", "connector", c.name, "error", err)
		}
	}
}

// readBack reads the records after the primer and returns the changes in offset order, their commit
// times, the records' append times and the shapes of all records.
func (b *bench) readBack(ctx context.Context, c *capture) (seen []change, commitMs, appendMs []int64, shapes []recordShape, err error) {
	end, err := b.kafka.endOffset(ctx, c.topic)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	err = b.kafka.readRange(ctx, c.topic, 1, end, func(r *kgo.Record) error {
		shapes = append(shapes, shapeOf(r))
		if r.Value == nil {
			return nil // a delete's tombstone
		}
		ch, ts, err := decodeChange(r.Value)
		if err != nil {
			return fmt.Errorf("%s offset %d: %w", c.topic, r.Offset, err)
		}
		seen = append(seen, ch)
		commitMs = append(commitMs, ts)
		appendMs = append(appendMs, r.Timestamp.UnixMilli())
		return nil
	})
	return seen, commitMs, appendMs, shapes, err
}

// drain measures how fast sys empties a backlog of rows changes of workload wl that piled up while its
// connector was stopped. With ceiling, a raw reader (pg_recvlogical, a binlog reader) then reads the same
// backlog from the database.
func (b *bench) drain(ctx context.Context, sys *system, wl workload, round, rows int, ceiling bool) (res drainResult, err error) {
	c := b.newCapture(sys, fmt.Sprintf("%s_%s_r%d", wl.Name, sys.name, round))
	defer b.cleanup(ctx, c)
	res = drainResult{Round: round, Workload: wl.Name, System: sys.name}
	populate := 0
	if wl.UpdatePct > 0 {
		populate = max(rows/5, b.txSize)
	}
	if err := b.start(ctx, c, populate); err != nil {
		return res, err
	}
	if err := b.pause(ctx, c); err != nil {
		return res, err
	}
	var raw ceilingReader
	if ceiling {
		if raw, err = b.db.markCeiling(ctx, c); err != nil {
			return res, err
		}
		defer func() {
			if err := raw.close(ctx); err != nil {
				b.log.Warn("cleanup", "connector", c.name, "error", err)
			}
		}()
	}
	b.log.Info("writing backlog", "system", sys.name, "workload", wl.Name, "round", round, "changes", rows)
	changes, err := c.writer.backlog(ctx, wl, rows, b.txSize)
	if err != nil {
		return res, err
	}
	if ceiling {
		if err := raw.markEnd(ctx); err != nil {
			return res, err
		}
	}
	res.Changes = len(changes)
	want := int64(1 + len(changes)) // the primer, then the backlog
	for _, ch := range changes {
		if ch.Op == 'd' {
			want++ // the tombstone after each delete
		}
	}

	if err := resetPeakRSS(sys.pid); err != nil {
		return res, err
	}
	before, err := readProcessUsage(sys.pid)
	if err != nil {
		return res, err
	}
	started := time.Now()
	if err := sys.resumeConnector(ctx, c.name); err != nil {
		return res, err
	}
	if err := b.kafka.waitForRecords(ctx, c.topic, want, b.timeout, c.sys.tasksAlive(c.name), c.sys.exactlyOnce); err != nil {
		return res, err
	}
	res.WallSeconds = time.Since(started).Seconds()
	after, err := readProcessUsage(sys.pid)
	if err != nil {
		return res, err
	}
	res.CPUSeconds = (after.CPU - before.CPU).Seconds()
	res.CPUPerMillion = res.CPUSeconds / float64(len(changes)) * 1e6
	res.PeakRSSMB = float64(after.PeakRSSK) / 1024
	if err := b.pause(ctx, c); err != nil {
		return res, err
	}

	if ceiling {
		elapsed, err := raw.read(ctx)
		if err != nil {
			return res, err
		}
		res.Ceiling = &ceilingData{Seconds: elapsed.Seconds(), EventsPerSec: float64(len(changes)) / elapsed.Seconds()}
	}

	seen, _, appendMs, shapes, err := b.readBack(ctx, c)
	if err != nil {
		return res, err
	}
	res.Records = int64(len(shapes))
	if ceiling {
		elapsed, err := b.kafka.produceCeiling(ctx, c.prefix+".kafka-ceiling", shapes)
		if err != nil {
			return res, err
		}
		res.KafkaCeiling = &ceilingData{Seconds: elapsed.Seconds(), EventsPerSec: float64(len(changes)) / elapsed.Seconds()}
	}
	res.Correctness = checkChanges(changes, seen)
	if len(appendMs) > 0 {
		res.FirstAppendMs, res.LastAppendMs = appendMs[0], appendMs[len(appendMs)-1]
		// Append times have millisecond resolution; a drain inside one millisecond counts as one.
		res.EventsPerSec = float64(len(changes)) / (float64(max(res.LastAppendMs-res.FirstAppendMs, 1)) / 1000)
	}
	b.log.Info("drained", "system", sys.name, "workload", wl.Name, "round", round,
		"events_per_sec", int(res.EventsPerSec), "cpu_s", res.CPUSeconds, "peak_rss_mb", int(res.PeakRSSMB),
		"lost", res.Correctness.Lost, "order_violations", res.Correctness.OrderViolations)
	return res, nil
}

// latency offers rate single-statement insert transactions per second for d to a running connector and
// measures commit time (source.ts_ms) to the broker's append time for every event.
func (b *bench) latency(ctx context.Context, sys *system, round, rate int, d time.Duration) (res latencyResult, err error) {
	c := b.newCapture(sys, fmt.Sprintf("latency_%s_r%d", sys.name, round))
	defer b.cleanup(ctx, c)
	res = latencyResult{Round: round, System: sys.name, Rate: rate}
	if err := b.start(ctx, c, 0); err != nil {
		return res, err
	}
	b.log.Info("offering load", "system", sys.name, "round", round, "rows_per_sec", rate, "seconds", d.Seconds())
	changes, committedMs, err := c.writer.paced(ctx, rate, d)
	if err != nil {
		return res, err
	}
	if err := b.kafka.waitForRecords(ctx, c.topic, int64(1+len(changes)), b.timeout, c.sys.tasksAlive(c.name), c.sys.exactlyOnce); err != nil {
		return res, err
	}
	seen, commitMs, appendMs, _, err := b.readBack(ctx, c)
	if err != nil {
		return res, err
	}
	if len(seen) == 0 {
		return res, fmt.Errorf("no change events after the primer on %s", c.topic)
	}
	if !b.db.sourceTsIsCommitMs() {
		commitMs = writerCommitTimes(changes, committedMs, seen, appendMs)
	}
	lat := make([]float64, len(seen))
	for i := range seen {
		lat[i] = float64(appendMs[i] - commitMs[i])
	}
	res.Events = len(seen)
	res.P50Ms, res.P99Ms, res.MaxMs = percentile(lat, 50), percentile(lat, 99), percentile(lat, 100)
	res.Correctness = checkChanges(changes, seen)
	b.log.Info("latency", "system", sys.name, "round", round, "p50_ms", res.P50Ms, "p99_ms", res.P99Ms, "max_ms", res.MaxMs)
	return res, nil
}

// writerCommitTimes gives each seen insert the time its COMMIT returned to the writer (committedMs runs
// parallel to the inserts committed): a commit time to the millisecond where the events carry none, on
// the clock the broker's append times use. An event of no committed insert (checkChanges counts it as
// unexpected) keeps its append time, a latency of zero, rather than skewing the percentiles.
func writerCommitTimes(committed []change, committedMs []int64, seen []change, appendMs []int64) []int64 {
	byID := make(map[int64]int64, len(committed))
	for i, c := range committed {
		byID[c.ID] = committedMs[i]
	}
	out := slices.Clone(appendMs)
	for i, s := range seen {
		if ms, ok := byID[s.ID]; ok {
			out[i] = ms
		}
	}
	return out
}

// Package metrics holds the readers' Prometheus metrics: what operators read from Debezium's streaming and
// snapshot MBeans (TotalNumberOfEventsSeen and the per-operation counts, NumberOfCommittedTransactions,
// MilliSecondsBehindSource, LastEvent, Connected, snapshot progress), labelled by connector and task. They are
// process-wide: every connector of a worker reports into them, and the worker serves them on GET /metrics.
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

var labels = []string{"connector", "task"}

var (
	events = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cdcd_events_total", Help: "Change events read (Debezium's TotalNumberOfEventsSeen), by op: c, u, d, t, m, r.",
	}, append(labels, "op"))
	transactions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cdcd_transactions_total", Help: "Transactions read from the log (NumberOfCommittedTransactions).",
	}, labels)
	behindSource = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cdcd_milliseconds_behind_source", Help: "Time between the last event's change in the database and its reading (MilliSecondsBehindSource).",
	}, labels)
	lastEvent = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cdcd_last_event_timestamp_seconds", Help: "When the last event was read, Unix time (LastEvent).",
	}, labels)
	connected = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cdcd_connected", Help: "1 while the reader holds its replication connection (Connected).",
	}, labels)
	snapshotRunning = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cdcd_snapshot_running", Help: "1 while a snapshot runs (SnapshotRunning).",
	}, labels)
	snapshotTables = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cdcd_snapshot_tables", Help: "Tables of the running or last snapshot, by state: total, done (TotalTableCount, RemainingTableCount).",
	}, append(labels, "state"))
	snapshotRows = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cdcd_snapshot_rows_scanned", Help: "Rows read by the running or last snapshot (RowsScanned).",
	}, labels)
	snapshotRowsEstimate = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cdcd_snapshot_rows_estimated", Help: "The database's estimate of the rows the snapshot reads.",
	}, labels)
	snapshotRemaining = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cdcd_snapshot_remaining_seconds", Help: "Estimated time until the snapshot finishes, from its rate so far.",
	}, labels)
)

// Collectors returns the metrics for registration.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{events, transactions, behindSource, lastEvent, connected, snapshotRunning,
		snapshotTables, snapshotRows, snapshotRowsEstimate, snapshotRemaining}
}

// task is the only task a cdcd connector runs, as Debezium's connectors run one.
const task = "0"

// Stream is one connector's streaming metrics.
type Stream struct {
	events       map[byte]prometheus.Counter
	transactions prometheus.Counter
	behind       prometheus.Gauge
	last         prometheus.Gauge
	connected    prometheus.Gauge
	state        *connectorState // the same facts under Debezium's names (debezium.go)
}

// NewStream returns the streaming metrics of connector.
func NewStream(connector string) *Stream {
	s := &Stream{events: map[byte]prometheus.Counter{}, transactions: transactions.WithLabelValues(connector, task),
		behind: behindSource.WithLabelValues(connector, task), last: lastEvent.WithLabelValues(connector, task),
		connected: connected.WithLabelValues(connector, task), state: stateOf(connector)}
	for _, op := range "cudtmr" {
		s.events[byte(op)] = events.WithLabelValues(connector, task, string(op))
	}
	return s
}

// Event counts an event of op (c, u, d, t, m or r).
func (s *Stream) Event(op byte) {
	s.events[op].Inc()
	switch op {
	case 'c':
		s.state.created.Add(1)
	case 'u':
		s.state.updated.Add(1)
	case 'd':
		s.state.deleted.Add(1)
	case 'r': // a snapshot's rows count in the snapshot context (Snapshot.Progress)
	default:
		s.state.otherEvents.Add(1)
	}
}

// Committed counts a transaction the database committed at changed and the reader finished reading at
// now: the lag and last-event time move once per transaction, which keeps the per-event cost a counter.
func (s *Stream) Committed(changed, now time.Time) {
	s.transactions.Inc()
	s.state.transactions.Add(1)
	if !changed.IsZero() {
		lag := now.Sub(changed).Milliseconds()
		s.behind.Set(float64(lag))
		s.state.lag(lag)
	}
	s.last.Set(float64(now.UnixMilli()) / 1000)
	s.state.lastEventMilli.Store(now.UnixMilli())
}

// Filtered counts a change the include/exclude lists or skipped.operations dropped (Debezium's
// NumberOfEventsFiltered).
func (s *Stream) Filtered() { s.state.filtered.Add(1) }

// Binlog records a binlog reader's position in its current file and whether the server uses GTIDs.
func (s *Stream) Binlog(pos int64, gtids bool) {
	s.state.binlog.Store(true)
	s.state.binlogPos.Store(pos)
	s.state.gtidMode.Store(gtids)
}

// SkippedEvent counts a binlog event passed over when resuming inside a transaction delivered in part.
func (s *Stream) SkippedEvent() { s.state.skippedEvents.Add(1) }

// Disconnected counts a lost binlog connection.
func (s *Stream) Disconnected() { s.state.disconnects.Add(1) }

// RolledBack counts a transaction the binlog ended with ROLLBACK.
func (s *Stream) RolledBack() { s.state.rolls.Add(1) }

// Connected records whether the replication connection is open.
func (s *Stream) Connected(up bool) {
	s.state.connected.Store(up)
	if up {
		s.connected.Set(1)
	} else {
		s.connected.Set(0)
	}
}

// Snapshot is one connector's snapshot metrics.
type Snapshot struct {
	running, total, done, rows, estimate, remaining prometheus.Gauge
	state                                           *connectorState
}

// NewSnapshot returns the snapshot metrics of connector.
func NewSnapshot(connector string) *Snapshot {
	return &Snapshot{running: snapshotRunning.WithLabelValues(connector, task),
		total: snapshotTables.WithLabelValues(connector, task, "total"), done: snapshotTables.WithLabelValues(connector, task, "done"),
		rows: snapshotRows.WithLabelValues(connector, task), estimate: snapshotRowsEstimate.WithLabelValues(connector, task),
		remaining: snapshotRemaining.WithLabelValues(connector, task), state: stateOf(connector)}
}

// Start records a snapshot of tables tables and (when the database estimates it, else 0) rows rows.
func (s *Snapshot) Start(tables int, rows int64) {
	s.running.Set(1)
	s.total.Set(float64(tables))
	s.done.Set(0)
	s.rows.Set(0)
	s.estimate.Set(float64(rows))
	s.state.mu.Lock()
	s.state.snap = snapshotState{running: true, started: time.Now(), tables: tables, rowsByTable: map[string]int64{}}
	s.state.mu.Unlock()
}

// Progress records the tables done, the rows read and, when known (≥ 0), the estimated seconds left.
func (s *Snapshot) Progress(tablesDone int, rows int64, remaining float64) {
	s.done.Set(float64(tablesDone))
	s.rows.Set(float64(rows))
	if remaining >= 0 {
		s.remaining.Set(remaining)
	}
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	snap := &s.state.snap
	if rows != snap.rows {
		snap.lastRow = time.Now()
	}
	snap.done, snap.rows = tablesDone, rows
}

// TableRows records the rows the snapshot read of table (schema.table, or database.table for MySQL) so
// far: Debezium's RowsScanned, per table.
func (s *Snapshot) TableRows(table string, rows int64) {
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	if s.state.snap.rowsByTable == nil {
		s.state.snap.rowsByTable = map[string]int64{}
	}
	s.state.snap.rowsByTable[table] = rows
}

// Paused records an incremental snapshot's pause-snapshot (true) and resume-snapshot (false).
func (s *Snapshot) Paused(paused bool) {
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	snap := &s.state.snap
	switch {
	case paused && !snap.paused:
		snap.paused, snap.pausedSince = true, time.Now()
	case !paused && snap.paused:
		snap.paused, snap.pausedFor = false, snap.pausedFor+time.Since(snap.pausedSince)
	}
}

// Stop records that no snapshot runs.
// A snapshot that stops with every table done completed; one that stops earlier (an error, the task
// stopping) was aborted.
func (s *Snapshot) Stop() {
	s.running.Set(0)
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	snap := &s.state.snap
	if !snap.running {
		return
	}
	snap.running, snap.stopped = false, time.Now()
	snap.completed = snap.done >= snap.tables
	snap.aborted = !snap.completed
}

// lag records a MilliSecondsBehindSource measurement.
func (s *connectorState) lag(ms int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.behind = ms
	if s.behindCount == 0 || ms < s.behindMin {
		s.behindMin = ms
	}
	if s.behindCount == 0 || ms > s.behindMax {
		s.behindMax = ms
	}
	s.behindSum += ms
	s.behindCount++
	s.behindSketch.add(float64(ms))
}

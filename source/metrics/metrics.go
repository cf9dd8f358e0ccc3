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
}

// NewStream returns the streaming metrics of connector.
func NewStream(connector string) *Stream {
	s := &Stream{events: map[byte]prometheus.Counter{}, transactions: transactions.WithLabelValues(connector, task),
		behind: behindSource.WithLabelValues(connector, task), last: lastEvent.WithLabelValues(connector, task),
		connected: connected.WithLabelValues(connector, task)}
	for _, op := range "cudtmr" {
		s.events[byte(op)] = events.WithLabelValues(connector, task, string(op))
	}
	return s
}

// Event counts an event of op (c, u, d, t, m or r).
func (s *Stream) Event(op byte) { s.events[op].Inc() }

// Committed counts a transaction the database committed at changed and the reader finished reading at
// now: the lag and last-event time move once per transaction, which keeps the per-event cost a counter.
func (s *Stream) Committed(changed, now time.Time) {
	s.transactions.Inc()
	if !changed.IsZero() {
		s.behind.Set(float64(now.Sub(changed).Milliseconds()))
	}
	s.last.Set(float64(now.UnixMilli()) / 1000)
}

// Connected records whether the replication connection is open.
func (s *Stream) Connected(up bool) {
	if up {
		s.connected.Set(1)
	} else {
		s.connected.Set(0)
	}
}

// Snapshot is one connector's snapshot metrics.
type Snapshot struct {
	running, total, done, rows, estimate, remaining prometheus.Gauge
}

// NewSnapshot returns the snapshot metrics of connector.
func NewSnapshot(connector string) *Snapshot {
	return &Snapshot{running: snapshotRunning.WithLabelValues(connector, task),
		total: snapshotTables.WithLabelValues(connector, task, "total"), done: snapshotTables.WithLabelValues(connector, task, "done"),
		rows: snapshotRows.WithLabelValues(connector, task), estimate: snapshotRowsEstimate.WithLabelValues(connector, task),
		remaining: snapshotRemaining.WithLabelValues(connector, task)}
}

// Start records a snapshot of tables tables and (when the database estimates it, else 0) rows rows.
func (s *Snapshot) Start(tables int, rows int64) {
	s.running.Set(1)
	s.total.Set(float64(tables))
	s.done.Set(0)
	s.rows.Set(0)
	s.estimate.Set(float64(rows))
}

// Progress records the tables done, the rows read and, when known (≥ 0), the estimated seconds left.
func (s *Snapshot) Progress(tablesDone int, rows int64, remaining float64) {
	s.done.Set(float64(tablesDone))
	s.rows.Set(float64(rows))
	if remaining >= 0 {
		s.remaining.Set(remaining)
	}
}

// Stop records that no snapshot runs.
func (s *Snapshot) Stop() { s.running.Set(0) }

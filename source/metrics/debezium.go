package metrics

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// This file renders the readers' metrics under the names an operator's Debezium dashboards read: Debezium's
// MBeans (debezium.<plugin>:type=connector-metrics,context=<snapshot|streaming>,server=<topic.prefix>) as
// the Prometheus JMX exporter renders them with the configuration of Debezium's monitoring example
// (debezium/debezium-examples, monitoring/debezium-jmx-exporter/config.yml):
//
//	debezium.([^:]+)<type=connector-metrics, context=([^,]+), server=([^,]+), key=([^>]+)><>RowsScanned
//	  → debezium_metrics_RowsScanned{plugin="$1", name="$3", context="$2", table="$4"}
//	debezium.([^:]+)<type=connector-metrics, context=([^,]+), server=([^>]+)>([^:]+)
//	  → debezium_metrics_$4{plugin="$1", name="$3", context="$2"}
//
// So one series per numeric or boolean attribute (a boolean is 1 or 0), named after the attribute as
// Debezium spells it, with no TYPE but untyped (the rules set none); a Map<String, Long> attribute is one
// series per key (the exporter turns its TabularData rows into a "key" property). String attributes
// (LastEvent, LastTransactionId, ChunkId…), String arrays (CapturedTables) and maps of strings
// (SourceEventPosition) are not rendered: the exporter skips them. The task and database properties of
// Debezium's multi-partition connectors (SQL Server) do not apply: PostgreSQL, MySQL and MariaDB name
// their MBeans by context and server only.
//
// The values are the ones the cdcd_* series carry, kept a second time as plain numbers (one atomic add per
// event) so a scrape renders them without reading the cdcd_* collectors back.

var (
	descRowsScanned = prometheus.NewDesc("debezium_metrics_RowsScanned", "Rows scanned per table by the snapshot (RowsScanned).",
		[]string{"plugin", "name", "context", "table"}, nil)
	dbzLabels = []string{"plugin", "name", "context"}
	dbzDescs  = map[string]*prometheus.Desc{}
)

// dbzAttribute declares the series of one MBean attribute.
func dbzAttribute(attr, help string) *prometheus.Desc {
	d := prometheus.NewDesc("debezium_metrics_"+attr, help+" ("+attr+")", dbzLabels, nil)
	dbzDescs[attr] = d
	return d
}

// The attributes, in the order Debezium's MXBean interfaces list them.
var (
	// CommonEventMetricsMXBean (both contexts).
	dMillisSinceLast = dbzAttribute("MilliSecondsSinceLastEvent", "Milliseconds since the last event was read, -1 before the first")
	dTotalEvents     = dbzAttribute("TotalNumberOfEventsSeen", "Events read: change events while streaming, rows while snapshotting")
	dCreateEvents    = dbzAttribute("TotalNumberOfCreateEventsSeen", "Create events read")
	dUpdateEvents    = dbzAttribute("TotalNumberOfUpdateEventsSeen", "Update events read")
	dDeleteEvents    = dbzAttribute("TotalNumberOfDeleteEventsSeen", "Delete events read")
	dFiltered        = dbzAttribute("NumberOfEventsFiltered", "Changes dropped by the include/exclude lists or skipped.operations")
	dErroneous       = dbzAttribute("NumberOfErroneousEvents", "Events that failed to process; cdcd fails the task instead")
	// Not an attribute of Debezium's since 1.0 (DBZ-1209), but Debezium's example dashboard plots it.
	dSkipped = dbzAttribute("NumberOfEventsSkipped", "Events skipped; kept for Debezium's example dashboard, always 0")
	// QueueMetricsMXBean (both contexts). cdcd's queue holds batches (transactions), not records.
	dQueueTotal     = dbzAttribute("QueueTotalCapacity", "Batches the pipeline's queue holds at most")
	dQueueRemaining = dbzAttribute("QueueRemainingCapacity", "Free batch slots of the pipeline's queue")
	dQueueMaxBytes  = dbzAttribute("MaxQueueSizeInBytes", "The queue's bound in bytes; 0: bounded by batches only")
	dQueueBytes     = dbzAttribute("CurrentQueueSizeInBytes", "Bytes in the queue; 0 while MaxQueueSizeInBytes is 0, as in Debezium")
	// ConnectionMetricsMXBean and StreamingMetricsMXBean.
	dConnected        = dbzAttribute("Connected", "1 while the reader holds its replication connection")
	dBehindSource     = dbzAttribute("MilliSecondsBehindSource", "Milliseconds between the last transaction's commit in the database and its reading, -1 before the first")
	dTransactions     = dbzAttribute("NumberOfCommittedTransactions", "Transactions read from the log")
	dUnchangedSkipped = dbzAttribute("NumberOfUnchangedEventsSkipped", "Update events without a change skipped; -1: skip.messages.without.change is off")
	// StreamingStatisticsMXBean.
	dBehindMin = dbzAttribute("MilliSecondsBehindSourceMinValue", "Smallest MilliSecondsBehindSource measured")
	dBehindMax = dbzAttribute("MilliSecondsBehindSourceMaxValue", "Largest MilliSecondsBehindSource measured")
	dBehindAvg = dbzAttribute("MilliSecondsBehindSourceAverageValue", "Mean MilliSecondsBehindSource measured")
	dBehindP50 = dbzAttribute("MilliSecondsBehindSourceP50", "Median MilliSecondsBehindSource measured, within 1%")
	dBehindP95 = dbzAttribute("MilliSecondsBehindSourceP95", "95th percentile of MilliSecondsBehindSource measured, within 1%")
	dBehindP99 = dbzAttribute("MilliSecondsBehindSourceP99", "99th percentile of MilliSecondsBehindSource measured, within 1%")
	// BinlogStreamingChangeEventSourceMetricsMXBean (MySQL and MariaDB only; its string attributes,
	// BinlogFilename and GtidSet, the exporter does not render).
	dBinlogPosition    = dbzAttribute("BinlogPosition", "Position in the current binlog file of the last event read")
	dGtidMode          = dbzAttribute("IsGtidModeEnabled", "1 when the server's binlog carries GTIDs")
	dSkippedEvents     = dbzAttribute("NumberOfSkippedEvents", "Events passed over on a restart inside a transaction Debezium or cdcd had delivered in part")
	dDisconnects       = dbzAttribute("NumberOfDisconnects", "Times the binlog connection was lost")
	dRolledBack        = dbzAttribute("NumberOfRolledBackTransactions", "Transactions the binlog ended with ROLLBACK")
	dNotWellFormed     = dbzAttribute("NumberOfNotWellFormedTransactions", "Transactions without a proper end; cdcd fails on them, always 0")
	dLargeTransactions = dbzAttribute("NumberOfLargeTransactions", "Transactions too large for Debezium's buffer; cdcd has none, always 0")
	// SnapshotMetricsMXBean.
	dTotalTables     = dbzAttribute("TotalTableCount", "Tables the snapshot reads")
	dRemainingTables = dbzAttribute("RemainingTableCount", "Tables the snapshot has yet to finish")
	dSnapRunning     = dbzAttribute("SnapshotRunning", "1 while a snapshot runs")
	dSnapPaused      = dbzAttribute("SnapshotPaused", "1 while an incremental snapshot is paused (pause-snapshot)")
	dSnapCompleted   = dbzAttribute("SnapshotCompleted", "1 once the snapshot read every table")
	dSnapAborted     = dbzAttribute("SnapshotAborted", "1 once the snapshot stopped before reading every table")
	dSnapDuration    = dbzAttribute("SnapshotDurationInSeconds", "Seconds the snapshot ran (so far, while it runs)")
	dSnapPausedDur   = dbzAttribute("SnapshotPausedDurationInSeconds", "Seconds the snapshot was paused")
)

// connectorState is one connector's Debezium-facing values. The counters are atomics (the reader adds to
// them per event); the rest is guarded by mu.
type connectorState struct {
	plugin, server string // from Identify; empty until then, and nothing is rendered

	created, updated, deleted, otherEvents atomic.Int64 // otherEvents: truncates and messages
	filtered                               atomic.Int64 // changes the filters or skipped.operations dropped

	// Binlog readers only (binlog set by the first Binlog call).
	binlog                            atomic.Bool
	binlogPos                         atomic.Int64
	gtidMode                          atomic.Bool
	skippedEvents, disconnects, rolls atomic.Int64
	transactions                      atomic.Int64
	lastEventMilli                    atomic.Int64 // Unix ms of the last transaction read; 0: none
	connected                         atomic.Bool

	mu                              sync.Mutex
	behind                          int64 // -1: no transaction read yet
	behindMin, behindMax, behindSum int64
	behindCount                     int64
	behindSketch                    sketch // for the percentiles
	snap                            snapshotState
}

// snapshotState is the snapshot MBean's view of the running or last snapshot.
type snapshotState struct {
	running, completed, aborted bool
	started, stopped            time.Time // zero: no snapshot started / none stopped since
	tables, done                int
	rows                        int64
	lastRow                     time.Time
	rowsByTable                 map[string]int64
	// An incremental snapshot's pauses (pause-snapshot, resume-snapshot).
	paused      bool
	pausedSince time.Time
	pausedFor   time.Duration // the pauses that ended
}

// pausedSeconds is SnapshotPausedDurationInSeconds: whole seconds of pauses, the current one included.
func (s snapshotState) pausedSeconds(now time.Time) float64 {
	d := s.pausedFor
	if s.paused {
		d += now.Sub(s.pausedSince)
	}
	return math.Floor(d.Seconds())
}

// registry holds the connectors' states, by connector name.
var registry = struct {
	mu sync.Mutex
	m  map[string]*connectorState
}{m: map[string]*connectorState{}}

// stateOf returns connector's state, creating it.
func stateOf(connector string) *connectorState {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	s := registry.m[connector]
	if s == nil {
		s = &connectorState{behind: -1}
		registry.m[connector] = s
	}
	return s
}

// forgetState drops connector's state: its Debezium series go with its cdcd_* series (see Forget).
func forgetState(connector string) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	delete(registry.m, connector)
}

// Identify names connector's Debezium MBeans: plugin is Debezium's connector type as its MBean domain
// spells it (postgres, mysql, mariadb) and server its topic.prefix. A reader calls it when it is built;
// a connector is rendered under Debezium's names from then on, snapshot context included, as Debezium
// registers both MBeans when its task starts.
func Identify(connector, plugin, server string) {
	s := stateOf(connector)
	registry.mu.Lock()
	defer registry.mu.Unlock()
	s.plugin, s.server = plugin, server
}

// QueueLevel is a connector's pipeline queue: its capacity and the slots in use, in batches.
type QueueLevel struct{ Capacity, Used int }

// Queues reports the pipeline queues of the connectors on this worker, by connector. It must not block.
type Queues func() map[string]QueueLevel

// DebeziumCollector renders every identified connector's metrics under Debezium's MBean names (see the
// comment at the top of this file). queues supplies the QueueTotalCapacity and QueueRemainingCapacity
// attributes; without it, or for a connector it does not list, both are 0.
type DebeziumCollector struct {
	queues Queues
	now    func() time.Time
}

var _ prometheus.Collector = (*DebeziumCollector)(nil)

// NewDebeziumCollector returns the collector of Debezium's names; register it once per registry.
func NewDebeziumCollector(queues Queues) *DebeziumCollector {
	return &DebeziumCollector{queues: queues, now: time.Now}
}

// Describe implements prometheus.Collector.
func (c *DebeziumCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range dbzDescs {
		ch <- d
	}
	ch <- descRowsScanned
}

// Collect implements prometheus.Collector. It takes each connector's lock briefly; a reader adding to a
// counter meanwhile is not held up.
func (c *DebeziumCollector) Collect(ch chan<- prometheus.Metric) {
	registry.mu.Lock()
	states := make(map[string]*connectorState, len(registry.m))
	idents := make(map[string][2]string, len(registry.m))
	for name, s := range registry.m {
		if s.plugin != "" {
			states[name], idents[name] = s, [2]string{s.plugin, s.server}
		}
	}
	registry.mu.Unlock()
	now := c.now()
	var levels map[string]QueueLevel
	if c.queues != nil && len(states) > 0 {
		levels = c.queues()
	}
	for name, s := range states {
		plugin, server := idents[name][0], idents[name][1]
		emit := func(d *prometheus.Desc, context string, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.UntypedValue, v, plugin, server, context)
		}
		capacity, used := levels[name].Capacity, levels[name].Used
		queue := func(context string) {
			emit(dQueueTotal, context, float64(capacity))
			emit(dQueueRemaining, context, float64(capacity-used))
			emit(dQueueMaxBytes, context, 0)
			emit(dQueueBytes, context, 0)
		}

		// Streaming.
		const st = "streaming"
		created, updated, deleted := s.created.Load(), s.updated.Load(), s.deleted.Load()
		emit(dMillisSinceLast, st, sinceMilli(now, s.lastEventMilli.Load()))
		emit(dTotalEvents, st, float64(created+updated+deleted+s.otherEvents.Load()))
		emit(dCreateEvents, st, float64(created))
		emit(dUpdateEvents, st, float64(updated))
		emit(dDeleteEvents, st, float64(deleted))
		emit(dFiltered, st, float64(s.filtered.Load()))
		if s.binlog.Load() {
			emit(dBinlogPosition, st, float64(s.binlogPos.Load()))
			emit(dGtidMode, st, boolValue(s.gtidMode.Load()))
			emit(dSkippedEvents, st, float64(s.skippedEvents.Load()))
			emit(dDisconnects, st, float64(s.disconnects.Load()))
			emit(dRolledBack, st, float64(s.rolls.Load()))
			emit(dNotWellFormed, st, 0)
			emit(dLargeTransactions, st, 0)
		}
		emit(dErroneous, st, 0)
		emit(dSkipped, st, 0)
		queue(st)
		emit(dConnected, st, boolValue(s.connected.Load()))
		emit(dTransactions, st, float64(s.transactions.Load()))
		emit(dUnchangedSkipped, st, -1)

		s.mu.Lock()
		behind, count, bmin, bmax, bsum := s.behind, s.behindCount, s.behindMin, s.behindMax, s.behindSum
		p50, _ := s.behindSketch.quantile(0.50)
		p95, _ := s.behindSketch.quantile(0.95)
		p99, _ := s.behindSketch.quantile(0.99)
		snap := s.snap
		rows := make(map[string]int64, len(snap.rowsByTable))
		for t, n := range snap.rowsByTable {
			rows[t] = n
		}
		s.mu.Unlock()
		emit(dBehindSource, st, float64(behind))
		if count > 0 { // Debezium's statistics are null, and not rendered, before the first measurement
			emit(dBehindMin, st, float64(bmin))
			emit(dBehindMax, st, float64(bmax))
			emit(dBehindAvg, st, float64(bsum)/float64(count))
			emit(dBehindP50, st, p50)
			emit(dBehindP95, st, p95)
			emit(dBehindP99, st, p99)
		}

		// Snapshot.
		const sn = "snapshot"
		lastRow := int64(0)
		if !snap.lastRow.IsZero() {
			lastRow = snap.lastRow.UnixMilli()
		}
		emit(dMillisSinceLast, sn, sinceMilli(now, lastRow))
		emit(dTotalEvents, sn, float64(snap.rows))
		emit(dCreateEvents, sn, 0)
		emit(dUpdateEvents, sn, 0)
		emit(dDeleteEvents, sn, 0)
		emit(dFiltered, sn, 0)
		emit(dErroneous, sn, 0)
		emit(dSkipped, sn, 0)
		queue(sn)
		emit(dTotalTables, sn, float64(snap.tables))
		emit(dRemainingTables, sn, float64(max(snap.tables-snap.done, 0)))
		emit(dSnapRunning, sn, boolValue(snap.running))
		emit(dSnapPaused, sn, boolValue(snap.paused))
		emit(dSnapCompleted, sn, boolValue(snap.completed))
		emit(dSnapAborted, sn, boolValue(snap.aborted))
		emit(dSnapDuration, sn, snap.duration(now))
		emit(dSnapPausedDur, sn, snap.pausedSeconds(now))
		for table, n := range rows {
			ch <- prometheus.MustNewConstMetric(descRowsScanned, prometheus.UntypedValue, float64(n), plugin, server, sn, table)
		}
	}
}

// duration is SnapshotDurationInSeconds: whole seconds from the start to the stop, or to now while it
// runs; 0 before any snapshot.
func (s snapshotState) duration(now time.Time) float64 {
	switch {
	case s.started.IsZero():
		return 0
	case s.running || s.stopped.IsZero():
		return math.Floor(now.Sub(s.started).Seconds())
	default:
		return math.Floor(s.stopped.Sub(s.started).Seconds())
	}
}

// sinceMilli is MilliSecondsSinceLastEvent: -1 when there was no event.
func sinceMilli(now time.Time, lastMilli int64) float64 {
	if lastMilli == 0 {
		return -1
	}
	return float64(max(now.UnixMilli()-lastMilli, 0))
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

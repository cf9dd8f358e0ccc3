package postgres

import (
	"github.com/prometheus/client_golang/prometheus"
)

// The reader's metrics, labelled by connector. They are process-wide: every connector of a worker reports
// into them, and the worker serves them on GET /metrics next to the slot guardian's.
var (
	eventsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cdcd_events_total", Help: "Change events read, by connector and op (c, u, d, t, m, r).",
	}, []string{"connector", "op"})
	transactionsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cdcd_transactions_total", Help: "Transactions read from the slot.",
	}, []string{"connector"})
	receivedLSN = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cdcd_received_lsn", Help: "The last WAL position received from the server.",
	}, []string{"connector"})
	releasedLSN = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cdcd_released_lsn", Help: "The last WAL position released to the server (confirmed_flush_lsn): its offset is durable.",
	}, []string{"connector"})
	snapshotRunning = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cdcd_snapshot_running", Help: "1 while a snapshot runs.",
	}, []string{"connector"})
	snapshotTables = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cdcd_snapshot_tables", Help: "Tables of the running or last snapshot, by state (total, done).",
	}, []string{"connector", "state"})
	snapshotRows = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cdcd_snapshot_rows_scanned", Help: "Rows read by the running or last snapshot.",
	}, []string{"connector"})
	snapshotRowsEstimate = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cdcd_snapshot_rows_estimated", Help: "PostgreSQL's estimate (pg_class.reltuples) of the rows the snapshot reads.",
	}, []string{"connector"})
	snapshotRemainingSeconds = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cdcd_snapshot_remaining_seconds", Help: "Estimated time until the snapshot finishes, from its rate so far.",
	}, []string{"connector"})
)

// Collectors returns the reader's metrics for registration.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{eventsTotal, transactionsTotal, receivedLSN, releasedLSN, snapshotRunning,
		snapshotTables, snapshotRows, snapshotRowsEstimate, snapshotRemainingSeconds}
}

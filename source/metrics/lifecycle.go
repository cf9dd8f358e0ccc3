package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Declare makes connector's cdcd_connected series exist, at 0, before its reader first connects: a
// connector whose database cannot be reached shows 0 instead of no series at all. The runtime calls it
// when it starts the connector's task.
func Declare(connector string) {
	connected.WithLabelValues(connector, task).Add(0) // creates the series without changing a live value
}

// Forget deletes every series of connector: the runtime calls it when the connector is deleted (or no
// longer runs on this worker), so that a gone connector does not keep reporting its last values.
func Forget(connector string) {
	match := prometheus.Labels{"connector": connector}
	for _, v := range []*prometheus.MetricVec{events.MetricVec, transactions.MetricVec, behindSource.MetricVec,
		lastEvent.MetricVec, connected.MetricVec, snapshotRunning.MetricVec, snapshotTables.MetricVec,
		snapshotRows.MetricVec, snapshotRowsEstimate.MetricVec, snapshotRemaining.MetricVec} {
		v.DeletePartialMatch(match)
	}
	forgetState(connector) // and its Debezium-named series (debezium.go)
	forgetHooks.Lock()
	defer forgetHooks.Unlock()
	for _, f := range forgetHooks.fs {
		f(connector)
	}
}

// forgetHooks are the readers' own Forget functions (OnForget).
var forgetHooks struct {
	sync.Mutex
	fs []func(connector string)
}

// OnForget makes Forget call f too: a reader package whose own series are labelled by connector (PostgreSQL's
// cdcd_received_lsn) registers its deletion of them once, at init.
func OnForget(f func(connector string)) {
	forgetHooks.Lock()
	defer forgetHooks.Unlock()
	forgetHooks.fs = append(forgetHooks.fs, f)
}

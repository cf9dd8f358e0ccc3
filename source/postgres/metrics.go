package postgres

import (
	"github.com/cdcd/cdcd/source/metrics"
	"github.com/prometheus/client_golang/prometheus"
)

// The PostgreSQL reader's own metrics, labelled by connector; the metrics every reader has are in
// source/metrics.
var (
	receivedLSN = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cdcd_received_lsn", Help: "The last WAL position received from the server.",
	}, []string{"connector"})
	releasedLSN = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cdcd_released_lsn", Help: "The last WAL position released to the server (confirmed_flush_lsn): its offset is durable.",
	}, []string{"connector"})
)

// The reader's own series go with the shared ones when the runtime forgets a connector.
func init() { metrics.OnForget(forgetMetrics) }

func forgetMetrics(connector string) {
	match := prometheus.Labels{"connector": connector}
	receivedLSN.DeletePartialMatch(match)
	releasedLSN.DeletePartialMatch(match)
}

// Collectors returns the reader's own metrics for registration.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{receivedLSN, releasedLSN}
}

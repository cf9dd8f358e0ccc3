package pipeline

import "github.com/prometheus/client_golang/prometheus"

// The pipelines' queues (Debezium's QueueTotalCapacity and QueueRemainingCapacity): batches between the
// reader and the offset commit.
var (
	queueCapacity = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cdcd_queue_capacity", Help: "Batches a connector's pipeline holds between reading and the offset commit, at most (QueueTotalCapacity).",
	}, []string{"connector", "task"})
	queueSize = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cdcd_queue_size", Help: "Batches read and not yet committed (QueueTotalCapacity minus QueueRemainingCapacity).",
	}, []string{"connector", "task"})
)

// Collectors returns the pipelines' metrics for registration.
func Collectors() []prometheus.Collector { return []prometheus.Collector{queueCapacity, queueSize} }

// ForgetMetrics deletes connector's queue series (the connector was deleted or left this worker).
func ForgetMetrics(connector string) {
	match := prometheus.Labels{"connector": connector}
	queueCapacity.DeletePartialMatch(match)
	queueSize.DeletePartialMatch(match)
}

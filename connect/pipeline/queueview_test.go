package pipeline

import (
	"testing"

	srcmetrics "github.com/cdcd/cdcd/source/metrics"
)

// TestQueueLevels reads the queue series back, by connector, and creates none.
func TestQueueLevels(t *testing.T) {
	const conn = "queue-levels"
	defer ForgetMetrics(conn)
	queueCapacity.WithLabelValues(conn, "0").Set(8)
	queueSize.WithLabelValues(conn, "0").Set(3)
	if got := QueueLevels()[conn]; got != (srcmetrics.QueueLevel{Capacity: 8, Used: 3}) {
		t.Errorf("QueueLevels()[%s] = %+v, want capacity 8, used 3", conn, got)
	}
	ForgetMetrics(conn)
	if _, ok := QueueLevels()[conn]; ok {
		t.Error("a forgotten connector's queue is still reported")
	}
	if _, ok := gauges(queueCapacity)[conn]; ok {
		t.Error("reading the levels created a series")
	}
}

package connect

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestConnectCollectorNames: the worker's connectors and tasks, and its transport's traffic, under the
// names the JMX exporter gives connect-worker-metrics and connect-metrics.
func TestConnectCollectorNames(t *testing.T) {
	w := &Worker{connectors: map[string]*connector{
		"running": {name: "running", task: &task{}}, "stopped": {name: "stopped"},
	}}
	in, out := uint64(100), uint64(40)
	c := NewConnectCollector(w, "connect-1", func() (uint64, uint64) { return in, out })
	want := `
# HELP kafka_connect_worker_metrics_connector_count The number of connectors run in this worker. (connector-count)
# TYPE kafka_connect_worker_metrics_connector_count untyped
kafka_connect_worker_metrics_connector_count 1
# HELP kafka_connect_worker_metrics_task_count The number of tasks run in this worker. (task-count)
# TYPE kafka_connect_worker_metrics_task_count untyped
kafka_connect_worker_metrics_task_count 1
# HELP kafka_connect_metrics_incoming_byte_total The total number of bytes read off all sockets (incoming-byte-total)
# TYPE kafka_connect_metrics_incoming_byte_total untyped
kafka_connect_metrics_incoming_byte_total{client="connect-1"} 100
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "kafka_connect_worker_metrics_connector_count",
		"kafka_connect_worker_metrics_task_count", "kafka_connect_metrics_incoming_byte_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(c, "kafka_connect_metrics_incoming_byte_rate", "kafka_connect_metrics_outgoing_byte_rate"); n != 2 {
		t.Errorf("%d byte rate series, want 2", n)
	}
}

// TestConnectCollectorRates: the rates are bytes per second since the window's start, which moves to the
// newest sample once it is rateWindow old.
func TestConnectCollectorRates(t *testing.T) {
	c := NewConnectCollector(&Worker{}, "connect-1", nil)
	start := time.Unix(1000, 0)
	c.ref = trafficSample{at: start}
	if in, out := c.rates(start.Add(10*time.Second), 1000, 500); in != 100 || out != 50 {
		t.Errorf("rates after 10 s = %v, %v; want 100, 50", in, out)
	}
	if in, _ := c.rates(start.Add(rateWindow), 3000, 500); in != 100 {
		t.Errorf("rate over the whole window = %v, want 100", in)
	}
	if in, out := c.rates(start.Add(rateWindow+10*time.Second), 4000, 500); in != 100 || out != 0 {
		t.Errorf("rates after the window moved = %v, %v; want 100, 0", in, out)
	}
}

// TestJVMCollector renders the series Debezium's example dashboard plots in its JVM row.
func TestJVMCollector(t *testing.T) {
	c := &JVMCollector{}
	for name, n := range map[string]int{"jvm_memory_bytes_used": 2, "jvm_memory_bytes_max": 2, "jvm_memory_bytes_committed": 2,
		"jvm_threads_current": 1, "jvm_threads_peak": 1, "jvm_threads_started_total": 1} {
		if got := testutil.CollectAndCount(c, name); got != n {
			t.Errorf("%d %s series, want %d", got, name, n)
		}
	}
}

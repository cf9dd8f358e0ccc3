package connect

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ConnectCollector renders this worker's Kafka Connect MBeans as the Prometheus JMX exporter renders them
// with the configuration of Debezium's monitoring example (debezium/debezium-examples,
// monitoring/debezium-jmx-exporter/config.yml), whose only Connect rules are:
//
//	kafka.connect<type=connect-worker-metrics>([^:]+):               → kafka_connect_worker_metrics_$1
//	kafka.connect<type=connect-metrics, client-id=([^:]+)><>([^:]+)  → kafka_connect_metrics_$2{client="$1"}
//
// The exporter turns an attribute's dashes into underscores (connector-count →
// kafka_connect_worker_metrics_connector_count) and types nothing: every series is untyped. The other
// Connect MBeans (connector-metrics, connector-task-metrics, source-task-metrics, the per-connector
// connect-worker-metrics) match no rule and are not rendered; cdcd's own cdcd_task_state and cdcd_queue_*
// carry those facts.
//
// connect-metrics is the network traffic of the worker's own Kafka client (Connect's group member, whose
// client id is client.id). cdcd's counterpart is the worker's transport: the group and internal topics in
// distributed mode, the cluster id lookup and the schema history in both.
type ConnectCollector struct {
	w       *Worker
	client  string
	traffic func() (in, out uint64)

	mu  sync.Mutex
	ref trafficSample // the start of the window the rates are measured over
}

type trafficSample struct {
	at      time.Time
	in, out uint64
}

// rateWindow is how long the byte rates average over before the window starts again: Kafka's Rate spans
// metrics.sample.window.ms (30 s) times metrics.num.samples (2) at most.
const rateWindow = 30 * time.Second

var (
	descConnectorCount = prometheus.NewDesc("kafka_connect_worker_metrics_connector_count", "The number of connectors run in this worker. (connector-count)", nil, nil)
	descTaskCount      = prometheus.NewDesc("kafka_connect_worker_metrics_task_count", "The number of tasks run in this worker. (task-count)", nil, nil)
	descInRate         = prometheus.NewDesc("kafka_connect_metrics_incoming_byte_rate", "The number of bytes read off all sockets per second (incoming-byte-rate)", []string{"client"}, nil)
	descOutRate        = prometheus.NewDesc("kafka_connect_metrics_outgoing_byte_rate", "The number of outgoing bytes sent to all servers per second (outgoing-byte-rate)", []string{"client"}, nil)
	descInTotal        = prometheus.NewDesc("kafka_connect_metrics_incoming_byte_total", "The total number of bytes read off all sockets (incoming-byte-total)", []string{"client"}, nil)
	descOutTotal       = prometheus.NewDesc("kafka_connect_metrics_outgoing_byte_total", "The total number of outgoing bytes sent to all servers (outgoing-byte-total)", []string{"client"}, nil)
)

var _ prometheus.Collector = (*ConnectCollector)(nil)

// NewConnectCollector returns the collector of w's Connect MBeans. client is the worker's client id and
// traffic the bytes its transport read and wrote so far; with a nil traffic no connect-metrics series is
// rendered.
func NewConnectCollector(w *Worker, client string, traffic func() (in, out uint64)) *ConnectCollector {
	c := &ConnectCollector{w: w, client: client, traffic: traffic}
	c.ref.at = time.Now()
	if traffic != nil {
		c.ref.in, c.ref.out = traffic()
	}
	return c
}

// ConnectCollector is NewConnectCollector for the worker that runs d's assigned connectors.
func (d *Distributed) ConnectCollector(client string, traffic func() (in, out uint64)) *ConnectCollector {
	return NewConnectCollector(d.w, client, traffic)
}

// Describe implements prometheus.Collector.
func (c *ConnectCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descConnectorCount, descTaskCount, descInRate, descOutRate, descInTotal, descOutTotal} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. It holds the worker's status lock briefly, as a status read
// does.
func (c *ConnectCollector) Collect(ch chan<- prometheus.Metric) {
	c.w.mu.Lock()
	connectors, tasks := 0, 0
	for _, cn := range c.w.connectors {
		if cn.task != nil { // a STOPPED connector runs nothing; cdcd runs one task per running connector
			connectors++
			tasks++
		}
	}
	c.w.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(descConnectorCount, prometheus.UntypedValue, float64(connectors))
	ch <- prometheus.MustNewConstMetric(descTaskCount, prometheus.UntypedValue, float64(tasks))
	if c.traffic == nil {
		return
	}
	in, out := c.traffic()
	inRate, outRate := c.rates(time.Now(), in, out)
	ch <- prometheus.MustNewConstMetric(descInRate, prometheus.UntypedValue, inRate, c.client)
	ch <- prometheus.MustNewConstMetric(descOutRate, prometheus.UntypedValue, outRate, c.client)
	ch <- prometheus.MustNewConstMetric(descInTotal, prometheus.UntypedValue, float64(in), c.client)
	ch <- prometheus.MustNewConstMetric(descOutTotal, prometheus.UntypedValue, float64(out), c.client)
}

// rates are the bytes per second read and written since the window's start; a window older than
// rateWindow starts again at this sample.
func (c *ConnectCollector) rates(now time.Time, in, out uint64) (inRate, outRate float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	elapsed := now.Sub(c.ref.at).Seconds()
	if elapsed > 0 {
		inRate, outRate = float64(in-c.ref.in)/elapsed, float64(out-c.ref.out)/elapsed
	}
	if now.Sub(c.ref.at) >= rateWindow {
		c.ref = trafficSample{at: now, in: in, out: out}
	}
	return inRate, outRate
}

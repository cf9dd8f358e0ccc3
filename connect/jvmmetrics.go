package connect

import (
	"math"
	"runtime/metrics"
	"runtime/pprof"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// JVMCollector renders the Go runtime's memory and threads under the names the Prometheus JMX exporter's
// agent gives the JVM's (its hotspot exports), which Debezium's example dashboard plots in its JVM row:
// jvm_memory_bytes_used, _committed and _max by area (heap, nonheap), and jvm_threads_current, _peak and
// _started_total. The Go runtime's own series (go_*) say the same in Go's terms; these exist so that a
// dashboard made for Connect's JVM shows cdcd without edits.
//
//   - heap: the Go heap; used is its objects, committed adds the free and unused spans the runtime keeps
//     mapped, max is GOMEMLIMIT (-1 when there is none, as the JVM reports an undefined maximum);
//   - nonheap: everything else the runtime maps (stacks, its own metadata…); max is -1;
//   - threads: OS threads, as a JVM's are; started counts the threads ever created (Go rarely ends one),
//     peak is the most any scrape saw.
type JVMCollector struct {
	mu   sync.Mutex
	peak float64
}

var (
	descJVMUsed      = prometheus.NewDesc("jvm_memory_bytes_used", "Used bytes of a given JVM memory area.", []string{"area"}, nil)
	descJVMCommitted = prometheus.NewDesc("jvm_memory_bytes_committed", "Committed (bytes) of a given JVM memory area.", []string{"area"}, nil)
	descJVMMax       = prometheus.NewDesc("jvm_memory_bytes_max", "Max (bytes) of a given JVM memory area.", []string{"area"}, nil)
	descJVMThreads   = prometheus.NewDesc("jvm_threads_current", "Current thread count of a JVM", nil, nil)
	descJVMPeak      = prometheus.NewDesc("jvm_threads_peak", "Peak thread count of a JVM", nil, nil)
	descJVMStarted   = prometheus.NewDesc("jvm_threads_started_total", "Started thread count of a JVM", nil, nil)
)

var _ prometheus.Collector = (*JVMCollector)(nil)

// Describe implements prometheus.Collector.
func (c *JVMCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descJVMUsed, descJVMCommitted, descJVMMax, descJVMThreads, descJVMPeak, descJVMStarted} {
		ch <- d
	}
}

// jvmSamples are the runtime/metrics the collector reads, in this order.
var jvmSamples = []string{
	"/memory/classes/heap/objects:bytes", "/memory/classes/heap/unused:bytes", "/memory/classes/heap/free:bytes",
	"/memory/classes/heap/released:bytes", "/memory/classes/total:bytes", "/gc/gomemlimit:bytes", "/sched/threads/total:threads",
}

// Collect implements prometheus.Collector.
func (c *JVMCollector) Collect(ch chan<- prometheus.Metric) {
	samples := make([]metrics.Sample, len(jvmSamples))
	for i, name := range jvmSamples {
		samples[i].Name = name
	}
	metrics.Read(samples)
	v := func(i int) float64 {
		if samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return float64(samples[i].Value.Uint64())
	}
	objects, unused, free, released, total, limit, threads := v(0), v(1), v(2), v(3), v(4), v(5), v(6)
	heapMax := -1.0
	if limit > 0 && limit < math.MaxInt64 {
		heapMax = limit
	}
	nonheap := max(total-objects-unused-free-released, 0)
	gauge := func(d *prometheus.Desc, value float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, value, labels...)
	}
	gauge(descJVMUsed, objects, "heap")
	gauge(descJVMCommitted, objects+unused+free, "heap")
	gauge(descJVMMax, heapMax, "heap")
	gauge(descJVMUsed, nonheap, "nonheap")
	gauge(descJVMCommitted, nonheap, "nonheap")
	gauge(descJVMMax, -1, "nonheap")

	c.mu.Lock()
	c.peak = max(c.peak, threads)
	peak := c.peak
	c.mu.Unlock()
	gauge(descJVMThreads, threads)
	gauge(descJVMPeak, peak)
	ch <- prometheus.MustNewConstMetric(descJVMStarted, prometheus.CounterValue, float64(pprof.Lookup("threadcreate").Count()))
}

package pipeline

import (
	srcmetrics "github.com/cdcd/cdcd/source/metrics"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// QueueLevels reports every pipeline's queue on this worker, by connector, as its cdcd_queue_capacity
// and cdcd_queue_size series have it (updated every offset.flush.interval.ms): the batches it holds at most
// and holds now. It reads the series without creating any, so a forgotten connector stays forgotten, and
// never waits on a pipeline.
func QueueLevels() map[string]srcmetrics.QueueLevel {
	levels := map[string]srcmetrics.QueueLevel{}
	for connector, capacity := range gauges(queueCapacity) {
		levels[connector] = srcmetrics.QueueLevel{Capacity: capacity}
	}
	for connector, used := range gauges(queueSize) {
		if l, ok := levels[connector]; ok {
			l.Used = used
			levels[connector] = l
		}
	}
	return levels
}

// gauges are the values of v's series of task 0, by connector.
func gauges(v *prometheus.GaugeVec) map[string]int {
	ch := make(chan prometheus.Metric)
	go func() {
		v.Collect(ch)
		close(ch)
	}()
	out := map[string]int{}
	for m := range ch {
		var pb dto.Metric
		if m.Write(&pb) != nil {
			continue
		}
		var connector, task string
		for _, l := range pb.GetLabel() {
			switch l.GetName() {
			case "connector":
				connector = l.GetValue()
			case "task":
				task = l.GetValue()
			}
		}
		if task == "0" {
			out[connector] = int(pb.GetGauge().GetValue())
		}
	}
	return out
}

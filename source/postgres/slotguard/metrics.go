package slotguard

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The metrics are built from the inventory at scrape time (the Guardian is a prometheus.Collector), so a
// dropped slot's series disappear with it instead of freezing at their last value.
var (
	slotLabels = []string{"server", "slot", "status"}

	descRetained   = prometheus.NewDesc("cdcd_slot_retained_wal_bytes", "WAL the replication slot keeps on the server (current WAL position minus restart_lsn).", slotLabels, nil)
	descActive     = prometheus.NewDesc("cdcd_slot_active", "1 while a consumer streams from the slot.", slotLabels, nil)
	descInactive   = prometheus.NewDesc("cdcd_slot_inactive_seconds", "How long the slot has been inactive; 0 while active.", slotLabels, nil)
	descAlerts     = prometheus.NewDesc("cdcd_slot_alerts", "Number of alerts the slot currently raises.", slotLabels, nil)
	descAlert      = prometheus.NewDesc("cdcd_slot_alert", "1 for every alert a slot currently raises.", append(slotLabels, "kind", "severity"), nil)
	descGrowth     = prometheus.NewDesc("cdcd_slot_growth_bytes_per_second", "Growth of the slot's retained WAL over the last refreshes.", slotLabels, nil)
	descSafeWAL    = prometheus.NewDesc("cdcd_slot_safe_wal_size_bytes", "WAL that may still be written before the slot is in danger of being lost (only with max_slot_wal_keep_size).", slotLabels, nil)
	descTimeToFull = prometheus.NewDesc("cdcd_slot_time_to_full_seconds", "Estimated time until safe_wal_size or cdcd.slots.wal.capacity.bytes is used up.", slotLabels, nil)
	descServerUp   = prometheus.NewDesc("cdcd_slots_server_up", "1 when the last refresh read the server's slots.", []string{"server"}, nil)
	descDropped    = prometheus.NewDesc("cdcd_slots_dropped_total", "Replication slots cdcd dropped (orphan policy or on request).", []string{"server"}, nil)
	descWebhook    = prometheus.NewDesc("cdcd_slots_webhook_failures_total", "Webhook events given up on after the last retry.", nil, nil)
)

var _ prometheus.Collector = (*Guardian)(nil)

// Describe implements prometheus.Collector.
func (g *Guardian) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRetained, descActive, descInactive, descAlerts, descAlert, descGrowth, descSafeWAL, descTimeToFull, descServerUp, descDropped, descWebhook} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. A label value the exposition format refuses (invalid UTF-8 in a
// slot name) turns into an invalid metric, which fails that scrape's series, never the process.
func (g *Guardian) Collect(ch chan<- prometheus.Metric) {
	emit := func(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
		m, err := prometheus.NewConstMetric(d, t, v, labels...)
		if err != nil {
			m = prometheus.NewInvalidMetric(d, err)
		}
		ch <- m
	}
	for _, r := range g.Slots() {
		l := []string{r.Server, r.Name, r.Status}
		if r.RetainedWALBytes != nil {
			emit(descRetained, prometheus.GaugeValue, float64(*r.RetainedWALBytes), l...)
		}
		emit(descActive, prometheus.GaugeValue, boolFloat(r.Active), l...)
		emit(descInactive, prometheus.GaugeValue, r.InactiveSeconds, l...)
		emit(descAlerts, prometheus.GaugeValue, float64(len(r.Alerts)), l...)
		for _, a := range r.Alerts {
			emit(descAlert, prometheus.GaugeValue, 1, append(l, string(a.Kind), a.Severity)...)
		}
		if r.GrowthBytesPerSecond != nil {
			emit(descGrowth, prometheus.GaugeValue, *r.GrowthBytesPerSecond, l...)
		}
		if r.SafeWALSize != nil {
			emit(descSafeWAL, prometheus.GaugeValue, float64(*r.SafeWALSize), l...)
		}
		if r.TimeToFullSeconds != nil {
			emit(descTimeToFull, prometheus.GaugeValue, *r.TimeToFullSeconds, l...)
		}
	}
	for _, s := range g.Servers() {
		emit(descServerUp, prometheus.GaugeValue, boolFloat(s.Up), s.Server)
	}
	g.mu.RLock()
	for server, n := range g.dropped {
		emit(descDropped, prometheus.CounterValue, float64(n), server)
	}
	g.mu.RUnlock()
	if g.webhook != nil {
		emit(descWebhook, prometheus.CounterValue, float64(g.webhook.failures.Load()))
	}
}

// MetricsHandler serves GET /metrics with the guardian's metrics and the other collectors given (the
// readers' metrics).
func (g *Guardian) MetricsHandler(more ...prometheus.Collector) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(g) // a fresh registry with one collector of fixed descriptors cannot refuse it
	reg.MustRegister(more...)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

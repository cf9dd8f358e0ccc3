package connect

import (
	"net/http"
	"strconv"

	"github.com/cdcd/cdcd/connect/pipeline"
	"github.com/prometheus/client_golang/prometheus"
)

// The worker's metrics: its pipelines' (package pipeline), the group's rebalances and assignment, and the
// REST requests it served.
var (
	rebalances = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "cdcd_worker_rebalances_total", Help: "Group assignments this distributed worker received.",
	})
	assigned = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cdcd_worker_assigned", Help: "Connectors and tasks assigned to this worker by its group, by kind.",
	}, []string{"kind"})
	restRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cdcd_rest_requests_total", Help: "REST requests served, by method and status code.",
	}, []string{"method", "code"})
)

// Collectors returns the worker's metrics for registration.
func Collectors() []prometheus.Collector {
	return append(pipeline.Collectors(), rebalances, assigned, restRequests)
}

// CountRESTRequests counts every request next serves, by method and status code.
func CountRESTRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(rec, r)
		restRequests.WithLabelValues(r.Method, strconv.Itoa(rec.code)).Inc()
	})
}

type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.code = code
	s.ResponseWriter.WriteHeader(code)
}

package connect

import (
	"net/http"
	"strconv"

	"github.com/cdcd/cdcd/connect/pipeline"
	srcmetrics "github.com/cdcd/cdcd/source/metrics"
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
		Name: "cdcd_rest_requests_total", Help: "REST requests served, by method (GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS, or other) and status code.",
	}, []string{"method", "code"})
	taskState = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cdcd_task_state", Help: "1 for the state a connector's task on this worker is in (UNASSIGNED, RUNNING, PAUSED, STOPPED, FAILED), 0 for the others; a RUNNING task that retries after an error is RUNNING (its status trace says it retries).",
	}, []string{"connector", "task", "state"})
)

// Collectors returns the worker's metrics for registration.
func Collectors() []prometheus.Collector {
	return append(pipeline.Collectors(), rebalances, assigned, restRequests, taskState)
}

// taskStates are the states cdcd_task_state has a series for, per task.
var taskStates = []State{Unassigned, Running, Paused, Stopped, Failed}

// taskStateChanged sets connector's cdcd_task_state series: 1 for s, 0 for every other state.
func taskStateChanged(connector string, s State) {
	for _, st := range taskStates {
		v := 0.0
		if st == s {
			v = 1
		}
		taskState.WithLabelValues(connector, "0", string(st)).Set(v)
	}
}

// forgetConnectorMetrics deletes the series of a connector that no longer runs on this worker (deleted,
// or moved to another worker): its task state, its pipeline's queue and its reader's series.
func forgetConnectorMetrics(connector string) {
	taskState.DeletePartialMatch(prometheus.Labels{"connector": connector})
	pipeline.ForgetMetrics(connector)
	srcmetrics.Forget(connector)
}

// CountRESTRequests counts every request next serves, by method and status code, those refused for want of
// credentials included. Both labels take a bounded set of values whatever a client sends (methodLabel,
// codeLabel): a label of a client's choosing would add a series, kept for good, per request.
func CountRESTRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(rec, r)
		restRequests.WithLabelValues(methodLabel(r.Method), codeLabel(rec.code)).Inc()
	})
}

// methodLabel is the method's label: one of the methods Connect's REST API serves, or "other".
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodHead, http.MethodOptions:
		return method
	}
	return "other"
}

// codeLabel is the status code's label: the code when it is a valid HTTP status (100 to 599), else "other".
func codeLabel(code int) string {
	if code < 100 || code > 599 {
		return "other"
	}
	return strconv.Itoa(code)
}

type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.code = code
	s.ResponseWriter.WriteHeader(code)
}

// Package rest serves Kafka Connect's REST API (Connect 4.4's paths, bodies, status codes and messages)
// over a herder, so scripts written for connect-standalone keep working against cdcd.
package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cdcd/cdcd/connect"
	"github.com/cdcd/cdcd/schema/configdef"
)

// Herder is what the REST API needs from the worker (*connect.Worker). Every method may be called
// concurrently; a refusal is a *connect.RequestError, whose kind decides the status code (any other error
// is a 500). Methods that stop or start a task block until it stopped or started.
type Herder interface {
	Connectors() []string
	ConnectorInfo(name string) (connect.ConnectorInfo, error)
	ConnectorConfig(name string) (map[string]string, error)
	PutConnectorConfig(name string, cfg map[string]string, allowReplace bool, initialState string) (created bool, info connect.ConnectorInfo, err error)
	PatchConnectorConfig(name string, patch map[string]*string) (connect.ConnectorInfo, error)
	ConnectorStatus(name string) (connect.ConnectorStatus, error)
	TaskStatus(name string, id int) (connect.TaskStatus, error)
	TaskConfigs(name string) ([]connect.TaskInfo, error)
	PauseConnector(name string) error
	ResumeConnector(name string) error
	StopConnector(name string) error
	RestartConnector(name string, includeTasks, onlyFailed bool) (*connect.ConnectorStatus, error)
	RestartTask(name string, id int) error
	DeleteConnector(ctx context.Context, name string) error
	ConnectorOffsets(name string) (connect.ConnectorOffsets, error)
	AlterConnectorOffsets(name string, offsets []connect.ConnectorOffset) (string, error)
	ResetConnectorOffsets(name string) (string, error)
	ConnectorPlugins(connectorsOnly bool) []connect.PluginInfo
	PluginConfig(plugin string) ([]configdef.ConfigKeyInfo, error)
	ValidateConnectorConfig(plugin string, cfg map[string]string) (configdef.ConfigInfos, error)
	CheckSchemas(ctx context.Context, name string) (connect.SchemaCheck, error)
}

var (
	_ Herder = (*connect.Worker)(nil)
	_ Herder = (*connect.Distributed)(nil)
)

// ServerInfo is the body of GET /.
type ServerInfo struct {
	Version        string `json:"version"`
	Commit         string `json:"commit"`
	KafkaClusterID string `json:"kafka_cluster_id"`
}

// Server is the REST API. It answers GET /health with 503 until SetReady.
type Server struct {
	herder Herder
	log    *slog.Logger
	mux    *http.ServeMux
	ready  atomic.Bool
	info   atomic.Pointer[ServerInfo]
	// forwarder sends requests another worker serves (distributed mode) to that worker.
	forwarder *http.Client
	auth      *BasicAuth   // nil: no authentication
	cors      *CrossOrigin // nil: no origin but the worker's own may change state
}

// NewServer builds the API over h; info is what GET / reports (SetInfo may complete it later).
func NewServer(h Herder, info ServerInfo, log *slog.Logger) *Server {
	s := &Server{herder: h, log: log, mux: http.NewServeMux(), forwarder: &http.Client{Timeout: forwardTimeout}}
	s.info.Store(&info)
	s.routes()
	return s
}

// Handle mounts a handler of cdcd's own next to Connect's endpoints (GET /slots, GET /metrics, …); pattern
// is an http.ServeMux pattern such as "GET /slots".
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

type dropSlotKey struct{}

// DropSlotRequested reports whether a DELETE /connectors/{name} asked for ?dropSlot=true: the delete hook
// then drops the connector's replication slot and the publication cdcd created for it.
func DropSlotRequested(ctx context.Context) bool {
	v, _ := ctx.Value(dropSlotKey{}).(bool)
	return v
}

// SetReady marks the worker started: GET /health answers 200 from now on.
func (s *Server) SetReady() { s.ready.Store(true) }

// SetInfo replaces what GET / reports (e.g. once the Kafka cluster id is known).
func (s *Server) SetInfo(info ServerInfo) { s.info.Store(&info) }

// ServeHTTP implements http.Handler. Before any handler runs, and before any body is read: the credentials
// (401), a read-only user's method (403), the origin of a state change (403) and the media type (415). A
// handler reads a body with readBody, which keeps it so that it can be forwarded to the worker that serves it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	aw := &answerWriter{ResponseWriter: w}
	defer s.recoverPanic(aw, r)
	w = aw
	if s.cors != nil {
		s.cors.annotate(w, r)
	}
	if s.internalRoute(r) { // authenticated by signature, body bounded: internal.go
		s.mux.ServeHTTP(w, r)
		return
	}
	if s.auth != nil && (!s.auth.allow(w, r) || !s.auth.mayChange(w, r)) {
		return
	}
	if !s.fromAllowedOrigin(w, r) || !jsonOnly(w, r) {
		return
	}
	r = r.WithContext(context.WithValue(r.Context(), bodyKey{}, &keptBody{}))
	s.mux.ServeHTTP(w, r)
}

// keptBody is the body readBody read, for forward to send on.
type keptBody struct{ data []byte }

// readMethod reports the methods that change nothing.
func readMethod(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions
}

// fromAllowedOrigin refuses (403) a state change that a web page of another origin sent, unless
// access.control.allow.origin allows that origin: browsers add Origin to every cross-origin request that is
// not a GET or HEAD, and a page may send a POST without a preflight (a form, or a fetch without a body), so
// a page an operator visits could otherwise restart or delete connectors, with the browser's cached
// credentials when authentication is on. Clients that are not browsers (curl, scripts, other workers) send
// no Origin.
func (s *Server) fromAllowedOrigin(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if readMethod(r.Method) || origin == "" || (s.cors != nil && s.cors.origins.Allows(origin)) {
		return true
	}
	if u, err := url.Parse(origin); err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host) {
		return true
	}
	writeError(w, http.StatusForbidden, "Cross-origin request refused: a web page of origin "+origin+
		" may not change this worker; send the request without an Origin header (curl, a script), from the worker's own origin, or allow the origin in access.control.allow.origin")
	return false
}

// jsonOnly answers 415 as Jersey does under Connect's @Consumes(application/json): a state change whose
// Content-Type is not application/json, or that carries a body without a Content-Type. A browser can send
// neither without a CORS preflight (which only access.control.allow.origin's origins pass).
func jsonOnly(w http.ResponseWriter, r *http.Request) bool {
	if readMethod(r.Method) {
		return true
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" && r.ContentLength == 0 {
		return true
	}
	if mediaType, _, err := mime.ParseMediaType(ct); err == nil && mediaType == "application/json" {
		return true
	}
	writeError(w, http.StatusUnsupportedMediaType, "HTTP 415 Unsupported Media Type")
	return false
}

// recoverPanic is the last line under every request: a handler's panic is logged with its stack and
// answered with Connect's error body and a 500 (unless an answer was begun), instead of net/http dropping
// the connection without one. Handlers return errors; this catches what they did not foresee.
func (s *Server) recoverPanic(w *answerWriter, r *http.Request) {
	v := recover()
	if v == nil {
		return
	}
	if v == http.ErrAbortHandler { // net/http's own way to abort a response: not a failure
		panic(v)
	}
	s.log.Error("REST request panicked", "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
	if !w.answered {
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("Unexpected failure serving %s %s: %v", r.Method, r.URL.Path, v))
	}
}

// answerWriter records whether an answer was begun, so that recoverPanic knows whether it may send one.
type answerWriter struct {
	http.ResponseWriter
	answered bool
}

func (w *answerWriter) WriteHeader(status int) {
	w.answered = true
	w.ResponseWriter.WriteHeader(status)
}

func (w *answerWriter) Write(b []byte) (int, error) {
	w.answered = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer (flushing, deadlines).
func (w *answerWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (s *Server) routes() {
	m := s.mux
	m.HandleFunc("GET /{$}", s.serverInfo)
	m.HandleFunc("GET /health", s.health)
	m.HandleFunc("GET /connectors", s.listConnectors)
	m.HandleFunc("POST /connectors", s.createConnector)
	m.HandleFunc("GET /connectors/{name}", s.getConnector)
	m.HandleFunc("DELETE /connectors/{name}", s.deleteConnector)
	m.HandleFunc("GET /connectors/{name}/config", s.getConfig)
	m.HandleFunc("PUT /connectors/{name}/config", s.putConfig)
	m.HandleFunc("PATCH /connectors/{name}/config", s.patchConfig)
	m.HandleFunc("GET /connectors/{name}/status", s.getStatus)
	m.HandleFunc("GET /connectors/{name}/tasks", s.getTasks)
	m.HandleFunc(taskConfigsRoute, s.putTaskConfigs)
	m.HandleFunc("GET /connectors/{name}/tasks/{task}/status", s.getTaskStatus)
	m.HandleFunc("POST /connectors/{name}/tasks/{task}/restart", s.restartTask)
	m.HandleFunc("POST /connectors/{name}/restart", s.restartConnector)
	m.HandleFunc("PUT /connectors/{name}/pause", s.simple(s.herder.PauseConnector, http.StatusAccepted))
	m.HandleFunc("PUT /connectors/{name}/resume", s.simple(s.herder.ResumeConnector, http.StatusAccepted))
	m.HandleFunc("PUT /connectors/{name}/stop", s.simple(s.herder.StopConnector, http.StatusNoContent))
	m.HandleFunc("POST /connectors/{name}/signals", s.postSignal)
	m.HandleFunc(fenceRoute, s.putFence)
	m.HandleFunc("GET /connectors/{name}/offsets", s.getOffsets)
	m.HandleFunc("PATCH /connectors/{name}/offsets", s.patchOffsets)
	m.HandleFunc("DELETE /connectors/{name}/offsets", s.resetOffsets)
	m.HandleFunc("GET /connectors/{name}/topics", s.getTopics)
	m.HandleFunc("POST /connectors/{name}/schemas/check", s.checkSchemas)
	m.HandleFunc("GET /connector-plugins", s.listPlugins)
	m.HandleFunc("GET /connector-plugins/{plugin}/config", s.pluginConfig)
	m.HandleFunc("PUT /connector-plugins/{plugin}/config/validate", s.validate)
	m.Handle("GET /ui/", uiHandler()) // cdcd's status page (ui.go)
	m.HandleFunc("/", s.unmatched)
}

// errorBody is Connect's ErrorMessage.
type errorBody struct {
	ErrorCode int    `json:"error_code"`
	Message   string `json:"message"`
}

// writeJSON writes v as Jackson would: compact, no HTML escaping, no trailing newline.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		b.Reset()
		fallback := json.NewEncoder(&b)
		fallback.SetEscapeHTML(false)
		_ = fallback.Encode(errorBody{ErrorCode: status, Message: err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorBody{ErrorCode: status, Message: msg})
}

// fail answers err as Connect's ConnectExceptionMapper does.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	var reqErr *connect.RequestError
	if errors.As(err, &reqErr) {
		switch reqErr.Kind {
		case connect.NotFound:
			status = http.StatusNotFound
		case connect.AlreadyExists, connect.Conflict:
			status = http.StatusConflict
		case connect.NotLeader:
			s.forward(w, r, reqErr.Forward)
			return
		case connect.BadRequest:
			status = http.StatusBadRequest
		case connect.Forbidden:
			status = http.StatusForbidden
		case connect.Unavailable:
			status = http.StatusServiceUnavailable
		}
	}
	if status == http.StatusInternalServerError {
		s.log.Error("REST request failed", "method", r.Method, "path", r.URL.Path, "error", err)
	}
	writeError(w, status, err.Error())
}

// unmatched answers requests no route takes: OPTIONS with 200 and the path's methods in Allow (as Jersey
// answers it, a CORS preflight included), another method with 405 when the path exists for some method, else
// 404, with Jersey's messages.
func (s *Server) unmatched(w http.ResponseWriter, r *http.Request) {
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "/" {
			allowed = append(allowed, m)
		}
	}
	switch {
	case len(allowed) == 0:
		writeError(w, http.StatusNotFound, "HTTP 404 Not Found")
	case r.Method == http.MethodOptions:
		if allowed[0] == http.MethodGet {
			allowed = append(allowed, http.MethodHead)
		}
		w.Header().Set("Allow", strings.Join(append(allowed, http.MethodOptions), ","))
		w.WriteHeader(http.StatusOK)
	default:
		writeError(w, http.StatusMethodNotAllowed, "HTTP 405 Method Not Allowed")
	}
}

// readBody reads a request body of at most maxBody bytes (413 beyond, before anything is decoded) and
// decodes it as JSON into v; a body Jackson cannot read is answered with a 500, as Connect does. ServeHTTP
// has checked the media type.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, v any) bool {
	data, ok := readBounded(w, r, maxBody)
	if !ok {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusInternalServerError, "Cannot read the request body as JSON: "+err.Error())
		return false
	}
	return true
}

// readBounded reads r's body, at most limit bytes (413 beyond; 408 when it is not received within the read
// deadline), and keeps it for forward to send on; on failure it has answered.
func readBounded(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, bool) {
	if r.Body == nil {
		return nil, true
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
		writeError(w, http.StatusRequestEntityTooLarge, "The request body exceeds "+strconv.FormatInt(tooLarge.Limit, 10)+" bytes")
		return nil, false
	}
	if err != nil {
		status, msg := http.StatusBadRequest, "Cannot read the request body: "+err.Error()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			status, msg = http.StatusRequestTimeout, "The request body was not received in time"
		}
		writeError(w, status, msg)
		return nil, false
	}
	if kept, ok := r.Context().Value(bodyKey{}).(*keptBody); ok {
		kept.data = data
	}
	return data, true
}

// stringMap converts a JSON object to a config map as Jackson's Map<String,String> does: numbers and
// booleans become their text; a null value leaves the key out. Nested values are refused.
func stringMap(raw map[string]json.RawMessage) (map[string]string, error) {
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		s, isNull, err := scalar(v)
		if err != nil {
			return nil, errors.New("Cannot deserialize value of type `java.lang.String` from " + err.Error() + " (config key " + strconv.Quote(k) + ")")
		}
		if !isNull {
			out[k] = s
		}
	}
	return out, nil
}

func scalar(v json.RawMessage) (s string, isNull bool, err error) {
	var x any
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	if err := dec.Decode(&x); err != nil {
		return "", false, err
	}
	switch t := x.(type) {
	case nil:
		return "", true, nil
	case string:
		return t, false, nil
	case json.Number:
		return t.String(), false, nil
	case bool:
		return strconv.FormatBool(t), false, nil
	case []any:
		//lint:ignore ST1005 Jackson's words: the caller completes "Cannot deserialize value of type … from Array value"
		return "", false, errors.New("Array value")
	}
	//lint:ignore ST1005 Jackson's words, as above
	return "", false, errors.New("Object value")
}

func (s *Server) serverInfo(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.info.Load())
}

// workerStatus is Connect's WorkerStatus (GET /health), with cdcd's failed_tasks beside Connect's two
// fields, only when a task failed.
type workerStatus struct {
	Status      string              `json:"status"`
	Message     string              `json:"message"`
	FailedTasks []connect.TaskState `json:"failed_tasks,omitempty"`
}

// failedTasks is a herder that can list the FAILED tasks it runs (both of cdcd's can).
type failedTasks interface{ FailedTasks() []connect.TaskState }

// health is Connect's GET /health: 503 while the worker starts, then 200 {"status":"healthy"} for as
// long as the worker runs, whatever its connectors do (as Connect: the worker answers and can take
// requests). A failed task does not make the worker unhealthy, so a liveness probe does not restart the
// process over a connector's config; cdcd adds the tasks that FAILED, with their traces, under
// failed_tasks, for a readiness check or a person to see.
func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	if !s.ready.Load() {
		writeJSON(w, http.StatusServiceUnavailable, workerStatus{Status: "starting", Message: "Worker is still starting up."})
		return
	}
	st := workerStatus{Status: "healthy", Message: "Worker has completed startup and is ready to handle requests."}
	if h, ok := s.herder.(failedTasks); ok {
		st.FailedTasks = h.FailedTasks()
	}
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) listConnectors(w http.ResponseWriter, r *http.Request) {
	names := s.herder.Connectors()
	expand, ok := r.URL.Query()["expand"]
	if !ok {
		writeJSON(w, http.StatusOK, names)
		return
	}
	out := make(map[string]map[string]any, len(names))
	for _, name := range names {
		entry := map[string]any{}
		var err error
		for _, e := range expand {
			switch e {
			case "status":
				entry["status"], err = s.herder.ConnectorStatus(name)
			case "info":
				entry["info"], err = s.herder.ConnectorInfo(name)
			}
		}
		// A connector deleted meanwhile is left out, as in Connect.
		if err == nil {
			out[name] = entry
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// createRequest is Connect's CreateConnectorRequest.
type createRequest struct {
	Name         *string                    `json:"name"`
	Config       map[string]json.RawMessage `json:"config"`
	InitialState *string                    `json:"initial_state"`
}

func (s *Server) createConnector(w http.ResponseWriter, r *http.Request) {
	var req createRequest
	if !s.readBody(w, r, &req) {
		return
	}
	if req.Config == nil {
		writeError(w, http.StatusInternalServerError, "The request has no connector config")
		return
	}
	cfg, err := stringMap(req.Config)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	name := ""
	if req.Name != nil {
		name = strings.TrimSpace(*req.Name)
	}
	if !checkName(w, name, cfg) {
		return
	}
	state := ""
	if req.InitialState != nil {
		state = *req.InitialState
	}
	_, info, err := s.herder.PutConnectorConfig(name, cfg, false, state)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Location", location(r, name))
	writeJSON(w, http.StatusCreated, info)
}

// checkName fills in the config's name from the URL or request, or refuses a different one. The names "."
// and ".." are refused (400): no URL path can address them, since clients and servers resolve those
// segments (Connect accepts them, and cannot then answer for the connector). Connect's other checks of the
// name (not empty, no control characters) are its config validator's (connect.ConnectorKeys).
func checkName(w http.ResponseWriter, name string, cfg map[string]string) bool {
	if name == "." || name == ".." {
		writeError(w, http.StatusBadRequest, "Connector name "+strconv.Quote(name)+" cannot be addressed in a URL path (/connectors/"+name+" resolves to another path); choose another name")
		return false
	}
	if included, ok := cfg["name"]; ok && included != name {
		writeError(w, http.StatusBadRequest, "Connector name configuration ("+included+") doesn't match connector name in the URL ("+name+")")
		return false
	}
	cfg["name"] = name
	return true
}

// location is the absolute URL of a connector, as JAX-RS builds a Location header.
func location(r *http.Request, name string) string {
	return requestBase(r) + "/connectors/" + url.PathEscape(name)
}

// requestBase is the scheme and host the client addressed.
func requestBase(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func (s *Server) getConnector(w http.ResponseWriter, r *http.Request) {
	info, err := s.herder.ConnectorInfo(r.PathValue("name"))
	s.reply(w, r, http.StatusOK, info, err)
}

// reply writes v, or the error.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, status int, v any, err error) {
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, status, v)
}

func (s *Server) deleteConnector(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if r.URL.Query().Get("dropSlot") == "true" {
		ctx = context.WithValue(ctx, dropSlotKey{}, true)
	}
	if err := s.herder.DeleteConnector(ctx, r.PathValue("name")); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// readConfig reads a flat config map body (PUT …/config, validate); on failure it has answered as Connect
// does and returns false.
func (s *Server) readConfig(w http.ResponseWriter, r *http.Request) (map[string]string, bool) {
	var raw map[string]json.RawMessage
	if !s.readBody(w, r, &raw) {
		return nil, false
	}
	cfg, err := stringMap(raw)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return nil, false
	}
	return cfg, true
}

func (s *Server) getConfig(w http.ResponseWriter, r *http.Request) {
	cfg, err := s.herder.ConnectorConfig(r.PathValue("name"))
	s.reply(w, r, http.StatusOK, cfg, err)
}

func (s *Server) putConfig(w http.ResponseWriter, r *http.Request) {
	cfg, ok := s.readConfig(w, r)
	if !ok {
		return
	}
	name := r.PathValue("name")
	if !checkName(w, name, cfg) {
		return
	}
	created, info, err := s.herder.PutConnectorConfig(name, cfg, true, "")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		w.Header().Set("Location", location(r, name))
		status = http.StatusCreated
	}
	writeJSON(w, status, info)
}

func (s *Server) patchConfig(w http.ResponseWriter, r *http.Request) {
	var raw map[string]json.RawMessage
	if !s.readBody(w, r, &raw) {
		return
	}
	patch := make(map[string]*string, len(raw))
	for k, v := range raw {
		text, isNull, err := scalar(v)
		if err != nil {
			writeError(w, http.StatusInternalServerError, "Cannot deserialize value of type `java.lang.String` from "+err.Error())
			return
		}
		patch[k] = &text
		if isNull {
			patch[k] = nil
		}
	}
	info, err := s.herder.PatchConnectorConfig(r.PathValue("name"), patch)
	s.reply(w, r, http.StatusOK, info, err)
}

func (s *Server) getStatus(w http.ResponseWriter, r *http.Request) {
	st, err := s.herder.ConnectorStatus(r.PathValue("name"))
	s.reply(w, r, http.StatusOK, st, err)
}

func (s *Server) getTasks(w http.ResponseWriter, r *http.Request) {
	tasks, err := s.herder.TaskConfigs(r.PathValue("name"))
	s.reply(w, r, http.StatusOK, tasks, err)
}

// taskID parses the {task} path parameter; Jersey answers a non-integer with a plain 404.
func taskID(w http.ResponseWriter, r *http.Request) (int, bool) {
	id, err := strconv.ParseInt(r.PathValue("task"), 10, 32)
	if err != nil {
		writeError(w, http.StatusNotFound, "HTTP 404 Not Found")
		return 0, false
	}
	return int(id), true
}

func (s *Server) getTaskStatus(w http.ResponseWriter, r *http.Request) {
	id, ok := taskID(w, r)
	if !ok {
		return
	}
	st, err := s.herder.TaskStatus(r.PathValue("name"), id)
	s.reply(w, r, http.StatusOK, st, err)
}

func (s *Server) restartTask(w http.ResponseWriter, r *http.Request) {
	id, ok := taskID(w, r)
	if !ok {
		return
	}
	if err := s.herder.RestartTask(r.PathValue("name"), id); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// queryBool reads a boolean query parameter as JAX-RS does (Boolean.valueOf: only "true", any case).
func queryBool(r *http.Request, name string) bool {
	return strings.EqualFold(r.URL.Query().Get(name), "true")
}

func (s *Server) restartConnector(w http.ResponseWriter, r *http.Request) {
	st, err := s.herder.RestartConnector(r.PathValue("name"), queryBool(r, "includeTasks"), queryBool(r, "onlyFailed"))
	switch {
	case err != nil:
		s.fail(w, r, err)
	case st == nil:
		w.WriteHeader(http.StatusNoContent)
	default:
		writeJSON(w, http.StatusAccepted, st)
	}
}

// checkSchemas is cdcd's pre-flight check (not Connect's): would the schema registry accept each captured
// table's current key and value schemas?
func (s *Server) checkSchemas(w http.ResponseWriter, r *http.Request) {
	res, err := s.herder.CheckSchemas(r.Context(), r.PathValue("name"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// simple serves the bodiless state changes (pause, resume, stop).
func (s *Server) simple(op func(name string) error, status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := op(r.PathValue("name")); err != nil {
			s.fail(w, r, err)
			return
		}
		w.WriteHeader(status)
	}
}

// Signaller is a Herder that hands Debezium signals to running tasks; optional.
type Signaller interface {
	SignalConnector(name, id, kind, data string) error
}

// signalRequest is the body of POST /connectors/{name}/signals: a Debezium signal as a signal table row
// or a signal file line holds it; data may be a JSON object or a string holding one.
type signalRequest struct {
	ID   string          `json:"id"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// postSignal is cdcd's own POST /connectors/{name}/signals: a signal for the connector's task, such as
// {"type":"execute-snapshot","data":{"data-collections":["public.orders"]}}, acted on as if it came
// through the signal table, when the connector's signal.enabled.channels lists rest (400 naming the key
// otherwise). Without an id, one is made. 202: the task has queued it; its log says what it did.
func (s *Server) postSignal(w http.ResponseWriter, r *http.Request) {
	sh, ok := s.herder.(Signaller)
	if !ok {
		writeError(w, http.StatusNotFound, "HTTP 404 Not Found")
		return
	}
	var req signalRequest
	if !s.readBody(w, r, &req) {
		return
	}
	data := strings.TrimSpace(string(req.Data))
	if strings.HasPrefix(data, `"`) {
		if err := json.Unmarshal(req.Data, &data); err != nil {
			writeError(w, http.StatusBadRequest, "signal data: "+err.Error())
			return
		}
	} else if data == "null" {
		data = ""
	}
	if req.Type == "" {
		writeError(w, http.StatusBadRequest, `a signal needs a "type": execute-snapshot, stop-snapshot, pause-snapshot, resume-snapshot or log`)
		return
	}
	if req.ID == "" {
		req.ID = "rest-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	if err := sh.SignalConnector(r.PathValue("name"), req.ID, req.Type, data); err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"id": req.ID, "type": req.Type, "data": data})
}

func (s *Server) getOffsets(w http.ResponseWriter, r *http.Request) {
	offsets, err := s.herder.ConnectorOffsets(r.PathValue("name"))
	s.reply(w, r, http.StatusOK, offsets, err)
}

// message is Connect's Message entity.
type message struct {
	Message string `json:"message"`
}

func (s *Server) patchOffsets(w http.ResponseWriter, r *http.Request) {
	var req connect.ConnectorOffsets
	if !s.readBody(w, r, &req) {
		return
	}
	if len(req.Offsets) == 0 {
		writeError(w, http.StatusBadRequest, "Partitions / offsets need to be provided for an alter offsets request")
		return
	}
	msg, err := s.herder.AlterConnectorOffsets(r.PathValue("name"), req.Offsets)
	s.reply(w, r, http.StatusOK, message{msg}, err)
}

func (s *Server) resetOffsets(w http.ResponseWriter, r *http.Request) {
	msg, err := s.herder.ResetConnectorOffsets(r.PathValue("name"))
	s.reply(w, r, http.StatusOK, message{msg}, err)
}

// getTopics answers as Connect with topic tracking enabled, for a connector whose topics it has not
// recorded: cdcd does not track active topics yet.
func (s *Server) getTopics(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	writeJSON(w, http.StatusOK, map[string]map[string][]string{name: {"topics": {}}})
}

func (s *Server) listPlugins(w http.ResponseWriter, r *http.Request) {
	connectorsOnly := r.URL.Query().Get("connectorsOnly") != "false"
	writeJSON(w, http.StatusOK, s.herder.ConnectorPlugins(connectorsOnly))
}

func (s *Server) pluginConfig(w http.ResponseWriter, r *http.Request) {
	keys, err := s.herder.PluginConfig(r.PathValue("plugin"))
	s.reply(w, r, http.StatusOK, keys, err)
}

func (s *Server) validate(w http.ResponseWriter, r *http.Request) {
	cfg, ok := s.readConfig(w, r)
	if !ok {
		return
	}
	infos, err := s.herder.ValidateConnectorConfig(r.PathValue("plugin"), cfg)
	s.reply(w, r, http.StatusOK, infos, err)
}

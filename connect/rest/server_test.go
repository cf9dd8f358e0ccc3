package rest

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/connect"
	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/schema/configdef"
)

// fakeHerder knows one connector, "pg", RUNNING with task 0, and records the last call's arguments.
type fakeHerder struct {
	calls []string
}

func (f *fakeHerder) record(call string) { f.calls = append(f.calls, call) }

func missing(name string) error {
	return &connect.RequestError{Kind: connect.NotFound, Message: "Connector " + name + " not found"}
}

var pgInfo = connect.ConnectorInfo{Name: "pg", Config: map[string]string{"name": "pg", "connector.class": "PostgresConnector"}, Tasks: []connect.TaskID{{Connector: "pg", Task: 0}}, Type: "source"}

var pgStatus = connect.ConnectorStatus{
	Name:      "pg",
	Connector: connect.StateInfo{State: connect.Running, WorkerID: "h:8083", Version: "v"},
	Tasks:     []connect.TaskStatus{{ID: 0, StateInfo: connect.StateInfo{State: connect.Failed, Trace: "boom <&>", WorkerID: "h:8083", Version: "v"}}},
	Type:      "source",
}

func (f *fakeHerder) Connectors() []string { return []string{"pg"} }
func (f *fakeHerder) ConnectorInfo(name string) (connect.ConnectorInfo, error) {
	if name != "pg" {
		return connect.ConnectorInfo{}, missing(name)
	}
	return pgInfo, nil
}
func (f *fakeHerder) ConnectorConfig(name string) (map[string]string, error) {
	info, err := f.ConnectorInfo(name)
	return info.Config, err
}
func (f *fakeHerder) PutConnectorConfig(name string, cfg map[string]string, allowReplace bool, initialState string) (bool, connect.ConnectorInfo, error) {
	f.record("put " + name + " " + cfg["name"] + " " + cfg["n"] + " " + initialState)
	if name == "pg" && !allowReplace {
		return false, connect.ConnectorInfo{}, &connect.RequestError{Kind: connect.AlreadyExists, Message: "Connector pg already exists"}
	}
	if cfg["connector.class"] == "" {
		return false, connect.ConnectorInfo{}, &connect.RequestError{Kind: connect.BadRequest, Message: "Connector config contains no connector type"}
	}
	return name != "pg", connect.ConnectorInfo{Name: name, Config: cfg, Tasks: []connect.TaskID{}, Type: "source"}, nil
}
func (f *fakeHerder) PatchConnectorConfig(name string, patch map[string]*string) (connect.ConnectorInfo, error) {
	if name != "pg" {
		return connect.ConnectorInfo{}, missing(name)
	}
	cfg := maps.Clone(pgInfo.Config)
	for k, v := range patch {
		if v == nil {
			delete(cfg, k)
		} else {
			cfg[k] = *v
		}
	}
	return connect.ConnectorInfo{Name: name, Config: cfg, Tasks: pgInfo.Tasks, Type: "source"}, nil
}
func (f *fakeHerder) ConnectorStatus(name string) (connect.ConnectorStatus, error) {
	if name != "pg" {
		return connect.ConnectorStatus{}, &connect.RequestError{Kind: connect.NotFound, Message: "No status found for connector " + name}
	}
	return pgStatus, nil
}
func (f *fakeHerder) TaskStatus(name string, id int) (connect.TaskStatus, error) {
	if name != "pg" || id != 0 {
		return connect.TaskStatus{}, &connect.RequestError{Kind: connect.NotFound, Message: "No status found for task"}
	}
	return pgStatus.Tasks[0], nil
}
func (f *fakeHerder) TaskConfigs(name string) ([]connect.TaskInfo, error) {
	if name != "pg" {
		return nil, missing(name)
	}
	return []connect.TaskInfo{{ID: connect.TaskID{Connector: "pg"}, Config: map[string]string{"task.class": "T"}}}, nil
}
func (f *fakeHerder) op(call, name string) error {
	f.record(call + " " + name)
	if name != "pg" {
		return missing(name)
	}
	return nil
}
func (f *fakeHerder) PauseConnector(name string) error  { return f.op("pause", name) }
func (f *fakeHerder) ResumeConnector(name string) error { return f.op("resume", name) }
func (f *fakeHerder) StopConnector(name string) error {
	f.record("stop " + name)
	if name != "pg" {
		return &connect.RequestError{Kind: connect.ServerError, Message: "No connector `" + name + "` configured"}
	}
	return nil
}
func (f *fakeHerder) RestartConnector(name string, includeTasks, onlyFailed bool) (*connect.ConnectorStatus, error) {
	if err := f.op("restart", name); err != nil {
		return nil, err
	}
	if !includeTasks && !onlyFailed {
		return nil, nil
	}
	st := pgStatus
	st.Connector.State = connect.Restarting
	return &st, nil
}
func (f *fakeHerder) RestartTask(name string, id int) error { return f.op("restart-task", name) }
func (f *fakeHerder) DeleteConnector(_ context.Context, name string) error {
	return f.op("delete", name)
}
func (f *fakeHerder) ConnectorOffsets(name string) (connect.ConnectorOffsets, error) {
	if name != "pg" {
		return connect.ConnectorOffsets{}, missing(name)
	}
	return connect.ConnectorOffsets{Offsets: []connect.ConnectorOffset{{Partition: json.RawMessage(`{"server":"p"}`), Offset: json.RawMessage(`{"lsn":123456789012}`)}}}, nil
}
func (f *fakeHerder) AlterConnectorOffsets(name string, offsets []connect.ConnectorOffset) (string, error) {
	f.record("alter " + name + " " + string(offsets[0].Partition) + " " + string(offsets[0].Offset))
	return connect.OffsetsAlteredMessage, nil
}
func (f *fakeHerder) ResetConnectorOffsets(name string) (string, error) {
	if name != "pg" {
		return "", missing(name)
	}
	return "", &connect.RequestError{Kind: connect.BadRequest, Message: "Connectors must be in the STOPPED state"}
}
func (f *fakeHerder) ConnectorPlugins(connectorsOnly bool) []connect.PluginInfo {
	out := []connect.PluginInfo{{Class: "C", Type: "source", Version: "v"}}
	if !connectorsOnly {
		out = append(out, connect.PluginInfo{Class: "J", Type: "converter", Version: "v"})
	}
	return out
}
func (f *fakeHerder) PluginConfig(plugin string) ([]configdef.ConfigKeyInfo, error) {
	if plugin != "Postgres" {
		return nil, &connect.RequestError{Kind: connect.NotFound, Message: "Unknown plugin " + plugin + "."}
	}
	return []configdef.ConfigKeyInfo{{Name: "k", Type: "STRING", Importance: "HIGH", Width: "NONE", DisplayName: "k", Dependents: []string{}}}, nil
}
func (f *fakeHerder) ValidateConnectorConfig(plugin string, cfg map[string]string) (configdef.ConfigInfos, error) {
	return configdef.ConfigInfos{Name: plugin, ErrorCount: len(cfg), Groups: []string{}, Configs: []configdef.ConfigInfo{}}, nil
}

// CheckSchemas answers for "pg"; "plain" stands for a connector without AvroConverter.
func (f *fakeHerder) CheckSchemas(_ context.Context, name string) (connect.SchemaCheck, error) {
	switch name {
	case "pg":
		return connect.SchemaCheck{Connector: "pg", Tables: []connect.TableSchemaCheck{
			{Table: "public.t", Subject: "p.public.t-value", Compatible: false, Messages: []string{"changed <type>"}},
		}}, nil
	case "plain":
		return connect.SchemaCheck{}, &connect.RequestError{Kind: connect.BadRequest, Message: "Connector plain does not use a schema registry"}
	}
	return connect.SchemaCheck{}, missing(name)
}

func TestHandlers(t *testing.T) {
	const altered = `{"message":"` + connect.OffsetsAlteredMessage + `"}`
	tests := []struct {
		name, method, path, body string
		contentType              string // default application/json
		wantStatus               int
		wantBody                 string // exact; "" means empty
		wantLocation             string
		wantCall                 string // last recorded herder call, when set
	}{
		{name: "root", method: "GET", path: "/", wantStatus: 200, wantBody: `{"version":"4.4.0","commit":"c","kafka_cluster_id":"id"}`},
		{name: "health ready", method: "GET", path: "/health", wantStatus: 200, wantBody: `{"status":"healthy","message":"Worker has completed startup and is ready to handle requests."}`},
		{name: "list", method: "GET", path: "/connectors", wantStatus: 200, wantBody: `["pg"]`},
		{name: "list expanded", method: "GET", path: "/connectors?expand=info&expand=bogus", wantStatus: 200,
			wantBody: `{"pg":{"info":{"name":"pg","config":{"connector.class":"PostgresConnector","name":"pg"},"tasks":[{"connector":"pg","task":0}],"type":"source"}}}`},
		{name: "list expanded unknown only", method: "GET", path: "/connectors?expand=foo", wantStatus: 200, wantBody: `{"pg":{}}`},
		{name: "create", method: "POST", path: "/connectors", body: `{"name":" x ","config":{"connector.class":"C","n":5},"initial_state":"PAUSED"}`, wantStatus: 201,
			wantBody: `{"name":"x","config":{"connector.class":"C","n":"5","name":"x"},"tasks":[],"type":"source"}`, wantLocation: "http://example.com/connectors/x", wantCall: "put x x 5 PAUSED"},
		{name: "create duplicate", method: "POST", path: "/connectors", body: `{"name":"pg","config":{"connector.class":"C"}}`, wantStatus: 409, wantBody: `{"error_code":409,"message":"Connector pg already exists"}`},
		{name: "create name mismatch", method: "POST", path: "/connectors", body: `{"name":"y","config":{"name":"z"}}`, wantStatus: 400,
			wantBody: `{"error_code":400,"message":"Connector name configuration (z) doesn't match connector name in the URL (y)"}`},
		{name: "create without class", method: "POST", path: "/connectors", body: `{"name":"y","config":{}}`, wantStatus: 400, wantBody: `{"error_code":400,"message":"Connector config contains no connector type"}`},
		{name: "create malformed", method: "POST", path: "/connectors", body: `not json`, wantStatus: 500},
		{name: "create without config", method: "POST", path: "/connectors", body: `{"name":"y"}`, wantStatus: 500},
		{name: "create nested value", method: "POST", path: "/connectors", body: `{"name":"y","config":{"a":{"b":1}}}`, wantStatus: 500},
		{name: "create form body", method: "POST", path: "/connectors", body: `{}`, contentType: "application/x-www-form-urlencoded", wantStatus: 415,
			wantBody: `{"error_code":415,"message":"HTTP 415 Unsupported Media Type"}`},
		{name: "info", method: "GET", path: "/connectors/pg", wantStatus: 200, wantBody: `{"name":"pg","config":{"connector.class":"PostgresConnector","name":"pg"},"tasks":[{"connector":"pg","task":0}],"type":"source"}`},
		{name: "info unknown", method: "GET", path: "/connectors/x", wantStatus: 404, wantBody: `{"error_code":404,"message":"Connector x not found"}`},
		{name: "config", method: "GET", path: "/connectors/pg/config", wantStatus: 200, wantBody: `{"connector.class":"PostgresConnector","name":"pg"}`},
		{name: "config unknown", method: "GET", path: "/connectors/x/config", wantStatus: 404, wantBody: `{"error_code":404,"message":"Connector x not found"}`},
		{name: "put config creates", method: "PUT", path: "/connectors/new/config", body: `{"connector.class":"C"}`, wantStatus: 201,
			wantBody: `{"name":"new","config":{"connector.class":"C","name":"new"},"tasks":[],"type":"source"}`, wantLocation: "http://example.com/connectors/new"},
		{name: "put config updates", method: "PUT", path: "/connectors/pg/config", body: `{"connector.class":"C","name":"pg"}`, wantStatus: 200,
			wantBody: `{"name":"pg","config":{"connector.class":"C","name":"pg"},"tasks":[],"type":"source"}`},
		{name: "put config name mismatch", method: "PUT", path: "/connectors/x/config", body: `{"name":"q"}`, wantStatus: 400,
			wantBody: `{"error_code":400,"message":"Connector name configuration (q) doesn't match connector name in the URL (x)"}`},
		{name: "put config malformed", method: "PUT", path: "/connectors/x/config", body: `[1]`, wantStatus: 500},
		{name: "patch config", method: "PATCH", path: "/connectors/pg/config", body: `{"connector.class":null,"a":true}`, wantStatus: 200,
			wantBody: `{"name":"pg","config":{"a":"true","name":"pg"},"tasks":[{"connector":"pg","task":0}],"type":"source"}`},
		{name: "patch config unknown", method: "PATCH", path: "/connectors/x/config", body: `{}`, wantStatus: 404, wantBody: `{"error_code":404,"message":"Connector x not found"}`},
		{name: "status keeps trace and does not escape HTML", method: "GET", path: "/connectors/pg/status", wantStatus: 200,
			wantBody: `{"name":"pg","connector":{"state":"RUNNING","worker_id":"h:8083","version":"v"},"tasks":[{"id":0,"state":"FAILED","trace":"boom <&>","worker_id":"h:8083","version":"v"}],"type":"source"}`},
		{name: "status unknown", method: "GET", path: "/connectors/x/status", wantStatus: 404, wantBody: `{"error_code":404,"message":"No status found for connector x"}`},
		{name: "tasks", method: "GET", path: "/connectors/pg/tasks", wantStatus: 200, wantBody: `[{"id":{"connector":"pg","task":0},"config":{"task.class":"T"}}]`},
		{name: "task status", method: "GET", path: "/connectors/pg/tasks/0/status", wantStatus: 200, wantBody: `{"id":0,"state":"FAILED","trace":"boom <&>","worker_id":"h:8083","version":"v"}`},
		{name: "task status not a number", method: "GET", path: "/connectors/pg/tasks/abc/status", wantStatus: 404, wantBody: `{"error_code":404,"message":"HTTP 404 Not Found"}`},
		{name: "task restart", method: "POST", path: "/connectors/pg/tasks/0/restart", wantStatus: 204, wantCall: "restart-task pg"},
		{name: "restart connector only", method: "POST", path: "/connectors/pg/restart", wantStatus: 204},
		{name: "restart with tasks", method: "POST", path: "/connectors/pg/restart?includeTasks=TRUE&onlyFailed=maybe", wantStatus: 202,
			wantBody: `{"name":"pg","connector":{"state":"RESTARTING","worker_id":"h:8083","version":"v"},"tasks":[{"id":0,"state":"FAILED","trace":"boom <&>","worker_id":"h:8083","version":"v"}],"type":"source"}`},
		{name: "restart unknown", method: "POST", path: "/connectors/x/restart", wantStatus: 404, wantBody: `{"error_code":404,"message":"Connector x not found"}`},
		{name: "pause", method: "PUT", path: "/connectors/pg/pause", wantStatus: 202, wantCall: "pause pg"},
		{name: "resume", method: "PUT", path: "/connectors/pg/resume", wantStatus: 202, wantCall: "resume pg"},
		{name: "stop", method: "PUT", path: "/connectors/pg/stop", wantStatus: 204, wantCall: "stop pg"},
		{name: "stop unknown", method: "PUT", path: "/connectors/x/stop", wantStatus: 500, wantBody: "{\"error_code\":500,\"message\":\"No connector `x` configured\"}"},
		{name: "delete", method: "DELETE", path: "/connectors/pg", wantStatus: 204, wantCall: "delete pg"},
		{name: "delete unknown", method: "DELETE", path: "/connectors/x", wantStatus: 404, wantBody: `{"error_code":404,"message":"Connector x not found"}`},
		{name: "offsets", method: "GET", path: "/connectors/pg/offsets", wantStatus: 200, wantBody: `{"offsets":[{"partition":{"server":"p"},"offset":{"lsn":123456789012}}]}`},
		{name: "alter offsets keeps the JSON as sent", method: "PATCH", path: "/connectors/pg/offsets", body: `{"offsets":[{"partition":{"server":"p"},"offset":{"lsn":1.0}}]}`,
			wantStatus: 200, wantBody: altered, wantCall: `alter pg {"server":"p"} {"lsn":1.0}`},
		{name: "alter offsets empty", method: "PATCH", path: "/connectors/pg/offsets", body: `{"offsets":[]}`, wantStatus: 400,
			wantBody: `{"error_code":400,"message":"Partitions / offsets need to be provided for an alter offsets request"}`},
		{name: "alter offsets missing", method: "PATCH", path: "/connectors/pg/offsets", body: `{}`, wantStatus: 400,
			wantBody: `{"error_code":400,"message":"Partitions / offsets need to be provided for an alter offsets request"}`},
		{name: "reset offsets refused", method: "DELETE", path: "/connectors/pg/offsets", wantStatus: 400, wantBody: `{"error_code":400,"message":"Connectors must be in the STOPPED state"}`},
		{name: "topics", method: "GET", path: "/connectors/x/topics", wantStatus: 200, wantBody: `{"x":{"topics":[]}}`},
		{name: "schema check", method: "POST", path: "/connectors/pg/schemas/check", wantStatus: 200,
			wantBody: `{"connector":"pg","tables":[{"table":"public.t","subject":"p.public.t-value","compatible":false,"messages":["changed <type>"]}]}`},
		{name: "schema check unknown", method: "POST", path: "/connectors/x/schemas/check", wantStatus: 404, wantBody: `{"error_code":404,"message":"Connector x not found"}`},
		{name: "schema check without Avro", method: "POST", path: "/connectors/plain/schemas/check", wantStatus: 400,
			wantBody: `{"error_code":400,"message":"Connector plain does not use a schema registry"}`},
		{name: "plugins", method: "GET", path: "/connector-plugins", wantStatus: 200, wantBody: `[{"class":"C","type":"source","version":"v"}]`},
		{name: "all plugins", method: "GET", path: "/connector-plugins?connectorsOnly=false", wantStatus: 200,
			wantBody: `[{"class":"C","type":"source","version":"v"},{"class":"J","type":"converter","version":"v"}]`},
		{name: "plugin config", method: "GET", path: "/connector-plugins/Postgres/config", wantStatus: 200,
			wantBody: `[{"name":"k","type":"STRING","required":false,"default_value":null,"importance":"HIGH","documentation":"","group":null,"order_in_group":0,"width":"NONE","display_name":"k","dependents":[]}]`},
		{name: "plugin config unknown", method: "GET", path: "/connector-plugins/Foo/config", wantStatus: 404, wantBody: `{"error_code":404,"message":"Unknown plugin Foo."}`},
		{name: "validate", method: "PUT", path: "/connector-plugins/Postgres/config/validate", body: `{"a":"b"}`, wantStatus: 200,
			wantBody: `{"name":"Postgres","error_count":1,"groups":[],"configs":[]}`},
		{name: "unknown path", method: "GET", path: "/nope", wantStatus: 404, wantBody: `{"error_code":404,"message":"HTTP 404 Not Found"}`},
		{name: "wrong method", method: "DELETE", path: "/connectors", wantStatus: 405, wantBody: `{"error_code":405,"message":"HTTP 405 Method Not Allowed"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &fakeHerder{}
			s := NewServer(h, ServerInfo{Version: "4.4.0", Commit: "c", KafkaClusterID: "id"}, slog.New(slog.DiscardHandler))
			s.SetReady()
			req := httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body))
			ct := tt.contentType
			if ct == "" {
				ct = "application/json"
			}
			req.Header.Set("Content-Type", ct)
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			body, _ := io.ReadAll(rec.Body)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status %d, want %d; body %s", rec.Code, tt.wantStatus, body)
			}
			if tt.wantBody != "" && string(body) != tt.wantBody {
				t.Errorf("body\n got %s\nwant %s", body, tt.wantBody)
			}
			if tt.wantBody == "" && (tt.wantStatus == 204 || tt.wantStatus == 202) && len(body) != 0 {
				t.Errorf("body %s, want none", body)
			}
			if rec.Code >= 400 {
				var e errorBody
				if err := json.Unmarshal(body, &e); err != nil || e.ErrorCode != rec.Code || e.Message == "" {
					t.Errorf("error body %s is not Connect's {error_code, message}", body)
				}
			}
			if got := rec.Header().Get("Location"); got != tt.wantLocation {
				t.Errorf("Location %q, want %q", got, tt.wantLocation)
			}
			if tt.wantCall != "" && (len(h.calls) == 0 || h.calls[len(h.calls)-1] != tt.wantCall) {
				t.Errorf("herder calls %q, want last %q", h.calls, tt.wantCall)
			}
		})
	}
}

func TestHealthStartingUntilReady(t *testing.T) {
	s := NewServer(&fakeHerder{}, ServerInfo{}, slog.New(slog.DiscardHandler))
	get := func() (int, string) {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", "/health", nil))
		return rec.Code, rec.Body.String()
	}
	if code, body := get(); code != 503 || body != `{"status":"starting","message":"Worker is still starting up."}` {
		t.Errorf("before ready: %d %s", code, body)
	}
	s.SetReady()
	if code, _ := get(); code != 200 {
		t.Errorf("after ready: %d", code)
	}
}

func TestWorkerID(t *testing.T) {
	bound := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 41234}
	tests := []struct {
		cfg  config.Worker
		want string
	}{
		{config.Worker{Listeners: []string{"http://127.0.0.1:0"}}, "127.0.0.1:41234"},
		{config.Worker{Listeners: []string{"http://localhost:8083"}, RestAdvertisedHostName: "cdcd-1", RestAdvertisedPort: 9000}, "cdcd-1:9000"},
	}
	for _, tt := range tests {
		if got := WorkerID(&tt.cfg, bound); got != tt.want {
			t.Errorf("WorkerID(%v) = %q, want %q", tt.cfg.Listeners, got, tt.want)
		}
	}
}

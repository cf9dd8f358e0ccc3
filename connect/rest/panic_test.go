package rest

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"mime"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/connect"
)

// panickingHerder panics where a herder's bug would.
type panickingHerder struct{ fakeHerder }

func (*panickingHerder) ConnectorInfo(name string) (connect.ConnectorInfo, error) {
	panic("injected for " + name)
}

// TestHandlerPanicAnswers500: a panic under a handler is answered with Connect's error body and logged with
// its stack; net/http alone would drop the connection without an answer.
func TestHandlerPanicAnswers500(t *testing.T) {
	var logged bytes.Buffer
	s := NewServer(&panickingHerder{}, ServerInfo{}, slog.New(slog.NewTextHandler(&logged, nil)))
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/connectors/pg", nil))
	if rec.Code != 500 {
		t.Fatalf("status %d, want 500", rec.Code)
	}
	var e errorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.ErrorCode != 500 ||
		e.Message != "Unexpected failure serving GET /connectors/pg: injected for pg" {
		t.Fatalf("body %s", rec.Body)
	}
	if log := logged.String(); !strings.Contains(log, "REST request panicked") || !strings.Contains(log, "(*panickingHerder).ConnectorInfo") {
		t.Fatalf("log without the panic's stack:\n%s", log)
	}
}

func TestRequestBodyTooLarge(t *testing.T) {
	s := NewServer(&fakeHerder{}, ServerInfo{}, slog.New(slog.DiscardHandler))
	rec := httptest.NewRecorder()
	body := `{"name":"x","config":{"a":"` + strings.Repeat("x", maxBody) + `"}}`
	req := httptest.NewRequest("POST", "/connectors", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	s.ServeHTTP(rec, req)
	if rec.Code != 413 || rec.Body.String() != `{"error_code":413,"message":"The request body exceeds 1048576 bytes"}` {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}

// bodyRoutes are the requests whose bodies FuzzRequestBody sends through the real handlers.
var bodyRoutes = []struct{ method, path string }{
	{"POST", "/connectors"},
	{"PUT", "/connectors/pg/config"},
	{"PATCH", "/connectors/pg/config"},
	{"PATCH", "/connectors/pg/offsets"},
	{"PUT", "/connector-plugins/Postgres/config/validate"},
	{"POST", "/connectors/pg/tasks"},
	{"POST", "/connectors/pg/restart?includeTasks=true&onlyFailed=true"},
	{"POST", "/connectors/pg/signals"},
}

// FuzzRequestBody sends a body, with a Content-Type, to each endpoint that reads one. Any answer is fine but
// a panic (which recoverPanic would turn into a logged 500) and an error without Connect's {error_code,
// message} body; a Content-Type other than application/json must be refused with a 415 before any herder call.
func FuzzRequestBody(f *testing.F) {
	for _, body := range []string{
		`{"name":"x","config":{"connector.class":"C","n":5,"b":true,"z":null},"initial_state":"PAUSED"}`,
		`{"connector.class":"C","tasks.max":"1"}`,
		`{"a":null,"b":"2"}`,
		`{"offsets":[{"partition":{"server":"p"},"offset":{"lsn":1.0,"txId":null}}]}`,
		`{"offsets":[{"partition":null,"offset":null}]}`,
		`[{"k":"v"}]`,
		`{"name":"y","config":{"a":{"b":1}}}`,
		`{"name":["y"],"config":[1]}`,
		`{"transforms":"r","transforms.r.type":"org.apache.kafka.connect.transforms.RegexRouter","transforms.r.regex":"a)|(b","transforms.r.replacement":"x"}`,
		`not json`, ``, `{`, `"\ud800"`, `1e999`, `{"offsets":[{}]}`,
		`{"type":"execute-snapshot","data":{"data-collections":["public.t"]}}`, `{"id":"x","type":"log","data":"{\"message\":\"m\"}"}`,
		`{"type":"","data":null}`, `{"type":"log","data":"\"unterminated}`,
	} {
		for i := range bodyRoutes {
			f.Add(uint8(i), "application/json", body)
		}
	}
	for _, ct := range []string{"application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded", "", "application/json;", "application/json; a=\"", "*/*"} {
		f.Add(uint8(0), ct, `{"name":"x","config":{}}`)
	}
	f.Fuzz(func(t *testing.T, route uint8, contentType, body string) {
		var logged bytes.Buffer
		h := &signallingHerder{}
		s := NewServer(h, ServerInfo{}, slog.New(slog.NewTextHandler(&logged, nil)))
		s.SetReady()
		r := bodyRoutes[int(route)%len(bodyRoutes)]
		req := httptest.NewRequest(r.method, r.path, strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if mediaType, _, err := mime.ParseMediaType(contentType); (err != nil || mediaType != "application/json") && (contentType != "" || body != "") {
			if rec.Code != 415 || len(h.calls) != 0 {
				t.Fatalf("%s %s with Content-Type %q: %d, herder calls %q", r.method, r.path, contentType, rec.Code, h.calls)
			}
		}
		if strings.Contains(logged.String(), "REST request panicked") {
			t.Fatalf("%s %s with %q panicked:\n%s", r.method, r.path, body, logged.String())
		}
		if rec.Code >= 400 {
			var e errorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.ErrorCode != rec.Code || e.Message == "" {
				t.Fatalf("%s %s with %q: error body %s is not Connect's", r.method, r.path, body, rec.Body)
			}
		}
	})
}

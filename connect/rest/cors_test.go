package rest

import (
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCrossOriginAsConnect: with access.control.allow.origin set, an allowed origin's requests get Jetty's CORS
// headers (its own origin echoed, credentials allowed), a preflight the allowed methods, Content-Type and a
// 60 s max age, and its pages may change state; another origin gets no CORS header and may not. Before, both
// keys were refused at start.
func TestCrossOriginAsConnect(t *testing.T) {
	cors, err := ParseCrossOrigin(map[string]string{"access.control.allow.origin": ` https://ui\.example\.com ,http://localhost:\d+`, "access.control.allow.methods": "GET, PUT"})
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(&fakeHerder{}, ServerInfo{}, slog.New(slog.DiscardHandler))
	s.AllowCrossOrigin(cors)
	for _, tt := range []struct {
		method, origin string
		preflight      bool
		want           int
		wantAllow      string // Access-Control-Allow-Origin
		wantMethods    string
	}{
		{method: "GET", origin: "https://UI.example.com", want: 200, wantAllow: "https://UI.example.com"},
		{method: "GET", origin: "https://ui.example.com.evil", want: 200},
		{method: "OPTIONS", origin: "http://localhost:3000", preflight: true, want: 200, wantAllow: "http://localhost:3000", wantMethods: "GET,PUT"},
		{method: "OPTIONS", origin: "https://evil.example", preflight: true, want: 200},
		{method: "PUT", origin: "https://ui.example.com", want: 202, wantAllow: "https://ui.example.com"},
		{method: "PUT", origin: "https://evil.example", want: 403},
	} {
		path := "/connectors/pg/pause"
		if tt.method == "GET" {
			path = "/connectors/pg/status"
		}
		req := httptest.NewRequest(tt.method, path, nil)
		req.Header.Set("Origin", tt.origin)
		if tt.preflight {
			req.Header.Set("Access-Control-Request-Method", "PUT")
		}
		rec := serve(s, req)
		h := rec.Header()
		if rec.Code != tt.want || h.Get("Access-Control-Allow-Origin") != tt.wantAllow || h.Get("Access-Control-Allow-Methods") != tt.wantMethods || h.Get("Vary") != "Origin" {
			t.Errorf("%s %s from %s: %d %v", tt.method, path, tt.origin, rec.Code, h)
		}
		if tt.wantAllow != "" && h.Get("Access-Control-Allow-Credentials") != "true" {
			t.Errorf("%s from %s: no Access-Control-Allow-Credentials", tt.method, tt.origin)
		}
		if tt.wantMethods != "" && (h.Get("Access-Control-Allow-Headers") != "Content-Type" || h.Get("Access-Control-Max-Age") != "60" || h.Get("Allow") != "PUT,OPTIONS") {
			t.Errorf("preflight from %s: %v", tt.origin, h)
		}
	}

	any, err := ParseCrossOrigin(map[string]string{"access.control.allow.origin": "*"})
	if err != nil {
		t.Fatal(err)
	}
	s.AllowCrossOrigin(any)
	req := httptest.NewRequest("OPTIONS", "/connectors", nil)
	req.Header.Set("Origin", "https://anywhere.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	if rec := serve(s, req); rec.Header().Get("Access-Control-Allow-Methods") != "GET,POST,HEAD" || rec.Header().Get("Allow") != "GET,POST,HEAD,OPTIONS" {
		t.Errorf("* with the default methods: %v", rec.Header())
	}

	if off, err := ParseCrossOrigin(map[string]string{"access.control.allow.methods": "PUT"}); off != nil || err != nil {
		t.Errorf("without allowed origins CORS is off: %v %v", off, err)
	}
	if _, err := ParseCrossOrigin(map[string]string{"access.control.allow.origin": `https://(?=a)`}); err == nil || !strings.Contains(err.Error(), `access.control.allow.origin: origin pattern "https://(?=a)"`) {
		t.Errorf("a lookahead: %v", err)
	}
}

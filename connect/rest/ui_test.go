package rest

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// TestStatusPage: /ui/ serves the embedded page and its assets with their content types and the headers
// that confine its scripts, only to an authenticated user when the API requires authentication.
func TestStatusPage(t *testing.T) {
	auth, err := LoadBasicAuth("testdata/credentials.properties")
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(&fakeHerder{}, ServerInfo{}, slog.New(slog.DiscardHandler))
	s.RequireBasicAuth(auth)
	get := func(method, path string, authenticated bool) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, nil)
		if authenticated {
			req.SetBasicAuth("alice", "s3cret")
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		return rec
	}

	for _, tc := range []struct{ path, contentType, contains string }{
		{"/ui/", "text/html; charset=utf-8", `<script src="app.js"`},
		{"/ui/app.js", "text/javascript; charset=utf-8", "connectors?expand=status"},
		{"/ui/style.css", "text/css; charset=utf-8", "table"},
	} {
		if rec := get("GET", tc.path, false); rec.Code != 401 {
			t.Errorf("GET %s without credentials: %d, want 401", tc.path, rec.Code)
		}
		rec := get("GET", tc.path, true)
		if rec.Code != 200 || rec.Header().Get("Content-Type") != tc.contentType || !strings.Contains(rec.Body.String(), tc.contains) {
			t.Errorf("GET %s: %d %q, want 200 %q with %q", tc.path, rec.Code, rec.Header().Get("Content-Type"), tc.contentType, tc.contains)
		}
		if csp := rec.Header().Get("Content-Security-Policy"); csp != "default-src 'self'; frame-ancestors 'none'" {
			t.Errorf("GET %s: Content-Security-Policy %q", tc.path, csp)
		}
		if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no X-Content-Type-Options: nosniff", tc.path)
		}
	}
	for path, want := range map[string]int{"/ui/missing.js": 404, "/ui": 307, "/ui/index.html": 301} {
		if rec := get("GET", path, true); rec.Code != want {
			t.Errorf("GET %s: %d, want %d", path, rec.Code, want)
		}
	}
	if rec := get("POST", "/ui/", true); rec.Code != 405 {
		t.Errorf("POST /ui/: %d, want 405", rec.Code)
	}
}

// TestStatusPageAssets: the page loads nothing from elsewhere (no CDN), everything it links is embedded, and
// its script inserts what the daemon returns as text only.
func TestStatusPageAssets(t *testing.T) {
	page, err := uiFiles.ReadFile("ui/index.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(string(page), -1) {
		f, err := uiFiles.Open("ui/" + m[1])
		if err != nil {
			t.Errorf("index.html links %s, which is not embedded: %v", m[1], err)
			continue
		}
		f.Close()
	}
	script, err := uiFiles.Open("ui/app.js")
	if err != nil {
		t.Fatal(err)
	}
	defer script.Close()
	js, err := io.ReadAll(script)
	if err != nil {
		t.Fatal(err)
	}
	for _, banned := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "http://", "https://", "/config"} {
		if strings.Contains(string(js), banned) || strings.Contains(string(page), banned) {
			t.Errorf("the status page uses %q", banned)
		}
	}
}

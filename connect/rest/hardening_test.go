package rest

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// signallingHerder is a fakeHerder that takes signals (Signaller), recording each.
type signallingHerder struct{ fakeHerder }

func (h *signallingHerder) SignalConnector(name, id, kind, data string) error {
	h.record("signal " + name + " " + kind + " " + data)
	return nil
}

func serve(s *Server, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

// TestStateChangesNeedJSONAndTheirOwnOrigin: what a web page of another site can send without a CORS
// preflight (a form or text/plain body, a body without a Content-Type, any POST carrying its Origin) changes
// nothing; clients that are not browsers keep working as with Connect.
func TestStateChangesNeedJSONAndTheirOwnOrigin(t *testing.T) {
	tests := []struct {
		name, method, path, body, contentType, origin string
		want                                          int
		wantMessage                                   string
	}{
		{name: "body without Content-Type", method: "POST", path: "/connectors", body: `{"name":"x","config":{"connector.class":"C"}}`, want: 415, wantMessage: "HTTP 415 Unsupported Media Type"},
		{name: "text/plain body", method: "PUT", path: "/connectors/pg/config", body: `{"connector.class":"C"}`, contentType: "text/plain", want: 415},
		{name: "form to a bodiless endpoint", method: "POST", path: "/connectors/pg/restart", contentType: "application/x-www-form-urlencoded", want: 415},
		{name: "application/json lookalike", method: "POST", path: "/connectors", body: `{}`, contentType: "application/jsonp", want: 415},
		{name: "JSON with a charset", method: "PUT", path: "/connectors/pg/config", body: `{"connector.class":"C"}`, contentType: "application/json; charset=utf-8", want: 200},
		{name: "bodiless restart as curl sends it", method: "POST", path: "/connectors/pg/restart", want: 204},
		{name: "bodiless pause as curl sends it", method: "PUT", path: "/connectors/pg/pause", want: 202},
		{name: "restart from another site's page", method: "POST", path: "/connectors/pg/restart", origin: "https://evil.example", want: 403,
			wantMessage: "Cross-origin request refused: a web page of origin https://evil.example may not change this worker"},
		{name: "delete from another port's page", method: "DELETE", path: "/connectors/pg", origin: "http://example.com:8080", want: 403},
		{name: "opaque origin", method: "POST", path: "/connectors/pg/restart", origin: "null", want: 403},
		{name: "change from the worker's own origin", method: "PUT", path: "/connectors/pg/pause", origin: "http://EXAMPLE.com", want: 202},
		{name: "reads from any origin", method: "GET", path: "/connectors/pg/status", origin: "https://evil.example", want: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &fakeHerder{}
			s := NewServer(h, ServerInfo{}, slog.New(slog.DiscardHandler))
			req := httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body))
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			rec := serve(s, req)
			if rec.Code != tt.want || !strings.Contains(rec.Body.String(), tt.wantMessage) {
				t.Fatalf("got %d %s, want %d %q", rec.Code, rec.Body, tt.want, tt.wantMessage)
			}
			if tt.want >= 400 && len(h.calls) != 0 {
				t.Errorf("a refused request reached the herder: %q", h.calls)
			}
		})
	}
}

// TestReadOnlyUsers: a user named in rest.basic.auth.readonly.users reads everything and changes nothing
// (403 naming the user and the key); other users change as before.
func TestReadOnlyUsers(t *testing.T) {
	dir := t.TempDir()
	creds := filepath.Join(dir, "creds.properties")
	if err := os.WriteFile(creds, []byte("admin: a-pw\nviewer: v-pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	auth, err := LoadWorkerAuth(map[string]string{CredentialsFileKey: creds, ReadOnlyUsersKey: " viewer ,"}, "")
	if err != nil {
		t.Fatal(err)
	}
	h := &signallingHerder{}
	s := NewServer(h, ServerInfo{}, slog.New(slog.DiscardHandler))
	s.RequireBasicAuth(auth)
	s.SetReady()
	for _, tt := range []struct {
		user, method, path, body string
		want                     int
	}{
		{"viewer", "GET", "/connectors/pg/status", "", 200},
		{"viewer", "GET", "/health", "", 200},
		{"viewer", "HEAD", "/connectors", "", 200},
		{"viewer", "PUT", "/connectors/pg/pause", "", 403},
		{"viewer", "POST", "/connectors/pg/restart", "", 403},
		{"viewer", "DELETE", "/connectors/pg", "", 403},
		{"viewer", "POST", "/connectors/pg/signals", `{"type":"log","data":{"message":"x"}}`, 403},
		{"viewer", "PUT", "/connectors/pg/config", `{"connector.class":"C"}`, 403},
		{"admin", "POST", "/connectors/pg/signals", `{"type":"log","data":{"message":"x"}}`, 202},
		{"admin", "PUT", "/connectors/pg/pause", "", 202},
	} {
		req := httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body))
		req.SetBasicAuth(tt.user, tt.user[:1]+"-pw")
		if tt.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		calls := len(h.calls)
		rec := serve(s, req)
		if rec.Code != tt.want {
			t.Errorf("%s %s %s: got %d %s, want %d", tt.user, tt.method, tt.path, rec.Code, rec.Body, tt.want)
		}
		if tt.want == 403 {
			if !strings.Contains(rec.Body.String(), "User viewer may only read (rest.basic.auth.readonly.users): GET and HEAD requests, not "+tt.method) {
				t.Errorf("%s %s: 403 body %s", tt.method, tt.path, rec.Body)
			}
			if len(h.calls) != calls {
				t.Errorf("%s %s: a read-only user reached the herder: %q", tt.method, tt.path, h.calls[calls:])
			}
		}
	}
	if _, err := LoadWorkerAuth(map[string]string{CredentialsFileKey: creds, ReadOnlyUsersKey: "viewer,eve"}, ""); err == nil ||
		!strings.Contains(err.Error(), `rest.basic.auth.readonly.users: user "eve" is not in the credentials file `+creds) {
		t.Errorf("an unknown read-only user: %v", err)
	}
	if _, err := LoadWorkerAuth(map[string]string{ReadOnlyUsersKey: "viewer"}, ""); err == nil || !strings.Contains(err.Error(), "basic authentication is off") {
		t.Errorf("read-only users without authentication: %v", err)
	}
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r    io.Reader
	read atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// TestBodiesAreReadOnlyAfterAuthenticationAndWithinTheirBound: a request without credentials is answered 401
// without a byte of its body read; an authenticated body over 1 MiB is refused with a 413 having read no
// more than the bound (before, 16 MiB were read and decoded).
func TestBodiesAreReadOnlyAfterAuthenticationAndWithinTheirBound(t *testing.T) {
	auth, err := LoadBasicAuth("testdata/credentials.properties")
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(&fakeHerder{}, ServerInfo{}, slog.New(slog.DiscardHandler))
	s.RequireBasicAuth(auth)
	huge := `{"name":"x","config":{` + strings.Repeat(`"":"",`, 3<<20/6) + `"a":"b"}}`
	for _, path := range []string{"/connectors", "/connectors/x/config", "/connectors/x/signals", "/connector-plugins/C/config/validate"} {
		method := "POST"
		if strings.HasSuffix(path, "config") || strings.HasSuffix(path, "validate") {
			method = "PUT"
		}
		body := &countingReader{r: strings.NewReader(huge)}
		req := httptest.NewRequest(method, path, body)
		req.Header.Set("Content-Type", "application/json")
		if rec := serve(s, req); rec.Code != 401 || body.read.Load() != 0 {
			t.Errorf("%s %s without credentials: %d, %d bytes read", method, path, rec.Code, body.read.Load())
		}
		body = &countingReader{r: strings.NewReader(huge)}
		req = httptest.NewRequest(method, path, body)
		req.Header.Set("Content-Type", "application/json")
		req.SetBasicAuth("alice", "s3cret")
		rec := serve(s, req)
		if path == "/connectors/x/signals" { // fakeHerder takes no signals: 404 before reading
			if rec.Code != 404 || body.read.Load() != 0 {
				t.Errorf("%s %s: %d, %d bytes read", method, path, rec.Code, body.read.Load())
			}
			continue
		}
		if rec.Code != 413 || body.read.Load() > maxBody+64<<10 {
			t.Errorf("%s %s with %d bytes: %d %s, %d bytes read", method, path, len(huge), rec.Code, rec.Body, body.read.Load())
		}
	}
}

// TestConnectorNamesThatNoPathAddresses: "." and ".." are refused (400) at creation, since no URL reaches them.
func TestConnectorNamesThatNoPathAddresses(t *testing.T) {
	for _, name := range []string{".", ".."} {
		h := &fakeHerder{}
		s := NewServer(h, ServerInfo{}, slog.New(slog.DiscardHandler))
		req := httptest.NewRequest("POST", "/connectors", strings.NewReader(`{"name":"`+name+`","config":{"connector.class":"C"}}`))
		req.Header.Set("Content-Type", "application/json")
		rec := serve(s, req)
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), "cannot be addressed in a URL path") || len(h.calls) != 0 {
			t.Errorf("name %q: %d %s, calls %q", name, rec.Code, rec.Body, h.calls)
		}
	}
}

// TestForwardKeepsAnEscapedName: a connector name holding '/' is forwarded as one path segment (%2F), not
// as two (before, the decoded path went on and the leader answered for another path).
func TestForwardKeepsAnEscapedName(t *testing.T) {
	var gotPath atomic.Value
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath.Store(r.URL.EscapedPath())
		w.WriteHeader(204)
	}))
	defer leader.Close()
	s := NewServer(followerHerder{&fakeHerder{}, leader.URL + "/base/"}, ServerInfo{}, slog.New(slog.DiscardHandler))
	req := httptest.NewRequest("PUT", "/connectors/a%2Fb/config", strings.NewReader(`{"connector.class":"C"}`))
	req.Header.Set("Content-Type", "application/json")
	rec := serve(s, req)
	if rec.Code != 204 || gotPath.Load() != "/base/connectors/a%2Fb/config" {
		t.Fatalf("got %d, the leader was asked for %v", rec.Code, gotPath.Load())
	}
}

// trickle sends a POST whose 1,000-byte body comes one byte per tick, and returns how many body bytes it
// sent (at most 200) before the server answered or closed the connection.
func trickle(t *testing.T, addr string, tick time.Duration) int {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /connectors HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
	answered := make(chan struct{})
	go func() {
		_, _ = bufio.NewReader(conn).ReadByte() // an answer, or the connection closed
		close(answered)
	}()
	for sent := 0; sent < 200; sent++ {
		select {
		case <-answered:
			return sent
		case <-time.After(tick):
		}
		if _, err := conn.Write([]byte(" ")); err != nil {
			return sent
		}
	}
	return 200
}

// TestTrickledBodyIsCutOffAtTheReadDeadline: a body sent a byte at a time is cut off once the read deadline
// passes (here 300 ms; NewHTTPServer's is bodyReadTimeout), long before it is complete.
func TestTrickledBodyIsCutOffAtTheReadDeadline(t *testing.T) {
	s := NewServer(&fakeHerder{}, ServerInfo{}, slog.New(slog.DiscardHandler))
	srv := httpServer(s, 300*time.Millisecond)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	if sent := trickle(t, ln.Addr().String(), 50*time.Millisecond); sent >= 200 {
		t.Fatalf("the whole trickled body was read: no read deadline")
	}
}

// TestConnectionCap: the listener holds at most its cap of connections; the next is accepted once one closes.
func TestConnectionCap(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := limitConnections(inner, 2)
	defer ln.Close()
	accepted := make(chan net.Conn, 3)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	for range 3 {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	first, second := <-accepted, <-accepted
	select {
	case <-accepted:
		t.Fatal("a third connection was accepted while two were open")
	case <-time.After(100 * time.Millisecond):
	}
	first.Close()
	first.Close() // a second Close gives back no second slot
	third := <-accepted
	third.Close()
	second.Close()
}

package rest

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/connect"
	"github.com/cdcd/cdcd/connect/interworker"
)

// internalKey is the session key interWorkerHerder verifies with.
var internalKey = []byte("0123456789abcdef0123456789abcdef")

// interWorkerHerder is a distributed worker's herder: it checks signatures with internalKey, as
// connect.Distributed.VerifyInternalRequest does, and records what the internal endpoints hand it.
type interWorkerHerder struct {
	*fakeHerder
	compatible bool
	notLeader  string // when set, the internal requests answer NotLeader naming this URL
}

func (h *interWorkerHerder) SignaturesRequired() bool { return !h.compatible }

func (h *interWorkerHerder) VerifyInternalRequest(sig interworker.Signature, body []byte) error {
	if !sig.Valid(internalKey, body) {
		return &connect.RequestError{Kind: connect.Forbidden, Message: "Internal request contained invalid signature."}
	}
	return nil
}

func (h *interWorkerHerder) PutTaskConfigs(name string, tasks []map[string]string) error {
	first := ""
	if len(tasks) > 0 {
		first = tasks[0]["k"]
	}
	h.record("tasks " + name + " " + first)
	if h.notLeader != "" {
		return &connect.RequestError{Kind: connect.NotLeader, Message: "Only the leader may write task configurations.", Forward: h.notLeader}
	}
	return nil
}

func (h *interWorkerHerder) FenceZombies(_ context.Context, name string) error {
	h.record("fence " + name)
	return nil
}

// untouchable is a request body that fails the test when read.
type untouchable struct{ t *testing.T }

func (u untouchable) Read([]byte) (int, error) {
	u.t.Error("the body of a request refused before reading was read")
	return 0, io.EOF
}

func (u untouchable) Close() error { return nil }

func internalRequest(t *testing.T, method, path, body string, sign []byte) *http.Request {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if sign != nil {
		if err := interworker.Sign(req.Header, sign, "HmacSHA256", []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	return req
}

// TestStandaloneHasNoInternalEndpoints: a standalone worker answers the internal endpoints 404 before it
// reads a byte of the body, with or without credentials.
func TestStandaloneHasNoInternalEndpoints(t *testing.T) {
	auth, err := LoadBasicAuth("testdata/credentials.properties")
	if err != nil {
		t.Fatal(err)
	}
	for _, withAuth := range []bool{false, true} {
		s := NewServer(&fakeHerder{}, ServerInfo{}, slog.New(slog.DiscardHandler))
		if withAuth {
			s.RequireBasicAuth(auth)
		}
		for _, tc := range []struct{ method, path string }{{"POST", "/connectors/pg/tasks"}, {"PUT", "/connectors/pg/fence"}} {
			req := httptest.NewRequest(tc.method, tc.path, nil)
			req.Body = untouchable{t}
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			if rec.Code != 404 || !strings.Contains(rec.Body.String(), "HTTP 404 Not Found") {
				t.Errorf("auth %v, %s %s: %d %s, want 404", withAuth, tc.method, tc.path, rec.Code, rec.Body)
			}
		}
	}
}

// TestInternalEndpointsNeedASignature: with basic authentication on, a request signed with the group's key
// passes without credentials and one without a signature does not, even with credentials, while the group
// requires signatures; refusals come with Connect's statuses and words, and an unsigned request's body is
// never read.
func TestInternalEndpointsNeedASignature(t *testing.T) {
	auth, err := LoadBasicAuth("testdata/credentials.properties")
	if err != nil {
		t.Fatal(err)
	}
	const tasks = `[{"k":"v"}]`
	tests := []struct {
		name        string
		compatible  bool
		req         func() *http.Request
		want        int
		wantMessage string
		wantCall    string
	}{
		{"signed task configs, no credentials", false, func() *http.Request {
			return internalRequest(t, "POST", "/connectors/pg/tasks", tasks, internalKey)
		}, 204, "", "tasks pg v"},
		{"signed fence, no body", false, func() *http.Request {
			return internalRequest(t, "PUT", "/connectors/pg/fence", "", internalKey)
		}, 204, "", "fence pg"},
		{"unsigned, no credentials", false, func() *http.Request {
			req := internalRequest(t, "POST", "/connectors/pg/tasks", "", nil)
			req.Body = untouchable{t}
			return req
		}, 401, "User cannot access the resource.", ""},
		{"unsigned fence, no credentials", false, func() *http.Request {
			req := internalRequest(t, "PUT", "/connectors/pg/fence", "", nil)
			req.Body = untouchable{t}
			return req
		}, 401, "User cannot access the resource.", ""},
		{"unsigned with credentials", false, func() *http.Request {
			req := internalRequest(t, "POST", "/connectors/pg/tasks", "", nil)
			req.SetBasicAuth("alice", "s3cret")
			req.Body = untouchable{t}
			return req
		}, 400, "Internal request missing required signature", ""},
		{"signed with another key", false, func() *http.Request {
			return internalRequest(t, "POST", "/connectors/pg/tasks", tasks, []byte("not the group's key"))
		}, 403, "Internal request contained invalid signature.", ""},
		{"signature of another body", false, func() *http.Request {
			req := internalRequest(t, "POST", "/connectors/pg/tasks", `[{"k":"w"}]`, internalKey)
			req.Body = io.NopCloser(strings.NewReader(tasks))
			return req
		}, 403, "Internal request contained invalid signature.", ""},
		{"unknown algorithm", false, func() *http.Request {
			req := internalRequest(t, "POST", "/connectors/pg/tasks", tasks, internalKey)
			req.Header.Set(interworker.AlgorithmHeader, "HmacNope")
			req.Body = untouchable{t}
			return req
		}, 400, "Algorithm HmacNope not available", ""},
		{"signed body over 1 MiB", false, func() *http.Request {
			big := `[{"k":"` + strings.Repeat("x", maxInternalBody) + `"}]`
			return internalRequest(t, "POST", "/connectors/pg/tasks", big, internalKey)
		}, 413, "The request body exceeds 1048576 bytes", ""},
		// Under Connect's compatible protocol no signature is checked: credentials let a request in.
		{"compatible protocol, unsigned with credentials", true, func() *http.Request {
			req := internalRequest(t, "POST", "/connectors/pg/tasks", tasks, nil)
			req.SetBasicAuth("alice", "s3cret")
			return req
		}, 204, "", "tasks pg v"},
		{"compatible protocol, unsigned without credentials", true, func() *http.Request {
			req := internalRequest(t, "POST", "/connectors/pg/tasks", "", nil)
			req.Body = untouchable{t}
			return req
		}, 401, "User cannot access the resource.", ""},
	}
	for _, tt := range tests {
		h := &interWorkerHerder{fakeHerder: &fakeHerder{}, compatible: tt.compatible}
		s := NewServer(h, ServerInfo{}, slog.New(slog.DiscardHandler))
		s.RequireBasicAuth(auth)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, tt.req())
		if rec.Code != tt.want || tt.wantMessage != "" && !strings.Contains(rec.Body.String(), tt.wantMessage) {
			t.Errorf("%s: %d %s, want %d %q", tt.name, rec.Code, rec.Body, tt.want, tt.wantMessage)
		}
		if got := strings.Join(h.calls, ";"); got != tt.wantCall {
			t.Errorf("%s: herder calls %q, want %q", tt.name, got, tt.wantCall)
		}
	}
}

// TestSignedRequestForwardedWithItsSignature: a follower that receives a signed internal request forwards
// it to the leader with the same body and signature, which the leader then accepts.
func TestSignedRequestForwardedWithItsSignature(t *testing.T) {
	leaderHerder := &interWorkerHerder{fakeHerder: &fakeHerder{}}
	leaderAPI := NewServer(leaderHerder, ServerInfo{}, slog.New(slog.DiscardHandler))
	leader := httptest.NewServer(leaderAPI)
	t.Cleanup(leader.Close)
	follower := NewServer(&interWorkerHerder{fakeHerder: &fakeHerder{}, notLeader: leader.URL}, ServerInfo{}, slog.New(slog.DiscardHandler))
	rec := httptest.NewRecorder()
	follower.ServeHTTP(rec, internalRequest(t, "POST", "/connectors/pg/tasks", `[{"k":"fwd"}]`, internalKey))
	if rec.Code != 204 {
		t.Fatalf("forwarded: %d %s", rec.Code, rec.Body)
	}
	if got := strings.Join(leaderHerder.calls, ";"); got != "tasks pg fwd" {
		t.Fatalf("the leader got %q", got)
	}
}

// FuzzInternalTaskConfigs: whatever body a worker with the key signs, the internal endpoint answers it
// with a 204 or a refusal, never a panic (which recoverPanic would turn into a 500 of its own words).
func FuzzInternalTaskConfigs(f *testing.F) {
	for _, seed := range []string{`[{"k":"v"}]`, `[]`, `{}`, `[{"k":1}]`, `[{"k":null}]`, `[[`, ``, `[{"k":"v"}] trailing`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		s := NewServer(&interWorkerHerder{fakeHerder: &fakeHerder{}}, ServerInfo{}, slog.New(slog.DiscardHandler))
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, internalRequest(t, "POST", "/connectors/pg/tasks", body, internalKey))
		if rec.Code != 204 && (rec.Code < 400 || rec.Code > 599) || strings.Contains(rec.Body.String(), "Unexpected failure serving") {
			t.Fatalf("%q: %d %s", body, rec.Code, rec.Body)
		}
	})
}

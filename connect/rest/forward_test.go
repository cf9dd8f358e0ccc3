package rest

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/connect"
)

// followerHerder refuses config writes as a distributed follower does, naming the leader.
type followerHerder struct {
	*fakeHerder
	leader string
}

func (f followerHerder) PutConnectorConfig(string, map[string]string, bool, string) (bool, connect.ConnectorInfo, error) {
	return false, connect.ConnectorInfo{}, &connect.RequestError{Kind: connect.NotLeader, Message: "Only the leader can set connector configs.", Forward: f.leader}
}

func (f followerHerder) PauseConnector(string) error {
	return &connect.RequestError{Kind: connect.Conflict, Message: connect.StaleConfigMessage}
}

// seen is what the leader received.
type seen struct {
	method, path, query, auth, body string
}

// startLeader serves the API over a fakeHerder and records each request it gets.
func startLeader(t *testing.T) (*httptest.Server, *[]seen) {
	t.Helper()
	var got []seen
	api := NewServer(&fakeHerder{}, ServerInfo{}, slog.New(slog.DiscardHandler))
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = append(got, seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), string(body)})
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(leader.Close)
	return leader, &got
}

func TestForwardRule(t *testing.T) {
	leader, got := startLeader(t)
	const create = `{"name":"new","config":{"connector.class":"PostgresConnector"}}`
	tests := []struct {
		name, query, target string
		wantStatus          int
		wantForward         string // the forward parameter the leader saw; "" when nothing reached it
		wantBody            string
	}{
		{"from a client: forwarded, one more hop allowed", "", leader.URL, 201, "forward=true", `"name":"new"`},
		{"forwarded once: forwarded, no more hops", "?forward=true", leader.URL, 201, "forward=false", `"name":"new"`},
		{"forwarded twice: refused", "?forward=false", leader.URL, 409, "", "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"},
		{"no leader known: refused", "", "", 409, "", "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			*got = nil
			follower := NewServer(followerHerder{&fakeHerder{}, tt.target}, ServerInfo{}, slog.New(slog.DiscardHandler))
			req := httptest.NewRequest("POST", "http://follower:8083/connectors"+tt.query, strings.NewReader(create))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Basic dTpw")
			req.Header.Set("X-Other", "not forwarded")
			rec := httptest.NewRecorder()
			follower.ServeHTTP(rec, req)
			if rec.Code != tt.wantStatus || !strings.Contains(rec.Body.String(), tt.wantBody) {
				t.Fatalf("got %d %s, want %d with %q", rec.Code, rec.Body, tt.wantStatus, tt.wantBody)
			}
			if tt.wantForward == "" {
				if len(*got) != 0 {
					t.Fatalf("the leader got %+v", *got)
				}
				return
			}
			want := seen{"POST", "/connectors", tt.wantForward, "Basic dTpw", create}
			if len(*got) != 1 || (*got)[0] != want {
				t.Fatalf("the leader got %+v, want %+v", *got, want)
			}
			// The Location names the worker the client asked, as Connect's relative Location does.
			if loc := rec.Header().Get("Location"); loc != "http://follower:8083/connectors/new" {
				t.Errorf("Location %q", loc)
			}
		})
	}
}

func TestConflictAnswers409(t *testing.T) {
	s := NewServer(followerHerder{&fakeHerder{}, ""}, ServerInfo{}, slog.New(slog.DiscardHandler))
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("PUT", "/connectors/pg/pause", nil))
	want := `{"error_code":409,"message":"` + connect.StaleConfigMessage + `"}`
	if rec.Code != 409 || rec.Body.String() != want {
		t.Errorf("got %d %s", rec.Code, rec.Body)
	}
}

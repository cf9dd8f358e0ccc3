package rest

import (
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestBasicAuth(t *testing.T) {
	auth, err := LoadBasicAuth("testdata/credentials.properties")
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(&fakeHerder{}, ServerInfo{}, slog.New(slog.DiscardHandler))
	s.RequireBasicAuth(auth)
	tests := []struct {
		name, method, path, user, password string
		want                               int
	}{
		{"no credentials", "GET", "/connectors", "", "", 401},
		{"wrong password", "GET", "/connectors", "alice", "nope", 401},
		{"unknown user", "GET", "/connectors", "eve", "s3cret", 401},
		{"colon separator", "GET", "/connectors", "alice", "s3cret", 200},
		// As Connect's PropertyFileLoginModule, the whole value is the password.
		{"equals separator, commas in the password", "GET", "/connectors", "bob", "other,with,commas", 200},
		{"roles are not split off", "GET", "/connectors", "bob", "other", 401},
		{"not the internal endpoint", "POST", "/connectors/pg/tasks/0/restart", "", "", 401},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(tt.method, tt.path, strings.NewReader("[]"))
		req.Header.Set("Content-Type", "application/json")
		if tt.user != "" {
			req.SetBasicAuth(tt.user, tt.password)
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != tt.want {
			t.Errorf("%s: got %d %s, want %d", tt.name, rec.Code, rec.Body, tt.want)
		}
		if rec.Code == 401 && !strings.Contains(rec.Body.String(), "User cannot access the resource.") {
			t.Errorf("%s: 401 body %s", tt.name, rec.Body)
		}
	}
}

func TestBasicAuthRefusesAMissingCredentialsFile(t *testing.T) {
	if _, err := LoadBasicAuth("testdata/missing.properties"); err == nil {
		t.Error("a missing file was accepted")
	}
}

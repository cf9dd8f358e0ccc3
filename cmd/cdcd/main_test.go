package main

import (
	"log/slog"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/connect"
	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/connect/rest"
)

func TestNewAPIAuthentication(t *testing.T) {
	cfg, _, err := config.ParseWorker(map[string]string{
		"bootstrap.servers": "127.0.0.1:1", "offset.storage.file.filename": filepath.Join(t.TempDir(), "offsets"),
		"key.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
	}, config.Standalone)
	if err != nil {
		t.Fatal(err)
	}
	w, err := connect.NewStandalone(cfg, runtimeParts(cfg, nil, nil, slog.New(slog.DiscardHandler)), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	creds := filepath.Join(t.TempDir(), "creds")
	if err := os.WriteFile(creds, []byte("u: p\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)

	api, err := newAPI(w, map[string]string{rest.CredentialsFileKey: creds}, log)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, httptest.NewRequest("GET", "/connectors", nil))
	if rec.Code != 401 {
		t.Errorf("with a credentials file, a request without credentials got %d", rec.Code)
	}

	// A Connect worker file asking for basic authentication is not silently served without it.
	_, err = newAPI(w, map[string]string{"rest.extension.classes": "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"}, log)
	if err == nil || !strings.Contains(err.Error(), rest.CredentialsFileKey) {
		t.Errorf("Connect's extension without a credentials file: %v", err)
	}
}

func TestWarnsWhenTheRESTAPIIsOpenBeyondLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr  net.Addr
		props map[string]string
		warn  bool
	}{
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8083}, nil, true},
		{&net.TCPAddr{IP: net.ParseIP("10.0.0.5"), Port: 8083}, nil, true},
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8083}, nil, false},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8083}, map[string]string{rest.CredentialsFileKey: "/etc/creds"}, false},
	} {
		var logged strings.Builder
		warnIfOpen(tc.addr, tc.props, slog.New(slog.NewTextHandler(&logged, nil)))
		if got := strings.Contains(logged.String(), "without authentication"); got != tc.warn {
			t.Errorf("%v %v: warned %v, want %v (%s)", tc.addr, tc.props, got, tc.warn, logged.String())
		}
	}
}

package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHealthCommand: `cdcd health` succeeds only on a 200 {"status":"healthy"} (failed tasks named but
// healthy, as GET /health has it) and fails, saying why, on a starting worker and on a closed port.
func TestHealthCommand(t *testing.T) {
	answer := `{"status":"healthy","message":"Worker has completed startup and is ready to handle requests."}`
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		w.Write([]byte(answer))
	}))
	defer srv.Close()

	var out strings.Builder
	if err := healthCommand([]string{"--url", srv.URL}, &out); err != nil || out.String() != srv.URL+"/health: healthy\n" {
		t.Errorf("healthy worker: %v, %q", err, out.String())
	}
	answer = `{"status":"healthy","message":"…","failed_tasks":[{"connector":"pg","task":0,"state":"FAILED","trace":"x"}]}`
	out.Reset()
	if err := healthCommand([]string{"--url", srv.URL}, &out); err != nil || !strings.Contains(out.String(), "healthy (FAILED tasks, which leave the worker healthy: pg/0)") {
		t.Errorf("healthy worker with a failed task: %v, %q", err, out.String())
	}
	status, answer = http.StatusServiceUnavailable, `{"status":"starting","message":"Worker is still starting up."}`
	if err := healthCommand([]string{"--url", srv.URL}, &out); err == nil || !strings.Contains(err.Error(), "503 Service Unavailable") || !strings.Contains(err.Error(), "Worker is still starting up.") {
		t.Errorf("starting worker: %v", err)
	}

	closed := closedPort(t)
	if err := healthCommand([]string{"--url", "http://" + closed}, &out); err == nil || !strings.Contains(err.Error(), "no answer from http://"+closed+"/health") {
		t.Errorf("closed port: %v", err)
	}
	if err := healthCommand([]string{"a.properties", "b.properties"}, &out); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("two files: %v", err)
	}
}

// TestHealthTargetFromWorkerProperties: the worker's first listener, a wildcard host read as loopback, and the
// first user of the basic-auth credentials file.
func TestHealthTargetFromWorkerProperties(t *testing.T) {
	dir := t.TempDir()
	creds := filepath.Join(dir, "creds")
	worker := filepath.Join(dir, "worker.properties")
	if err := os.WriteFile(creds, []byte("zed: z\nalice: s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(worker, []byte("listeners=http://0.0.0.0:8084,http://other:9\nrest.basic.auth.credentials.file="+creds+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	target, err := workerHealthTarget(worker, "")
	if err != nil || target.url != "http://127.0.0.1:8084" || target.auth == nil {
		t.Fatalf("workerHealthTarget: %+v %v", target, err)
	}
	if user, password := target.auth.FirstUser(); user != "alice" || password != "s3cret" {
		t.Errorf("authenticates as %q %q, want the first user alice", user, password)
	}
	if target, _ := workerHealthTarget(worker, "http://h:1"); target.url != "http://h:1" {
		t.Errorf("--url does not win over the listener: %q", target.url)
	}
	for listener, want := range map[string]string{"http://:8083": "http://127.0.0.1:8083", "https://[::]:8443": "https://127.0.0.1:8443",
		"http://cdcd.internal:8083": "http://cdcd.internal:8083"} {
		if got, err := localURL(listener); err != nil || got != want {
			t.Errorf("localURL(%s) = %q, %v; want %q", listener, got, err, want)
		}
	}
	if _, err := localURL("http://127.0.0.1:0"); err == nil || !strings.Contains(err.Error(), "--url") {
		t.Errorf("a port chosen at start: %v", err)
	}
}

// closedPort is an address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

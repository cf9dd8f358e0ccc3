package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFindPostgresBin(t *testing.T) {
	tests := []struct {
		name     string
		versions []string // directories with bin/postgres
		empty    []string // directories without
		want     string
	}{
		{name: "prefers 15", versions: []string{"13", "15", "17"}, want: "15"},
		{name: "else the highest", versions: []string{"9", "13", "16"}, empty: []string{"17"}, want: "16"},
		{name: "ignores other names", versions: []string{"14"}, empty: []string{"15"}, want: "14"},
		{name: "none", empty: []string{"15", "common"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for _, v := range tt.versions {
				mkfile(t, filepath.Join(root, v, "bin", "postgres"))
			}
			for _, v := range tt.empty {
				if err := os.MkdirAll(filepath.Join(root, v, "bin"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			got, ok := findPostgresBin(root)
			if tt.want == "" {
				if ok {
					t.Errorf("found %s, want nothing", got)
				}
				return
			}
			if want := filepath.Join(root, tt.want, "bin"); !ok || got != want {
				t.Errorf("findPostgresBin = %s, %v; want %s", got, ok, want)
			}
		})
	}
	if _, ok := findPostgresBin(filepath.Join(t.TempDir(), "missing")); ok {
		t.Error("found binaries under a missing directory")
	}
}

func mkfile(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestPostgresStartAndStop starts the demo's PostgreSQL, runs the sample schema and a few
// workload ticks on it, checks that logical decoding is on, and that stop leaves no server.
func TestPostgresStartAndStop(t *testing.T) {
	requireE2E(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Not t.TempDir: the server's OS user must be able to enter every directory above its own.
	parent, err := os.MkdirTemp("", "cdcd-demo-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	if err := os.Chmod(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	pg, err := startPostgres(ctx, parent, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			if err := pg.stop(); err != nil {
				t.Error(err)
			}
		}
	}()
	conn, err := pg.createDatabase(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	var walLevel string
	if err := conn.QueryRow(ctx, "SHOW wal_level").Scan(&walLevel); err != nil || walLevel != "logical" {
		t.Errorf("wal_level = %q, %v; want logical", walLevel, err)
	}
	for _, stmt := range schemaSQL {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	w := newWorkload(pgDatabase{conn}, 1, func(string) {})
	for range 4 {
		if err := w.step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var customers, moved int
	if err := conn.QueryRow(ctx, "SELECT count(*), count(*) FILTER (WHERE id > 1000) FROM customers").Scan(&customers, &moved); err != nil {
		t.Fatal(err)
	}
	if customers != 4 || moved != 1 {
		t.Errorf("customers: %d rows, %d with a changed key; want 4 and 1", customers, moved)
	}
	// The same check TestDemoEndToEnd relies on must see the running server, or it proves nothing.
	if running := processesUnder(parent); len(running) == 0 {
		t.Error("processesUnder finds no process of the running server")
	}
	if err := conn.Close(ctx); err != nil {
		t.Error(err)
	}
	stopped = true
	if err := pg.stop(); err != nil {
		t.Fatal(err)
	}
	if left := processesUnder(parent); len(left) > 0 {
		t.Errorf("processes left after stop:\n%s", strings.Join(left, "\n"))
	}
	if err := pg.stop(); err != nil {
		t.Errorf("stopping a stopped server: %v", err)
	}
}

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// requireE2E skips t unless CDCD_E2E is set: these tests start PostgreSQL and build cdcd.
func requireE2E(t *testing.T) {
	t.Helper()
	if v := os.Getenv("CDCD_E2E"); v == "" || v == "0" {
		t.Skip("starts PostgreSQL and cdcd: set CDCD_E2E=1")
	}
}

// TestDemoEndToEnd runs the demo as a user would, for 20 s, and checks what it printed and that
// it left nothing behind.
func TestDemoEndToEnd(t *testing.T) {
	requireE2E(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	demo := filepath.Join(t.TempDir(), "demo")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", demo, ".").CombinedOutput(); err != nil {
		t.Fatalf("building the demo: %v\n%s", err, out)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, demo, "-duration", "20s")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	out := stdout.String()
	t.Logf("demo output:\n%s\nstderr:\n%s", out, stderr.String())
	if err != nil {
		t.Fatalf("demo: %v", err)
	}

	for _, want := range []struct{ what, pattern string }{
		{"a create", `(?m)^demo\.public\.\w+  key=\{"id":\d+\}  c  \{`},
		{"an update", `(?m)^demo\.public\.orders  key=\{"id":\d+\}  u  \{"status":"new",…\} → \{"status":"paid",…\}`},
		{"a delete", `(?m)^demo\.public\.orders  key=\{"id":\d+\}  d  \{`},
		{"a tombstone", `(?m)^demo\.public\.\w+  key=\{"id":\d+\}  \(tombstone\)$`},
		{"the key change's delete", `(?m)^demo\.public\.customers  key=\{"id":\d+\}  d  .*\[newkey=\{"id":\d{4}\}\]$`},
		{"the key change's create", `(?m)^demo\.public\.customers  key=\{"id":\d{4}\}  c  .*\[oldkey=\{"id":\d+\}\]$`},
	} {
		if !regexp.MustCompile(want.pattern).MatchString(out) {
			t.Errorf("no line with %s (%s)", want.what, want.pattern)
		}
	}

	m := regexp.MustCompile(`(?m)^temp dir +(\S+)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatal("the demo did not print its temp dir")
	}
	tmp := m[1]
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("temp dir %s still exists (%v)", tmp, err)
	}
	if left := processesUnder(tmp); len(left) > 0 {
		t.Errorf("processes left running from %s:\n%s", tmp, strings.Join(left, "\n"))
	}
}

// processesUnder lists the processes whose command line or working directory names dir:
// PostgreSQL's postmaster (-D dir/pg/data) and its children (working in the data dir), cdcd
// (dir/worker.properties).
func processesUnder(dir string) []string {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var found []string
	for _, p := range procs {
		cmdline, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if err != nil { // gone meanwhile
			continue
		}
		cwd, _ := os.Readlink(filepath.Join(p, "cwd"))
		args := strings.ReplaceAll(string(cmdline), "\x00", " ")
		if strings.Contains(args, dir+"/") || strings.HasPrefix(cwd, dir+"/") {
			found = append(found, filepath.Base(p)+": "+args+" (in "+cwd+")")
		}
	}
	return found
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFindRepoRoot(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := findRepoRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Dir(filepath.Dir(wd)); root != want { // e2e/demo → the repository
		t.Errorf("findRepoRoot(%s) = %s, want %s", wd, root, want)
	}
	other := t.TempDir()
	mkfile(t, filepath.Join(other, "go.mod")) // some other module's go.mod must not count
	if root, err := findRepoRoot(other); err == nil {
		t.Errorf("findRepoRoot outside the repository = %s, want an error", root)
	}
}

func TestConfigFiles(t *testing.T) {
	dir := t.TempDir()
	cfg := cdcdConfig{broker: "127.0.0.1:9092", pgPort: 5433, offsetsFile: "/tmp/x/offsets.dat"}
	if err := writeProperties(filepath.Join(dir, "w.properties"), cfg.workerProperties()); err != nil {
		t.Fatal(err)
	}
	worker, _ := os.ReadFile(filepath.Join(dir, "w.properties"))
	for _, line := range []string{"bootstrap.servers=127.0.0.1:9092", "offset.storage.file.filename=/tmp/x/offsets.dat",
		"value.converter.schemas.enable=false", "key.converter=org.apache.kafka.connect.json.JsonConverter"} {
		if !strings.Contains(string(worker), line+"\n") {
			t.Errorf("worker.properties lacks %q:\n%s", line, worker)
		}
	}
	connector := map[string]string{}
	for _, kv := range cfg.connectorProperties() {
		connector[kv[0]] = kv[1]
	}
	for k, want := range map[string]string{"database.port": "5433", "topic.prefix": "demo", "snapshot.mode": "no_data",
		"table.include.list": "public.customers,public.orders", "database.dbname": "demo"} {
		if connector[k] != want {
			t.Errorf("connector %s = %q, want %q", k, connector[k], want)
		}
	}
}

func TestTailLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := tailLines(path, 2); got != "b\nc" {
		t.Errorf("tailLines(2) = %q", got)
	}
	if got := tailLines(path, 5); got != "a\nb\nc" {
		t.Errorf("tailLines(5) = %q", got)
	}
	if got := tailLines(path+".missing", 5); !strings.Contains(got, "cannot read") {
		t.Errorf("tailLines of a missing file = %q", got)
	}
}

// fakeCdcd writes a script that stands in for cdcd: it logs its arguments and exits 0 on SIGTERM,
// or at once with status 3 when exitAtOnce.
func fakeCdcd(t *testing.T, exitAtOnce bool) string {
	t.Helper()
	script := "#!/bin/sh\necho args \"$@\"\ntrap 'echo terminated; exit 0' TERM\nwhile :; do sleep 0.05; done\n"
	if exitAtOnce {
		script = "#!/bin/sh\necho no database >&2\nexit 3\n"
	}
	bin := filepath.Join(t.TempDir(), "cdcd")
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestCdcdProcessStopsOnSIGTERM(t *testing.T) {
	dir := t.TempDir()
	p, err := startCdcd(fakeCdcd(t, false), dir, cdcdConfig{broker: "b:1", pgPort: 1})
	if err != nil {
		t.Fatal(err)
	}
	// Stop only once the script has set its trap, which it does right after logging.
	for !strings.Contains(tailLines(p.logPath, 5), "args") {
		time.Sleep(10 * time.Millisecond)
	}
	if err := p.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	log := tailLines(p.logPath, 5)
	want := "args standalone " + filepath.Join(dir, "worker.properties") + " " + filepath.Join(dir, "connector.properties")
	if !strings.Contains(log, want) || !strings.Contains(log, "terminated") {
		t.Errorf("log = %q, want the arguments %q and the SIGTERM trap's output", log, want)
	}
}

func TestCdcdProcessExitingEarlyIsReportedWithItsLog(t *testing.T) {
	p, err := startCdcd(fakeCdcd(t, true), t.TempDir(), cdcdConfig{broker: "b:1", pgPort: 1})
	if err != nil {
		t.Fatal(err)
	}
	<-p.exited
	msg := p.exitedEarly().Error()
	if !strings.Contains(msg, "exit status 3") || !strings.Contains(msg, "no database") {
		t.Errorf("exitedEarly = %q, want the exit status and the log's last lines", msg)
	}
	if err := p.stop(); err != nil {
		t.Errorf("stopping an exited process: %v", err)
	}
}

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cdcdStopTimeout is how long cdcd gets after SIGTERM to record its offsets before it is killed.
const cdcdStopTimeout = 30 * time.Second

// findRepoRoot walks up from dir to the directory whose go.mod declares cdcd's module.
func findRepoRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		mod, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(mod), []byte("module github.com/cdcd/cdcd\n")) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no cdcd repository above %s: run the demo from inside it", dir)
		}
	}
}

// buildCdcd builds the daemon the way `make build` does and returns the binary's path.
func buildCdcd(ctx context.Context, repoRoot string) (string, error) {
	bin := filepath.Join(repoRoot, "bin", "cdcd")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/cdcd")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if output, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building cdcd: %w\n%s", err, strings.TrimSpace(string(output)))
	}
	return bin, nil
}

// cdcdConfig is what the demo tells cdcd: where the broker and the database are, and where the
// offsets go.
type cdcdConfig struct {
	broker      string // host:port
	pgPort      int
	offsetsFile string
}

// workerProperties is a Kafka Connect standalone worker config: schemaless JSON, so that printed
// events are the bare envelope.
func (c cdcdConfig) workerProperties() [][2]string {
	return [][2]string{
		{"bootstrap.servers", c.broker},
		{"key.converter", "org.apache.kafka.connect.json.JsonConverter"},
		{"value.converter", "org.apache.kafka.connect.json.JsonConverter"},
		{"key.converter.schemas.enable", "false"},
		{"value.converter.schemas.enable", "false"},
		{"offset.storage.file.filename", c.offsetsFile},
		{"offset.flush.interval.ms", "1000"},
		{"listeners", "http://127.0.0.1:0"},
	}
}

// connectorProperties is Debezium's PostgreSQL connector on the sample tables. The slot starts
// at the current end of the WAL (no snapshot), and numerics print as strings rather than
// Debezium's default base64-encoded bytes, which nobody can read in a demo.
func (c cdcdConfig) connectorProperties() [][2]string {
	return [][2]string{
		{"name", "demo"},
		{"connector.class", "io.debezium.connector.postgresql.PostgresConnector"},
		{"plugin.name", "pgoutput"},
		{"database.hostname", "127.0.0.1"},
		{"database.port", strconv.Itoa(c.pgPort)},
		{"database.user", "postgres"},
		{"database.password", ""},
		{"database.dbname", "demo"},
		{"topic.prefix", "demo"},
		{"publication.autocreate.mode", "filtered"},
		{"table.include.list", "public.customers,public.orders"},
		{"snapshot.mode", "no_data"},
		{"decimal.handling.mode", "string"},
	}
}

// writeProperties writes key=value lines. The demo's values need no escaping: they hold no
// backslashes, line breaks or leading spaces.
func writeProperties(path string, props [][2]string) error {
	var b strings.Builder
	for _, kv := range props {
		fmt.Fprintf(&b, "%s=%s\n", kv[0], kv[1])
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// cdcdProcess is a running `cdcd standalone`, its output going to a log file.
type cdcdProcess struct {
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{} // closed once the process has exited and waitErr is set
	waitErr error
}

// startCdcd writes the two config files into dir and starts `bin standalone` on them, in a
// process group of its own so that a Ctrl-C meant for the demo reaches cdcd only through stop,
// after the workload has stopped.
func startCdcd(bin, dir string, cfg cdcdConfig) (*cdcdProcess, error) {
	worker, connector := filepath.Join(dir, "worker.properties"), filepath.Join(dir, "connector.properties")
	if err := errors.Join(writeProperties(worker, cfg.workerProperties()), writeProperties(connector, cfg.connectorProperties())); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "cdcd.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("cdcd log: %w", err)
	}
	defer logFile.Close() // the child holds its own descriptor
	cmd := exec.Command(bin, "standalone", worker, connector)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting cdcd: %w", err)
	}
	p := &cdcdProcess{cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// stop sends SIGTERM and waits for cdcd to exit, killing it after cdcdStopTimeout. It returns
// cdcd's exit error, if any. Stopping a process that has already exited does nothing: whoever
// saw it exit reports that (exitedEarly).
func (p *cdcdProcess) stop() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	// An error here means the process has just exited; Wait reports how.
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return p.waitErr
	case <-time.After(cdcdStopTimeout):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("cdcd did not stop within %s of SIGTERM and was killed", cdcdStopTimeout)
	}
}

// tailLines returns the last n lines of a file, for showing why a process failed.
func tailLines(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

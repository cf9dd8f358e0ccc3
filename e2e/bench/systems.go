package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// system is one CDC daemon under test: a Kafka Connect REST API in front of one long-lived process. Both
// cdcd and the Connect worker stay up for the whole run, so each measurement sees a warm process, the
// way a production deployment runs.
type system struct {
	name   string // "cdcd", "cdcd-eos" or "debezium"
	rest   string // REST base URL
	pid    int    // the process whose CPU and memory are measured
	tuning map[string]string
	stop   func() error
	http   *http.Client
	// exactlyOnce: the system writes its records in Kafka transactions, whose markers take offsets of
	// their own, so counting what reached a topic means reading it.
	exactlyOnce bool
}

// cdcdMode is how a cdcd system runs: "cdcd" is a standalone worker (at-least-once, Connect's default),
// "cdcd-eos" a distributed worker with exactly.once.source.support=enabled (KIP-618; its connectors use
// Connect's default transaction.boundary, poll), with group, internal topics and offsets of its own.
type cdcdMode struct {
	name        string
	exactlyOnce bool
	group       string // exactlyOnce: group.id and the prefix of its internal topics
}

func (m cdcdMode) workerConfig(brokers []string, out outFiles, port int) map[string]string {
	if !m.exactlyOnce {
		return workerConfig(brokers, out.path(m.name+".offsets"), port, nil)
	}
	return workerConfig(brokers, "", port, map[string]string{
		"group.id":                          m.group,
		"config.storage.topic":              m.group + "-configs",
		"offset.storage.topic":              m.group + "-offsets",
		"status.storage.topic":              m.group + "-status",
		"config.storage.replication.factor": "1",
		"offset.storage.replication.factor": "1",
		"status.storage.replication.factor": "1",
		"exactly.once.source.support":       "enabled",
	})
}

// workerConfig is a worker writing JSON with schemas (JsonConverter's default) to brokers; with an
// offsetsFile, a standalone one keeping its offsets there.
func workerConfig(brokers []string, offsetsFile string, port int, extra map[string]string) map[string]string {
	cfg := map[string]string{
		"bootstrap.servers": strings.Join(brokers, ","),
		"key.converter":     "org.apache.kafka.connect.json.JsonConverter",
		"value.converter":   "org.apache.kafka.connect.json.JsonConverter",
		"listeners":         fmt.Sprintf("http://127.0.0.1:%d", port),
	}
	if offsetsFile != "" {
		cfg["offset.storage.file.filename"] = offsetsFile
	}
	maps.Copy(cfg, extra)
	return cfg
}

func writeProperties(path string, props map[string]string) error {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, props[k])
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// freePort asks the kernel for a port nobody listens on.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// outFiles names a database's files in the results directory: PostgreSQL's keep the names of the runs
// before MariaDB was measured (results.json, cdcd.log…), MariaDB's carry its name (results-mariadb.json,
// cdcd-mariadb.log…).
type outFiles struct{ dir, kind string }

func (o outFiles) path(name string) string {
	if o.kind != "postgres" {
		stem, ext, _ := strings.Cut(name, ".")
		name = stem + "-" + o.kind
		if ext != "" {
			name += "." + ext
		}
	}
	return filepath.Join(o.dir, name)
}

// startCdcd runs bin as a standalone worker without connectors; env adds to the environment (profiles).
func startCdcd(ctx context.Context, bin string, out outFiles, brokers []string, env []string, mode cdcdMode) (*system, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	worker := out.path(mode.name + "-worker.properties")
	if err := writeProperties(worker, mode.workerConfig(brokers, out, port)); err != nil {
		return nil, err
	}
	logFile, err := os.Create(out.path(mode.name + ".log"))
	if err != nil {
		return nil, err
	}
	command := "standalone"
	if mode.exactlyOnce {
		command = "distributed"
	}
	cmd := exec.Command(bin, command, worker)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting cdcd: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); logFile.Close() }()
	s := &system{
		name: mode.name, rest: fmt.Sprintf("http://127.0.0.1:%d", port), pid: cmd.Process.Pid, exactlyOnce: mode.exactlyOnce,
		http: &http.Client{Timeout: 2 * time.Minute},
		stop: func() error {
			// SIGTERM lets cdcd record its offsets and write its profiles.
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
				return err
			}
			select {
			case <-exited:
				return nil
			case <-time.After(30 * time.Second):
				return cmd.Process.Kill()
			}
		},
	}
	if err := s.waitReady(ctx, 30*time.Second); err != nil {
		s.stop()
		return nil, fmt.Errorf("cdcd (log %s): %w", logFile.Name(), err)
	}
	return s, nil
}

// debeziumTuning is the published throughput tuning of Debezium (benchmark.md): bigger batches and
// queue, 10 ms polls. The heap is connect.sh's -Xmx1g.
var debeziumTuning = map[string]string{
	"max.batch.size":   "8192",
	"max.queue.size":   "32768",
	"poll.interval.ms": "10",
}

// connectScript runs e2e/debezium/connect.sh for the database's instance (CDCD_CONNECT_INSTANCE:
// Debezium's PostgreSQL or MariaDB plugin) with connectHome as its CDCD_E2E_DIR.
type connectScript struct {
	path, home, instance string
}

func (c connectScript) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "bash", append([]string{c.path}, args...)...)
	cmd.Env = append(os.Environ(), "CDCD_E2E_DIR="+c.home, "CDCD_CONNECT_INSTANCE="+c.instance)
	return cmd
}

func (c connectScript) run(ctx context.Context, args ...string) error {
	cmd := c.command(ctx, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("connect.sh %s: %w", args[0], err)
	}
	return nil
}

// debeziumVersion is the version of the instance's Debezium plugin.
func (c connectScript) debeziumVersion() string {
	out, err := c.command(context.Background(), "debezium-version").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// pidFile is where connect.sh keeps the instance's worker pid (connect.pid, connect-mariadb.pid).
func (c connectScript) pidFile() string {
	return outFiles{dir: filepath.Join(c.home, "debezium"), kind: c.instance}.path("connect.pid")
}

// startDebezium runs the reference Kafka Connect worker through connect.sh with a home of the
// benchmark's own (bench.sh links the installed jars into it): that keeps its pid file apart from the
// reference worker other engineers run, and its REST API gets a free port. ConnectStandalone wants a
// connector file, so it gets a STOPPED placeholder that never starts a task and is deleted once the
// worker is up.
func startDebezium(ctx context.Context, connect connectScript, out outFiles, brokers []string, db sourceDB) (*system, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	worker := out.path("debezium-worker.properties")
	if err := writeProperties(worker, workerConfig(brokers, out.path("debezium.offsets"), port,
		map[string]string{"offset.flush.interval.ms": "1000"})); err != nil {
		return nil, err
	}
	placeholder := &capture{id: "placeholder", name: "bench-placeholder", table: "placeholder", prefix: "cdcdbench-placeholder"}
	idle, err := json.Marshal(map[string]any{
		"name":          placeholder.name,
		"config":        db.connectorConfig(placeholder, nil),
		"initial_state": "STOPPED",
	})
	if err != nil {
		return nil, err
	}
	idleFile := out.path("debezium-placeholder.json")
	if err := os.WriteFile(idleFile, idle, 0o644); err != nil {
		return nil, err
	}
	runDir := out.path("connect")
	if err := connect.run(ctx, "run", worker, idleFile, runDir); err != nil {
		return nil, err
	}
	stop := func() error { return connect.run(context.Background(), "stop") }
	pidText, err := os.ReadFile(connect.pidFile())
	if err != nil {
		stop()
		return nil, fmt.Errorf("connect.sh left no pid file: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
	if err != nil {
		stop()
		return nil, fmt.Errorf("connect.pid: %w", err)
	}
	s := &system{
		name: "debezium", rest: fmt.Sprintf("http://127.0.0.1:%d", port), pid: pid,
		tuning: debeziumTuning, stop: stop, http: &http.Client{Timeout: 2 * time.Minute},
	}
	if err := s.waitReady(ctx, 3*time.Minute); err != nil {
		stop()
		return nil, fmt.Errorf("debezium (log %s): %w", filepath.Join(runDir, "connect.log"), err)
	}
	if err := s.waitConnectorState(ctx, placeholder.name, "STOPPED", 0, 2*time.Minute); err != nil {
		stop()
		return nil, err
	}
	if err := s.deleteConnector(ctx, placeholder.name); err != nil {
		stop()
		return nil, err
	}
	return s, nil
}

// call sends a REST request and returns the body of a 2xx answer.
func (s *system) call(ctx context.Context, method, path string, body any) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.rest+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s %s: %w", s.name, method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s %s: %w", s.name, method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s %s %s: %s: %s", s.name, method, path, resp.Status, bytes.TrimSpace(out))
	}
	return out, nil
}

func (s *system) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		_, err := s.call(ctx, http.MethodGet, "/connectors", nil)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("REST API not ready after %v: %w", timeout, err)
		}
		if err := syscall.Kill(s.pid, 0); err != nil {
			return fmt.Errorf("process %d exited", s.pid)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (s *system) createConnector(ctx context.Context, name string, cfg map[string]string) error {
	_, err := s.call(ctx, http.MethodPost, "/connectors", map[string]any{"name": name, "config": cfg})
	return err
}

func (s *system) stopConnector(ctx context.Context, name string) error {
	_, err := s.call(ctx, http.MethodPut, "/connectors/"+name+"/stop", nil)
	return err
}

func (s *system) resumeConnector(ctx context.Context, name string) error {
	_, err := s.call(ctx, http.MethodPut, "/connectors/"+name+"/resume", nil)
	return err
}

func (s *system) deleteConnector(ctx context.Context, name string) error {
	_, err := s.call(ctx, http.MethodDelete, "/connectors/"+name, nil)
	return err
}

// connectorStatus is the part of GET /connectors/NAME/status the benchmark reads.
type connectorStatus struct {
	Connector struct {
		State string `json:"state"`
	} `json:"connector"`
	Tasks []struct {
		State string `json:"state"`
		Trace string `json:"trace"`
	} `json:"tasks"`
}

// waitConnectorState waits until the connector is in state with tasks tasks, all RUNNING; a FAILED task
// ends the wait with its trace.
func (s *system) waitConnectorState(ctx context.Context, name, state string, tasks int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last connectorStatus
	for {
		body, err := s.call(ctx, http.MethodGet, "/connectors/"+name+"/status", nil)
		if err == nil {
			if err := json.Unmarshal(body, &last); err != nil {
				return fmt.Errorf("%s status of %s: %w", s.name, name, err)
			}
			running := 0
			for _, t := range last.Tasks {
				switch t.State {
				case "RUNNING":
					running++
				case "FAILED":
					return fmt.Errorf("%s connector %s task failed: %s", s.name, name, t.Trace)
				}
			}
			if last.Connector.State == state && running == tasks && len(last.Tasks) == tasks {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s connector %s not %s after %v (last %+v, %v)", s.name, name, state, timeout, last, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// tasksAlive returns a check that fails, with the task's trace, once a task of connector name has
// failed. A status the worker does not answer (busy, or the connector just created) passes: the wait
// that asks has its own timeout.
func (s *system) tasksAlive(name string) func(context.Context) error {
	return func(ctx context.Context) error {
		body, err := s.call(ctx, http.MethodGet, "/connectors/"+name+"/status", nil)
		if err != nil {
			return nil
		}
		var st connectorStatus
		if err := json.Unmarshal(body, &st); err != nil {
			return nil
		}
		for _, t := range st.Tasks {
			if t.State == "FAILED" {
				return fmt.Errorf("%s connector %s task failed: %s", s.name, name, t.Trace)
			}
		}
		return nil
	}
}

// Package e2e holds black-box tests of the cdcd binary against the real PostgreSQL and Kafka that
// e2e/services.sh starts. They are skipped unless CDCD_E2E=1 (make test sets it).
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/jackc/pgx/v5"
)

// cdcdBinary is built once per test run by TestMain.
var cdcdBinary string

func TestMain(m *testing.M) {
	if os.Getenv("CDCD_E2E") == "" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "cdcd-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cdcdBinary = filepath.Join(dir, "cdcd")
	build := exec.Command("go", "build", "-o", cdcdBinary, "../cmd/cdcd")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building cdcd:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// writeProperties writes a .properties file (keys sorted, values escaped as Java reads them).
func writeProperties(t testing.TB, path string, props map[string]string) {
	t.Helper()
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		v := strings.ReplaceAll(props[k], `\`, `\\`)
		fmt.Fprintf(&b, "%s=%s\n", k, v)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// cdcdProcess is a running `cdcd standalone`.
type cdcdProcess struct {
	t    testing.TB
	cmd  *exec.Cmd
	log  *testenv.LogBuffer
	done chan struct{}
}

// startCdcd runs cdcd standalone with the given worker and connector files.
func startCdcd(t testing.TB, workerPath string, connectorPaths ...string) *cdcdProcess {
	t.Helper()
	return startCdcdIn(t, "", workerPath, connectorPaths...)
}

// startCdcdIn is startCdcd inside the network namespace netns (startCdcdProcessIn).
func startCdcdIn(t testing.TB, netns, workerPath string, connectorPaths ...string) *cdcdProcess {
	t.Helper()
	return startCdcdProcessIn(t, netns, append([]string{"standalone", workerPath}, connectorPaths...)...)
}

// startCdcdProcess runs the cdcd binary with args (a command and its files).
func startCdcdProcess(t testing.TB, args ...string) *cdcdProcess {
	t.Helper()
	return startCdcdProcessIn(t, "", args...)
}

// startCdcdProcessIn is startCdcdProcess inside the network namespace netns (none: the test's own), where
// `ip netns exec` enters it and executes cdcd in its place: the process signalled is cdcd's.
func startCdcdProcessIn(t testing.TB, netns string, args ...string) *cdcdProcess {
	t.Helper()
	cmd := exec.Command(cdcdBinary, args...)
	if netns != "" {
		cmd = exec.Command("ip", append([]string{"netns", "exec", netns, cdcdBinary}, args...)...)
	}
	p := &cdcdProcess{t: t, cmd: cmd, log: &testenv.LogBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.log, p.log
	cmd.Env = append(os.Environ(), "CDCD_LOG_LEVEL=debug")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		// No secret leaves: whatever a test did, the log (at debug level) carries none of the test bed's.
		for _, secret := range testenv.Secrets {
			if strings.Contains(p.log.String(), secret) {
				t.Errorf("cdcd's log carries the test bed's secret %q", secret)
			}
		}
		if t.Failed() {
			// The whole log (a goroutine dump of a stuck cdcd, sent SIGQUIT, is long) is kept as an artifact.
			full := filepath.Join(testenv.ArtifactDir(t), fmt.Sprintf("cdcd-%d.log", cmd.Process.Pid))
			if err := os.WriteFile(full, []byte(p.log.String()), 0o644); err != nil {
				t.Errorf("keeping cdcd's log: %v", err)
			}
			t.Logf("cdcd log (all of it in %s):\n%s", full, tail(p.log.String(), 6000))
		}
	})
	return p
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// kill sends SIGKILL: the crash of the crash tests.
func (p *cdcdProcess) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop sends SIGTERM and waits for a clean exit.
func (p *cdcdProcess) stop() {
	p.t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		p.t.Fatalf("cdcd did not stop within 60s of SIGTERM; log:\n%s", tail(p.log.String(), 4000))
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		p.t.Fatalf("cdcd exited with %d after SIGTERM; log:\n%s", code, tail(p.log.String(), 4000))
	}
}

// exited reports whether the process ended on its own.
func (p *cdcdProcess) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitSlotActive waits until the slot exists and a walsender streams it: cdcd is reading.
func waitSlotActive(t testing.TB, ctx context.Context, conn *pgx.Conn, slot string, p *cdcdProcess) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		var active bool
		err := conn.QueryRow(ctx, "SELECT active FROM pg_replication_slots WHERE slot_name = $1", slot).Scan(&active)
		if err == nil && active {
			return
		}
		if p != nil && p.exited() {
			t.Fatalf("cdcd exited before streaming; log:\n%s", tail(p.log.String(), 4000))
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("slot %s did not become active within 60s", slot)
}

// connectPostgres connects to dsn for the rest of the test (the connection is closed when t ends) and
// runs each setup statement on it in order (tables, seed rows), failing t on the first that fails.
func connectPostgres(t testing.TB, ctx context.Context, dsn string, setup ...string) *pgx.Conn {
	t.Helper()
	db, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(context.Background()) })
	execAll(t, ctx, db, setup...)
	return db
}

// execPostgres connects to dsn, runs each statement there in order (execAll) and disconnects.
func execPostgres(t testing.TB, ctx context.Context, dsn string, stmts ...string) {
	t.Helper()
	db, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	execAll(t, ctx, db, stmts...)
}

// execAll runs each statement on db in order, each in a transaction of its own, failing t on the first
// that fails.
func execAll(t testing.TB, ctx context.Context, db *pgx.Conn, stmts ...string) {
	t.Helper()
	for _, sql := range stmts {
		if _, err := db.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
}

// newBroker connects a capture client to brokers for the rest of the test (closed when t ends).
func newBroker(t testing.TB, brokers []string) *capture.Broker {
	t.Helper()
	broker, err := capture.NewBroker(brokers)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(broker.Close)
	return broker
}

// emptyBroker is newBroker after deleting the topics of sel, so that what the test reads back is what
// its own run wrote even under a fixed topic prefix.
func emptyBroker(t testing.TB, ctx context.Context, brokers []string, sel capture.Selection) *capture.Broker {
	t.Helper()
	broker := newBroker(t, brokers)
	if _, err := broker.DeleteTopics(ctx, sel); err != nil {
		t.Fatal(err)
	}
	return broker
}

// standaloneFiles are a standalone cdcd's worker and connector files, written once so that a test can
// run, kill and restart cdcd on the same files.
type standaloneFiles struct {
	t          testing.TB
	worker     string
	connectors []string
}

// writeStandalone writes worker to dir/worker.properties and each connector config to
// dir/<its name>.properties.
func writeStandalone(t testing.TB, dir string, worker map[string]string, connectors ...map[string]string) standaloneFiles {
	t.Helper()
	f := standaloneFiles{t: t, worker: filepath.Join(dir, "worker.properties")}
	writeProperties(t, f.worker, worker)
	for _, conn := range connectors {
		path := filepath.Join(dir, conn["name"]+".properties")
		writeProperties(t, path, conn)
		f.connectors = append(f.connectors, path)
	}
	return f
}

// start runs cdcd standalone on the files (startCdcd).
func (f standaloneFiles) start() *cdcdProcess {
	f.t.Helper()
	return f.startIn("")
}

// startIn runs cdcd standalone on the files inside the network namespace netns (startCdcdIn).
func (f standaloneFiles) startIn(netns string) *cdcdProcess {
	f.t.Helper()
	return startCdcdIn(f.t, netns, f.worker, f.connectors...)
}

// startStandalone writes the files (writeStandalone) and runs cdcd standalone on them.
func startStandalone(t testing.TB, dir string, worker map[string]string, connectors ...map[string]string) *cdcdProcess {
	t.Helper()
	return writeStandalone(t, dir, worker, connectors...).start()
}

// restAPI is a client of the process's REST API, once it logged the address it listens on.
func (p *cdcdProcess) restAPI() restClient {
	p.t.Helper()
	return restClient{t: p.t, base: "http://" + listeningAddress(p.t, p)}
}

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// tcpProxy passes connections on to a server until it is cut: then it closes every connection it
// carries and refuses new ones, as a database that went away (or a partition) looks to a client.
type tcpProxy struct {
	l     net.Listener
	mu    sync.Mutex
	conns []net.Conn
	cut   bool
}

func startTCPProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{l: l}
	t.Cleanup(p.stop)
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			if !p.track(in, out) {
				continue
			}
			go func() { io.Copy(out, in); out.Close() }()
			go func() { io.Copy(in, out); in.Close() }()
		}
	}()
	return p
}

func (p *tcpProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		for _, c := range conns {
			c.Close()
		}
		return false
	}
	p.conns = append(p.conns, conns...)
	return true
}

func (p *tcpProxy) addr() string { return p.l.Addr().String() }

// stop cuts the proxy: the listener closes (new connections are refused) and so does every connection.
func (p *tcpProxy) stop() {
	p.l.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// silentBroker is an in-process Kafka (kfake) that answers everything but Produce: every produce
// request is held unanswered until the test ends, as a broker that stopped acknowledging looks.
func silentBroker(t *testing.T) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // before Close: held requests end first
	c.ControlKey(kmsg.Produce.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		c.SleepControl(func() { <-release })
		return nil, errors.New("the test ended"), true
	})
	return c.ListenAddrs()
}

// closedPort is a local port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// TestCreateRefusesUnreachableDatabase: as Debezium's validate() connects, POST /connectors, PUT
// …/config and the validate endpoint refuse a config whose database does not answer, naming host:port.
func TestCreateRefusesUnreachableDatabase(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	dir := t.TempDir()
	p := startStandalone(t, dir, workerProps(brokers, filepath.Join(dir, "offsets.dat")))
	rest := p.restAPI()

	port := closedPort(t)
	cfg := pgConnector(t, dsn, "gone", testenv.NewTopicPrefix(t), "public.t")
	cfg["database.hostname"], cfg["database.port"] = "127.0.0.1", fmt.Sprint(port)
	hostPort := fmt.Sprintf("127.0.0.1:%d", port)

	for _, call := range []struct{ method, path, body string }{
		{"POST", "/connectors", jsonBody(t, map[string]any{"name": "gone", "config": cfg})},
		{"PUT", "/connectors/gone/config", jsonBody(t, cfg)},
	} {
		r := rest.do(call.method, call.path, call.body)
		if r.status != 400 || !strings.Contains(r.body, hostPort) || !strings.Contains(r.body, "refused") {
			t.Errorf("%s %s with a database nothing listens for: %d %s, want 400 naming %s and the reason", call.method, call.path, r.status, r.body, hostPort)
		}
	}
	body := rest.expect("PUT", "/connector-plugins/PostgresConnector/config/validate", jsonBody(t, cfg), 200)
	var infos struct {
		ErrorCount int `json:"error_count"`
		Configs    []struct {
			Value struct {
				Name   string
				Errors []string
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &infos); err != nil {
		t.Fatal(err)
	}
	var onHost []string
	for _, c := range infos.Configs {
		if c.Value.Name == "database.hostname" {
			onHost = c.Value.Errors
		}
	}
	if infos.ErrorCount != 1 || len(onHost) != 1 || !strings.Contains(onHost[0], hostPort) {
		t.Errorf("validate: %d errors, database.hostname %q; want one naming %s", infos.ErrorCount, onHost, hostPort)
	}
	rest.expect("GET", "/connectors/gone", "", 404)

	// MariaDB's validate() connects too.
	mdb := map[string]string{
		"name": "gone-mdb", "connector.class": "io.debezium.connector.mariadb.MariaDbConnector",
		"database.hostname": "127.0.0.1", "database.port": fmt.Sprint(port), "database.user": "u", "database.password": "pw",
		"database.server.id": "4242", "topic.prefix": testenv.NewTopicPrefix(t),
		"schema.history.internal.kafka.topic": "h", "schema.history.internal.kafka.bootstrap.servers": strings.Join(brokers, ","),
	}
	if r := rest.do("POST", "/connectors", jsonBody(t, map[string]any{"name": "gone-mdb", "config": mdb})); r.status != 400 || !strings.Contains(r.body, hostPort) {
		t.Errorf("POST a MariaDB connector whose server nothing listens for: %d %s, want 400 naming %s", r.status, r.body, hostPort)
	}

	// A reachable server that refuses what reading needs: a user without the REPLICATION attribute.
	db := connectPostgres(t, context.Background(), dsn)
	role := db.Config().Database[:min(len(db.Config().Database), 50)] + "_norepl"
	execAll(t, context.Background(), db, "CREATE ROLE "+pgx.Identifier{role}.Sanitize()+" WITH LOGIN")
	t.Cleanup(func() { execPostgres(t, context.Background(), dsn, "DROP ROLE "+pgx.Identifier{role}.Sanitize()) })
	norepl := pgConnector(t, dsn, "norepl", testenv.NewTopicPrefix(t), "public.t")
	norepl["database.user"] = role
	server := net.JoinHostPort(norepl["database.hostname"], norepl["database.port"])
	if r := rest.do("POST", "/connectors", jsonBody(t, map[string]any{"name": "norepl", "config": norepl})); r.status != 400 ||
		!strings.Contains(r.body, server) || !strings.Contains(r.body, "REPLICATION") {
		t.Errorf("POST with a user without REPLICATION: %d %s, want 400 naming %s and the missing attribute", r.status, r.body, server)
	}
}

// TestTaskFailsAfterRetryBudgetWhenDatabaseGoes: the database goes away mid-run (a proxy cut): the task
// stays RUNNING with a "retrying: …" trace, then is FAILED with the error once errors.max.retries retries
// failed; /health lists it and cdcd_task_state says FAILED; deleting the connector deletes its series.
func TestTaskFailsAfterRetryBudgetWhenDatabaseGoes(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	db := connectPostgres(t, ctx, dsn, `CREATE TABLE public.t (id int PRIMARY KEY)`)

	proxy := startTCPProxy(t, postgresHostPort(t, dsn))
	dir := t.TempDir()
	p := startStandalone(t, dir, workerProps(brokers, filepath.Join(dir, "offsets.dat")))
	rest := p.restAPI()
	base := rest.base

	cfg := pgConnector(t, dsn, "flaky", testenv.NewTopicPrefix(t), "public.t")
	host, port, _ := net.SplitHostPort(proxy.addr())
	cfg["database.hostname"], cfg["database.port"] = host, port
	cfg["errors.max.retries"] = "2"
	cfg["slot.max.retries"] = "1"
	if v, ok := metricValue(scrape(t, base), `cdcd_connected{connector="flaky",task="0"}`); ok {
		t.Fatalf("cdcd_connected of a connector not created yet: %v", v)
	}
	rest.expect("POST", "/connectors", jsonBody(t, map[string]any{"name": "flaky", "config": cfg}), 201)
	rest.waitTaskState("flaky", "RUNNING")
	waitSlotActive(t, ctx, db, cfg["slot.name"], p)
	if v, ok := metricValue(scrape(t, base), `cdcd_task_state{connector="flaky",state="RUNNING",task="0"}`); !ok || v != 1 {
		t.Errorf("cdcd_task_state RUNNING: %v %v", v, ok)
	}

	proxy.stop()
	sawRetrying := false
	var st struct {
		Tasks []struct{ State, Trace string }
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		_ = json.Unmarshal([]byte(rest.expect("GET", "/connectors/flaky/status", "", 200)), &st)
		if len(st.Tasks) == 1 {
			if st.Tasks[0].State == "RUNNING" && strings.HasPrefix(st.Tasks[0].Trace, "retrying: ") {
				sawRetrying = true
			}
			if st.Tasks[0].State == "FAILED" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task did not fail after its retry budget: %+v", st)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !sawRetrying {
		t.Error("the task never showed RUNNING with a retrying trace while it retried")
	}
	if trace := st.Tasks[0].Trace; !strings.Contains(trace, "errors.max.retries=2") || !strings.Contains(trace, host+":"+port) {
		t.Errorf("FAILED trace %q: want errors.max.retries=2 and the server %s:%s", trace, host, port)
	}
	health := rest.expect("GET", "/health", "", 200)
	if !strings.Contains(health, `"status":"healthy"`) || !strings.Contains(health, `"failed_tasks":[{"connector":"flaky","task":0,"state":"FAILED"`) {
		t.Errorf("GET /health with a failed task: %s", health)
	}
	metrics := scrape(t, base)
	if v, ok := metricValue(metrics, `cdcd_task_state{connector="flaky",state="FAILED",task="0"}`); !ok || v != 1 {
		t.Errorf("cdcd_task_state FAILED: %v %v", v, ok)
	}
	if v, ok := metricValue(metrics, `cdcd_connected{connector="flaky",task="0"}`); !ok || v != 0 {
		t.Errorf("cdcd_connected of a failed task: %v %v, want 0", v, ok)
	}
	rest.expect("DELETE", "/connectors/flaky", "", 204)
	if strings.Contains(scrape(t, base), `connector="flaky"`) {
		t.Error("GET /metrics still has series of the deleted connector")
	}
}

// postgresHostPort is the host:port of dsn.
func postgresHostPort(t *testing.T, dsn string) string {
	t.Helper()
	cfg := pgConnector(t, dsn, "x", "x", "")
	return net.JoinHostPort(cfg["database.hostname"], cfg["database.port"])
}

// TestStopIsBoundedWhenKafkaDoesNotAnswer: with a broker that accepts connections and never answers,
// deleting a connector returns within task.shutdown.graceful.timeout.ms, a PUT of another connector's
// config is answered meanwhile, and SIGTERM ends the process within graceful + flush timeouts and some
// slack, saying what it could not record, and recording no offset Kafka did not acknowledge.
func TestStopIsBoundedWhenKafkaDoesNotAnswer(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	connectPostgres(t, ctx, dsn, `CREATE TABLE public.t (id int PRIMARY KEY)`, `INSERT INTO public.t SELECT generate_series(1, 100)`)

	const graceful, flush = 6 * time.Second, 2 * time.Second
	dir := t.TempDir()
	offsetsFile := filepath.Join(dir, "offsets.dat")
	worker := workerProps(silentBroker(t), offsetsFile)
	worker["task.shutdown.graceful.timeout.ms"] = fmt.Sprint(graceful.Milliseconds())
	worker["offset.flush.timeout.ms"] = fmt.Sprint(flush.Milliseconds())
	p := startStandalone(t, dir, worker)
	rest := p.restAPI()

	for _, name := range []string{"a", "b"} {
		cfg := pgConnector(t, dsn, name, testenv.NewTopicPrefix(t), "public.t")
		rest.expect("POST", "/connectors", jsonBody(t, map[string]any{"name": name, "config": cfg}), 201)
	}
	rest.waitTaskState("a", "RUNNING")
	rest.waitTaskState("b", "RUNNING")
	time.Sleep(3 * time.Second) // the snapshot's rows are sent to a broker that never acknowledges them

	func() {
		start := time.Now()
		deleted := make(chan restReply, 1)
		go func() { deleted <- rest.do("DELETE", "/connectors/a", "") }()
		time.Sleep(200 * time.Millisecond)
		func() {
			// c is created while a's stop waits for Kafka.
			cfg := pgConnector(t, dsn, "c", testenv.NewTopicPrefix(t), "public.t")
			putStart := time.Now()
			put := make(chan restReply, 1)
			go func() { put <- rest.do("PUT", "/connectors/c/config", jsonBody(t, cfg)) }()
			var r restReply
			select {
			case r = <-put:
			case <-time.After(graceful):
				t.Fatalf("PUT of another connector's config was not answered within %v while a stop hung", graceful)
			}
			if r.status != 201 {
				t.Errorf("PUT /connectors/c/config while another stop hung: %d %s", r.status, r.body)
			}
			if d := time.Since(putStart); d > graceful/2 {
				t.Errorf("PUT of another connector's config took %v while a stop hung", d)
			}
			t.Logf("PUT answered after %v (DELETE pending for %v)", time.Since(putStart).Round(10*time.Millisecond), time.Since(start).Round(10*time.Millisecond))
		}()
		select {
		case r := <-deleted:
			if r.status != 204 {
				t.Errorf("DELETE a: %d %s", r.status, r.body)
			}
		case <-time.After(graceful + 5*time.Second):
			t.Fatalf("DELETE of a connector whose broker does not answer did not return within %v", graceful+5*time.Second)
		}
		t.Logf("DELETE returned after %v", time.Since(start).Round(100*time.Millisecond))
	}()

	start := time.Now()
	p.cmd.Process.Signal(syscall.SIGTERM)
	bound := graceful + flush + 10*time.Second
	select {
	case <-p.done:
	case <-time.After(bound):
		t.Fatalf("cdcd did not exit within %v of SIGTERM with Kafka not answering", bound)
	}
	t.Logf("exited %v after SIGTERM with code %d", time.Since(start).Round(100*time.Millisecond), p.cmd.ProcessState.ExitCode())
	if log := p.log.String(); !strings.Contains(log, "Kafka did not acknowledge") && !strings.Contains(log, "abandoning it") {
		t.Errorf("the stop did not say what it could not record:\n%s", tail(log, 4000))
	}
	if b, err := os.ReadFile(offsetsFile); err == nil && bytes.Contains(b, []byte("lsn")) {
		t.Errorf("an offset was recorded although Kafka acknowledged nothing: %q", b)
	}
}

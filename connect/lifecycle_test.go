package connect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/schema/configdef"
	"github.com/cdcd/cdcd/sink"
	"github.com/cdcd/cdcd/sink/kafka"
	"github.com/cdcd/cdcd/source"
	srcmetrics "github.com/cdcd/cdcd/source/metrics"
	"github.com/prometheus/client_golang/prometheus"
)

// scripted is a connector class whose task does what its config's "test.mode" says:
//
//	read   sends one batch ending @ 0/10, then waits for the end
//	fail   fails at once with a retriable error
//	fatal  fails at once with a fatal error
//	readfail  sends the read batch, then fails with a retriable error (the same each time)
//
// and whose connection check does what "test.check" says: "" passes, "refuse" fails naming
// db.example:5432, "hang" blocks until its context ends.
type scripted struct{}

const scriptedClass = "test.ScriptedConnector"

func (scripted) Class() string                               { return scriptedClass }
func (scripted) TaskClass() string                           { return scriptedClass + "Task" }
func (scripted) ConfigKeys() []configdef.Key                 { return nil }
func (scripted) Validate(map[string]string) configdef.Result { return configdef.Result{} }
func (scripted) NewTask(name string, props map[string]string, _ *slog.Logger) (source.Task, error) {
	return scriptedTask{mode: props["test.mode"], check: props["test.check"], name: name}, nil
}

type scriptedTask struct{ mode, check, name string }

var _ source.ConnectionChecker = scriptedTask{}

func (t scriptedTask) Partition() map[string]any { return map[string]any{"server": t.name} }

func (t scriptedTask) OpenReader(map[string]any, source.Env) (source.Reader, error) {
	return scriptedReader(t), nil
}

func (t scriptedTask) CheckConnection(ctx context.Context) error {
	switch t.check {
	case "refuse":
		return errors.New("cannot connect to db.example:5432: connection refused")
	case "hang":
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

type scriptedReader scriptedTask

var errScripted = errors.New("connection to db.example:5432 lost")

func (r scriptedReader) Run(ctx context.Context, out chan<- source.Batch) error {
	switch r.mode {
	case "fail":
		return errScripted
	case "fatal":
		return source.Fatal(errScripted)
	}
	select {
	case out <- source.Batch{Events: []source.Event{{Topic: "t"}}, Offset: []source.OffsetField{{Name: "lsn", Value: int64(16)}}, Position: testPosition("0/10")}:
	case <-ctx.Done():
		return ctx.Err()
	}
	if r.mode == "readfail" {
		return errScripted
	}
	<-ctx.Done()
	return ctx.Err()
}

func (scriptedReader) Release(source.Position) {}

// stuckSink is a broker that never answers: Send takes records and never acknowledges them, Flush waits
// for its context, and Close ignores its context until release is closed (a sink that breaks its
// contract: the worker must still stop within its bound). Connectors named "ok-…" get a sink that
// acknowledges at once.
type stuckSink struct {
	release chan struct{}
	sent    chan string // the connector of each Send
}

func (s *stuckSink) OpenSink(cfg sink.Config, _ *slog.Logger) (sink.Sink, error) {
	if strings.HasPrefix(cfg.Connector, "ok-") {
		return panickingSink{}, nil
	}
	return &stuckTaskSink{s: s, connector: cfg.Connector}, nil
}

type stuckTaskSink struct {
	s         *stuckSink
	connector string
	used      atomic.Bool // a Send was made: Close hangs
}

func (t *stuckTaskSink) Send(context.Context, []sink.Record, func(error)) error {
	t.used.Store(true)
	select {
	case t.s.sent <- t.connector:
	default:
	}
	return nil
}

func (t *stuckTaskSink) Flush(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

func (t *stuckTaskSink) Close(context.Context) error {
	if !t.used.Load() {
		return nil // validation's sink, never sent to
	}
	<-t.s.release
	return errors.New("closed")
}

func newScriptedWorker(t *testing.T, props map[string]string, s sink.Opener) *Worker {
	t.Helper()
	base := map[string]string{
		"bootstrap.servers": "127.0.0.1:1",
		"key.converter":     "org.apache.kafka.connect.json.JsonConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
		"offset.storage.file.filename": filepath.Join(t.TempDir(), "offsets.dat"),
		"offset.flush.interval.ms":     "50",
	}
	for k, v := range props {
		base[k] = v
	}
	cfg := parseTestWorker(t, base, config.Standalone)
	w, err := NewStandalone(cfg, Parts{Connectors: []source.Connector{scripted{}}, Sink: s,
		Logs: kafka.NewLogOpener(kafka.LogOpenerConfig{Brokers: cfg.BootstrapServers})}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Shutdown)
	return w
}

func scriptedConfig(name, mode string, more ...string) map[string]string {
	cfg := map[string]string{"name": name, "connector.class": scriptedClass, "test.mode": mode}
	for i := 0; i+1 < len(more); i += 2 {
		cfg[more[i]] = more[i+1]
	}
	return cfg
}

// waitTask waits until the task's status satisfies ok and returns it.
func waitTask(t *testing.T, w *Worker, name string, ok func(TaskStatus) bool) TaskStatus {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := w.TaskStatus(name, 0)
		if err == nil && ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s: status %+v, %v", name, st, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestStoppingAHungTaskIsBounded: with a broker that never answers (no ack, Flush waits, Close ignores
// its deadline), deleting the connector returns within task.shutdown.graceful.timeout.ms, and a PUT of
// another connector's config is answered while that stop hangs; Shutdown is bounded the same way.
func TestStoppingAHungTaskIsBounded(t *testing.T) {
	const graceful = 1500 * time.Millisecond
	s := &stuckSink{release: make(chan struct{}), sent: make(chan string, 16)}
	t.Cleanup(func() { close(s.release) })
	w := newScriptedWorker(t, map[string]string{"task.shutdown.graceful.timeout.ms": "1500", "offset.flush.timeout.ms": "300"}, s)
	for _, name := range []string{"stuck", "stuck2"} {
		if _, _, err := w.PutConnectorConfig(name, scriptedConfig(name, "read"), false, ""); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		select {
		case <-s.sent:
		case <-time.After(10 * time.Second):
			t.Fatal("the tasks sent nothing")
		}
	}

	start := time.Now()
	deleted := make(chan error, 1)
	go func() { deleted <- w.DeleteConnector(context.Background(), "stuck") }()
	time.Sleep(100 * time.Millisecond) // the delete now waits for the stuck task
	if _, _, err := w.PutConnectorConfig("ok-other", scriptedConfig("ok-other", "read"), false, ""); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > graceful/2 {
		t.Errorf("PUT of another connector took %v while a stop hung: it waited for that stop", d)
	}
	waitTask(t, w, "ok-other", func(st TaskStatus) bool { return st.State == Running })
	select {
	case err := <-deleted:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(graceful + 2*time.Second):
		t.Fatalf("DELETE of a connector whose broker does not answer did not return within task.shutdown.graceful.timeout.ms (%v)", graceful)
	}
	if d := time.Since(start); d < graceful-200*time.Millisecond {
		t.Errorf("the stop returned after %v: it did not wait for the task (graceful timeout %v)", d, graceful)
	}
	if _, err := w.ConnectorStatus("stuck"); err == nil {
		t.Error("the deleted connector is still listed")
	}

	start = time.Now()
	w.Shutdown()
	if d := time.Since(start); d > graceful+2*time.Second {
		t.Errorf("Shutdown with a hung task took %v, more than task.shutdown.graceful.timeout.ms (%v)", d, graceful)
	}
}

// TestAbandonedTaskRecordsNoOffset: once abandoned, a task's offset writes are refused and its states
// are no longer reported.
func TestAbandonedTaskRecordsNoOffset(t *testing.T) {
	var abandoned task
	abandoned.abandoned.Store(true)
	wr := storeOffsetWriter{abandoned: &abandoned.abandoned}
	if err := wr.WriteOffset(context.Background(), []source.OffsetField{{Name: "lsn", Value: int64(1)}}); !errors.Is(err, errAbandoned) {
		t.Fatalf("WriteOffset of an abandoned task: %v, want errAbandoned", err)
	}
	abandoned.state = Running
	abandoned.setState(Failed, errScripted)
	if abandoned.state != Running {
		t.Fatalf("an abandoned task reported %s", abandoned.state)
	}
}

// TestRetryingTaskShowsItAndFailsAfterTheBudget: a task that fails with retriable errors stays RUNNING
// with a "retrying: …" trace naming the last error, and is FAILED with that error once errors.max.retries
// retries failed; errors.max.retries=0 fails at the first error; a fatal error fails at once.
func TestRetryingTaskShowsItAndFailsAfterTheBudget(t *testing.T) {
	w := newScriptedWorker(t, nil, panickingSink{})
	if _, _, err := w.PutConnectorConfig("r", scriptedConfig("r", "fail", "errors.max.retries", "1"), false, ""); err != nil {
		t.Fatal(err)
	}
	st := waitTask(t, w, "r", func(st TaskStatus) bool { return st.Trace != "" })
	if st.State != Running || !strings.HasPrefix(st.Trace, "retrying: retry 1 of 1") || !strings.Contains(st.Trace, errScripted.Error()) {
		t.Fatalf("retrying task: %s %q, want RUNNING with a retrying trace naming the error", st.State, st.Trace)
	}
	st = waitTask(t, w, "r", func(st TaskStatus) bool { return st.State != Running })
	if st.State != Failed || !strings.Contains(st.Trace, "errors.max.retries=1") || !strings.Contains(st.Trace, errScripted.Error()) {
		t.Fatalf("after the budget: %s %q, want FAILED naming errors.max.retries and the error", st.State, st.Trace)
	}
	if failed := w.FailedTasks(); len(failed) != 1 || failed[0].Connector != "r" || failed[0].Trace != st.Trace {
		t.Fatalf("FailedTasks %+v", failed)
	}

	for _, cfg := range []map[string]string{scriptedConfig("z", "fail", "errors.max.retries", "0"), scriptedConfig("f", "fatal")} {
		start := time.Now()
		if _, _, err := w.PutConnectorConfig(cfg["name"], cfg, false, ""); err != nil {
			t.Fatal(err)
		}
		st := waitTask(t, w, cfg["name"], func(st TaskStatus) bool { return st.State == Failed })
		if d := time.Since(start); d > 900*time.Millisecond || strings.HasPrefix(st.Trace, "retrying") {
			t.Errorf("%s: FAILED after %v with %q: it retried", cfg["name"], d, st.Trace)
		}
	}
	if _, _, err := w.PutConnectorConfig("bad", scriptedConfig("bad", "read", "errors.max.retries", "x"), false, ""); err != nil {
		t.Fatal(err)
	}
	if st := waitTask(t, w, "bad", func(st TaskStatus) bool { return st.State == Failed }); !strings.Contains(st.Trace, "errors.max.retries") {
		t.Fatalf("bad errors.max.retries: %q", st.Trace)
	}
}

// TestTaskFailingTheSameWayTwiceStopsRetrying: a task whose attempts read from the database and then fail
// with the same error, the durable offset left where the previous attempt left it (a snapshot that fails on
// the same row after writing its schema changes again), is FAILED after the second such attempt, saying
// why, instead of restarting every second for good; a task that reads nothing (a database that is down)
// keeps retrying.
func TestTaskFailingTheSameWayTwiceStopsRetrying(t *testing.T) {
	w := newScriptedWorker(t, nil, panickingSink{})
	if _, _, err := w.PutConnectorConfig("same", scriptedConfig("same", "readfail"), false, ""); err != nil {
		t.Fatal(err)
	}
	st := waitTask(t, w, "same", func(st TaskStatus) bool { return st.State == Failed })
	if !strings.Contains(st.Trace, "stopped retrying: the task failed twice in a row with the same error") || !strings.Contains(st.Trace, errScripted.Error()) {
		t.Fatalf("trace %q, want one saying why retrying stopped, with the error", st.Trace)
	}
}

// TestValidationChecksTheConnection: POST/PUT of a config whose database refuses answers 400 naming
// the server, on database.hostname, as Debezium's validate() does; a database that does not answer is
// given up after connection.validation.timeout.ms; connector files (AddConnector) are not checked.
func TestValidationChecksTheConnection(t *testing.T) {
	w := newScriptedWorker(t, nil, panickingSink{})
	_, _, err := w.PutConnectorConfig("c", scriptedConfig("c", "read", "test.check", "refuse"), false, "")
	var reqErr *RequestError
	if !errors.As(err, &reqErr) || reqErr.Kind != BadRequest || !strings.Contains(reqErr.Message, "db.example:5432") {
		t.Fatalf("create with a refusing database: %v, want a 400 naming db.example:5432", err)
	}
	infos, err := w.ValidateConnectorConfig(scriptedClass, scriptedConfig("c", "read", "test.check", "refuse"))
	if err != nil || infos.ErrorCount != 1 || !strings.Contains(fmt.Sprint(errorsOn(infos, "database.hostname")), "connection refused") {
		t.Fatalf("validate: %d errors (%v), %v", infos.ErrorCount, errorsOn(infos, "database.hostname"), err)
	}
	if len(w.Connectors()) != 0 {
		t.Fatalf("a refused connector was created: %v", w.Connectors())
	}

	start := time.Now()
	_, _, err = w.PutConnectorConfig("h", scriptedConfig("h", "read", "test.check", "hang", "connection.validation.timeout.ms", "300"), false, "")
	if !errors.As(err, &reqErr) || !strings.Contains(reqErr.Message, "connection.validation.timeout.ms=300") {
		t.Fatalf("create with a silent database: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("validation waited %v, beyond connection.validation.timeout.ms", d)
	}
	if _, _, err := w.PutConnectorConfig("ok", scriptedConfig("ok", "read"), false, ""); err != nil {
		t.Fatalf("create with a reachable database: %v", err)
	}
	// A connector file at start-up is not checked against its database: its task reports the problem.
	if err := w.AddConnector("file", scriptedConfig("file", "read", "test.check", "refuse"), ""); err != nil {
		t.Fatalf("a connector file was checked against its database: %v", err)
	}
}

func errorsOn(infos configdef.ConfigInfos, key string) []string {
	for _, c := range infos.Configs {
		if c.Value.Name == key {
			return c.Value.Errors
		}
	}
	return nil
}

// TestTaskStateMetricAndConnectedExistFromTheStart: cdcd_task_state and cdcd_connected have a
// connector's series from its task's start (cdcd_connected at 0 before any connection), and both are
// deleted with the connector.
func TestTaskStateMetricAndConnectedExistFromTheStart(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(taskState)
	reg.MustRegister(srcmetrics.Collectors()...)
	w := newScriptedWorker(t, nil, panickingSink{})
	if _, _, err := w.PutConnectorConfig("m", scriptedConfig("m", "fatal"), false, ""); err != nil {
		t.Fatal(err)
	}
	waitTask(t, w, "m", func(st TaskStatus) bool { return st.State == Failed })
	got := series(t, reg, "m")
	for _, want := range []string{"cdcd_task_state{state=FAILED} 1", "cdcd_task_state{state=RUNNING} 0", "cdcd_connected 0"} {
		if !got[want] {
			t.Errorf("missing %s in %v", want, got)
		}
	}
	if err := w.DeleteConnector(context.Background(), "m"); err != nil {
		t.Fatal(err)
	}
	if got := series(t, reg, "m"); len(got) != 0 {
		t.Errorf("series of a deleted connector remain: %v", got)
	}
}

var seriesMu sync.Mutex

// series renders connector's series in reg as "name{state=…} value" (the connector and task labels left out).
func series(t *testing.T, reg *prometheus.Registry, connector string) map[string]bool {
	t.Helper()
	seriesMu.Lock()
	defer seriesMu.Unlock()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var mine bool
			var extra []string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "connector":
					mine = l.GetValue() == connector
				case "task":
				default:
					extra = append(extra, l.GetName()+"="+l.GetValue())
				}
			}
			if !mine {
				continue
			}
			name := f.GetName()
			if len(extra) > 0 {
				name += "{" + strings.Join(extra, ",") + "}"
			}
			v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
			out[fmt.Sprintf("%s %g", name, v)] = true
		}
	}
	return out
}

package connect

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/schema/configdef"
	"github.com/cdcd/cdcd/sink"
	"github.com/cdcd/cdcd/sink/kafka"
	"github.com/cdcd/cdcd/source"
)

// panicking is a connector class whose task panics where its config's "panic.in" says: "task" (building
// the reader), "reader" (in Run, after one batch ending @ 0/10), "sink" (sending that batch).
type panicking struct{}

const panickingClass = "test.PanickingConnector"

func (panicking) Class() string                               { return panickingClass }
func (panicking) TaskClass() string                           { return panickingClass + "Task" }
func (panicking) ConfigKeys() []configdef.Key                 { return nil }
func (panicking) Validate(map[string]string) configdef.Result { return configdef.Result{} }
func (panicking) Partition() map[string]any                   { return map[string]any{"server": "p"} }
func (p panicking) NewTask(string, map[string]string, *slog.Logger) (source.Task, error) {
	return p, nil
}

func (panicking) OpenReader(map[string]any, source.Env) (source.Reader, error) {
	if injected == "task" {
		panic("injected in OpenReader")
	}
	return panickingReader{}, nil
}

var errInjected = errors.New("injected in Run")

// injected is where the current test's task panics (the tests using it do not run in parallel).
var injected string

type testPosition string

func (p testPosition) String() string { return string(p) }

type panickingReader struct{}

func (panickingReader) Run(ctx context.Context, out chan<- source.Batch) error {
	ev := source.Event{Topic: "t"}
	select {
	case out <- source.Batch{Events: []source.Event{ev}, Position: testPosition("0/10")}:
	case <-ctx.Done():
		return ctx.Err()
	}
	if injected == "reader" {
		panic(errInjected)
	}
	<-ctx.Done()
	return ctx.Err()
}

func (panickingReader) Release(source.Position) {}

// panickingSink acknowledges everything at once, or panics on Send when the test says so.
type panickingSink struct{}

func (panickingSink) OpenSink(sink.Config, *slog.Logger) (sink.Sink, error) {
	return panickingSink{}, nil
}
func (panickingSink) Send(_ context.Context, recs []sink.Record, done func(error)) error {
	if injected == "sink" {
		panic("injected in Send")
	}
	done(nil)
	return nil
}
func (panickingSink) Flush(context.Context) error { return nil }
func (panickingSink) Close(context.Context) error { return nil }

// TestTaskPanicFailsTheTask: a panic in a task's goroutines (building the reader, the reader, the sink)
// marks the task FAILED with the panic, the stream position and the stack as its trace; the worker lives on.
func TestTaskPanicFailsTheTask(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"task", "panic: injected in OpenReader (stream position unknown)"},
		{"reader", "panic: injected in Run (near the batch ending @ 0/10)"},
		{"sink", "panic: injected in Send (near the batch ending @ 0/10)"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			injected = tc.in
			cfg := parseTestWorker(t, map[string]string{
				"bootstrap.servers": "127.0.0.1:1",
				"key.converter":     "org.apache.kafka.connect.json.JsonConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
				"offset.storage.file.filename": filepath.Join(t.TempDir(), "offsets.dat"),
			}, config.Standalone)
			w, err := NewStandalone(cfg, Parts{Connectors: []source.Connector{panicking{}}, Sink: panickingSink{},
				Logs: kafka.NewLogOpener(kafka.LogOpenerConfig{Brokers: cfg.BootstrapServers})}, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(w.Shutdown)
			if _, _, err := w.PutConnectorConfig("c", map[string]string{"name": "c", "connector.class": panickingClass}, false, ""); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				st, err := w.TaskStatus("c", 0)
				if err == nil && st.State == Failed {
					if !strings.Contains(st.Trace, tc.want+"\n") || !strings.Contains(st.Trace, "goroutine ") {
						t.Fatalf("trace %q, want %q and a stack", st.Trace, tc.want)
					}
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("task status %+v, %v: not FAILED", st, err)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

package signal

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/source/signal/sqlfilter"
)

// TestQueue: a signal is queued and wakes the stream; one without id or type, and a watermark, are
// refused; a full queue refuses the next one instead of blocking.
func TestQueue(t *testing.T) {
	q := NewQueue("c", Config{REST: true})
	woken := 0
	q.SetWake(func() { woken++ })
	if err := q.Signal("a", Log, `{"message":"x"}`); err != nil || woken != 1 {
		t.Fatalf("queued: %v, woken %d", err, woken)
	}
	if got := <-q.C(); got != (Signal{ID: "a", Type: Log, Data: `{"message":"x"}`}) {
		t.Fatalf("got %+v", got)
	}
	for _, bad := range []Signal{{Type: Log}, {ID: "x"}, {ID: "x", Type: OpenWindow}, {ID: "x", Type: CloseWindow}} {
		if err := q.Signal(bad.ID, bad.Type, ""); err == nil {
			t.Errorf("%+v was queued", bad)
		}
	}
	q.SetWake(nil)
	for i := range queueCapacity {
		if err := q.Signal("s", Log, ""); err != nil {
			t.Fatalf("signal %d: %v", i, err)
		}
	}
	if err := q.Signal("s", Log, ""); err == nil || !strings.Contains(err.Error(), "connector c") {
		t.Fatalf("a full queue: %v", err)
	}
}

// TestQueueRESTChannel: a REST signal is refused, naming the key and the fix, unless the rest channel is
// on; an execute-snapshot whose filter is not a condition is refused when sent, with the construct named.
func TestQueueRESTChannel(t *testing.T) {
	off := NewQueue("c", Config{Source: true})
	if err := off.Signal("a", Log, `{"message":"x"}`); err == nil || !strings.Contains(err.Error(), "add rest to signal.enabled.channels") {
		t.Fatalf("the rest channel off: %v", err)
	}
	q := NewQueue("c", Config{REST: true, Dialect: sqlfilter.PostgreSQL})
	for filter, want := range map[string]string{
		"pg_sleep(1e6) IS NULL": "the function pg_sleep",
		"1=1; DROP TABLE x":     "';' at offset 3",
		"id = (SELECT 1)":       "a subquery",
	} {
		data := `{"data-collections": ["public.t"], "additional-conditions": [{"data-collection": "public.t", "filter": "` + filter + `"}]}`
		if err := q.Signal("s", ExecuteSnapshot, data); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("filter %q: %v, want an error with %q", filter, err, want)
		}
	}
	if len(q.C()) != 0 {
		t.Fatal("a refused signal was queued")
	}
	good := `{"data-collections": ["public.t"], "additional-conditions": [{"data-collection": "public.t", "filter": "id > 3"}]}`
	if err := q.Signal("s", ExecuteSnapshot, good); err != nil {
		t.Fatalf("a condition: %v", err)
	}
}

// TestQueuePollFile: the signal file's signals reach the queue, and the file is emptied.
func TestQueuePollFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "signals.txt")
	if err := os.WriteFile(path, []byte(`{"id":"f1","type":"log","data":{"message":"hi"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	q := NewQueue("c", Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go q.PollFile(ctx, path, 10*time.Millisecond, slog.New(slog.DiscardHandler))
	select {
	case s := <-q.C():
		if s.ID != "f1" {
			t.Fatalf("got %+v", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the file's signal never arrived")
	}
}

// TestFromTable: the signal table's changes as the source channel reads them.
func TestFromTable(t *testing.T) {
	for _, tc := range []struct {
		cfg      Config
		op       byte
		id, kind string
		want     Signal
		ok       bool
	}{
		{Config{Source: true}, 'c', "a", ExecuteSnapshot, Signal{ID: "a", Type: ExecuteSnapshot, Data: "d"}, true},
		{Config{}, 'c', "a", ExecuteSnapshot, Signal{}, false}, // the source channel is off
		{Config{}, 'c', "w-open", OpenWindow, Signal{ID: "w-open", Type: OpenWindow, Data: "d"}, true},
		{Config{}, 'c', "w-close", CloseWindow, Signal{ID: "w-close", Type: CloseWindow, Data: "d"}, true},
		{Config{Source: true}, 'd', "w-open", OpenWindow, Signal{}, false},
		{Config{DeleteWatermarks: true}, 'd', "w-open", OpenWindow, Signal{ID: "w-close", Type: CloseWindow}, true},
		{Config{Source: true}, 'u', "a", ExecuteSnapshot, Signal{}, false},
	} {
		got, ok := tc.cfg.FromTable(tc.op, tc.id, tc.kind, "d")
		if got != tc.want || ok != tc.ok {
			t.Errorf("%+v %c %s %s: %+v %v, want %+v %v", tc.cfg, tc.op, tc.id, tc.kind, got, ok, tc.want, tc.ok)
		}
	}
}

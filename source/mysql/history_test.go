package mysql

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/mysql/types"
)

// memoryLog is a source.DurableLog in memory; Append fails with appendErr when it is set.
type memoryLog struct {
	records   [][]byte
	appendErr error
	closed    bool
}

func (l *memoryLog) ReadAll(context.Context) ([][]byte, error) { return slices.Clone(l.records), nil }
func (l *memoryLog) Append(_ context.Context, rec []byte) error {
	if l.appendErr != nil {
		return l.appendErr
	}
	l.records = append(l.records, rec)
	return nil
}
func (l *memoryLog) Close(context.Context) error { l.closed = true; return nil }

// recordingOpener opens log (or fails with err) and keeps the specs it was asked for.
type recordingOpener struct {
	log   *memoryLog
	err   error
	specs []source.LogSpec
}

func (o *recordingOpener) OpenLog(_ context.Context, spec source.LogSpec) (source.DurableLog, error) {
	o.specs = append(o.specs, spec)
	if o.err != nil {
		return nil, o.err
	}
	return o.log, nil
}

type fatalTestError struct{ error }

func (fatalTestError) Fatal() bool { return true }

// TestRunWithoutHistoryLogsFails: a reader the runtime did not give a log opener fails for good, before
// it reaches the database (whose host here does not exist).
func TestRunWithoutHistoryLogsFails(t *testing.T) {
	r := testReader(t, types.MySQL)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	err := r.Run(ctx, make(chan source.Batch))
	if !errors.Is(err, errNoHistoryLogs) || !source.IsFatal(err) {
		t.Fatalf("Run without HistoryLogs = %v (fatal: %v), want the fatal %v", err, source.IsFatal(err), errNoHistoryLogs)
	}
}

// TestOpenHistoryAsksForDebeziumsTopic: the history is the configured topic on the configured servers,
// created with delete cleanup and unlimited retention; the opener's errors name the topic and stay
// fatal when the opener says a restart cannot fix them.
func TestOpenHistoryAsksForDebeziumsTopic(t *testing.T) {
	r := testReader(t, types.MySQL)
	opener := &recordingOpener{log: &memoryLog{}}
	h, err := openHistory(t.Context(), r.cfg, opener)
	if err != nil {
		t.Fatal(err)
	}
	want := source.LogSpec{Name: "h", Servers: []string{"b:9092"}, Settings: map[string]string{
		"cleanup.policy": "delete", "retention.ms": "9223372036854775807", "retention.bytes": "-1",
	}}
	got := opener.specs[0]
	if got.Name != want.Name || !slices.Equal(got.Servers, want.Servers) || !maps.Equal(got.Settings, want.Settings) ||
		len(got.ProducerSettings) != 0 || len(got.ConsumerSettings) != 0 {
		t.Fatalf("spec %+v, want %+v", got, want)
	}
	h.Close()
	if !opener.log.closed {
		t.Error("closing the history did not close its log")
	}

	for _, tc := range []struct {
		err   error
		fatal bool
	}{
		{errors.New("brokers unreachable"), false},
		{fatalTestError{errors.New("topic h has 3 partitions")}, true},
	} {
		_, err := openHistory(t.Context(), r.cfg, &recordingOpener{err: tc.err})
		if !errors.Is(err, tc.err) || source.IsFatal(err) != tc.fatal || !strings.Contains(err.Error(), "schema history topic h") {
			t.Errorf("openHistory with opener error %q = %v (fatal: %v), want it wrapped naming the topic, fatal: %v", tc.err, err, source.IsFatal(err), tc.fatal)
		}
	}
	if _, err := openHistory(t.Context(), r.cfg, nil); !errors.Is(err, errNoHistoryLogs) || !source.IsFatal(err) {
		t.Errorf("openHistory without an opener = %v, want the fatal %v", err, errNoHistoryLogs)
	}
}

// TestApplyDDLWritesTheHistoryFirst: a DDL statement is appended to the history before the schema change
// event that depends on it is returned, and when the append fails no event is returned.
func TestApplyDDLWritesTheHistoryFirst(t *testing.T) {
	r := testReader(t, types.MariaDB)
	r.cfg.IncludeSchemaChanges = true
	log := &memoryLog{}
	r.history = &history{log: log, topic: "h"}
	pos := Offset{File: "mariadb-bin.000002", Pos: 400, GTIDs: "0-1-12"}
	src := sourceBlock{ts: time.Unix(1800000000, 0), db: "d", file: pos.File, pos: pos.Pos, thread: -1}

	evs, err := r.applyDDL(t.Context(), "d", "ALTER TABLE t ADD COLUMN w INT", pos, src)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || len(log.records) != 1 || !strings.Contains(string(log.records[0]), "ALTER TABLE t ADD COLUMN w INT") {
		t.Fatalf("%d events and history %q, want one schema change event and the statement in the history", len(evs), log.records)
	}

	log.appendErr = errors.New("not acknowledged")
	evs, err = r.applyDDL(t.Context(), "d", "ALTER TABLE t ADD COLUMN x INT", pos, src)
	if !errors.Is(err, log.appendErr) || evs != nil || !strings.Contains(err.Error(), "schema history topic h") {
		t.Fatalf("applyDDL with a failing history = %d events, %v; want no events and the history's error naming the topic", len(evs), err)
	}
}

// discardLog is the logger of readers under test.
func discardLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

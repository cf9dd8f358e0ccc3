package postgres_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/postgres"
)

// extremeTimestamp is PostgreSQL's largest timestamp: its microseconds since 1970 do not fit in Connect's
// int64 MicroTimestamp, so the change cannot be made into an event.
const extremeTimestamp = "294276-12-31 23:59:59"

// TestEventProcessingFailureHandlingMode: a change cdcd cannot convert fails the task by default, naming its
// position and the key that would skip it; with warn the change is skipped with a warning naming its table
// and LSN, and the transaction's next change still goes out; skip does the same without the warning.
func TestEventProcessingFailureHandlingMode(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	execSQL(t, dsn, "CREATE TABLE ts (id int PRIMARY KEY, at timestamp)")
	for _, mode := range []string{"warn", "skip"} {
		t.Run(mode, func(t *testing.T) {
			cfg := readerConfig(t, dsn, map[string]string{"snapshot.mode": "no_data", "event.processing.failure.handling.mode": mode,
				"slot.name": "ef_" + mode, "publication.name": "ef_" + mode})
			out, logs, stop := runReader(t, cfg, nil)
			defer stop()
			waitStreaming(t, dsn, cfg.SlotName, logs)
			execSQL(t, dsn, "BEGIN; DELETE FROM ts; INSERT INTO ts VALUES (1, '"+extremeTimestamp+"'); INSERT INTO ts VALUES (2, '2024-01-01 00:00:00'); COMMIT")
			var ids []any
			timeout := time.After(time.Minute)
			for len(ids) == 0 {
				select {
				case b := <-out:
					for _, ev := range b.Events {
						if v, ok := ev.Value.(*schema.Struct); ok && ev.Topic == cfg.TopicPrefix+".public.ts" && v.Get("op") == "c" {
							ids = append(ids, after(t, ev).Get("id"))
						}
					}
				case <-timeout:
					t.Fatalf("no event; log:\n%s", logs.String())
				}
			}
			if len(ids) != 1 || ids[0] != int32(2) {
				t.Errorf("events for ids %v, want only 2 (1 cannot be converted)", ids)
			}
			warned := strings.Contains(logs.String(), "skipping a change that cannot be processed") && strings.Contains(logs.String(), "lsn=")
			if warned != (mode == "warn") {
				t.Errorf("mode %s: warning logged %v; log:\n%s", mode, warned, logs.String())
			}
		})
	}
	cfg := readerConfig(t, dsn, map[string]string{"snapshot.mode": "no_data", "slot.name": "ef_fail", "publication.name": "ef_fail"})
	logs := &testenv.LogBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ran := make(chan error, 1)
	go func() {
		ran <- postgres.NewReader(cfg, nil, slog.New(slog.NewTextHandler(logs, nil))).Run(ctx, make(chan source.Batch, 16))
	}()
	waitStreaming(t, dsn, cfg.SlotName, logs)
	execSQL(t, dsn, "INSERT INTO ts VALUES (3, '"+extremeTimestamp+"')")
	err := <-ran
	if err == nil || ctx.Err() != nil {
		t.Fatalf("the reader did not fail on its own: %v; log:\n%s", err, logs.String())
	}
	if !source.IsFatal(err) {
		t.Errorf("the failure %q is retriable: a restart would fail on the same change", err)
	}
	for _, want := range []string{"public.ts", "LSN", "event.processing.failure.handling.mode"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the failure %q does not name %s", err, want)
		}
	}
}

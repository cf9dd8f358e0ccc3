package postgres_test

import (
	"context"
	"testing"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestReaderSendsOnlyWhatTheVersionKnows streams a logical decoding message and a change: from PostgreSQL 14
// on the message is an event of its own; PostgreSQL 13's pgoutput has no messages (and would fail
// START_REPLICATION on the messages option), so there the change is the first event. Run it on another
// version with CDCD_PG_VERSION (make matrix).
func TestReaderSendsOnlyWhatTheVersionKnows(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	execSQL(t, dsn, "CREATE TABLE t (id int PRIMARY KEY)")
	cfg := readerConfig(t, dsn, map[string]string{"snapshot.mode": "no_data"})
	out, logs, stop := runReader(t, cfg, nil)
	waitStreaming(t, dsn, cfg.SlotName, logs)
	execSQL(t, dsn, "SELECT pg_logical_emit_message(true, 'cdcd-version', 'hello')", "INSERT INTO t VALUES (1)")
	want := []string{"bad.message", "bad.public.t"}
	if testenv.PostgresVersion() < 14 {
		want = want[1:]
	}
	for _, topic := range want {
		if ev := nextEvent(t, out, logs); ev.Topic != topic {
			t.Errorf("PostgreSQL %d: event on %s, want %s", testenv.PostgresVersion(), ev.Topic, topic)
		}
	}
	if err := stop(); err != context.Canceled {
		t.Errorf("Run returned %v after cancellation, want context.Canceled", err)
	}
}

package postgres_test

import (
	"slices"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/postgres"
)

// TestSnapshotSelectOverride: the initial snapshot of a table with snapshot.select.statement.overrides reads
// the rows and columns the user's SELECT returns, whatever their order, with the columns it leaves out null;
// a SELECT that returns a column the table does not have is refused before any row goes out, naming the key,
// and fatal (a restart runs the same statement).
func TestSnapshotSelectOverride(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	execSQL(t, dsn, "CREATE TABLE t (id int PRIMARY KEY, v text, n int NOT NULL)",
		"INSERT INTO t SELECT i, 'v' || i, 10 * i FROM generate_series(1, 5) i")
	cfg := readerConfig(t, dsn, map[string]string{"snapshot.mode": "initial_only",
		"snapshot.select.statement.overrides":          "public.t",
		"snapshot.select.statement.overrides.public.t": "SELECT n, id FROM public.t WHERE id >= 3"})
	out, logs, _ := runReader(t, cfg, nil)
	var ids []any
	timeout := time.After(time.Minute)
	for len(ids) < 3 {
		var b source.Batch
		select {
		case b = <-out:
		case <-timeout:
			t.Fatalf("the snapshot delivered %v; reader log:\n%s", ids, logs.String())
		}
		for _, ev := range b.Events {
			if ev.Topic != cfg.TopicPrefix+".public.t" {
				continue
			}
			row := after(t, ev)
			if op := ev.Value.(*schema.Struct).Get("op"); op != "r" || row.Get("v") != nil || row.Get("n") != 10*row.Get("id").(int32) {
				t.Errorf("snapshot row %v: op %v, want op r, v null and n = 10 × id", row, op)
			}
			ids = append(ids, row.Get("id"))
		}
	}
	if !slices.Equal(ids, []any{int32(3), int32(4), int32(5)}) {
		t.Errorf("snapshot read ids %v, want the statement's 3, 4, 5", ids)
	}

	bad := readerConfig(t, dsn, map[string]string{"snapshot.mode": "initial_only",
		"snapshot.select.statement.overrides":          "public.t",
		"snapshot.select.statement.overrides.public.t": "SELECT id, n AS total FROM public.t"})
	err := refusal(t, bad, (*postgres.Offset)(nil), "snapshot.select.statement.overrides.public.t", `"total"`)
	wantFatal(t, err, true)
}

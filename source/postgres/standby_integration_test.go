package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/postgres/slotguard"
)

// TestStandbyDecoding points a connector at a hot standby (PostgreSQL 16+, a pair of e2e/pgversions.sh):
// it creates its slot there, snapshots and streams what the primary writes, and the slot guardian's
// inventory of the standby reports the slot. What a standby cannot do is refused with the statement to run
// on the primary, and a standby that would lose the slot to the primary's vacuum is warned about.
func TestStandbyDecoding(t *testing.T) {
	pair := testenv.NewPostgresPair(t, 16)
	db := pair.NewDB(t, "CREATE TABLE t (id int PRIMARY KEY, v text)", "CREATE TABLE u (id int PRIMARY KEY)",
		"INSERT INTO t VALUES (1, 'before')", "CREATE PUBLICATION pub_t FOR TABLE t")
	primary, standby := pair.PrimaryDSN(db), pair.StandbyDSN(db)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	t.Run("refusals", func(t *testing.T) {
		for _, tc := range []struct {
			name      string
			overrides map[string]string
			want      []string
		}{
			{"no publication", map[string]string{"publication.name": "nopub", "table.include.list": "public.t"},
				[]string{`publication "nopub" does not exist on the standby`, `CREATE PUBLICATION "nopub" FOR TABLE "public"."t"`, "on the primary"}},
			{"a captured table not published", map[string]string{"publication.name": "pub_t", "table.include.list": "public.t,public.u"},
				[]string{`publication "pub_t" on the standby`, `does not publish "public"."u"`, `ALTER PUBLICATION "pub_t" SET TABLE "public"."t", "public"."u" on the primary`}},
			{"a failover slot", map[string]string{"publication.name": "pub_t", "table.include.list": "public.t", "slot.failover": "true"},
				[]string{"slot.failover=true, but the server at", "is a standby, where a failover slot cannot be created"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				err := refusal(t, readerConfig(t, standby, tc.overrides), nil, tc.want...)
				wantFatal(t, err, true)
			})
		}
	})

	cfg := readerConfig(t, standby, map[string]string{"publication.name": "pub_t", "table.include.list": "public.t", "snapshot.mode": "initial"})
	out, logs, stop := runReader(t, cfg, nil)
	// A slot on a standby is consistent once the primary has logged its running transactions: the primary
	// does every 15 s while it writes, this at once.
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(logs.String(), "msg=streaming") {
		execSQL(t, pair.PrimaryDSN("postgres"), "SELECT pg_log_standby_snapshot()")
		if time.Now().After(deadline) {
			t.Fatalf("the reader on the standby did not start streaming within a minute (Run: %v); log:\n%s", stop(), logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if op, id := opAndID(t, nextEvent(t, out, logs)); op != "r" || id != int32(1) {
		t.Fatalf("first event %s of row %v, want the snapshot's row 1", op, id)
	}
	execSQL(t, primary, "INSERT INTO t VALUES (2, 'written on the primary')")
	if op, id := opAndID(t, nextEvent(t, out, logs)); op != "c" || id != int32(2) {
		t.Fatalf("next event %s of row %v, want the insert of row 2 on the primary", op, id)
	}
	if strings.Contains(logs.String(), "hot_standby_feedback is off") || strings.Contains(logs.String(), "primary_slot_name is empty") {
		t.Errorf("a standby set up to keep its slot was warned about; log:\n%s", logs.String())
	}

	// The guardian's inventory of the standby lists the slot as the reader's, in use, with its retained WAL.
	conn, err := pgx.Connect(ctx, standby)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	info, slots, err := slotguard.Inspect(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	if !info.InRecovery {
		t.Error("the guardian's inspection of the standby says it is not in recovery")
	}
	found := false
	for _, s := range slots {
		if s.Name == cfg.SlotName {
			found = true
			if !s.Active || s.RetainedWALBytes == nil || s.Type != "logical" {
				t.Errorf("the guardian reports the standby's slot as %+v, want an active logical slot with its retained WAL", s)
			}
		}
	}
	if !found {
		t.Errorf("the guardian's inventory of the standby lacks slot %s: %+v", cfg.SlotName, slots)
	}
	if err := stop(); err != context.Canceled {
		t.Fatalf("Run returned %v after cancellation, want context.Canceled", err)
	}

	// Without hot_standby_feedback the primary's vacuum may invalidate the slot: the reader says so.
	execSQL(t, pair.StandbyDSN("postgres"), "ALTER SYSTEM SET hot_standby_feedback = off", "SELECT pg_reload_conf()")
	for queryValue[string](t, standby, "SELECT current_setting('hot_standby_feedback')") != "off" {
		if ctx.Err() != nil {
			t.Fatal("the standby did not reload hot_standby_feedback = off")
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, logs, stop = runReader(t, cfg, nil)
	waitStreaming(t, standby, cfg.SlotName, logs)
	if !strings.Contains(logs.String(), "hot_standby_feedback is off on this standby") {
		t.Errorf("no warning about hot_standby_feedback = off; log:\n%s", logs.String())
	}
	stop()
}

func opAndID(t *testing.T, ev source.Event) (string, any) {
	t.Helper()
	return ev.Value.(*schema.Struct).Get("op").(string), after(t, ev).Get("id")
}

// TestFailoverSetupWarnings: a connector with slot.failover=true on a primary whose standby synchronizes
// its slots starts without a word; once the standby stops sending hot_standby_feedback (the physical slot
// loses its xmin), the next start warns, naming the setting.
func TestFailoverSetupWarnings(t *testing.T) {
	pair := testenv.NewPostgresPair(t, 17)
	db := pair.NewDB(t, "CREATE TABLE t (id int PRIMARY KEY)")
	primary := pair.PrimaryDSN(db)
	cfg := readerConfig(t, primary, map[string]string{"slot.failover": "true", "snapshot.mode": "no_data"})

	_, logs, stop := runReader(t, cfg, nil)
	waitStreaming(t, primary, cfg.SlotName, logs)
	if strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("a primary set up for failover slots got warnings:\n%s", logs.String())
	}
	stop()

	execSQL(t, pair.StandbyDSN("postgres"), "ALTER SYSTEM SET hot_standby_feedback = off", "SELECT pg_reload_conf()")
	waitFor(t, time.Minute, "the physical slot to lose its xmin", func() bool {
		return queryValue[bool](t, primary, "SELECT xmin IS NULL FROM pg_replication_slots WHERE slot_name = 'cdcd_standby'")
	})
	_, logs, stop = runReader(t, cfg, nil)
	waitStreaming(t, primary, cfg.SlotName, logs)
	if want := `the standby streaming from the physical slot \"cdcd_standby\" sends no hot_standby_feedback`; !strings.Contains(logs.String(), want) {
		t.Errorf("no warning %q; log:\n%s", want, logs.String())
	}
	stop()
}

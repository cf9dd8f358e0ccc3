package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/postgres"
)

// TestReaderStreamParamsOrigin: slot.stream.params origin=none reaches pgoutput, which then leaves out the
// changes a replication origin made (what a subscription applies), on 16 and later; before 16 the
// connector is refused with the server's version named, before the server would refuse START_REPLICATION.
func TestReaderStreamParamsOrigin(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	execSQL(t, dsn, "CREATE TABLE t (id int PRIMARY KEY)")
	cfg := readerConfig(t, dsn, map[string]string{"slot.stream.params": "origin=none", "snapshot.mode": "no_data"})
	if v := testenv.PostgresVersion(); v < 16 {
		wantFatal(t, refusal(t, cfg, nil, "origin=none needs PostgreSQL 16", fmt.Sprintf("is PostgreSQL %d.", v)), true)
		return
	}
	out, logs, stop := runReader(t, cfg, nil)
	waitStreaming(t, dsn, cfg.SlotName, logs)

	// A change made under a replication origin, as a subscription's apply worker makes it, then one without.
	origin := cfg.DBName + "_origin"
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close(context.Background())
		execSQL(t, dsn, "SELECT pg_replication_origin_drop('"+origin+"')")
	})
	for _, stmt := range []string{"SELECT pg_replication_origin_create('" + origin + "')", "SELECT pg_replication_origin_session_setup('" + origin + "')",
		"INSERT INTO t VALUES (1)", "SELECT pg_replication_origin_session_reset()", "INSERT INTO t VALUES (2)"} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if id := after(t, nextEvent(t, out, logs)).Get("id"); id != int32(2) {
		t.Errorf("first event has id %v, want 2: the change made under replication origin %s is not left out", id, origin)
	}
	stop()
}

// TestReaderShowsSlotXmin: with xmin.fetch.interval.ms the slot's catalog_xmin is in every event's
// source.xmin and in the commit's offset (key xmin), as Debezium shows it; without it source.xmin is null
// and the offset has no xmin.
func TestReaderShowsSlotXmin(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	execSQL(t, dsn, "CREATE TABLE t (id int PRIMARY KEY)")
	for _, tc := range []struct {
		interval string
		tracked  bool
	}{{"1", true}, {"0", false}} {
		t.Run("xmin.fetch.interval.ms="+tc.interval, func(t *testing.T) {
			cfg := readerConfig(t, dsn, map[string]string{"xmin.fetch.interval.ms": tc.interval, "snapshot.mode": "no_data",
				"slot.name": "xmin_" + tc.interval, "slot.drop.on.stop": "true"})
			out, logs, stop := runReader(t, cfg, nil)
			defer stop()
			waitStreaming(t, dsn, cfg.SlotName, logs)
			execSQL(t, dsn, fmt.Sprintf("INSERT INTO t VALUES (%s)", tc.interval+"0"))
			ev, offset := nextChange(t, out, logs)
			src := ev.Value.(*schema.Struct).Get("source").(*schema.Struct)
			xmin, _ := src.Get("xmin").(int64)
			txID, _ := src.Get("txId").(int64)
			if !tc.tracked {
				if src.Get("xmin") != nil || offset.Xmin != 0 {
					t.Errorf("source.xmin %v, offset xmin %d: want neither without xmin.fetch.interval.ms", src.Get("xmin"), offset.Xmin)
				}
				return
			}
			// catalog_xmin holds back the catalog rows of every transaction the slot has not confirmed:
			// at most the transaction being decoded.
			if xmin <= 0 || xmin > txID {
				t.Errorf("source.xmin = %v, want the slot's catalog_xmin (0 < xmin <= txId %d)", src.Get("xmin"), txID)
			}
			if offset.Xmin != xmin {
				t.Errorf("the commit's offset has xmin %d, want source.xmin %d", offset.Xmin, xmin)
			}
		})
	}
}

// TestReaderConfirmsOnlyReleasedPositions: the status updates the reader sends confirm a released
// position and nothing else. With nothing released yet (a new connector before its first durable offset)
// they confirm nothing: pglogrepl would otherwise send the received position as the flush position. With
// lsn.flush.mode=manual (or the legacy flush.lsn.source=false) they never confirm, released or not.
func TestReaderConfirmsOnlyReleasedPositions(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	execSQL(t, dsn, "CREATE TABLE t (id int PRIMARY KEY)")
	id := 0
	insert := func() string { id++; return fmt.Sprintf("INSERT INTO t VALUES (%d)", id) }
	for _, tc := range []struct {
		name     string
		settings map[string]string
		release  bool
		confirms bool
	}{
		{"released", map[string]string{}, true, true},
		{"nothing released", map[string]string{}, false, false},
		{"lsn.flush.mode=manual", map[string]string{"lsn.flush.mode": "manual"}, true, false},
		{"flush.lsn.source=false", map[string]string{"flush.lsn.source": "false"}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slot := "flush_" + strings.NewReplacer(".", "_", "=", "_", " ", "_").Replace(tc.name)
			tc.settings["slot.name"], tc.settings["snapshot.mode"], tc.settings["slot.drop.on.stop"] = slot, "no_data", "true"
			cfg := readerConfig(t, dsn, tc.settings)
			out, logs, stop := startReader(t, cfg, nil, tc.release)
			defer stop()
			waitStreaming(t, dsn, slot, logs)
			// The insert position: with synchronous_commit=off the write position (pg_current_wal_lsn) may lag
			// behind the slot's consistent point.
			before := queryLSN(t, dsn, "SELECT pg_current_wal_insert_lsn()::text")
			confirmedPast := func() bool {
				return queryLSN(t, dsn, "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1", slot) > before
			}
			for range 2 { // the second change comes after a status update that carried the first
				execSQL(t, dsn, insert())
				nextChange(t, out, logs)
				received := queryValue[time.Time](t, dsn, "SELECT now()")
				waitFor(t, 30*time.Second, "a status update after the change was received", func() bool {
					return queryValue[bool](t, dsn, "SELECT COALESCE(s.reply_time > $2, false) FROM pg_stat_replication s JOIN pg_replication_slots r ON r.active_pid = s.pid WHERE r.slot_name = $1", slot, received)
				})
				if tc.confirms {
					waitFor(t, 30*time.Second, "the slot confirmed past "+before.String(), confirmedPast)
					return
				}
			}
			if confirmedPast() {
				t.Errorf("the slot confirmed %s, past %s: want nothing confirmed", queryLSN(t, dsn, "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1", slot), before)
			}
		})
	}
}

// nextChange returns the first event of the next batch that has events and the offset of the commit
// batch that ends its transaction.
func nextChange(t *testing.T, out <-chan source.Batch, logs *testenv.LogBuffer) (source.Event, postgres.Offset) {
	t.Helper()
	var first *source.Event
	timeout := time.After(30 * time.Second)
	for {
		select {
		case b := <-out:
			if first == nil && len(b.Events) > 0 {
				first = &b.Events[0]
			}
			if first != nil && b.Offset != nil {
				m := map[string]any{}
				for _, f := range b.Offset {
					m[f.Name] = f.Value
				}
				off, err := postgres.ParseOffset(m)
				if err != nil {
					t.Fatal(err)
				}
				return *first, off
			}
		case <-timeout:
			t.Fatalf("no committed change within 30s; reader log:\n%s", logs.String())
		}
	}
}

// waitFor polls cond until it holds, failing the test with what it waited for after timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func after(t *testing.T, ev source.Event) *schema.Struct {
	t.Helper()
	a, ok := ev.Value.(*schema.Struct).Get("after").(*schema.Struct)
	if !ok {
		t.Fatalf("event without an after: %+v", ev.Value)
	}
	return a
}

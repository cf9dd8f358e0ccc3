package postgres_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/postgres"
)

// TestSlotFailover: with slot.failover=true the connector's slot is a failover slot on PostgreSQL 17 and
// later, whether cdcd creates it (with or without an exported snapshot) or finds it made without; before
// 17 the connector is refused with the server's version named. Run it on 17 or 18 with CDCD_PG_VERSION.
func TestSlotFailover(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	execSQL(t, dsn, "CREATE TABLE t (id int PRIMARY KEY)")
	if v := testenv.PostgresVersion(); v < 17 {
		cfg := readerConfig(t, dsn, map[string]string{"slot.failover": "true"})
		err := refusal(t, cfg, nil, "slot.failover=true needs PostgreSQL 17", fmt.Sprintf("is PostgreSQL %d.", v))
		wantFatal(t, err, true)
		// Validation, which connects as a start would, says the same before anything runs.
		pc, err := pgx.ParseConfig(dsn)
		if err != nil {
			t.Fatal(err)
		}
		task, err := postgres.Connector{}.NewTask("c", map[string]string{"database.hostname": pc.Host, "database.port": fmt.Sprint(pc.Port),
			"database.user": pc.User, "database.dbname": pc.Database, "database.sslmode": "disable", "topic.prefix": "p",
			"plugin.name": "pgoutput", "slot.failover": "true"}, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		if err := task.(source.ConnectionChecker).CheckConnection(t.Context()); err == nil || !strings.Contains(err.Error(), "slot.failover=true needs PostgreSQL 17") {
			t.Errorf("validation's connection check: %v, want the failover refusal", err)
		}
		return
	}
	for _, tc := range []struct{ name, mode, slot string }{
		{"created with an exported snapshot", "initial", "failover_export"},
		{"created without a snapshot", "no_data", "failover_nothing"},
		{"made before, without failover", "no_data", "failover_altered"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.slot == "failover_altered" {
				execSQL(t, dsn, "SELECT pg_create_logical_replication_slot('"+tc.slot+"', 'pgoutput')")
			}
			cfg := readerConfig(t, dsn, map[string]string{"slot.failover": "true", "snapshot.mode": tc.mode, "slot.name": tc.slot})
			_, logs, stop := runReader(t, cfg, nil)
			waitStreaming(t, dsn, cfg.SlotName, logs)
			if !slotFailsOver(t, dsn, tc.slot) {
				t.Errorf("slot %s: pg_replication_slots.failover = false, want true; log:\n%s", tc.slot, logs.String())
			}
			if err := stop(); err != context.Canceled {
				t.Errorf("Run returned %v after cancellation, want context.Canceled", err)
			}
		})
	}
	// Without the setting a slot is an ordinary one, as Debezium's default makes it.
	cfg := readerConfig(t, dsn, map[string]string{"snapshot.mode": "no_data", "slot.name": "failover_off"})
	_, logs, stop := runReader(t, cfg, nil)
	waitStreaming(t, dsn, cfg.SlotName, logs)
	if slotFailsOver(t, dsn, "failover_off") {
		t.Error("slot failover_off fails over without slot.failover")
	}
	stop()
}

func slotFailsOver(t *testing.T, dsn, slot string) bool {
	t.Helper()
	return queryValue[bool](t, dsn, "SELECT failover FROM pg_replication_slots WHERE slot_name = $1", slot)
}

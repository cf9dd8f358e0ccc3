package postgres_test

// Integration tests of the reader against bad servers, users, publications, slots and offsets: every case
// must end in an error that names the problem and the fix, and nothing may panic. They need the test-bed
// PostgreSQL (CDCD_E2E=1).
//
// A refusal that only an operator can lift (a server setting, a privilege, a foreign slot) must be fatal, as
// Debezium's start-up failures are: the worker marks the connector FAILED instead of retrying it forever
// while reporting RUNNING. Refusals that can heal by themselves (an unreachable server, a slot still held
// by a previous consumer) stay retriable.

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/postgres"
)

func TestReaderRefusesUserWithoutReplicationAttribute(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	role := createRole(t, dsn, "norepl", "")
	cfg := readerConfig(t, withUser(t, dsn, role), nil)
	err := refusal(t, cfg, nil, role, "REPLICATION", "ALTER ROLE "+pgx.Identifier{role}.Sanitize()+" WITH REPLICATION")
	wantFatal(t, err, true)
}

// secretTable creates public.secret, published by the superuser, that a new REPLICATION role may not
// SELECT; it returns that role's config (snapshot.mode as given).
func secretTable(t *testing.T, dsn, snapshotMode string) *postgres.Config {
	t.Helper()
	role := createRole(t, dsn, "nosel", "REPLICATION")
	execSQL(t, dsn,
		"CREATE TABLE secret (id int PRIMARY KEY, v text)",
		"INSERT INTO secret VALUES (0, 'before the slot')",
		"CREATE PUBLICATION "+pubName(t, dsn)+" FOR TABLE secret",
		"REVOKE ALL ON secret FROM PUBLIC")
	return readerConfig(t, withUser(t, dsn, role), map[string]string{"publication.autocreate.mode": "disabled", "snapshot.mode": snapshotMode})
}

// TestReaderRefusesSnapshotOfTableItMayNotSelect: the initial snapshot reads every captured table. A missing
// SELECT privilege must be found before the slot is created (else a slot is left behind, holding WAL), named
// with the GRANT that fixes it, and be fatal: retrying cannot grant a privilege.
func TestReaderRefusesSnapshotOfTableItMayNotSelect(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	cfg := secretTable(t, dsn, "initial")
	err := refusal(t, cfg, nil, "public.secret", "GRANT SELECT ON", cfg.User, "snapshot.mode=no_data")
	wantFatal(t, err, true)
	assertNoSlot(t, dsn, cfg.SlotName)
}

// TestReaderStreamsTableItMayNotSelectWithoutSnapshot: logical decoding needs no SELECT privilege, so with
// snapshot.mode=no_data a REPLICATION role streams a table it may not read (as Debezium does).
func TestReaderStreamsTableItMayNotSelectWithoutSnapshot(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	cfg := secretTable(t, dsn, "no_data")
	out, logs, stop := runReader(t, cfg, nil)
	waitStreaming(t, dsn, cfg.SlotName, logs)
	execSQL(t, dsn, "INSERT INTO secret VALUES (1, 'classified')")
	if ev := nextEvent(t, out, logs); ev.Topic != "bad.public.secret" {
		t.Errorf("event on %s, want bad.public.secret", ev.Topic)
	}
	if err := stop(); err != context.Canceled {
		t.Errorf("Run returned %v after cancellation, want context.Canceled", err)
	}
}

func TestReaderRefusesMissingPublicationWhenAutocreateIsDisabled(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	cfg := readerConfig(t, dsn, map[string]string{"publication.autocreate.mode": "disabled"})
	err := refusal(t, cfg, nil, `publication "`+cfg.PublicationName+`" does not exist`, "publication.autocreate.mode=disabled",
		"CREATE PUBLICATION", "publication.autocreate.mode=filtered")
	wantFatal(t, err, true)
}

// TestReaderRefusesAllTablesWithTablesWithoutIdentity: a FOR ALL TABLES publication would make PostgreSQL
// reject UPDATE and DELETE on keyless tables under REPLICA IDENTITY DEFAULT, so the reader must refuse and
// list them, and create nothing.
func TestReaderRefusesAllTablesWithTablesWithoutIdentity(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	execSQL(t, dsn,
		"CREATE TABLE keyed (id int PRIMARY KEY)",
		"CREATE TABLE full_identity (v text); ALTER TABLE full_identity REPLICA IDENTITY FULL",
		"CREATE TABLE no_key (v text)",
		"CREATE SCHEMA other; CREATE TABLE other.nothing (id int PRIMARY KEY); ALTER TABLE other.nothing REPLICA IDENTITY NOTHING")
	cfg := readerConfig(t, dsn, map[string]string{"publication.autocreate.mode": "all_tables"})
	err := refusal(t, cfg, nil, "no_key", "other.nothing", "REPLICA IDENTITY FULL", "primary key")
	if strings.Contains(err.Error(), "keyed") || strings.Contains(err.Error(), "full_identity") {
		t.Errorf("tables with a usable identity listed as blocked: %v", err)
	}
	wantFatal(t, err, true)
	assertNoPublication(t, dsn, cfg.PublicationName)
	// The application must still be able to update the keyless table.
	execSQL(t, dsn, "INSERT INTO no_key VALUES ('a')", "UPDATE no_key SET v = 'b'")
}

func TestReaderRefusesAllTablesAsNonSuperuser(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	execSQL(t, dsn, "CREATE TABLE keyed (id int PRIMARY KEY)")
	role := createRole(t, dsn, "nosuper", "REPLICATION")
	cfg := readerConfig(t, withUser(t, dsn, role), map[string]string{"publication.autocreate.mode": "all_tables"})
	err := refusal(t, cfg, nil, "superuser", role, "publication.autocreate.mode=filtered")
	wantFatal(t, err, true)
	assertNoPublication(t, dsn, cfg.PublicationName)
}

func TestReaderReportsUnreachableDatabase(t *testing.T) {
	dsn := testenv.Postgres(t)
	port := freePort(t)
	cfg := readerConfig(t, dsn, map[string]string{"database.hostname": "127.0.0.1", "database.port": strconv.Itoa(port)})
	err := refusal(t, cfg, nil, "127.0.0.1:"+strconv.Itoa(port), "database.hostname", "database.port", "connection refused")
	wantFatal(t, err, false) // the database may come back
}

// TestReaderRefusesOffsetWhoseSlotIsGone: the WAL since the offset is gone with the slot; streaming from a
// new slot would silently skip it.
func TestReaderRefusesOffsetWhoseSlotIsGone(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	execSQL(t, dsn, "CREATE TABLE t (id int PRIMARY KEY)")
	lsn := queryLSN(t, dsn, "SELECT pg_current_wal_lsn()::text")
	start := &postgres.Offset{LSN: lsn, LastProcessed: lsn, LastCommit: lsn, MessageType: "COMMIT"}

	cfg := readerConfig(t, dsn, nil)
	err := refusal(t, cfg, start, cfg.SlotName, "gone", lsn.String(), "offset.mismatch.strategy=trust_offset", "snapshot")
	wantFatal(t, err, true)
	assertNoSlot(t, dsn, cfg.SlotName)

	t.Run("trust_offset streams from a new slot", func(t *testing.T) {
		cfg := readerConfig(t, dsn, map[string]string{"offset.mismatch.strategy": "trust_offset"})
		_, logs, stop := runReader(t, cfg, start)
		waitStreaming(t, dsn, cfg.SlotName, logs)
		if err := stop(); err != context.Canceled {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
	})
}

// TestReaderRefusesSlotAheadOfOffset: the slot confirmed changes the offset never recorded.
func TestReaderRefusesSlotAheadOfOffset(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	cfg := readerConfig(t, dsn, nil)
	slotStart := queryLSN(t, dsn, "SELECT lsn::text FROM pg_create_logical_replication_slot($1, 'pgoutput')", cfg.SlotName)
	// A synchronous commit: the slot advances only up to WAL already flushed.
	execSQL(t, dsn, "SET synchronous_commit = on", "CREATE TABLE t (id int PRIMARY KEY)", "INSERT INTO t VALUES (1)")
	advanced := queryLSN(t, dsn, "SELECT end_lsn::text FROM pg_replication_slot_advance($1, pg_current_wal_lsn())", cfg.SlotName)
	if advanced <= slotStart {
		t.Fatalf("slot did not advance: %s → %s", slotStart, advanced)
	}
	start := &postgres.Offset{LSN: slotStart, LastProcessed: slotStart, LastCommit: slotStart, MessageType: "COMMIT"}

	err := refusal(t, cfg, start, cfg.SlotName, advanced.String(), slotStart.String(), "offset.mismatch.strategy=trust_slot", "snapshot")
	wantFatal(t, err, true)

	t.Run("trust_slot streams from the slot", func(t *testing.T) {
		cfg := readerConfig(t, dsn, map[string]string{"offset.mismatch.strategy": "trust_slot"})
		_, logs, stop := runReader(t, cfg, start)
		waitStreaming(t, dsn, cfg.SlotName, logs)
		if err := stop(); err != context.Canceled {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
		if !strings.Contains(logs.String(), "from="+advanced.String()) {
			t.Errorf("did not stream from the slot's %s; log:\n%s", advanced, logs.String())
		}
	})
}

func TestReaderRefusesSlotOfAnotherPlugin(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	execSQL(t, dsn, "CREATE TABLE t (id int PRIMARY KEY)")
	cfg := readerConfig(t, dsn, nil)
	execSQL(t, dsn, "SELECT pg_create_logical_replication_slot('"+cfg.SlotName+"', 'test_decoding')")
	err := refusal(t, cfg, nil, cfg.SlotName, `"test_decoding"`, "pgoutput", "pg_drop_replication_slot", "slot.name")
	wantFatal(t, err, true)
}

func TestReaderRefusesSlotOfAnotherDatabase(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	admin := testenv.Postgres(t)
	execSQL(t, dsn, "CREATE TABLE t (id int PRIMARY KEY)")
	cfg := readerConfig(t, dsn, nil)
	execSQL(t, admin, "SELECT pg_create_logical_replication_slot('"+cfg.SlotName+"', 'pgoutput')")
	t.Cleanup(func() { execSQL(t, admin, "SELECT pg_drop_replication_slot('"+cfg.SlotName+"')") })
	err := refusal(t, cfg, nil, cfg.SlotName, `belongs to database "postgres"`, cfg.DBName, "slot.name")
	wantFatal(t, err, true)
}

func TestReaderRefusesSlotInUse(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	execSQL(t, dsn, "CREATE TABLE t (id int PRIMARY KEY)")
	cfg := readerConfig(t, dsn, nil)
	_, logs, stop := runReader(t, cfg, nil)
	waitStreaming(t, dsn, cfg.SlotName, logs)
	err := refusal(t, cfg, nil, cfg.SlotName, "in use", "pg_stat_replication", "slot.name")
	wantFatal(t, err, false) // the other consumer may go away
	if err := stop(); err != context.Canceled {
		t.Errorf("the first reader returned %v, want context.Canceled", err)
	}
}

// TestReaderRefusesWalLevelReplica runs a cluster of its own: wal_level needs a restart to change.
func TestReaderRefusesWalLevelReplica(t *testing.T) {
	testenv.Postgres(t) // the integration gate
	dsn := throwawayPostgres(t, "wal_level = replica")
	cfg := readerConfig(t, dsn, nil)
	err := refusal(t, cfg, nil, "wal_level=replica", "wal_level = logical", "restart")
	wantFatal(t, err, true)
}

// pubName is the publication readerConfig names for dsn, as an SQL identifier.
func pubName(t *testing.T, dsn string) string {
	t.Helper()
	pc, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return pgx.Identifier{pc.Database}.Sanitize()
}

// waitStreaming waits until a walsender streams slot.
func waitStreaming(t *testing.T, dsn, slot string, logs *testenv.LogBuffer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for ctx.Err() == nil {
		var active bool
		// Active alone is not streaming: the walsender that creates the slot holds it too, for a moment
		// (long enough to be seen on PostgreSQL 17 and 18), before the reader's START_REPLICATION does.
		if err := conn.QueryRow(ctx, "SELECT active FROM pg_replication_slots WHERE slot_name = $1", slot).Scan(&active); err == nil && active &&
			strings.Contains(logs.String(), "msg=streaming") {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("slot %s never became active; reader log:\n%s", slot, logs.String())
}

// nextEvent returns the first event of the next non-empty batch.
func nextEvent(t *testing.T, out <-chan source.Batch, logs *testenv.LogBuffer) source.Event {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case b := <-out:
			if len(b.Events) > 0 {
				return b.Events[0]
			}
		case <-timeout:
			t.Fatalf("no event within 30s; reader log:\n%s", logs.String())
		}
	}
}

func assertNoPublication(t *testing.T, dsn, name string) {
	t.Helper()
	assertNone(t, dsn, "SELECT count(*) FROM pg_publication WHERE pubname = $1", name, "publication")
}

func assertNoSlot(t *testing.T, dsn, name string) {
	t.Helper()
	assertNone(t, dsn, "SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1", name, "slot")
}

func assertNone(t *testing.T, dsn, query, name, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(ctx, query, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%s %q was created although the reader refused to start", what, name)
	}
}

// TestReaderStreamsWithZeroStatusInterval: status.update.interval.ms=0 is accepted by ParseConfig, so the
// reader must still read the stream (today every receive gets a deadline already past and nothing is read).
func TestReaderStreamsWithZeroStatusInterval(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	execSQL(t, dsn, "CREATE TABLE t (id int PRIMARY KEY)")
	cfg := readerConfig(t, dsn, map[string]string{"status.update.interval.ms": "0", "snapshot.mode": "no_data"})
	out, logs, stop := runReader(t, cfg, nil)
	waitStreaming(t, dsn, cfg.SlotName, logs)
	execSQL(t, dsn, "INSERT INTO t VALUES (1)")
	if ev := nextEvent(t, out, logs); ev.Topic != "bad.public.t" {
		t.Errorf("event on %s, want bad.public.t", ev.Topic)
	}
	if err := stop(); err != context.Canceled {
		t.Errorf("Run returned %v after cancellation, want context.Canceled", err)
	}
}

// TestReaderStopsAtOnceWhileTheSlotIsQuiet: a read waits on the socket until the next status update is due
// (here half of wal_sender_timeout, 30 s by default), so cancellation has to interrupt the blocked read
// itself rather than wait for that deadline.
func TestReaderStopsAtOnceWhileTheSlotIsQuiet(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	execSQL(t, dsn, "CREATE TABLE t (id int PRIMARY KEY)")
	cfg := readerConfig(t, dsn, map[string]string{"status.update.interval.ms": "3600000", "snapshot.mode": "no_data"})
	_, logs, stop := runReader(t, cfg, nil)
	waitStreaming(t, dsn, cfg.SlotName, logs) // nothing to stream: the reader is blocked in a read
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	select {
	case err := <-stopped:
		if err != context.Canceled {
			t.Errorf("Run returned %v after cancellation, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second): // far below the 30 s read deadline
		t.Fatalf("Run still blocked in a read 10 s after cancellation; log:\n%s", logs.String())
	}
}

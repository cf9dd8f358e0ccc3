package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
)

// TestPublicationNameIsQuotedInStartReplication: publication.name reaches pgoutput's publication_names
// as the one name it is. A quote would end the string literal of the START_REPLICATION command (and
// could append plugin options), a comma would split it into two publications, and upper case would be
// folded; the reader must create the publication under that name and stream its changes. Two runs: a
// name the reader creates, and one created beforehand whose prefix up to the quote is another
// publication, so that an injected or split name would stream the wrong one.
func TestPublicationNameIsQuotedInStartReplication(t *testing.T) {
	for _, name := range []string{`it's, "Odd"`, `p', messages 'false`} {
		t.Run(name, func(t *testing.T) {
			dsn := testenv.NewPostgresDB(t)
			execSQL(t, dsn, "CREATE TABLE t (id int PRIMARY KEY)", "CREATE TABLE other (id int PRIMARY KEY)",
				"CREATE PUBLICATION p FOR TABLE other", "CREATE PUBLICATION it FOR TABLE other")
			cfg := readerConfig(t, dsn, map[string]string{"publication.name": name, "table.include.list": "public.t", "snapshot.mode": "no_data"})
			out, logs, stop := runReader(t, cfg, nil)
			waitStreaming(t, dsn, cfg.SlotName, logs)
			execSQL(t, dsn, "INSERT INTO other VALUES (1)", "INSERT INTO t VALUES (1)")
			if ev := nextEvent(t, out, logs); ev.Topic != "bad.public.t" {
				t.Errorf("event on %s, want bad.public.t of publication %q", ev.Topic, name)
			}
			if err := stop(); err != context.Canceled {
				t.Errorf("Run returned %v after cancellation, want context.Canceled", err)
			}
			var tables []string
			conn, err := pgx.Connect(t.Context(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			rows, err := conn.Query(t.Context(), "SELECT tablename FROM pg_publication_tables WHERE pubname = $1", name)
			if err != nil {
				t.Fatal(err)
			}
			if tables, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil || len(tables) != 1 || tables[0] != "t" {
				t.Errorf("publication %q holds %v (%v), want [t]", name, tables, err)
			}
		})
	}
}

// TestFilteredPublicationHoldsListedPartitions: with publication.autocreate.mode=filtered and leaf
// partitions (not their root) in table.include.list, the publication cdcd creates lists the leaves, as
// Debezium's does, and their changes are streamed as events of the leaves. Without them the publication
// held nothing of the table and every change to it was lost.
func TestFilteredPublicationHoldsListedPartitions(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	execSQL(t, dsn, "CREATE TABLE meas (id int, at date, PRIMARY KEY (id, at)) PARTITION BY RANGE (at)",
		"CREATE TABLE meas_2025 PARTITION OF meas FOR VALUES FROM ('2025-01-01') TO ('2026-01-01')",
		"CREATE TABLE meas_2026 PARTITION OF meas FOR VALUES FROM ('2026-01-01') TO ('2027-01-01')",
		"CREATE TABLE other (id int PRIMARY KEY)")
	cfg := readerConfig(t, dsn, map[string]string{"publication.autocreate.mode": "filtered",
		"table.include.list": "public.meas_2025,public.meas_2026", "snapshot.mode": "no_data"})
	out, logs, stop := runReader(t, cfg, nil)
	waitStreaming(t, dsn, cfg.SlotName, logs)
	execSQL(t, dsn, "INSERT INTO other VALUES (1)", "INSERT INTO meas VALUES (1, '2026-05-01')")
	if ev := nextEvent(t, out, logs); ev.Topic != "bad.public.meas_2026" {
		t.Errorf("event on %s, want bad.public.meas_2026", ev.Topic)
	}
	if err := stop(); err != context.Canceled {
		t.Errorf("Run returned %v after cancellation, want context.Canceled", err)
	}
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(t.Context(), "SELECT tablename FROM pg_publication_tables WHERE pubname = $1 ORDER BY 1", cfg.PublicationName)
	if err != nil {
		t.Fatal(err)
	}
	if tables, err := pgx.CollectRows(rows, pgx.RowTo[string]); err != nil || len(tables) != 2 || tables[0] != "meas_2025" || tables[1] != "meas_2026" {
		t.Errorf("publication %q holds %v (%v), want [meas_2025 meas_2026]", cfg.PublicationName, tables, err)
	}
}

// TestEnumKeepsTheLabelsFirstRead: after ALTER TYPE … ADD VALUE (and a relation refresh), Debezium's schema
// keeps the enum's "allowed" list as its type registry read it at the task's start, even on a row holding
// the new label, and even for a table whose first change comes after the ALTER.
func TestEnumKeepsTheLabelsFirstRead(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	execSQL(t, dsn, "CREATE TYPE mood AS ENUM ('sad', 'happy')", "CREATE TABLE e (id int PRIMARY KEY, m mood)", "CREATE TABLE f (id int PRIMARY KEY, m mood)")
	cfg := readerConfig(t, dsn, map[string]string{"table.include.list": "public.e,public.f", "snapshot.mode": "no_data"})
	allowed := func(ev source.Event) string {
		after := ev.ValueSchema.Field("after")
		if after == nil || after.Field("m") == nil {
			t.Fatalf("event on %s has no after.m", ev.Topic)
		}
		v, _ := after.Field("m").Param(schema.EnumAllowedParam)
		return v
	}
	out, logs, stop := runReader(t, cfg, nil)
	waitStreaming(t, dsn, cfg.SlotName, logs)
	execSQL(t, dsn, "INSERT INTO e VALUES (1, 'sad')")
	if got := allowed(nextEvent(t, out, logs)); got != "sad,happy" {
		t.Errorf("first event: allowed %q, want sad,happy", got)
	}
	// A new column makes pgoutput send the relation again: cdcd re-reads the catalog.
	execSQL(t, dsn, "ALTER TYPE mood ADD VALUE 'ok'", "ALTER TABLE e ADD COLUMN x int", "INSERT INTO e VALUES (2, 'ok', 1)")
	if got := allowed(nextEvent(t, out, logs)); got != "sad,happy" {
		t.Errorf("after ADD VALUE: allowed %q, want sad,happy as first read (Debezium's type registry)", got)
	}
	execSQL(t, dsn, "INSERT INTO f VALUES (1, 'ok')")
	if got := allowed(nextEvent(t, out, logs)); got != "sad,happy" {
		t.Errorf("a table first seen after ADD VALUE: allowed %q, want sad,happy as read at the start", got)
	}
	if err := stop(); err != context.Canceled {
		t.Errorf("Run returned %v after cancellation, want context.Canceled", err)
	}
}

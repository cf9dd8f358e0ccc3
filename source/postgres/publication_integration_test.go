package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/e2e/testenv"
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

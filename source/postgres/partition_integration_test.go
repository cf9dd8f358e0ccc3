package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestPublishViaPartitionRootPublication: with publish.via.partition.root=true every publication cdcd
// creates publishes through partition roots, a partition's change is an event of the root, an existing
// publication cdcd manages is brought to the setting, and one it must not touch (disabled) is refused
// with the statement to run.
func TestPublishViaPartitionRootPublication(t *testing.T) {
	for _, tc := range []struct {
		name, mode string
		existing   bool // a publication without the setting exists before the start
	}{
		{"all_tables creates it", "all_tables", false},
		{"filtered creates it", "filtered", false},
		{"no_tables creates it", "no_tables", false},
		{"an existing one is altered", "filtered", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dsn := testenv.NewPostgresDB(t)
			execSQL(t, dsn, "CREATE TABLE meas (id int, region text, PRIMARY KEY (id, region)) PARTITION BY LIST (region)",
				"CREATE TABLE meas_eu PARTITION OF meas FOR VALUES IN ('eu')")
			cfg := readerConfig(t, dsn, map[string]string{"publish.via.partition.root": "true", "publication.autocreate.mode": tc.mode,
				"table.include.list": "public.meas", "snapshot.mode": "no_data"})
			if tc.existing {
				execSQL(t, dsn, "CREATE PUBLICATION "+pgx.Identifier{cfg.PublicationName}.Sanitize()+" FOR TABLE meas")
			}
			out, logs, stop := runReader(t, cfg, nil)
			waitStreaming(t, dsn, cfg.SlotName, logs)
			if !pubViaRoot(t, dsn, cfg.PublicationName) {
				t.Errorf("publication %s does not publish via the partition root; log:\n%s", cfg.PublicationName, logs.String())
			}
			if tc.mode != "no_tables" {
				execSQL(t, dsn, "INSERT INTO meas VALUES (1, 'eu')")
				if ev := nextEvent(t, out, logs); ev.Topic != "bad.public.meas" {
					t.Errorf("a partition's insert is an event on %s, want bad.public.meas", ev.Topic)
				}
			}
			if err := stop(); err != context.Canceled {
				t.Errorf("Run returned %v after cancellation, want context.Canceled", err)
			}
		})
	}
	t.Run("disabled refuses a publication without it", func(t *testing.T) {
		dsn := testenv.NewPostgresDB(t)
		execSQL(t, dsn, "CREATE TABLE meas (id int PRIMARY KEY)")
		cfg := readerConfig(t, dsn, map[string]string{"publish.via.partition.root": "true", "publication.autocreate.mode": "disabled"})
		execSQL(t, dsn, "CREATE PUBLICATION "+pgx.Identifier{cfg.PublicationName}.Sanitize()+" FOR TABLE meas")
		err := refusal(t, cfg, nil, "publish.via.partition.root=true", "SET (publish_via_partition_root = true)")
		wantFatal(t, err, true)
		if pubViaRoot(t, dsn, cfg.PublicationName) {
			t.Error("the disabled-mode publication was altered")
		}
	})
}

func pubViaRoot(t *testing.T, dsn, pub string) bool {
	t.Helper()
	return queryValue[bool](t, dsn, "SELECT pubviaroot FROM pg_publication WHERE pubname = $1", pub)
}

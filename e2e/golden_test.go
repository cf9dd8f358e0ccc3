package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// The goldens of testdata/postgres were written by Debezium 3.6.1.Final (e2e/debezium/goldens.sh) with these
// names, which appear in the events (source.db, topics), so a replay uses them too.
const (
	goldenDB     = "cdcd_golden"
	goldenSlot   = "cdcd_golden"
	goldenPrefix = "pg1"
	goldenEnd    = "cdcd-golden-end"
)

// TestPostgresGoldens replays the golden corpus through cdcd with each variant's own worker and connector
// files and compares what cdcd writes with what Debezium wrote, byte for byte, after blanking only the times
// and positions that differ between two databases (capture.Replay).
func TestPostgresGoldens(t *testing.T) {
	dsn := testenv.Postgres(t)
	brokers := testenv.Kafka(t)
	variants, err := filepath.Glob("../testdata/postgres/*/capture.jsonl")
	if err != nil || len(variants) == 0 {
		t.Fatalf("no goldens under testdata/postgres (%v)", err)
	}
	for _, golden := range variants {
		dir := filepath.Dir(golden)
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			replayGolden(t, dsn, brokers, dir, name == "snapshot-initial")
		})
	}
}

// replayGolden replays one variant. With seeded, the corpus's seed rows are inserted before cdcd starts,
// so the initial snapshot reads them, and the changes run once the snapshot's last row is in Kafka.
func replayGolden(t *testing.T, adminDSN string, brokers []string, dir string, seeded bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	want := readCapture(t, filepath.Join(dir, "capture.jsonl"))

	dbDSN := freshGoldenDatabase(t, ctx, adminDSN, dir)
	if seeded {
		psql(t, dbDSN, "../testdata/postgres/corpus/seed.sql")
	}
	broker, err := capture.NewBroker(brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	sel := capture.Selection{Prefix: goldenPrefix}
	if _, err := broker.DeleteTopics(ctx, sel); err != nil {
		t.Fatal(err)
	}

	tmp := t.TempDir()
	worker := readProps(t, filepath.Join(dir, "worker.properties"))
	worker["offset.storage.file.filename"] = filepath.Join(tmp, "offsets.dat")
	worker["bootstrap.servers"] = strings.Join(brokers, ",")
	worker["listeners"] = "http://127.0.0.1:0"
	conn := readProps(t, filepath.Join(dir, "connector.properties"))
	cfg, _ := pgx.ParseConfig(dbDSN)
	conn["database.port"] = fmt.Sprint(cfg.Port)
	workerPath, connPath := filepath.Join(tmp, "worker.properties"), filepath.Join(tmp, "connector.properties")
	writeProperties(t, workerPath, worker)
	writeProperties(t, connPath, conn)

	admin, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	p := startCdcd(t, workerPath, connPath)
	waitSlotActive(t, ctx, admin, goldenSlot, p)
	if seeded {
		waitFor(t, ctx, broker, sel, `"snapshot":"last"`)
	}

	psqlIfExists(t, dbDSN, filepath.Join(dir, "extra-changes.sql"))
	psql(t, dbDSN, "../testdata/postgres/corpus/changes.sql")
	deadline := time.Now().Add(2 * time.Minute)
	var got []capture.Record
	for {
		got, err = broker.Read(ctx, sel)
		if err != nil {
			t.Fatal(err)
		}
		if hasEndMarker(got) || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	p.stop()
	if !hasEndMarker(got) {
		t.Fatalf("cdcd never delivered the end marker message; %d records read", len(got))
	}
	diffs := capture.Compare(want, got, capture.Replay)
	for i, d := range diffs {
		if i == 40 {
			t.Errorf("… and %d more differences", len(diffs)-40)
			break
		}
		t.Error(d.String())
	}
}

// freshGoldenDatabase recreates the golden database from the corpus, with the publication Debezium's default
// publication.autocreate.mode=all_tables would create. cdcd refuses to create that publication itself
// because the corpus has a table without a replica identity (public.no_pk), on which a FOR ALL TABLES
// publication makes the application's UPDATE and DELETE fail. A variant's own extra-schema.sql runs after
// the corpus schema, as goldens.sh runs it.
func freshGoldenDatabase(t *testing.T, ctx context.Context, adminDSN, variantDir string) string {
	t.Helper()
	admin, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	// The walsender of a previous run may outlive its client for a moment: end it before dropping the slot.
	if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1 AND active", goldenSlot); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	for _, sql := range []string{
		fmt.Sprintf("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '%s'", goldenSlot),
		"DROP DATABASE IF EXISTS " + goldenDB + " WITH (FORCE)",
		"CREATE DATABASE " + goldenDB,
	} {
		if _, err := admin.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	cfg, _ := pgx.ParseConfig(adminDSN)
	dbDSN := fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, goldenDB)
	psql(t, dbDSN, "../testdata/postgres/corpus/schema.sql")
	psqlIfExists(t, dbDSN, filepath.Join(variantDir, "extra-schema.sql"))
	db, err := pgx.Connect(ctx, dbDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	if _, err := db.Exec(ctx, "CREATE PUBLICATION "+goldenSlot+" FOR ALL TABLES"); err != nil {
		t.Fatal(err)
	}
	return dbDSN
}

// psql runs a SQL file with psql, as the golden runner does (the corpus uses psql's \set).
func psql(t *testing.T, dsn, file string) {
	t.Helper()
	out, err := exec.Command("/usr/lib/postgresql/15/bin/psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", dsn, "-f", file).CombinedOutput()
	if err != nil {
		t.Fatalf("psql -f %s: %v\n%s", file, err, out)
	}
}

// psqlIfExists runs a variant's optional SQL file (extra-schema.sql, extra-changes.sql) when it has one.
func psqlIfExists(t *testing.T, dsn, file string) {
	t.Helper()
	if _, err := os.Stat(file); err == nil {
		psql(t, dsn, file)
	}
}

func readCapture(t *testing.T, path string) []capture.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := capture.ReadJSONL(f)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func readProps(t *testing.T, path string) map[string]string {
	t.Helper()
	props, err := config.LoadPropertiesFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return config.PropertiesMap(props)
}

func hasEndMarker(recs []capture.Record) bool {
	for _, r := range recs {
		if r.Topic == goldenPrefix+".message" && strings.Contains(string(r.Key), goldenEnd) {
			return true
		}
	}
	return false
}

// waitFor waits until some record of the selection contains text; a listed topic that does not exist yet
// has no such record yet.
func waitFor(t *testing.T, ctx context.Context, broker *capture.Broker, sel capture.Selection, text string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		recs, err := broker.Read(ctx, sel)
		if err != nil && !errors.Is(err, capture.ErrNoTopic) {
			t.Fatal(err)
		}
		for _, r := range recs {
			if strings.Contains(string(r.Value), text) {
				return
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("no record containing %s within 2 minutes", text)
}

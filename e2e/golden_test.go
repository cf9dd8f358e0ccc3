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
	"github.com/cdcd/cdcd/connect/offsets"
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
	testenv.LockGoldens(t)
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
			if name == "transaction-metadata" && testenv.PostgresVersion() < 15 {
				// Before 15, pgoutput also sends transactions without a published change (DDL, writes
				// outside the publication), each with a BEGIN and an END record, and no logical messages.
				t.Skip("the transaction-metadata golden was written on PostgreSQL 15; pgoutput sends other transactions before 15")
			}
			replayGolden(t, dsn, brokers, dir, strings.HasPrefix(name, "snapshot-initial"))
		})
	}
}

// replayGolden replays one variant. With seeded, the corpus's seed rows are inserted before cdcd starts,
// so the initial snapshot reads them, and the changes run once the snapshot's last row is in Kafka.
func replayGolden(t *testing.T, adminDSN string, brokers []string, dir string, seeded bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	want := readCapture(t, filepath.Join(dir, "capture.jsonl"))
	// Before 14, pgoutput has no logical decoding messages (Debezium's connector, too, asks for them only
	// from 14 on): the goldens, written on 15, hold events the server never sends, the end marker among them.
	withMessages := testenv.PostgresVersion() >= 14
	if !withMessages {
		want = withoutMessages(want)
	}

	dbDSN := freshGoldenDatabase(t, ctx, adminDSN, dir)
	if seeded {
		psql(t, dbDSN, "../testdata/postgres/corpus/seed.sql")
	}
	sel := capture.Selection{Prefix: goldenPrefix}
	broker := emptyBroker(t, ctx, brokers, sel)

	tmp := t.TempDir()
	worker := goldenWorker(t, dir, brokers, tmp)
	conn := readProps(t, filepath.Join(dir, "connector.properties"))
	cfg, _ := pgx.ParseConfig(dbDSN)
	conn["database.port"] = fmt.Sprint(cfg.Port)
	workerPath, connPath := filepath.Join(tmp, "worker.properties"), filepath.Join(tmp, "connector.properties")
	writeProperties(t, workerPath, worker)
	writeProperties(t, connPath, conn)

	admin := connectPostgres(t, ctx, adminDSN)
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
		recs, err := broker.Read(ctx, sel)
		if err != nil {
			t.Fatal(err)
		}
		got = recs
		// The marker's topic may be read before records of other partitions are visible: wait for as many
		// records as the golden has too (fewer by the deadline is a difference the comparison shows).
		if (!withMessages || hasEndMarker(got)) && len(got) >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	p.stop()
	if withMessages && !hasEndMarker(got) {
		t.Fatalf("cdcd never delivered the end marker message; %d records read", len(got))
	}
	diffs := capture.Compare(want, got, capture.Replay)
	if conn["provide.transaction.metadata"] == "true" && withMessages {
		diffs = append(diffs, goldenOffsetDiffs(t, dir, worker["offset.storage.file.filename"], nil)...)
	}
	for i, d := range diffs {
		if i == 40 {
			t.Errorf("… and %d more differences", len(diffs)-40)
			break
		}
		t.Error(d.String())
	}
}

// goldenOffsetDiffs compares the offsets cdcd recorded in path with those Debezium's golden run stored
// (offsets.json), positions and times blanked (capture.Replay), leaving out the differences expected says
// are expected. The goldens that check offsets are those of transaction metadata, whose keys Debezium writes
// into the offset with each transaction's END record.
func goldenOffsetDiffs(t *testing.T, dir, path string, expected func(capture.Difference) bool) []capture.Difference {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "offsets.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want, err := capture.ReadOffsetsJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	store, err := offsets.OpenFile(path)
	if err != nil {
		t.Fatalf("cdcd's offsets: %v", err)
	}
	var got []capture.Record
	for i, e := range store.Entries() {
		got = append(got, capture.Record{Topic: capture.OffsetsTopic, Offset: int64(i), Key: e.Key, Value: e.Value})
	}
	var diffs []capture.Difference
	for _, d := range capture.Compare(want, got, capture.Replay) {
		if expected == nil || !expected(d) {
			diffs = append(diffs, d)
		}
	}
	return diffs
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
	dropGoldenSlot(t, ctx, admin)
	// The slot would retain WAL for good after the last replay: dropped when the test ends.
	t.Cleanup(func() {
		admin, err := pgx.Connect(context.Background(), adminDSN)
		if err != nil {
			t.Error(err)
			return
		}
		defer admin.Close(context.Background())
		dropGoldenSlot(t, context.Background(), admin)
	})
	for _, sql := range []string{
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
	execPostgres(t, ctx, dbDSN, "CREATE PUBLICATION "+goldenSlot+" FOR ALL TABLES")
	return dbDSN
}

// dropGoldenSlot drops the golden slot if it exists. The walsender of a previous run may outlive its
// client for a moment: it is ended, and the slot dropped once it is inactive.
func dropGoldenSlot(t *testing.T, ctx context.Context, admin *pgx.Conn) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var active bool
		err := admin.QueryRow(ctx, "SELECT active FROM pg_replication_slots WHERE slot_name = $1", goldenSlot).Scan(&active)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return
		case err != nil:
			t.Fatal(err)
		case !active:
			if _, err := admin.Exec(ctx, "SELECT pg_drop_replication_slot($1)", goldenSlot); err != nil {
				t.Fatal(err)
			}
			return
		case time.Now().After(deadline):
			t.Fatalf("the golden slot %s is still active after its walsender was ended", goldenSlot)
		}
		if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1 AND active", goldenSlot); err != nil {
			t.Fatal(err)
		}
	}
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

// goldenWorker is the worker.properties Debezium's golden run used in dir, pointed at this test bed:
// brokers, an offsets file in tmp, the REST API on a free port.
func goldenWorker(t *testing.T, dir string, brokers []string, tmp string) map[string]string {
	t.Helper()
	worker := readProps(t, filepath.Join(dir, "worker.properties"))
	worker["offset.storage.file.filename"] = filepath.Join(tmp, "offsets.dat")
	worker["bootstrap.servers"] = strings.Join(brokers, ",")
	worker["listeners"] = "http://127.0.0.1:0"
	return worker
}

func readProps(t *testing.T, path string) map[string]string {
	t.Helper()
	props, err := config.LoadPropertiesFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return config.PropertiesMap(props)
}

// withoutMessages drops the logical decoding message events ("op":"m") from recs.
func withoutMessages(recs []capture.Record) []capture.Record {
	var out []capture.Record
	for _, r := range recs {
		if !strings.Contains(string(r.Value), `"op":"m"`) {
			out = append(out, r)
		}
	}
	return out
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

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// The MariaDB goldens (testdata/mariadb, Debezium's MariaDbConnector) use these names.
const (
	mariadbGoldenPrefix  = "mdb1"
	mariadbGoldenHistory = "mdb1-schema-history"
)

// TestMariaDBGoldens replays the MariaDB golden corpus through cdcd — snapshot of the seed rows, then the
// streamed changes with DDL mid-stream — and compares every data and schema change record with what
// Debezium's MariaDbConnector wrote, after blanking times and binlog positions (capture.Replay).
func TestMariaDBGoldens(t *testing.T) {
	testenv.LockGoldens(t)
	root, err := testenv.ParseMySQLDSN(testenv.MariaDB(t))
	if err != nil {
		t.Fatal(err)
	}
	brokers := testenv.Kafka(t)
	variants, err := filepath.Glob("../testdata/mariadb/*/capture.jsonl")
	if err != nil || len(variants) == 0 {
		t.Fatalf("no goldens under testdata/mariadb (%v)", err)
	}
	for _, golden := range variants {
		dir := filepath.Dir(golden)
		t.Run(filepath.Base(dir), func(t *testing.T) { replayMariaDBGolden(t, root, brokers, dir) })
	}
}

func replayMariaDBGolden(t *testing.T, root testenv.MySQLDSN, brokers []string, dir string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	want := readCapture(t, filepath.Join(dir, "capture.jsonl"))

	mariadbSQL(t, root, "", "DROP DATABASE IF EXISTS cdcd_golden; CREATE DATABASE cdcd_golden CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
	mariadbFile(t, root, "cdcd_golden", "../testdata/mariadb/corpus/schema.sql")
	// A variant's own SQL, as goldens.sh runs it: extra-schema.sql before the seed rows, extra-changes.sql
	// after the snapshot, before the corpus changes.
	mariadbFileIfExists(t, root, "cdcd_golden", filepath.Join(dir, "extra-schema.sql"))
	mariadbFile(t, root, "cdcd_golden", "../testdata/mariadb/corpus/seed.sql")
	broker := emptyBroker(t, ctx, brokers, capture.Selection{Prefix: mariadbGoldenPrefix, Topics: []string{mariadbGoldenHistory}})
	sel := capture.Selection{Prefix: mariadbGoldenPrefix}

	tmp := t.TempDir()
	worker := goldenWorker(t, dir, brokers, tmp)
	conn := readProps(t, filepath.Join(dir, "connector.properties"))
	host, port, _ := strings.Cut(root.Addr, ":")
	conn["database.hostname"], conn["database.port"] = host, port
	conn["schema.history.internal.kafka.bootstrap.servers"] = strings.Join(brokers, ",")
	// Debezium recorded every database of the server, which then held only cdcd_golden; the shared test
	// server may hold other tests' databases now.
	conn["schema.history.internal.store.only.captured.databases.ddl"] = "true"
	workerPath, connPath := filepath.Join(tmp, "worker.properties"), filepath.Join(tmp, "connector.properties")
	writeProperties(t, workerPath, worker)
	writeProperties(t, connPath, conn)

	p := startCdcd(t, workerPath, connPath)
	waitFor(t, ctx, broker, sel, `"snapshot":"last"`)
	mariadbFileIfExists(t, root, "cdcd_golden", filepath.Join(dir, "extra-changes.sql"))
	mariadbFile(t, root, "cdcd_golden", "../testdata/mariadb/corpus/changes.sql")
	waitFor(t, ctx, broker, sel, goldenEnd)
	time.Sleep(time.Second) // the marker's transaction is one batch: nothing after it is expected
	got, err := broker.Read(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	history, err := broker.Read(ctx, capture.Selection{Topics: []string{mariadbGoldenHistory}})
	if err != nil {
		t.Fatal(err)
	}
	p.stop()
	compareHistory(t, readCapture(t, filepath.Join(dir, "schema-history.jsonl")), history)
	var diffs []capture.Difference
	for _, d := range capture.Compare(want, got, capture.Replay) {
		if !debezium361Difference(d) && !blockingPausePoint(d) {
			diffs = append(diffs, d)
		}
	}
	if conn["provide.transaction.metadata"] == "true" {
		diffs = append(diffs, goldenOffsetDiffs(t, dir, worker["offset.storage.file.filename"], debeziumEndOffset)...)
	}
	for i, d := range diffs {
		if i == 40 {
			t.Errorf("… and %d more differences", len(diffs)-40)
			break
		}
		t.Error(d.String())
	}
}

// mariadbSQL runs statements as root with the mariadb client, as goldens.sh does.
func mariadbSQL(t *testing.T, root testenv.MySQLDSN, db, sql string) {
	t.Helper()
	mariadbClient(t, root, db, strings.NewReader(sql))
}

func mariadbFile(t *testing.T, root testenv.MySQLDSN, db, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mariadbClient(t, root, db, f)
}

// mariadbFileIfExists runs a variant's optional SQL file when it has one.
func mariadbFileIfExists(t *testing.T, root testenv.MySQLDSN, db, path string) {
	t.Helper()
	if _, err := os.Stat(path); err == nil {
		mariadbFile(t, root, db, path)
	}
}

func mariadbClient(t *testing.T, root testenv.MySQLDSN, db string, stdin interface{ Read([]byte) (int, error) }) {
	t.Helper()
	host, port, _ := strings.Cut(root.Addr, ":")
	args := []string{"--no-defaults", "--protocol=TCP", "-h", host, "-P", port, "-u", root.User, "--default-character-set=utf8mb4"}
	if db != "" {
		args = append(args, db)
	}
	cmd := exec.Command("mariadb", args...)
	cmd.Env = append(os.Environ(), "MYSQL_PWD="+root.Password)
	cmd.Stdin = stdin
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mariadb %v: %v\n%s", args, err, out)
	}
}

// debezium361Difference reports the differences between the goldens (Debezium 3.5.0.Final's MariaDB
// connector, the newest the registry serves) and 3.6.1.Final, which cdcd follows; testdata/mariadb/README.md
// lists them: a zero TIMESTAMP read from the binlog is null in 3.6.1, or its schema default when NOT NULL.
func debezium361Difference(d capture.Difference) bool {
	return strings.HasPrefix(d.Where, mariadbGoldenPrefix+".cdcd_golden.zero_dates#") &&
		(strings.HasSuffix(d.Path, "after.zts") || strings.HasSuffix(d.Path, "after.zts_nn"))
}

// blockingPausePoint reports the difference the blocking-snapshot golden cannot avoid (testdata/mariadb/
// README.md): Debezium's blocking snapshot rows carry the row number of the event its streaming thread
// paused at, which depends on timing; cdcd pauses between transactions.
func blockingPausePoint(d capture.Difference) bool {
	return strings.HasPrefix(d.Where, mariadbGoldenPrefix+".cdcd_golden.blk_items#") && d.Path == "value.payload.source.row"
}

// debeziumEndOffset reports the one difference expected between the offset cdcd records at a commit and
// the one Debezium stores with the transaction's END record: Debezium writes END before it moves its
// position past the commit, so that offset is the one of the transaction's last event (the transaction's
// start and gtids, blanked, and the events to skip there, the difference); cdcd records offsets only at
// transaction boundaries. The transaction keys compare equal.
func debeziumEndOffset(d capture.Difference) bool {
	return d.Path == "value.event" && strings.HasPrefix(d.Detail, "only in A")
}

// historyPositions matches what differs between two databases in a schema history document: the
// processing time and the binlog position.
var historyPositions = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`("(?:ts_ms|ts_sec|pos|server_id|event|row)" : )\d+`), "${1}0"},
	{regexp.MustCompile(`("(?:file|gtids|transaction_id)" : )"[^"]*"`), `${1}""`},
}

// compareHistory compares the schema history topic byte for byte with the golden's, positions and times
// blanked: the same documents, in the same order, in Jackson's pretty-printed form.
func compareHistory(t *testing.T, want, got []capture.Record) {
	t.Helper()
	blank := func(b []byte) string {
		s := string(b)
		for _, p := range historyPositions {
			s = p.re.ReplaceAllString(s, p.with)
		}
		return s
	}
	if len(want) != len(got) {
		t.Errorf("schema history: %d records, want %d", len(got), len(want))
	}
	for i := range min(len(want), len(got)) {
		if w, g := blank(want[i].Value), blank(got[i].Value); w != g {
			t.Errorf("schema history record %d differs:\n got: %s\nwant: %s", i, g, w)
		}
	}
}

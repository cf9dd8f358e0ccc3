package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestBadConnectorConfigStopsStartup: cdcd checks every connector file before starting anything and exits 1
// naming each bad key and value, as connect-standalone refuses an invalid config.
func TestBadConnectorConfigStopsStartup(t *testing.T) {
	dsn := testenv.Postgres(t)
	brokers := testenv.Kafka(t)
	dir := t.TempDir()
	workerPath, connPath := filepath.Join(dir, "worker.properties"), filepath.Join(dir, "pg.properties")
	writeProperties(t, workerPath, workerProps(brokers, filepath.Join(dir, "offsets.dat")))
	conn := pgConnector(t, dsn, "bad", "bad", "")
	bad := map[string]string{
		"plugin.name":              "test_decoding",
		"database.port":            "fivefourfour",
		"slot.name":                "Not-Valid",
		"offset.mismatch.strategy": "whatever",
		"tombstones.on.delete":     "sometimes",
	}
	for k, v := range bad {
		conn[k] = v
	}
	writeProperties(t, connPath, conn)

	p := startCdcd(t, workerPath, connPath)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("cdcd kept running with a bad connector config; log:\n%s", tail(p.log.String(), 4000))
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	log := p.log.String()
	for k, v := range bad {
		if !strings.Contains(log, "Invalid value "+v+" for configuration "+k) {
			t.Errorf("the log does not name %s=%s", k, v)
		}
	}
	if !strings.Contains(log, "plugin.name=pgoutput") {
		t.Error("no advice to write plugin.name=pgoutput")
	}
	if strings.Contains(log, "panic") {
		t.Errorf("cdcd panicked:\n%s", log)
	}
	t.Logf("cdcd refused the config:\n%s", log)
}

// TestRefusalThatNeedsAnOperatorFailsTheConnector runs cdcd as a user without the REPLICATION attribute. The
// log must name the problem and the fix, and the connector must end FAILED (one ERROR line) as Debezium's
// does, not be restarted every minute while its status says RUNNING.
func TestRefusalThatNeedsAnOperatorFailsTheConnector(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db := connectPostgres(t, ctx, dsn)
	role := db.Config().Database[:min(len(db.Config().Database), 50)] + "_norepl"
	if _, err := db.Exec(ctx, "CREATE TABLE t (id int PRIMARY KEY); CREATE ROLE "+pgx.Identifier{role}.Sanitize()+" WITH LOGIN"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			t.Errorf("dropping role %s: %v", role, err)
			return
		}
		defer admin.Close(context.Background())
		if _, err := admin.Exec(context.Background(), "DROP ROLE "+pgx.Identifier{role}.Sanitize()); err != nil {
			t.Errorf("dropping role %s: %v", role, err)
		}
	})

	dir := t.TempDir()
	workerPath, connPath := filepath.Join(dir, "worker.properties"), filepath.Join(dir, "pg.properties")
	writeProperties(t, workerPath, workerProps(brokers, filepath.Join(dir, "offsets.dat")))
	conn := pgConnector(t, dsn, "norepl", testenv.NewTopicPrefix(t), "public.t")
	conn["database.user"] = role
	writeProperties(t, connPath, conn)
	p := startCdcd(t, workerPath, connPath)

	log := awaitFailure(t, p)
	if !strings.Contains(log, "lacks the REPLICATION attribute") || !strings.Contains(log, "WITH REPLICATION") {
		t.Errorf("the log does not name the missing REPLICATION attribute and the ALTER ROLE fix:\n%s", tail(log, 3000))
	}
	p.stop()
}

// awaitFailure waits for a connector's verdict and returns cdcd's log: the connector must end FAILED (one
// ERROR line), not be restarted while its status says RUNNING. A second attempt shows up after the first
// retry's 1 s backoff.
func awaitFailure(t *testing.T, p *cdcdProcess) string {
	t.Helper()
	const failedLine = "connector failed; fix the cause and restart it"
	const retryLine = "connector task failed; restarting"
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && !p.exited(); time.Sleep(200 * time.Millisecond) {
		log := p.log.String()
		if len(logLines(log, failedLine)) > 0 || len(logLines(log, retryLine)) > 1 {
			break
		}
	}
	log := p.log.String()
	if retries := logLines(log, retryLine); len(retries) > 0 {
		t.Errorf("the connector was restarted %d times instead of failing:\n%s", len(retries), strings.Join(retries, "\n"))
	}
	if len(logLines(log, failedLine)) != 1 {
		t.Errorf("the connector did not end FAILED:\n%s", tail(log, 3000))
	}
	return log
}

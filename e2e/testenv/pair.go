package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PairVersionEnv picks the major version of the primary-and-standby pair (e2e/pgversions.sh pair-*): 18
// by default, the newest, which e2e/services.sh installs; 16 and 17 work too (failover slots need 17).
const PairVersionEnv = "CDCD_PG_PAIR_VERSION"

// PostgresPair is a primary and its physical streaming standby of one major version, made afresh for one
// test: the standby streams over the physical slot cdcd_standby with hot_standby_feedback, and from 17 on
// synchronizes failover slots (sync_replication_slots), which the primary waits for
// (synchronized_standby_slots).
type PostgresPair struct {
	Major            int
	Primary, Standby string // host:port
}

// NewPostgresPair starts a fresh pair (any former one is wiped) and stops it when t ends. It skips t as
// the package doc says and when the pair's version is older than minMajor; it runs the script as root.
func NewPostgresPair(t testing.TB, minMajor int) PostgresPair {
	t.Helper()
	if !enabled() {
		t.Skipf("needs a PostgreSQL primary and standby: set %s=1 (e2e/pgversions.sh pair-start runs them)", EnableEnv)
	}
	major := 18
	if v, err := strconv.Atoi(os.Getenv(PairVersionEnv)); err == nil && v != 0 {
		major = v
	}
	if major < minMajor {
		t.Skipf("needs a pair of PostgreSQL %d or newer, and %s=%d", minMajor, PairVersionEnv, major)
	}
	p := PostgresPair{
		Major:   major,
		Primary: serviceAddr(fmt.Sprintf("CDCD_PG%d_PRIMARY_PORT", major), fmt.Sprintf("556%02d", major)),
		Standby: serviceAddr(fmt.Sprintf("CDCD_PG%d_STANDBY_PORT", major), fmt.Sprintf("557%02d", major)),
	}
	p.script(t, "pair-start")
	t.Cleanup(func() { p.script(t, "pair-stop") })
	return p
}

// script runs e2e/pgversions.sh ACTION MAJOR.
func (p PostgresPair) script(t testing.TB, action string) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.Command(filepath.Join(filepath.Dir(file), "..", "pgversions.sh"), action, strconv.Itoa(p.Major))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("testenv: e2e/pgversions.sh %s %d: %v\n%s", action, p.Major, err, out)
	}
}

// Promote crashes the primary (immediate shutdown) and promotes the standby; it returns once the new
// primary takes logins.
func (p PostgresPair) Promote(t testing.TB) { p.script(t, "pair-promote") }

// PrimaryDSN and StandbyDSN are the superuser's connection strings for database db.
func (p PostgresPair) PrimaryDSN(db string) string { return pairDSN(p.Primary, db) }
func (p PostgresPair) StandbyDSN(db string) string { return pairDSN(p.Standby, db) }

func pairDSN(addr, db string) string {
	return fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable", addr, db)
}

// NewDB creates a database of t's on the primary, runs setup there, and returns the database's name once
// the standby has replayed all of it.
func (p PostgresPair) NewDB(t testing.TB, setup ...string) string {
	t.Helper()
	name := ownedName(t, postgresMaxIdentifier)
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	Exec(t, ctx, p.PrimaryDSN("postgres"), "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	Exec(t, ctx, p.PrimaryDSN(name), setup...)
	p.WaitReplayed(t, ctx)
	return name
}

// WaitReplayed returns once the standby has replayed the primary's WAL as of now: all that was inserted,
// which includes commits not yet flushed (the test bed commits with synchronous_commit = off).
func (p PostgresPair) WaitReplayed(t testing.TB, ctx context.Context) {
	t.Helper()
	var target string
	if err := queryRow(ctx, p.PrimaryDSN("postgres"), "SELECT pg_current_wal_insert_lsn()::text", &target); err != nil {
		t.Fatalf("testenv: reading the primary's WAL position: %v", err)
	}
	for {
		var replayed bool
		err := queryRow(ctx, p.StandbyDSN("postgres"), "SELECT pg_last_wal_replay_lsn() >= '"+target+"'::pg_lsn", &replayed)
		if err == nil && replayed {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("testenv: the standby did not replay the primary's WAL up to %s: %v", target, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Exec runs each statement on its own, on one connection to dsn, failing t at the first error.
func Exec(t testing.TB, ctx context.Context, dsn string, stmts ...string) {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("testenv: connecting to %s: %v", dsn, err)
	}
	defer conn.Close(context.Background())
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("testenv: %s: %v", s, err)
		}
	}
}

func queryRow(ctx context.Context, dsn, query string, dest ...any) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return conn.QueryRow(ctx, query).Scan(dest...)
}

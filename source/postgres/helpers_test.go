package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/postgres"
)

// readerConfig is a connector config for database dsn with a slot and publication named after the
// database (unique per test), changed by overrides ("" deletes a key).
func readerConfig(t *testing.T, dsn string, overrides map[string]string) *postgres.Config {
	t.Helper()
	pc, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	props := map[string]string{
		"database.hostname":           pc.Host,
		"database.port":               strconv.Itoa(int(pc.Port)),
		"database.user":               pc.User,
		"database.dbname":             pc.Database,
		"database.sslmode":            "disable",
		"topic.prefix":                "bad",
		"plugin.name":                 "pgoutput",
		"slot.name":                   pc.Database,
		"publication.name":            pc.Database,
		"publication.autocreate.mode": "filtered",
		"status.update.interval.ms":   "200",
		"slot.max.retries":            "0",
	}
	maps.Copy(props, overrides)
	maps.DeleteFunc(props, func(_, v string) bool { return v == "" })
	cfg, err := postgres.ParseConfig("bad", props, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// runReader runs a reader in the background and returns its batches, its log and a function that stops it
// and returns Run's error.
func runReader(t *testing.T, cfg *postgres.Config, start *postgres.Offset) (<-chan source.Batch, *testenv.LogBuffer, func() error) {
	t.Helper()
	return startReader(t, cfg, start, false)
}

// startReader is runReader; with release it releases each batch's position as it hands the batch over,
// as the pipeline does once Kafka acknowledged the batch and its offset is durable.
func startReader(t *testing.T, cfg *postgres.Config, start *postgres.Offset, release bool) (<-chan source.Batch, *testenv.LogBuffer, func() error) {
	t.Helper()
	logs := &testenv.LogBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan source.Batch, 16)
	done := make(chan error, 1)
	r := postgres.NewReader(cfg, start, slog.New(slog.NewTextHandler(logs, nil)))
	read := out
	if release {
		read = make(chan source.Batch)
		go func() {
			for {
				select {
				case b := <-read:
					if b.Position != nil {
						r.Release(b.Position)
					}
					select {
					case out <- b:
					case <-ctx.Done():
						return
					}
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() { done <- r.Run(ctx, read) }()
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(30 * time.Second):
				runErr = fmt.Errorf("Run did not return within 30s of cancellation; log:\n%s", logs.String())
			}
		})
		return runErr
	}
	t.Cleanup(func() { stop() })
	return out, logs, stop
}

// refusal runs a reader that must refuse to start: Run must return an error on its own (not by
// cancellation) within a minute, and the error must contain every one of want.
func refusal(t *testing.T, cfg *postgres.Config, start *postgres.Offset, want ...string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out := make(chan source.Batch, 16)
	err := postgres.NewReader(cfg, start, slog.New(slog.DiscardHandler)).Run(ctx, out)
	if err == nil || ctx.Err() != nil {
		t.Fatalf("Run did not refuse (err %v, batches %d)", err, len(out))
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
	t.Logf("refused with: %v", err)
	return err
}

// wantFatal checks whether err tells the worker not to restart the task (connect.isFatal's test).
func wantFatal(t *testing.T, err error, want bool) {
	t.Helper()
	var f interface{ Fatal() bool }
	if got := errors.As(err, &f) && f.Fatal(); got != want {
		t.Errorf("fatal = %v, want %v (a fatal error fails the connector; any other error restarts it with backoff): %v", got, want, err)
	}
}

// execSQL runs statements on dsn as the superuser.
func execSQL(t *testing.T, dsn string, stmts ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// queryValue returns the single value a one-row query gives on dsn, on a connection of its own.
func queryValue[T any](t *testing.T, dsn, query string, args ...any) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var v T
	if err := conn.QueryRow(ctx, query, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return v
}

// queryLSN returns a pg_lsn-valued query's result on dsn.
func queryLSN(t *testing.T, dsn, query string, args ...any) postgres.LSN {
	t.Helper()
	lsn, err := pglogrepl.ParseLSN(queryValue[string](t, dsn, query, args...))
	if err != nil {
		t.Fatal(err)
	}
	return lsn
}

// withUser returns dsn connecting as user.
func withUser(t *testing.T, dsn, user string) string {
	t.Helper()
	pc, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", user, net.JoinHostPort(pc.Host, strconv.Itoa(int(pc.Port))), pc.Database)
}

// createRole creates a login role named after dsn's database plus suffix, with the given attributes, and
// drops it (and its grants in dsn's database) when t ends.
func createRole(t *testing.T, dsn, suffix, attributes string) string {
	t.Helper()
	pc, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	name := pc.Database[:min(len(pc.Database), 50)] + "_" + suffix
	execSQL(t, dsn, "CREATE ROLE "+pgx.Identifier{name}.Sanitize()+" WITH LOGIN "+attributes)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("dropping role %s: %v", name, err)
			return
		}
		defer conn.Close(context.Background())
		id := pgx.Identifier{name}.Sanitize()
		// The role's walsender (if any) must be gone before its slot can go with the database.
		conn.Exec(ctx, "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE usename = $1", name)
		if _, err := conn.Exec(ctx, "DROP OWNED BY "+id+"; DROP ROLE "+id); err != nil {
			t.Errorf("dropping role %s: %v", name, err)
		}
	})
	return name
}

// throwawayPostgres starts a PostgreSQL 15 cluster of t's own with the given extra settings (postgresql.conf
// lines), as user postgres on a free port, and stops and removes it when t ends. It returns the superuser's
// DSN for database postgres.
func throwawayPostgres(t *testing.T, settings ...string) string {
	t.Helper()
	const bin = "/usr/lib/postgresql/15/bin"
	if _, err := os.Stat(filepath.Join(bin, "initdb")); err != nil {
		t.Skipf("PostgreSQL 15 binaries not installed: %v", err)
	}
	pgUser, err := user.Lookup("postgres")
	if err != nil {
		t.Skipf("no postgres user: %v", err)
	}
	uid, _ := strconv.Atoi(pgUser.Uid)
	gid, _ := strconv.Atoi(pgUser.Gid)
	dir, err := os.MkdirTemp("", "cdcd-throwaway-pg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	asPostgres := func(args ...string) {
		t.Helper()
		out, err := exec.Command("runuser", append([]string{"-u", "postgres", "--"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	asPostgres(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "--no-sync")
	port := freePort(t)
	conf := append([]string{
		"listen_addresses = '127.0.0.1'", "port = " + strconv.Itoa(port), "unix_socket_directories = '" + dir + "'",
		"fsync = off", "full_page_writes = off", "synchronous_commit = off",
	}, settings...)
	f, err := os.OpenFile(filepath.Join(data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, strings.Join(conf, "\n"))
	f.Close()
	asPostgres(filepath.Join(bin, "pg_ctl"), "-D", data, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "start")
	t.Cleanup(func() {
		out, err := exec.Command("runuser", "-u", "postgres", "--", filepath.Join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop").CombinedOutput()
		if err != nil {
			t.Errorf("stopping the throwaway cluster: %v\n%s", err, out)
		}
	})
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
}

// freePort returns a TCP port on 127.0.0.1 that nothing listens on (now).
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

package testenv

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// postgresMaxIdentifier is PostgreSQL's NAMEDATALEN-1: longer names are silently truncated.
const postgresMaxIdentifier = 63

// PostgresVersionEnv picks the PostgreSQL the tests run against by its major version. Unset, or 15, it is
// the test bed's PostgreSQL 15 (e2e/services.sh's postgres, on CDCD_PG_PORT, 55432 by default); 13, 14, 16,
// 17 or 18 is the cluster e2e/pgversions.sh runs for that version, on CDCD_PG<N>_PORT (554<N> by default:
// 55413 … 55418). `make test` runs the PostgreSQL suite on 13 and 18 this way, `make matrix` on all.
const PostgresVersionEnv = "CDCD_PG_VERSION"

// defaultPostgresVersion is the test bed's own version.
const defaultPostgresVersion = 15

// PostgresVersion is the major version the tests run against (PostgresVersionEnv), for a test whose
// expectations depend on it: logical decoding messages reach the stream from 14 on, for one.
func PostgresVersion() int {
	v, err := strconv.Atoi(os.Getenv(PostgresVersionEnv))
	if err != nil || v == 0 {
		return defaultPostgresVersion
	}
	return v
}

// postgresService names the service that runs the chosen version, as the scripts name it.
func postgresService() string {
	if v := PostgresVersion(); v != defaultPostgresVersion {
		return fmt.Sprintf("postgres%d", v)
	}
	return "postgres"
}

// postgresAddr is host:port of the chosen version's server.
func postgresAddr() string {
	if v := PostgresVersion(); v != defaultPostgresVersion {
		return serviceAddr(fmt.Sprintf("CDCD_PG%d_PORT", v), fmt.Sprintf("554%02d", v))
	}
	return serviceAddr("CDCD_PG_PORT", "55432")
}

// postgresDSN is the superuser's connection string for database db (trust auth, no password).
// Append "&replication=database" for a logical replication connection.
func postgresDSN(db string) string {
	return fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable", postgresAddr(), db)
}

// Postgres returns the connection string of the superuser on database `postgres` of the
// test-bed PostgreSQL (wal_level=logical): 15, or the version PostgresVersionEnv names. It skips or
// fails t as the package doc says, except that another version than 15 which does not answer skips t:
// the matrix's servers are started on purpose (e2e/pgversions.sh), not by every `make test`. A server
// of another major version than asked for fails t.
func Postgres(t testing.TB) string {
	t.Helper()
	dsn := postgresDSN("postgres")
	want := PostgresVersion()
	var got int
	ping := func(ctx context.Context) error {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		return conn.QueryRow(ctx, "SELECT current_setting('server_version_num')::int / 10000").Scan(&got)
	}
	if want != defaultPostgresVersion && enabled() {
		ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
		defer cancel()
		if err := ping(ctx); err != nil {
			t.Skipf("%s=%d but PostgreSQL %d does not answer at %s (start it with `e2e/pgversions.sh start %d`): %v",
				PostgresVersionEnv, want, want, postgresAddr(), want, err)
		}
	} else {
		requireService(t, postgresService(), ping)
	}
	if got != want {
		t.Fatalf("testenv: the server at %s is PostgreSQL %d, not %d (%s)", postgresAddr(), got, want, PostgresVersionEnv)
	}
	return dsn
}

// NewPostgresDB creates a database of its own for t and returns its superuser connection
// string. When t ends, the replication slots of that database are dropped (their walsenders
// terminated first) and then the database itself, whoever is still connected.
func NewPostgresDB(t testing.TB) string {
	t.Helper()
	admin := Postgres(t)
	name := ownedName(t, postgresMaxIdentifier)
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("testenv: connecting to postgres: %v", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("testenv: creating database %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := dropPostgresDB(admin, name); err != nil {
			t.Errorf("testenv: %v", err)
		}
	})
	return postgresDSN(name)
}

// dropPostgresDB removes database name and everything that would keep it alive. The order
// matters: DROP DATABASE refuses while a logical slot of the database exists, and a slot cannot
// be dropped while a walsender holds it.
func dropPostgresDB(adminDSN, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		return fmt.Errorf("dropping database %s: %w", name, err)
	}
	defer conn.Close(context.Background())
	// The timeout argument makes pg_terminate_backend wait until the walsender has exited and so
	// released its slot. PostgreSQL 13's pg_terminate_backend has none: there the slots are polled
	// until their walsenders are gone.
	terminate := `SELECT pg_terminate_backend(active_pid, 10000) FROM pg_replication_slots
		WHERE database = $1 AND active_pid IS NOT NULL`
	if PostgresVersion() < 14 {
		terminate = `SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots
			WHERE database = $1 AND active_pid IS NOT NULL`
	}
	if _, err := conn.Exec(ctx, terminate, name); err != nil {
		return fmt.Errorf("terminating the walsenders of database %s: %w", name, err)
	}
	for {
		var active bool
		err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_replication_slots WHERE database = $1 AND active)", name).Scan(&active)
		if err != nil {
			return fmt.Errorf("waiting for the walsenders of database %s: %w", name, err)
		}
		if !active {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	const dropSlots = `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1`
	if _, err := conn.Exec(ctx, dropSlots, name); err != nil {
		return fmt.Errorf("dropping the replication slots of database %s: %w", name, err)
	}
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("dropping database %s: %w", name, err)
	}
	return nil
}

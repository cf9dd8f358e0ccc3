package testenv

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
)

// postgresMaxIdentifier is PostgreSQL's NAMEDATALEN-1: longer names are silently truncated.
const postgresMaxIdentifier = 63

// postgresDSN is the superuser's connection string for database db (trust auth, no password).
// Append "&replication=database" for a logical replication connection.
func postgresDSN(db string) string {
	return fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable", serviceAddr("CDCD_PG_PORT", "55432"), db)
}

// Postgres returns the connection string of the superuser on database `postgres` of the
// test-bed PostgreSQL 15 (wal_level=logical). It skips or fails t as the package doc says.
func Postgres(t testing.TB) string {
	t.Helper()
	dsn := postgresDSN("postgres")
	requireService(t, "postgres", func(ctx context.Context) error {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		return conn.Ping(ctx)
	})
	return dsn
}

// NewPostgresDB creates a database of its own for t and returns its superuser connection
// string. When t ends, the replication slots of that database are dropped (their walsenders
// terminated first) and then the database itself, whoever is still connected.
func NewPostgresDB(t testing.TB) string {
	t.Helper()
	admin := Postgres(t)
	name := uniqueName(t.Name(), postgresMaxIdentifier)
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
	// released its slot.
	const terminate = `SELECT pg_terminate_backend(active_pid, 10000) FROM pg_replication_slots
		WHERE database = $1 AND active_pid IS NOT NULL`
	if _, err := conn.Exec(ctx, terminate, name); err != nil {
		return fmt.Errorf("terminating the walsenders of database %s: %w", name, err)
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

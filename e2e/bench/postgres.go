package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgServer is where the benchmark's PostgreSQL listens (superuser, trust auth).
type pgServer struct {
	Host string
	Port int
	User string
}

func (s pgServer) dsn(db string) string {
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", s.User, s.Host, s.Port, db)
}

// pgDB is the benchmark's own PostgreSQL database, created fresh and dropped at the end with its slots.
type pgDB struct {
	server      pgServer
	name        string
	conn        *pgx.Conn
	recvlogical string // pg_recvlogical binary, the ceiling
}

func openPostgres(ctx context.Context, server pgServer, name, recvlogical string) (*pgDB, error) {
	db := &pgDB{server: server, name: name, recvlogical: recvlogical}
	if err := db.close(ctx); err != nil { // left over from an interrupted run
		return nil, err
	}
	if err := db.admin(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return nil, err
	}
	// The writer's commits are durable (the test server's default is synchronous_commit=off): then a commit
	// wakes the walsenders at once, where an asynchronous one waits for the WAL writer (wal_writer_delay,
	// 200 ms), which would hide each system's own latency behind the server's.
	var err error
	if db.conn, err = pgx.Connect(ctx, server.dsn(name)+"&synchronous_commit=on"); err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", name, err)
	}
	return db, nil
}

func (db *pgDB) ceilingName() string { return "pg_recvlogical" }

// sourceTsIsCommitMs: pgoutput's commit timestamp has microseconds.
func (db *pgDB) sourceTsIsCommitMs() bool { return true }

func (db *pgDB) version(ctx context.Context) string {
	var v string
	if err := db.conn.QueryRow(ctx, "SHOW server_version").Scan(&v); err != nil {
		return "unknown"
	}
	return v
}

func (db *pgDB) admin(ctx context.Context, sql string, args ...any) error {
	conn, err := pgx.Connect(ctx, db.server.dsn("postgres"))
	if err != nil {
		return fmt.Errorf("connecting to postgres: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}

// close drops the database and its slots; a slot cannot be dropped while a walsender holds it, and
// the database not while it has slots.
func (db *pgDB) close(ctx context.Context) error {
	if db.conn != nil {
		db.conn.Close(ctx)
		db.conn = nil
	}
	return errors.Join(
		db.admin(ctx, `SELECT pg_terminate_backend(active_pid, 10000) FROM pg_replication_slots WHERE database = $1 AND active_pid IS NOT NULL`, db.name),
		db.admin(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1`, db.name),
		db.admin(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{db.name}.Sanitize()+" WITH (FORCE)"))
}

func (db *pgDB) exec(ctx context.Context, sql string, args ...any) error {
	if _, err := db.conn.Exec(ctx, sql, args...); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}

// slotOf is c's replication slot, also the name of its publication.
func slotOf(c *capture) string { return "cdcdbench_" + c.id }

// prepare creates the benchmark table: about 1 KB per row.
func (db *pgDB) prepare(ctx context.Context, c *capture) error {
	return db.exec(ctx, "CREATE TABLE "+c.table+" (id bigserial PRIMARY KEY, k int, payload text, updated_at timestamptz)")
}

func (db *pgDB) dataTopic(prefix, table string) string { return prefix + ".public." + table }

func (db *pgDB) connectorConfig(c *capture, tuning map[string]string) map[string]string {
	cfg := map[string]string{
		"connector.class":             "io.debezium.connector.postgresql.PostgresConnector",
		"plugin.name":                 "pgoutput",
		"database.hostname":           db.server.Host,
		"database.port":               strconv.Itoa(db.server.Port),
		"database.user":               db.server.User,
		"database.password":           "",
		"database.dbname":             db.name,
		"topic.prefix":                c.prefix,
		"slot.name":                   slotOf(c),
		"publication.name":            slotOf(c),
		"publication.autocreate.mode": "filtered",
		"table.include.list":          "public." + c.table,
		"snapshot.mode":               "no_data",
	}
	maps.Copy(cfg, tuning)
	return cfg
}

// waitStreaming waits for the slot to be streamed: changes committed from then on are in it.
func (db *pgDB) waitStreaming(ctx context.Context, c *capture) error {
	return db.waitSlot(ctx, slotOf(c), true, 2*time.Minute)
}

func (db *pgDB) waitReleased(ctx context.Context, c *capture) error {
	return db.waitSlot(ctx, slotOf(c), false, 2*time.Minute)
}

func (db *pgDB) release(ctx context.Context, c *capture) error {
	slot := slotOf(c)
	return errors.Join(db.waitSlot(ctx, slot, false, time.Minute), db.dropSlot(ctx, slot),
		db.exec(ctx, "DROP PUBLICATION IF EXISTS "+slot), db.exec(ctx, "DROP TABLE IF EXISTS "+c.table))
}

// waitSlot waits until slot exists and a walsender streams it (active), or until it is gone from
// every walsender (active=false) when active is false.
func (db *pgDB) waitSlot(ctx context.Context, slot string, active bool, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var isActive bool
		err := db.conn.QueryRow(ctx, "SELECT active FROM pg_replication_slots WHERE slot_name = $1", slot).Scan(&isActive)
		switch {
		case err == nil && isActive == active:
			return nil
		case err != nil && !errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("slot %s: %w", slot, err)
		case time.Now().After(deadline):
			return fmt.Errorf("slot %s not active=%v after %v", slot, active, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (db *pgDB) createSlot(ctx context.Context, slot string) error {
	return db.exec(ctx, "SELECT pg_create_logical_replication_slot($1, 'pgoutput')", slot)
}

func (db *pgDB) dropSlot(ctx context.Context, slot string) error {
	return db.exec(ctx, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1", slot)
}

func (db *pgDB) currentLSN(ctx context.Context) (string, error) {
	var lsn string
	if err := db.conn.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&lsn); err != nil {
		return "", fmt.Errorf("current wal lsn: %w", err)
	}
	return lsn, nil
}

func (db *pgDB) populate(ctx context.Context, table string, n int) ([]int64, error) {
	rows, err := db.conn.Query(ctx, "INSERT INTO "+table+" (k, payload, updated_at) SELECT 0, repeat(md5(g::text), 32), now() FROM generate_series(1, $1) g RETURNING id", n)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

func (db *pgDB) apply(ctx context.Context, table string, p plannedTx) ([]change, error) {
	tx, err := db.conn.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(context.Background())
	var inserted []change
	if len(p.insertVersions) > 0 {
		rows, err := tx.Query(ctx, "INSERT INTO "+table+" (k, payload, updated_at) SELECT k, repeat(md5(k::text), 32), now() FROM unnest($1::int[]) AS k RETURNING id, k", p.insertVersions)
		if err != nil {
			return nil, fmt.Errorf("insert: %w", err)
		}
		inserted, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (change, error) {
			c := change{Op: 'c'}
			return c, r.Scan(&c.ID, &c.K)
		})
		if err != nil {
			return nil, fmt.Errorf("insert: %w", err)
		}
	}
	if len(p.updateIDs) > 0 {
		if _, err := tx.Exec(ctx, "UPDATE "+table+" t SET k = u.k, updated_at = now() FROM unnest($1::bigint[], $2::int[]) AS u(id, k) WHERE t.id = u.id", p.updateIDs, p.updateVersions); err != nil {
			return nil, fmt.Errorf("update: %w", err)
		}
	}
	if len(p.deleteIDs) > 0 {
		if _, err := tx.Exec(ctx, "DELETE FROM "+table+" WHERE id = ANY($1::bigint[])", p.deleteIDs); err != nil {
			return nil, fmt.Errorf("delete: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	return inserted, nil
}

// markCeiling creates a slot beside c's before the backlog, for pg_recvlogical to decode it later.
func (db *pgDB) markCeiling(ctx context.Context, c *capture) (ceilingReader, error) {
	r := &recvlogicalCeiling{db: db, slot: slotOf(c) + "_ceiling", publication: slotOf(c)}
	if err := db.createSlot(ctx, r.slot); err != nil {
		return nil, err
	}
	return r, nil
}

// recvlogicalCeiling is pg_recvlogical reading a backlog from a slot of its own (pgoutput,
// proto_version 1, output discarded). The publication is the connector's; it must still exist when
// pg_recvlogical decodes.
type recvlogicalCeiling struct {
	db          *pgDB
	slot        string
	publication string
	endLSN      string
}

func (r *recvlogicalCeiling) markEnd(ctx context.Context) (err error) {
	r.endLSN, err = r.db.currentLSN(ctx)
	return err
}

func (r *recvlogicalCeiling) read(ctx context.Context) (time.Duration, error) {
	s := r.db.server
	cmd := exec.CommandContext(ctx, r.db.recvlogical,
		"-h", s.Host, "-p", strconv.Itoa(s.Port), "-U", s.User, "-d", r.db.name,
		"--slot", r.slot, "--start", "--endpos", r.endLSN, "--no-loop",
		"-o", "proto_version=1", "-o", "publication_names="+r.publication, "-f", "/dev/null")
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("pg_recvlogical: %w", err)
	}
	return time.Since(start), nil
}

func (r *recvlogicalCeiling) close(ctx context.Context) error { return r.db.dropSlot(ctx, r.slot) }

package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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

// database is the benchmark's own database, created fresh and dropped at the end with its slots.
type database struct {
	server pgServer
	name   string
	conn   *pgx.Conn
}

func openDatabase(ctx context.Context, server pgServer, name string) (*database, error) {
	db := &database{server: server, name: name}
	if err := db.drop(ctx); err != nil { // left over from an interrupted run
		return nil, err
	}
	if err := db.admin(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return nil, err
	}
	var err error
	if db.conn, err = pgx.Connect(ctx, server.dsn(name)); err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", name, err)
	}
	return db, nil
}

func (db *database) admin(ctx context.Context, sql string, args ...any) error {
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

// drop removes the database and its slots; a slot cannot be dropped while a walsender holds it, and
// the database not while it has slots.
func (db *database) drop(ctx context.Context) error {
	if db.conn != nil {
		db.conn.Close(ctx)
		db.conn = nil
	}
	return errors.Join(
		db.admin(ctx, `SELECT pg_terminate_backend(active_pid, 10000) FROM pg_replication_slots WHERE database = $1 AND active_pid IS NOT NULL`, db.name),
		db.admin(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1`, db.name),
		db.admin(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{db.name}.Sanitize()+" WITH (FORCE)"))
}

func (db *database) exec(ctx context.Context, sql string, args ...any) error {
	if _, err := db.conn.Exec(ctx, sql, args...); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}

// createTable creates the benchmark table: about 1 KB per row.
func (db *database) createTable(ctx context.Context, table string) error {
	return db.exec(ctx, "CREATE TABLE "+table+" (id bigserial PRIMARY KEY, k int, payload text, updated_at timestamptz)")
}

func (db *database) dropTable(ctx context.Context, table string) error {
	return db.exec(ctx, "DROP TABLE IF EXISTS "+table)
}

// waitSlotActive waits until slot exists and a walsender streams it (active), or until it is gone from
// every walsender (active=false) when active is false.
func (db *database) waitSlot(ctx context.Context, slot string, active bool, timeout time.Duration) error {
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

func (db *database) createSlot(ctx context.Context, slot string) error {
	return db.exec(ctx, "SELECT pg_create_logical_replication_slot($1, 'pgoutput')", slot)
}

func (db *database) dropSlot(ctx context.Context, slot string) error {
	return db.exec(ctx, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1", slot)
}

func (db *database) currentLSN(ctx context.Context) (string, error) {
	var lsn string
	if err := db.conn.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&lsn); err != nil {
		return "", fmt.Errorf("current wal lsn: %w", err)
	}
	return lsn, nil
}

// workload is the mix of changes the writer commits.
type workload struct {
	Name      string
	InsertPct int // the rest of each transaction is split between updates and deletes
	UpdatePct int
}

var (
	insertWorkload = workload{Name: "insert", InsertPct: 100}
	mixWorkload    = workload{Name: "mix", InsertPct: 50, UpdatePct: 45}
)

// writer commits workloads to one table and remembers every committed change, so Kafka can be checked
// against it. Versions (column k) rise with every change in commit order.
type writer struct {
	conn    *pgx.Conn
	table   string
	version int32
	live    []int64 // ids that exist, for updates and deletes to pick from
	rng     *rand.Rand
}

func newWriter(conn *pgx.Conn, table string) *writer {
	return &writer{conn: conn, table: table, rng: rand.New(rand.NewPCG(1, 2))}
}

// populate inserts n rows that exist before capture starts (version 0), for updates and deletes to hit.
func (w *writer) populate(ctx context.Context, n int) error {
	rows, err := w.conn.Query(ctx, "INSERT INTO "+w.table+" (k, payload, updated_at) SELECT 0, repeat(md5(g::text), 32), now() FROM generate_series(1, $1) g RETURNING id", n)
	if err != nil {
		return fmt.Errorf("populating %s: %w", w.table, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return fmt.Errorf("populating %s: %w", w.table, err)
	}
	w.live = append(w.live, ids...)
	return nil
}

// commit writes one transaction of size changes in the workload's proportions and returns them.
func (w *writer) commit(ctx context.Context, wl workload, size int) ([]change, error) {
	inserts := size * wl.InsertPct / 100
	updates := min(size*wl.UpdatePct/100, len(w.live))
	deletes := min(size-inserts-updates, len(w.live)-updates)
	if inserts+updates+deletes == 0 {
		return nil, nil
	}
	// Distinct existing rows for the updates and deletes: each key changes at most once per transaction.
	picked := w.pickLive(updates + deletes)
	out := make([]change, 0, inserts+updates+deletes)
	insertVersions := make([]int32, inserts)
	for i := range insertVersions {
		insertVersions[i] = w.nextVersion()
	}
	updateIDs, updateVersions := picked[:updates], make([]int32, updates)
	for i := range updateVersions {
		updateVersions[i] = w.nextVersion()
		out = append(out, change{ID: updateIDs[i], K: updateVersions[i], Op: 'u'})
	}
	deleteIDs := picked[updates:]
	for _, id := range deleteIDs {
		out = append(out, change{ID: id, Op: 'd'})
	}

	tx, err := w.conn.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(context.Background())
	if inserts > 0 {
		rows, err := tx.Query(ctx, "INSERT INTO "+w.table+" (k, payload, updated_at) SELECT k, repeat(md5(k::text), 32), now() FROM unnest($1::int[]) AS k RETURNING id, k", insertVersions)
		if err != nil {
			return nil, fmt.Errorf("insert: %w", err)
		}
		inserted, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (change, error) {
			c := change{Op: 'c'}
			return c, r.Scan(&c.ID, &c.K)
		})
		if err != nil {
			return nil, fmt.Errorf("insert: %w", err)
		}
		out = append(out, inserted...)
	}
	if updates > 0 {
		if _, err := tx.Exec(ctx, "UPDATE "+w.table+" t SET k = u.k, updated_at = now() FROM unnest($1::bigint[], $2::int[]) AS u(id, k) WHERE t.id = u.id", updateIDs, updateVersions); err != nil {
			return nil, fmt.Errorf("update: %w", err)
		}
	}
	if deletes > 0 {
		if _, err := tx.Exec(ctx, "DELETE FROM "+w.table+" WHERE id = ANY($1::bigint[])", deleteIDs); err != nil {
			return nil, fmt.Errorf("delete: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	for _, c := range out {
		if c.Op == 'c' {
			w.live = append(w.live, c.ID)
		}
	}
	w.forget(deleteIDs)
	return out, nil
}

func (w *writer) nextVersion() int32 {
	w.version++
	return w.version
}

// pickLive returns n distinct live ids (n <= len(live)) by a partial Fisher-Yates shuffle.
func (w *writer) pickLive(n int) []int64 {
	for i := range n {
		j := i + w.rng.IntN(len(w.live)-i)
		w.live[i], w.live[j] = w.live[j], w.live[i]
	}
	return append([]int64(nil), w.live[:n]...)
}

// forget drops deleted ids from live; pickLive moved them to the front, so they are its first ids.
func (w *writer) forget(deleted []int64) {
	gone := make(map[int64]bool, len(deleted))
	for _, id := range deleted {
		gone[id] = true
	}
	kept := w.live[:0]
	for _, id := range w.live {
		if !gone[id] {
			kept = append(kept, id)
		}
	}
	w.live = kept
}

// backlog commits n changes in transactions of txSize.
func (w *writer) backlog(ctx context.Context, wl workload, n, txSize int) ([]change, error) {
	all := make([]change, 0, n)
	for len(all) < n {
		cs, err := w.commit(ctx, wl, min(txSize, n-len(all)))
		if err != nil {
			return nil, err
		}
		if len(cs) == 0 {
			return nil, fmt.Errorf("workload %s cannot make progress on %s", wl.Name, w.table)
		}
		all = append(all, cs...)
	}
	return all, nil
}

// paced inserts rows at rate per second for d, one transaction every tick, catching up when a
// transaction took longer than a tick.
func (w *writer) paced(ctx context.Context, rate int, d time.Duration) ([]change, error) {
	const tick = 10 * time.Millisecond
	want := int(float64(rate) * d.Seconds())
	all := make([]change, 0, want)
	start := time.Now()
	t := time.NewTicker(tick)
	defer t.Stop()
	for len(all) < want {
		due := min(int(float64(rate)*time.Since(start).Seconds()), want)
		if n := due - len(all); n > 0 {
			cs, err := w.commit(ctx, insertWorkload, n)
			if err != nil {
				return nil, err
			}
			all = append(all, cs...)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	return all, nil
}

// recvlogicalCeiling reads slot with pg_recvlogical (pgoutput, proto_version 1, output discarded) up to
// endLSN and returns how long that took: what a client that does nothing with the changes achieves.
func recvlogicalCeiling(ctx context.Context, bin string, server pgServer, db, slot, publication, endLSN string) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, bin,
		"-h", server.Host, "-p", strconv.Itoa(server.Port), "-U", server.User, "-d", db,
		"--slot", slot, "--start", "--endpos", endLSN, "--no-loop",
		"-o", "proto_version=1", "-o", "publication_names="+publication, "-f", "/dev/null")
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("pg_recvlogical: %w", err)
	}
	return time.Since(start), nil
}

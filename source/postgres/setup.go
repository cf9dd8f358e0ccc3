package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cdcd/cdcd/snapshot"
	"github.com/cdcd/cdcd/source"
)

// DSN is the connection string of the connector's database (not a replication connection).
func (c *Config) DSN() string { return c.dsn(false) }

// Server is host:port as database.hostname and database.port give it: how the slot guardian names servers.
func (c *Config) Server() string { return net.JoinHostPort(c.Host, strconv.Itoa(c.Port)) }

func (c *Config) addr() string {
	return net.JoinHostPort(c.Host, strconv.Itoa(c.Port)) + "/" + c.DBName
}

// dsn is the connection string; replication adds replication=database for the walsender protocol.
func (c *Config) dsn(replication bool) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(c.User, c.Password.Reveal()), Host: net.JoinHostPort(c.Host, strconv.Itoa(c.Port)), Path: "/" + c.DBName}
	q := url.Values{}
	q.Set("sslmode", c.SSLMode)
	for key, value := range map[string]string{"sslrootcert": c.SSLRootCert, "sslcert": c.SSLCert, "sslkey": c.SSLKey, "sslpassword": c.SSLPassword.Reveal()} {
		if value != "" {
			q.Set(key, value)
		}
	}
	for key, value := range c.connectParams() {
		q.Set(key, value)
	}
	if replication {
		q.Set("replication", "database")
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// checkServer refuses a server that cannot stream, naming the problem and the fix. It returns what the
// reader needs to know of the server: its version (which options and catalog columns exist) and its
// wal_sender_timeout, which bounds how long the reader may stay silent.
func checkServer(ctx context.Context, conn *pgx.Conn, cfg *Config) (serverInfo, error) {
	var srv serverInfo
	var walLevel string
	var senderTimeoutMs int64
	if err := conn.QueryRow(ctx, "SELECT current_setting('server_version_num')::int, current_setting('wal_level'), (SELECT setting::bigint FROM pg_settings WHERE name = 'wal_sender_timeout'), pg_is_in_recovery()").Scan(&srv.versionNum, &walLevel, &senderTimeoutMs, &srv.standby); err != nil {
		return srv, fmt.Errorf("reading server_version_num, wal_level and pg_is_in_recovery(): %w", err)
	}
	srv.senderTimeout = time.Duration(senderTimeoutMs) * time.Millisecond
	if err := checkReadOnly(srv.versionNum, cfg); err != nil {
		return srv, err
	}
	if err := checkVersion(srv.versionNum, cfg.addr()); err != nil {
		return srv, err
	}
	if err := checkStandby(srv, cfg); err != nil {
		return srv, err
	}
	if err := checkFailover(srv.versionNum, cfg); err != nil {
		return srv, err
	}
	if err := checkStreamParams(srv.versionNum, cfg); err != nil {
		return srv, err
	}
	if walLevel != "logical" {
		return srv, source.Fatal(fmt.Errorf("PostgreSQL at %s has wal_level=%s; logical decoding needs wal_level=logical: set it in postgresql.conf (ALTER SYSTEM SET wal_level = logical) and restart the server", cfg.addr(), walLevel))
	}
	var super, repl bool
	if err := conn.QueryRow(ctx, "SELECT rolsuper, rolreplication FROM pg_roles WHERE rolname = current_user").Scan(&super, &repl); err != nil {
		return srv, fmt.Errorf("reading the privileges of %q: %w", cfg.User, err)
	}
	if !super && !repl {
		return srv, source.Fatal(fmt.Errorf("user %q lacks the REPLICATION attribute needed to stream a slot: run ALTER ROLE %s WITH REPLICATION", cfg.User, pgx.Identifier{cfg.User}.Sanitize()))
	}
	return srv, nil
}

// checkSnapshotPrivileges refuses a snapshot of tables the user may not read, before anything (a slot) is
// created: the snapshot would fail half way.
func checkSnapshotPrivileges(ctx context.Context, conn *pgx.Conn, cfg *Config, include func(schema, table string) bool) error {
	tables, err := queryTables(ctx, conn, include, quotedName, false)
	if err != nil || len(tables) == 0 {
		return err
	}
	rows, err := conn.Query(ctx, `SELECT format('%I.%I', n.nspname, c.relname) FROM unnest($1::text[]) AS t
		JOIN pg_class c ON c.oid = t::regclass JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE NOT has_table_privilege(c.oid, 'SELECT') ORDER BY 1`, tables)
	if err != nil {
		return fmt.Errorf("checking SELECT privileges: %w", err)
	}
	denied, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("checking SELECT privileges: %w", err)
	}
	if len(denied) > 0 {
		return source.Fatal(fmt.Errorf("user %q may not read %s, which the snapshot reads: GRANT SELECT ON %s TO %s, or set snapshot.mode=no_data",
			cfg.User, strings.Join(denied, ", "), strings.Join(denied, ", "), pgx.Identifier{cfg.User}.Sanitize()))
	}
	return nil
}

// ensurePublication checks or creates the publication as publication.autocreate.mode says; created is
// called when it creates one. On a standby it only checks (checkStandbyPublication).
func ensurePublication(ctx context.Context, conn *pgx.Conn, standby bool, cfg *Config, log *slog.Logger, created func()) error {
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1)", cfg.PublicationName).Scan(&exists); err != nil {
		return fmt.Errorf("looking up publication %q: %w", cfg.PublicationName, err)
	}
	if standby {
		return checkStandbyPublication(ctx, conn, cfg, exists)
	}
	pub := pgx.Identifier{cfg.PublicationName}.Sanitize()
	if exists {
		if err := ensureViaRoot(ctx, conn, cfg, log); err != nil {
			return err
		}
	}
	switch cfg.PublicationMode {
	case "disabled":
		if !exists {
			return source.Fatal(fmt.Errorf("publication %q does not exist and publication.autocreate.mode=disabled: create it (CREATE PUBLICATION %s FOR TABLE …) or set publication.autocreate.mode=filtered", cfg.PublicationName, pub))
		}
		return nil
	case "no_tables":
		if exists {
			return nil
		}
		_, err := conn.Exec(ctx, "CREATE PUBLICATION "+pub+viaRootClause(cfg))
		return wrapCreate(err, cfg, created)
	case "all_tables":
		if exists {
			return nil
		}
		if err := checkAllTablesPublication(ctx, conn, cfg); err != nil {
			return err
		}
		log.Info("creating publication for all tables", "publication", cfg.PublicationName)
		_, err := conn.Exec(ctx, "CREATE PUBLICATION "+pub+" FOR ALL TABLES"+viaRootClause(cfg))
		return wrapCreate(err, cfg, created)
	case "filtered":
		tables, err := capturedTables(ctx, conn, cfg)
		if err != nil {
			return err
		}
		if len(tables) == 0 {
			return fmt.Errorf("publication.autocreate.mode=filtered but no table matches the include/exclude lists in database %q: check table.include.list and schema.include.list", cfg.DBName)
		}
		if blocked, err := tablesWithoutIdentity(ctx, conn, tables); err != nil {
			return err
		} else if len(blocked) > 0 {
			return identityError(blocked)
		}
		stmt := "CREATE PUBLICATION " + pub + " FOR TABLE " + strings.Join(tables, ", ") + viaRootClause(cfg)
		if exists {
			stmt = "ALTER PUBLICATION " + pub + " SET TABLE " + strings.Join(tables, ", ")
		}
		_, err = conn.Exec(ctx, stmt)
		if exists {
			created = func() {}
		}
		return wrapCreate(err, cfg, created)
	}
	return fmt.Errorf("unknown publication.autocreate.mode %q", cfg.PublicationMode)
}

func wrapCreate(err error, cfg *Config, created func()) error {
	if err == nil {
		created()
		return nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42501" {
		return source.Fatal(fmt.Errorf("user %q may not create publication %q (%s): create it as its owner or a superuser, then set publication.autocreate.mode=disabled", cfg.User, cfg.PublicationName, pgErr.Message))
	}
	return fmt.Errorf("creating publication %q: %w", cfg.PublicationName, err)
}

// checkAllTablesPublication refuses to create a FOR ALL TABLES publication that would break the application:
// it needs superuser, and once it exists PostgreSQL rejects UPDATE and DELETE on every table without a
// usable replica identity.
func checkAllTablesPublication(ctx context.Context, conn *pgx.Conn, cfg *Config) error {
	var super bool
	if err := conn.QueryRow(ctx, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user").Scan(&super); err != nil {
		return fmt.Errorf("reading the privileges of %q: %w", cfg.User, err)
	}
	if !super {
		return source.Fatal(fmt.Errorf("publication.autocreate.mode=all_tables creates %q FOR ALL TABLES, which needs a superuser, and %q is not one: set publication.autocreate.mode=filtered, or have a superuser create the publication", cfg.PublicationName, cfg.User))
	}
	all, err := userTables(ctx, conn)
	if err != nil {
		return err
	}
	blocked, err := tablesWithoutIdentity(ctx, conn, all)
	if err != nil {
		return err
	}
	if len(blocked) > 0 {
		return identityError(blocked)
	}
	return nil
}

func identityError(blocked []string) error {
	return source.Fatal(fmt.Errorf("refusing to publish tables without a usable replica identity: once published, PostgreSQL rejects every UPDATE and DELETE on them, breaking the application. Tables: %s. Fix: add a primary key, or run ALTER TABLE … REPLICA IDENTITY FULL (or USING INDEX) on each; or leave them out with table.exclude.list and publication.autocreate.mode=filtered",
		strings.Join(blocked, ", ")))
}

// userTables lists every ordinary and partitioned table outside the system schemas, as quoted identifiers.
func userTables(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	return queryTables(ctx, conn, func(string, string) bool { return true }, quotedName, false)
}

// capturedTables lists the tables the filters select, as quoted identifiers, for a filtered publication:
// partitions included, as Debezium's list (its JDBC table listing) includes them. A partition named in
// table.include.list without its root is published under its own name; left out, its changes were lost.
func capturedTables(ctx context.Context, conn *pgx.Conn, cfg *Config) ([]string, error) {
	return queryTables(ctx, conn, cfg.Filter.IncludeTable, quotedName, true)
}

// capturedTableIDs lists the tables the filters select as Debezium names them in signals and offsets:
// schema.table, unquoted.
func capturedTableIDs(ctx context.Context, conn *pgx.Conn, cfg *Config) ([]string, error) {
	return queryTables(ctx, conn, cfg.Filter.IncludeTable, func(s, t string) string { return s + "." + t }, false)
}

func quotedName(schemaName, table string) string { return pgx.Identifier{schemaName, table}.Sanitize() }

// queryTables lists the ordinary and partitioned tables include selects, named by name; partitions only
// with partitions (otherwise a partition's rows count as its root's).
func queryTables(ctx context.Context, conn *pgx.Conn, include func(schema, table string) bool, name func(schema, table string) string, partitions bool) ([]string, error) {
	rows, err := conn.Query(ctx, `SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r','p') AND (NOT c.relispartition OR $1) AND n.nspname NOT IN ('pg_catalog','information_schema') AND n.nspname NOT LIKE 'pg_toast%'
		ORDER BY 1, 2`, partitions)
	if err != nil {
		return nil, fmt.Errorf("listing tables: %w", err)
	}
	var out []string
	for rows.Next() {
		var s, t string
		if err := rows.Scan(&s, &t); err != nil {
			return nil, err
		}
		if include(s, t) {
			out = append(out, name(s, t))
		}
	}
	return out, rows.Err()
}

// tablesWithoutIdentity returns those of tables (quoted identifiers) on which a published UPDATE or DELETE
// would fail: replica identity NOTHING, or DEFAULT without a primary key.
func tablesWithoutIdentity(ctx context.Context, conn *pgx.Conn, tables []string) ([]string, error) {
	if len(tables) == 0 {
		return nil, nil
	}
	rows, err := conn.Query(ctx, `SELECT t::regclass::text FROM unnest($1::text[]) AS t
		JOIN pg_class c ON c.oid = t::regclass
		WHERE c.relreplident = 'n' OR (c.relreplident = 'd' AND NOT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary))
		ORDER BY 1`, tables)
	if err != nil {
		return nil, fmt.Errorf("checking replica identities: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// slotState is the connector's slot as the server has it.
type slotState struct {
	exists    bool
	confirmed LSN
}

// inspectSlot reads the connector's slot and refuses one that cdcd cannot stream.
func (r *Reader) inspectSlot(ctx context.Context, conn *pgx.Conn) (slotState, error) {
	cfg := r.cfg
	var (
		plugin, database string
		active           bool
		confirmed        *string
	)
	err := conn.QueryRow(ctx, `SELECT plugin, database, active, confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1`, cfg.SlotName).
		Scan(&plugin, &database, &active, &confirmed)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return slotState{}, nil
	case err != nil:
		return slotState{}, fmt.Errorf("looking up replication slot %q: %w", cfg.SlotName, err)
	}
	if plugin != "pgoutput" {
		return slotState{}, source.Fatal(fmt.Errorf("replication slot %q uses plugin %q, not pgoutput: drop it (SELECT pg_drop_replication_slot('%s')) or choose another slot.name", cfg.SlotName, plugin, cfg.SlotName))
	}
	if database != cfg.DBName {
		return slotState{}, source.Fatal(fmt.Errorf("replication slot %q belongs to database %q, not %q: choose another slot.name", cfg.SlotName, database, cfg.DBName))
	}
	if active {
		return slotState{}, fmt.Errorf("replication slot %q is in use by another connection: stop the other consumer (see pg_stat_replication) or choose another slot.name", cfg.SlotName)
	}
	st := slotState{exists: true}
	if confirmed != nil {
		if st.confirmed, err = pglogrepl.ParseLSN(*confirmed); err != nil {
			return slotState{}, fmt.Errorf("slot %q confirmed_flush_lsn %q: %w", cfg.SlotName, *confirmed, err)
		}
	}
	return st, nil
}

// resumePosition checks the stored offset against the slot and returns where streaming resumes. lost
// reports a position the slot can no longer serve, which snapshot.mode=when_needed answers with a new
// snapshot; without that, and unless offset.mismatch.strategy says otherwise, cdcd refuses to start
// rather than silently skip changes.
func (r *Reader) resumePosition(slot slotState) (start LSN, lost bool, err error) {
	cfg := r.cfg
	whenNeeded := cfg.SnapshotMode == snapshot.WhenNeeded
	if r.start == nil {
		return slot.confirmed, false, nil
	}
	resume := r.start.ResumeLSN()
	if !slot.exists {
		switch {
		case whenNeeded:
			return 0, true, nil
		case cfg.OffsetMismatch == "no_validation" || cfg.OffsetMismatch == "trust_offset":
			return 0, false, nil
		}
		return 0, false, source.Fatal(fmt.Errorf("a stored offset exists (resume at %s) but replication slot %q is gone: the changes since then are lost from the WAL. Take a new snapshot (snapshot.mode=when_needed, or delete the connector's offsets), or set offset.mismatch.strategy=trust_offset to stream from a new slot anyway", resume, cfg.SlotName))
	}
	if slot.confirmed > resume {
		switch {
		case whenNeeded:
			return slot.confirmed, true, nil
		case cfg.OffsetMismatch == "trust_slot" || cfg.OffsetMismatch == "trust_greater_lsn" || cfg.OffsetMismatch == "no_validation":
			r.log.Warn("slot is ahead of the stored offset; streaming from the slot", "slot", cfg.SlotName, "slot_lsn", slot.confirmed.String(), "offset_lsn", resume.String())
			return slot.confirmed, false, nil
		}
		return 0, false, source.Fatal(fmt.Errorf("replication slot %q has confirmed %s, past the stored offset %s: the changes between them were released without being recorded, so they may be missing from Kafka. Take a new snapshot (snapshot.mode=when_needed), or set offset.mismatch.strategy=trust_slot to continue from the slot", cfg.SlotName, slot.confirmed, resume))
	}
	return resume, false, nil
}

// createSlot creates the connector's slot and returns its consistent point. With export, the slot's
// snapshot is exported for an initial snapshot that lines up exactly with the stream.
func (r *Reader) createSlot(ctx context.Context, export bool) (LSN, *exportedSnapshot, error) {
	if export {
		exp, err := r.exportSnapshot(ctx, r.cfg.SlotName, false)
		if err != nil {
			return 0, nil, err
		}
		r.log.Info("created replication slot with an exported snapshot", "slot", r.cfg.SlotName, "consistent_point", exp.position.String())
		return exp.position, exp, nil
	}
	conn, err := r.cfg.connectReplication(ctx)
	if err != nil {
		return 0, nil, fmt.Errorf("replication connection to %s: %w", r.cfg.addr(), err)
	}
	defer conn.Close(context.Background())
	stopWatch := r.watchSlotCreation(ctx, r.cfg.SlotName)
	res, err := pglogrepl.CreateReplicationSlot(ctx, conn, r.cfg.SlotName, "pgoutput", pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: r.cfg.slotOptions("nothing", true)})
	stopWatch()
	if err != nil {
		return 0, nil, slotCreateError(r.cfg.SlotName, err)
	}
	lsn, err := pglogrepl.ParseLSN(res.ConsistentPoint)
	if err != nil {
		return 0, nil, fmt.Errorf("slot %q consistent point %q: %w", r.cfg.SlotName, res.ConsistentPoint, err)
	}
	r.log.Info("created replication slot", "slot", r.cfg.SlotName, "consistent_point", lsn.String())
	return lsn, nil, nil
}

func slotCreateError(slot string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "53400" {
		return fmt.Errorf("cannot create replication slot %q: %s. Raise max_replication_slots, or drop unused slots (cdcd slots list)", slot, pgErr.Message)
	}
	return fmt.Errorf("creating replication slot %q: %w", slot, err)
}

// dropSlot drops the connector's slot on stop (slot.drop.on.stop).
func (r *Reader) dropSlot(conn *pgx.Conn) {
	ctx := context.Background()
	if _, err := conn.Exec(ctx, "SELECT pg_drop_replication_slot($1) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active", r.cfg.SlotName); err != nil {
		r.log.Warn("could not drop the replication slot on stop", "slot", r.cfg.SlotName, "error", err)
		return
	}
	r.log.Info("dropped replication slot on stop (slot.drop.on.stop=true)", "slot", r.cfg.SlotName)
}

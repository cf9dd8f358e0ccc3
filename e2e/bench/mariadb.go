package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	cdcdmysql "github.com/cdcd/cdcd/source/mysql"
)

// mariaServer is where the benchmark's MariaDB listens: root writes the workload, the capture user
// (the test bed's, with a binlog reader's grants) is what both systems and the ceiling read as.
type mariaServer struct {
	Host            string
	Port            int
	RootPassword    string
	CaptureUser     string
	CapturePassword string
}

func (s mariaServer) addr() string { return s.Host + ":" + strconv.Itoa(s.Port) }

// mariaDB is the benchmark's own MariaDB database, created fresh and dropped at the end. The binlog is
// the server's, shared with whoever else uses the server: both systems and the ceiling read (and
// skip) other databases' events too.
type mariaDB struct {
	server mariaServer
	name   string
	conn   *client.Conn
	kafka  *broker // for the schema history, and the schema change topic waitStreaming watches
}

func openMariaDB(ctx context.Context, server mariaServer, name string, kafka *broker) (*mariaDB, error) {
	conn, err := client.ConnectWithContext(ctx, server.addr(), "root", server.RootPassword, "", 10*time.Second)
	if err != nil {
		return nil, fmt.Errorf("connecting to mariadb: %w", err)
	}
	db := &mariaDB{server: server, name: name, conn: conn, kafka: kafka}
	// name is the benchmark's constant, a plain identifier. The character set is today's default rather
	// than the server's compiled-in latin1, as on PostgreSQL (UTF-8).
	for _, sql := range []string{"DROP DATABASE IF EXISTS " + name, "CREATE DATABASE " + name + " CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci", "USE " + name} {
		if err := db.exec(sql); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return db, nil
}

func (db *mariaDB) ceilingName() string { return "binlog raw read" }

// sourceTsIsCommitMs: binlog event headers carry whole seconds, so source.ts_ms is a multiple of 1000.
func (db *mariaDB) sourceTsIsCommitMs() bool { return false }

func (db *mariaDB) version(context.Context) string {
	res, err := db.conn.Execute("SELECT VERSION()")
	if err != nil {
		return "unknown"
	}
	v, err := res.GetString(0, 0)
	if err != nil {
		return "unknown"
	}
	return v
}

func (db *mariaDB) close(context.Context) error {
	defer db.conn.Close()
	return db.exec("DROP DATABASE IF EXISTS " + db.name)
}

func (db *mariaDB) exec(sql string) error {
	if _, err := db.conn.Execute(sql); err != nil {
		return fmt.Errorf("%s: %w", truncateSQL(sql), err)
	}
	return nil
}

// truncateSQL keeps error messages readable when a statement lists hundreds of rows.
func truncateSQL(sql string) string {
	const keep = 120
	if len(sql) <= keep {
		return sql
	}
	return sql[:keep] + "…"
}

// prepare creates the benchmark table: about 1 KB per row.
func (db *mariaDB) prepare(_ context.Context, c *capture) error {
	return db.exec("CREATE TABLE " + c.table + " (id bigint AUTO_INCREMENT PRIMARY KEY, k int, payload text, updated_at timestamp(6) NULL) ENGINE=InnoDB")
}

func (db *mariaDB) dataTopic(prefix, table string) string {
	return prefix + "." + db.name + "." + table
}

func (db *mariaDB) connectorConfig(c *capture, tuning map[string]string) map[string]string {
	cfg := map[string]string{
		"connector.class":   "io.debezium.connector.mariadb.MariaDbConnector",
		"database.hostname": db.server.Host,
		"database.port":     strconv.Itoa(db.server.Port),
		"database.user":     db.server.CaptureUser,
		"database.password": db.server.CapturePassword,
		// Every binlog client of a server needs an id of its own.
		"database.server.id":                              strconv.Itoa(300000 + rand.IntN(1000000)),
		"database.include.list":                           db.name,
		"table.include.list":                              db.name + "." + c.table,
		"topic.prefix":                                    c.prefix,
		"schema.history.internal.kafka.topic":             c.prefix + "-schema-history",
		"schema.history.internal.kafka.bootstrap.servers": strings.Join(db.kafka.seeds, ","),
		"snapshot.mode":                                   "no_data",
		// The binlog is the whole server's: a DDL statement of someone else's database that the parser
		// does not know (MariaDB's INET4, say) would otherwise stop the connector mid-run.
		"schema.history.internal.skip.unparseable.ddl": "true",
	}
	maps.Copy(cfg, tuning)
	return cfg
}

// waitStreaming waits for the first schema change record: the snapshot (of the structure only) writes it
// after it has read the binlog position streaming starts from, so later commits are streamed.
func (db *mariaDB) waitStreaming(ctx context.Context, c *capture) error {
	return db.kafka.waitForRecords(ctx, c.prefix, 1, 2*time.Minute, c.sys.tasksAlive(c.name), c.sys.exactlyOnce)
}

// waitReleased has nothing to wait for: a binlog reader holds no server state that outlives it (unlike
// a slot), and one that reconnects with the same server id replaces the old dump thread.
func (db *mariaDB) waitReleased(context.Context, *capture) error { return nil }

func (db *mariaDB) release(_ context.Context, c *capture) error {
	return db.exec("DROP TABLE IF EXISTS " + c.table)
}

// insertSQL inserts one row per version with a payload of 1,024 characters and returns their ids.
func insertSQL(table string, versions []int32) string {
	var b strings.Builder
	b.WriteString("INSERT INTO " + table + " (k, payload, updated_at) VALUES ")
	for i, v := range versions {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "(%d,REPEAT(MD5(%d),32),NOW(6))", v, v)
	}
	b.WriteString(" RETURNING id, k")
	return b.String()
}

// updateSQL sets each id's k to its version.
func updateSQL(table string, ids []int64, versions []int32) string {
	var set, in strings.Builder
	for i, id := range ids {
		fmt.Fprintf(&set, " WHEN %d THEN %d", id, versions[i])
		if i > 0 {
			in.WriteByte(',')
		}
		in.WriteString(strconv.FormatInt(id, 10))
	}
	return "UPDATE " + table + " SET k = CASE id" + set.String() + " END, updated_at = NOW(6) WHERE id IN (" + in.String() + ")"
}

func deleteSQL(table string, ids []int64) string {
	in := make([]string, len(ids))
	for i, id := range ids {
		in[i] = strconv.FormatInt(id, 10)
	}
	return "DELETE FROM " + table + " WHERE id IN (" + strings.Join(in, ",") + ")"
}

// insert runs an insertSQL and returns the rows it created.
func (db *mariaDB) insert(table string, versions []int32) ([]change, error) {
	sql := insertSQL(table, versions)
	res, err := db.conn.Execute(sql)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", truncateSQL(sql), err)
	}
	defer res.Close()
	out := make([]change, len(res.Values))
	for row := range res.Values {
		id, errID := res.GetInt(row, 0)
		k, errK := res.GetInt(row, 1)
		if err := errors.Join(errID, errK); err != nil {
			return nil, fmt.Errorf("reading inserted rows: %w", err)
		}
		out[row] = change{ID: id, K: int32(k), Op: 'c'}
	}
	return out, nil
}

func (db *mariaDB) populate(_ context.Context, table string, n int) ([]int64, error) {
	const batch = 1000
	ids := make([]int64, 0, n)
	for len(ids) < n {
		rows, err := db.insert(table, make([]int32, min(batch, n-len(ids))))
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
	}
	return ids, nil
}

func (db *mariaDB) apply(_ context.Context, table string, p plannedTx) (inserted []change, err error) {
	if err := db.conn.Begin(); err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, db.conn.Rollback())
		}
	}()
	if len(p.insertVersions) > 0 {
		if inserted, err = db.insert(table, p.insertVersions); err != nil {
			return nil, err
		}
	}
	if len(p.updateIDs) > 0 {
		if err := db.exec(updateSQL(table, p.updateIDs, p.updateVersions)); err != nil {
			return nil, err
		}
	}
	if len(p.deleteIDs) > 0 {
		if err := db.exec(deleteSQL(table, p.deleteIDs)); err != nil {
			return nil, err
		}
	}
	if err := db.conn.Commit(); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	return inserted, nil
}

// binlogPosition is where the server will write its next binlog event.
func (db *mariaDB) binlogPosition() (mysql.Position, error) {
	res, err := db.conn.Execute(cdcdmysql.BinlogStatusStatement(db.conn.GetServerVersion()))
	if err != nil {
		return mysql.Position{}, fmt.Errorf("binlog position: %w", err)
	}
	defer res.Close()
	if len(res.Values) == 0 {
		return mysql.Position{}, errors.New("binlog position: the server writes no binlog")
	}
	file, errFile := res.GetString(0, 0)
	pos, errPos := res.GetUint(0, 1)
	if err := errors.Join(errFile, errPos); err != nil {
		return mysql.Position{}, fmt.Errorf("binlog position: %w", err)
	}
	return mysql.Position{Name: file, Pos: uint32(pos)}, nil
}

func (db *mariaDB) markCeiling(context.Context, *capture) (ceilingReader, error) {
	start, err := db.binlogPosition()
	if err != nil {
		return nil, err
	}
	return &binlogCeiling{db: db, start: start}, nil
}

// binlogCeiling reads a binlog range the way a replica's IO thread does, as the capture user, with
// go-mysql's BinlogSyncer in raw mode (events are not decoded) and drops every event: the rate at
// which the server sends the binlog, which no capture client can beat.
type binlogCeiling struct {
	db         *mariaDB
	start, end mysql.Position
}

func (r *binlogCeiling) markEnd(context.Context) (err error) {
	r.end, err = r.db.binlogPosition()
	return err
}

func (r *binlogCeiling) read(ctx context.Context) (time.Duration, error) {
	s := r.db.server
	syncer := replication.NewBinlogSyncer(replication.BinlogSyncerConfig{
		ServerID: uint32(300000 + rand.IntN(1000000)), Flavor: mysql.MariaDBFlavor,
		Host: s.Host, Port: uint16(s.Port), User: s.CaptureUser, Password: s.CapturePassword,
		RawModeEnabled: true, Logger: slog.New(slog.DiscardHandler),
	})
	defer syncer.Close()
	started := time.Now()
	streamer, err := syncer.StartSync(r.start)
	if err != nil {
		return 0, fmt.Errorf("binlog ceiling: %w", err)
	}
	file := r.start.Name
	for {
		ev, err := streamer.GetEvent(ctx)
		if err != nil {
			return 0, fmt.Errorf("binlog ceiling at %s: %w", file, err)
		}
		if rotate, ok := ev.Event.(*replication.RotateEvent); ok {
			file = string(rotate.NextLogName)
			continue
		}
		if pastEnd(file, ev.Header.LogPos, r.end) {
			return time.Since(started), nil
		}
	}
}

// pastEnd reports whether an event of binlog file ending at logPos reaches end. Binlog file names
// differ only in their fixed-width sequence number, so they compare as strings.
func pastEnd(file string, logPos uint32, end mysql.Position) bool {
	return file > end.Name || file == end.Name && logPos >= end.Pos
}

func (r *binlogCeiling) close(context.Context) error { return nil }

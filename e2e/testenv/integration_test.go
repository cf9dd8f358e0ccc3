package testenv

// Integration tests: each runs against the services of e2e/services.sh and is skipped unless
// CDCD_E2E is set. Besides testenv itself they check the settings the script promises.

import (
	"context"
	"crypto/tls"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestPostgresIsConfiguredForLogicalDecoding(t *testing.T) {
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for setting, want := range map[string]string{
		"wal_level":             "logical",
		"max_replication_slots": "20",
		"max_wal_senders":       "20",
		"server_version_num":    strconv.Itoa(PostgresVersion()),
	} {
		var got string
		if err := conn.QueryRow(ctx, "SELECT current_setting($1)", setting).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(got, want) {
			t.Errorf("%s = %s, want %s", setting, got, want)
		}
	}
}

// TestNewPostgresDBCleanupDropsActiveSlotAndDatabase leaves a walsender streaming from a slot
// of the test database, as a crashed reader would, and checks that the cleanup removes both.
func TestNewPostgresDBCleanupDropsActiveSlotAndDatabase(t *testing.T) {
	ctx := t.Context()
	var dbName, slotName string
	var walsender *pgconn.PgConn
	passed := t.Run("user", func(t *testing.T) {
		dsn := NewPostgresDB(t)
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			t.Fatal(err)
		}
		dbName, slotName = cfg.Database, "slot_"+uniqueName("x", 20)
		db, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close(context.Background())
		if _, err := db.Exec(ctx, "CREATE TABLE t (id int PRIMARY KEY); CREATE PUBLICATION pub FOR ALL TABLES"); err != nil {
			t.Fatal(err)
		}
		walsender, err = pgconn.Connect(ctx, dsn+"&replication=database")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pglogrepl.CreateReplicationSlot(ctx, walsender, slotName, "pgoutput", pglogrepl.CreateReplicationSlotOptions{}); err != nil {
			t.Fatal(err)
		}
		err = pglogrepl.StartReplication(ctx, walsender, slotName, 0, pglogrepl.StartReplicationOptions{
			PluginArgs: []string{"proto_version '1'", "publication_names 'pub'"},
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	if walsender != nil {
		defer walsender.Close(context.Background())
	}
	if !passed {
		t.Fatal("the subtest or its cleanup failed")
	}
	admin, err := pgx.Connect(ctx, Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	var slots, dbs int
	err = admin.QueryRow(ctx, "SELECT (SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1), (SELECT count(*) FROM pg_database WHERE datname = $2)",
		slotName, dbName).Scan(&slots, &dbs)
	if err != nil {
		t.Fatal(err)
	}
	if slots != 0 || dbs != 0 {
		t.Errorf("after cleanup: %d slot %s and %d database %s remain", slots, slotName, dbs, dbName)
	}
}

func TestMariaDBBinlogSettingsAndCaptureUser(t *testing.T) {
	root, err := ParseMySQLDSN(MariaDB(t))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := client.Connect(root.Addr, MariaDBCaptureUser, MariaDBCapturePassword, "")
	if err != nil {
		t.Fatalf("capture user cannot log in: %v", err)
	}
	defer conn.Close()
	res, err := conn.Execute(`SELECT @@binlog_format, @@binlog_row_image, @@binlog_row_metadata,
		@@binlog_annotate_row_events, @@gtid_strict_mode, @@log_bin, @@server_id, @@version`)
	if err != nil {
		t.Fatal(err)
	}
	got := firstRow(t, res)
	want := []string{"ROW", "FULL", "FULL", "1", "1", "1", "1", "10.11."}
	if len(got) != len(want) {
		t.Fatalf("got %d columns, want %d", len(got), len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("%s = %q, want %q", res.Fields[i].Name, got[i], want[i])
		}
	}
	// A binlog reader needs BINLOG MONITOR for this, and REPLICATION SLAVE to dump.
	if _, err := conn.Execute("SHOW BINARY LOGS"); err != nil {
		t.Errorf("capture user cannot list binlogs: %v", err)
	}
}

// TestNewMariaDBCleanupDropsDatabaseDespiteOpenTransaction leaves a connection inside a
// transaction that holds a metadata lock on a table of the test database; without killing it,
// DROP DATABASE would wait for it.
func TestNewMariaDBCleanupDropsDatabaseDespiteOpenTransaction(t *testing.T) {
	var dbName string
	var holder *client.Conn
	passed := t.Run("user", func(t *testing.T) {
		d, err := ParseMySQLDSN(NewMariaDB(t))
		if err != nil {
			t.Fatal(err)
		}
		dbName = d.DB
		holder, err = client.Connect(d.Addr, d.User, d.Password, d.DB)
		if err != nil {
			t.Fatal(err)
		}
		for _, stmt := range []string{"CREATE TABLE t (id INT PRIMARY KEY)", "BEGIN", "SELECT * FROM t"} {
			if _, err := holder.Execute(stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
	})
	if holder != nil {
		defer holder.Close()
	}
	if !passed {
		t.Fatal("the subtest or its cleanup failed")
	}
	root, err := ParseMySQLDSN(MariaDB(t))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := client.Connect(root.Addr, root.User, root.Password, "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	res, err := conn.Execute("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", dbName)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.GetInt(0, 0); n != 0 {
		t.Errorf("database %s still exists after cleanup", dbName)
	}
}

func TestKafkaProducesAndConsumesOnAutoCreatedTopic(t *testing.T) {
	topic := NewTopicPrefix(t) + ".smoke"
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(Kafka(t)...),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AllowAutoTopicCreation(),
		kgo.RequiredAcks(kgo.AllISRAcks()),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte("k"), Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("producing to %s: %v", topic, err)
	}
	for {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("no record consumed from %s: %v", topic, err)
		}
		for _, fe := range fetches.Errors() {
			t.Logf("fetch error (retrying): %v", fe.Err)
		}
		if recs := fetches.Records(); len(recs) > 0 {
			if string(recs[0].Key) != "k" || string(recs[0].Value) != "v" {
				t.Errorf("consumed %s=%s, want k=v", recs[0].Key, recs[0].Value)
			}
			return
		}
	}
}

// TestMySQLBinlogSettingsAndCaptureUser checks the test bed's MySQL as the MySQL tests need it: the
// binlog as Debezium needs it, and the capture user (caching_sha2_password) logging in over plain TCP,
// where the password goes under the server's RSA key, and over TLS verified against the test CA, and
// allowed to read the binlog position.
func TestMySQLBinlogSettingsAndCaptureUser(t *testing.T) {
	root, err := ParseMySQLDSN(MySQL(t))
	if err != nil {
		t.Fatal(err)
	}
	capture := MySQLDSN{User: MySQLCaptureUser, Password: MySQLCapturePassword, Addr: root.Addr}
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	for _, cfg := range []*tls.Config{nil, Certs(t).TLSConfig(t, "")} {
		conn, err := ConnectMariaDB(ctx, capture, cfg)
		if err != nil {
			t.Fatalf("capture user cannot log in (TLS %v): %v", cfg != nil, err)
		}
		defer conn.Close()
		res, err := conn.Execute(`SELECT @@binlog_format, @@binlog_row_image, @@binlog_row_metadata, @@gtid_mode,
			@@enforce_gtid_consistency, @@log_bin, @@server_id,
			(SELECT VARIABLE_VALUE <> '' FROM performance_schema.session_status WHERE VARIABLE_NAME = 'Ssl_cipher')`)
		if err != nil {
			t.Fatal(err)
		}
		got := firstRow(t, res)
		tlsOn := "0"
		if cfg != nil {
			tlsOn = "1"
		}
		want := []string{"ROW", "FULL", "FULL", "ON", "ON", "1", "1", tlsOn}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("TLS %v: settings %v, want %v", cfg != nil, got, want)
		}
		// MySQL 8.4 removed SHOW MASTER STATUS; this needs REPLICATION CLIENT.
		if _, err := conn.Execute("SHOW BINARY LOG STATUS"); err != nil {
			t.Errorf("capture user cannot read the binlog position: %v", err)
		}
	}
	conn, err := ConnectMariaDB(ctx, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	res, err := conn.Execute("SELECT plugin FROM mysql.user WHERE user = ?", MySQLCaptureUser)
	if err != nil {
		t.Fatal(err)
	}
	if plugin, _ := res.GetString(0, 0); plugin != "caching_sha2_password" {
		t.Errorf("the capture user authenticates with %q, want caching_sha2_password", plugin)
	}
}

// firstRow is the first row of res, each value as text.
func firstRow(t *testing.T, res *mysql.Result) []string {
	t.Helper()
	var row []string
	for col := range res.Fields {
		v, err := res.GetString(0, col)
		if err != nil {
			t.Fatal(err)
		}
		row = append(row, v)
	}
	return row
}

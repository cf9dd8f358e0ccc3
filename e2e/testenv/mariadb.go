package testenv

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
)

// The accounts e2e/services.sh creates. The capture account has exactly the grants a binlog
// reader needs (SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR, LOCK TABLES).
const (
	MariaDBRootPassword    = "cdcd"
	MariaDBCaptureUser     = "cdcd"
	MariaDBCapturePassword = "cdcd"
)

// mariadbMaxIdentifier is MariaDB's limit on database names.
const mariadbMaxIdentifier = 64

// MySQLDSN is a MySQL/MariaDB connection in go-mysql's DSN format,
// `user:password@host:port[/db]`: the pieces client.Connect and canal's config take.
type MySQLDSN struct {
	User     string
	Password string
	Addr     string // host:port
	DB       string // may be empty
}

// String formats d as `user:password@host:port[/db]`, the form ParseMySQLDSN reads.
func (d MySQLDSN) String() string {
	s := d.User + ":" + d.Password + "@" + d.Addr
	if d.DB != "" {
		s += "/" + d.DB
	}
	return s
}

// ParseMySQLDSN reads `user[:password]@host:port[/db]`, the strings MariaDB and NewMariaDB return.
func ParseMySQLDSN(s string) (MySQLDSN, error) {
	at := strings.LastIndexByte(s, '@')
	if at < 0 {
		return MySQLDSN{}, fmt.Errorf("mysql dsn %q: want user:password@host:port[/db]", s)
	}
	var d MySQLDSN
	d.User, d.Password, _ = strings.Cut(s[:at], ":")
	d.Addr, d.DB, _ = strings.Cut(s[at+1:], "/")
	if d.User == "" || d.Addr == "" {
		return MySQLDSN{}, fmt.Errorf("mysql dsn %q: want user:password@host:port[/db]", s)
	}
	return d, nil
}

func mariadbRoot() MySQLDSN {
	return MySQLDSN{User: "root", Password: MariaDBRootPassword, Addr: serviceAddr("CDCD_MARIADB_PORT", "53306")}
}

// ConnectMariaDB opens a go-mysql connection whose reads and writes give up after adminTimeout, so
// a test bed that hangs fails the test instead of stalling it. A non-nil cfg runs it over TLS (which
// mariadb_tls requires); nil connects in plaintext.
func ConnectMariaDB(ctx context.Context, d MySQLDSN, cfg *tls.Config) (*client.Conn, error) {
	opt := func(c *client.Conn) error {
		c.ReadTimeout, c.WriteTimeout = adminTimeout, adminTimeout
		if cfg != nil {
			c.SetTLSConfig(cfg)
		}
		return nil
	}
	return client.ConnectWithContext(ctx, d.Addr, d.User, d.Password, d.DB, pingTimeout, opt)
}

// MariaDB returns the root DSN (no database) of the test-bed MariaDB 10.11, whose binlog is ROW
// with FULL row image and metadata and GTIDs in strict mode. Connect as MariaDBCaptureUser to
// test with a reader's privileges. It skips or fails t as the package doc says.
func MariaDB(t testing.TB) string {
	t.Helper()
	root := mariadbRoot()
	requireService(t, "mariadb", func(ctx context.Context) error {
		conn, err := ConnectMariaDB(ctx, root, nil)
		if err != nil {
			return err
		}
		defer conn.Close()
		return conn.Ping()
	})
	return root.String()
}

// NewMariaDB creates a database of its own for t and returns the root DSN naming it. When t
// ends, the connections still using that database are killed and the database is dropped.
func NewMariaDB(t testing.TB) string {
	t.Helper()
	MariaDB(t)
	return createMariaDB(t, "mariadb", mariadbRoot(), nil)
}

// createMariaDB creates a database named after t on the service that root (over TLS when cfg is
// not nil) logs in to, and returns root's DSN naming it. When t ends, dropMariaDB drops it.
func createMariaDB(t testing.TB, service string, root MySQLDSN, cfg *tls.Config) string {
	t.Helper()
	name := ownedName(t, mariadbMaxIdentifier)
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	conn, err := ConnectMariaDB(ctx, root, cfg)
	if err != nil {
		t.Fatalf("testenv: connecting to %s: %v", service, err)
	}
	defer conn.Close()
	// uniqueName yields [a-z0-9_] only, so backquotes make a complete identifier.
	if _, err := conn.Execute("CREATE DATABASE `" + name + "`"); err != nil {
		t.Fatalf("testenv: creating database %s on %s: %v", name, service, err)
	}
	t.Cleanup(func() {
		if err := dropMariaDB(root, cfg, name); err != nil {
			t.Errorf("testenv: %s: %v", service, err)
		}
	})
	root.DB = name
	return root.String()
}

// dropMariaDB drops database name (over TLS when cfg is not nil). A connection left inside a
// transaction on one of its tables holds a metadata lock that DROP DATABASE would wait on for a day
// (lock_wait_timeout), so such connections are killed first.
func dropMariaDB(root MySQLDSN, cfg *tls.Config, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	conn, err := ConnectMariaDB(ctx, root, cfg)
	if err != nil {
		return fmt.Errorf("dropping database %s: %w", name, err)
	}
	defer conn.Close()
	res, err := conn.Execute("SELECT ID FROM information_schema.PROCESSLIST WHERE DB = ? AND ID <> CONNECTION_ID()", name)
	if err != nil {
		return fmt.Errorf("listing the connections to database %s: %w", name, err)
	}
	for row := range res.Values {
		id, err := res.GetUint(row, 0)
		if err != nil {
			return fmt.Errorf("listing the connections to database %s: %w", name, err)
		}
		// A connection that ended since the listing is just as good as a killed one.
		if _, err := conn.Execute(fmt.Sprintf("KILL CONNECTION %d", id)); err != nil && !isMySQLError(err, mysql.ER_NO_SUCH_THREAD) {
			return fmt.Errorf("killing connection %d to database %s: %w", id, name, err)
		}
	}
	// Bound the wait for any lock that is still held rather than hang the test run.
	if _, err := conn.Execute("SET SESSION lock_wait_timeout = 10"); err != nil {
		return fmt.Errorf("dropping database %s: %w", name, err)
	}
	if _, err := conn.Execute("DROP DATABASE IF EXISTS `" + name + "`"); err != nil {
		return fmt.Errorf("dropping database %s: %w", name, err)
	}
	return nil
}

func isMySQLError(err error, code uint16) bool {
	var myErr *mysql.MyError
	return errors.As(err, &myErr) && myErr.Code == code
}

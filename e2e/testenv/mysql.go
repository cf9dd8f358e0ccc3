package testenv

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The accounts e2e/services.sh creates on its Oracle MySQL 9.7, both caching_sha2_password. The capture
// account has exactly the grants a binlog reader needs (SELECT, RELOAD, SHOW DATABASES, REPLICATION
// SLAVE, REPLICATION CLIENT, LOCK TABLES).
const (
	MySQLRootPassword    = "cdcd"
	MySQLCaptureUser     = "cdcd"
	MySQLCapturePassword = "cdcd"
)

func mysqlRoot() MySQLDSN {
	return MySQLDSN{User: "root", Password: MySQLRootPassword, Addr: serviceAddr("CDCD_MYSQL_PORT", "53308")}
}

// MySQLUnavailable is why e2e/services.sh could not install MySQL on this machine (its
// $CDCD_E2E_DIR/mysql/UNAVAILABLE), "" when it could: the server comes from Debian's unstable suite,
// which can break on any day while the rest of the test bed stands.
func MySQLUnavailable() string {
	b, err := os.ReadFile(filepath.Join(stateDir(), "mysql", "UNAVAILABLE"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// mysqlVersion logs the server's version once per test binary: sid's MySQL moves daily.
var mysqlVersion sync.Once

// MySQL returns the root DSN (no database) of the test-bed MySQL 9.7, whose binlog is ROW with FULL
// row image and metadata and GTIDs on. Connect as MySQLCaptureUser to test with a reader's privileges.
// It skips or fails t as the package doc says, and skips it, naming the reason, where e2e/services.sh
// could not install MySQL.
func MySQL(t testing.TB) string {
	t.Helper()
	if reason := MySQLUnavailable(); reason != "" && enabled() {
		t.Skipf("MYSQL NOT INSTALLED on this machine, skipping: %s", reason)
	}
	root := mysqlRoot()
	var version string
	requireService(t, "mysql", func(ctx context.Context) error {
		conn, err := ConnectMariaDB(ctx, root, nil)
		if err != nil {
			return err
		}
		defer conn.Close()
		version = conn.GetServerVersion()
		return conn.Ping()
	})
	mysqlVersion.Do(func() { t.Logf("testenv: MySQL server %s at %s", version, root.Addr) })
	return root.String()
}

// NewMySQL creates a database of its own for t on the test-bed MySQL and returns the root DSN naming
// it. When t ends, the connections still using that database are killed and the database is dropped.
func NewMySQL(t testing.TB) string {
	t.Helper()
	MySQL(t)
	return createMariaDB(t, "mysql", mysqlRoot(), nil)
}

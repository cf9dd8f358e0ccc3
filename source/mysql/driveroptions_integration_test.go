package mysql

// The driver's time zone option against the MariaDB of e2e/services.sh; skipped unless CDCD_E2E is set.

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/cdcd/cdcd/source/mysql/types"
)

// TestDriverTimeZoneIsCheckedAgainstTheServers: a time zone option naming the server's zone (by offset,
// or auto) passes the connection check; one at another offset is refused fatally, naming the key and both
// offsets, since Debezium would shift the snapshot's TIMESTAMP values by the difference.
func TestDriverTimeZoneIsCheckedAgainstTheServers(t *testing.T) {
	dsn, err := testenv.ParseMySQLDSN(testenv.MariaDB(t))
	if err != nil {
		t.Fatal(err)
	}
	user, password := testenv.MariaDBCaptureUser, testenv.MariaDBCapturePassword
	probe := tlsReader(t, types.MariaDB, dsn.Addr, user, password, nil)
	conn, err := probe.connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	text, err := queryString(conn, "SELECT TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), NOW())")
	conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	seconds, err := strconv.Atoi(text)
	if err != nil {
		t.Fatal(err)
	}
	server := utcOffset(seconds)
	other := utcOffset(seconds + 5*3600)
	for zone, refused := range map[string]bool{server: false, "auto": false, other: true} {
		r := tlsReader(t, types.MariaDB, dsn.Addr, user, password, map[string]string{"database.timezone": zone})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := task{cfg: r.cfg}.CheckConnection(ctx)
		cancel()
		switch {
		case !refused && err != nil:
			t.Errorf("database.timezone=%s (the server is at %s): %v", zone, server, err)
		case refused && (err == nil || !strings.Contains(err.Error(), "database.timezone") || !strings.Contains(err.Error(), "UTC"+server) || !strings.Contains(err.Error(), "UTC"+other)):
			t.Errorf("database.timezone=%s (the server is at %s): %v, want a refusal naming the key and both offsets", zone, server, err)
		}
	}
}

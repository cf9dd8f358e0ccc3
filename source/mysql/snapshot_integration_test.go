package mysql

// Tests against the real MariaDB of e2e/services.sh; skipped unless CDCD_E2E is set.

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/cdcd/cdcd/source/mysql/types"
)

// TestUnlockedSnapshotStreamsFromItsOwnPosition commits a row between an unlocked snapshot's START
// TRANSACTION WITH CONSISTENT SNAPSHOT and the reading of the binlog position (snapshot.locking.mode=none):
// the snapshot does not see the row, so streaming must start before its transaction, at the position the
// snapshot sees, or the row is never delivered. beginSnapshot corrects the position it read with
// positionOfSnapshot; the test takes the same steps with the commit forced in between.
func TestUnlockedSnapshotStreamsFromItsOwnPosition(t *testing.T) {
	dsn, err := testenv.ParseMySQLDSN(testenv.NewMariaDB(t))
	if err != nil {
		t.Fatal(err)
	}
	admin, err := client.Connect(dsn.Addr, dsn.User, dsn.Password, dsn.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	exec := func(conn *client.Conn, stmt string) {
		t.Helper()
		if _, err := conn.Execute(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	exec(admin, "CREATE TABLE raced (id INT PRIMARY KEY)")
	exec(admin, "INSERT INTO raced VALUES (1)")

	host, port, _ := strings.Cut(dsn.Addr, ":")
	cfg, err := ParseConfig("unlocked-snapshot", types.MariaDB, map[string]string{
		"connector.class":                     MariaDBConnectorClass,
		"database.hostname":                   host,
		"database.port":                       port,
		"database.user":                       testenv.MariaDBCaptureUser,
		"database.password":                   testenv.MariaDBCapturePassword,
		"database.server.id":                  fmt.Sprint(200000 + rand.IntN(1000000)),
		"database.include.list":               dsn.DB,
		"topic.prefix":                        "unlocked",
		"snapshot.locking.mode":               "none",
		"schema.history.internal.kafka.topic": "unlocked-history",
		"schema.history.internal.kafka.bootstrap.servers": "127.0.0.1:1",
	}, discardLog())
	if err != nil {
		t.Fatal(err)
	}
	r := NewReader(cfg, nil, discardLog())
	snap, err := r.connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	before, err := r.currentPosition(snap)
	if err != nil {
		t.Fatal(err)
	}
	exec(snap, "START TRANSACTION WITH CONSISTENT SNAPSHOT")
	exec(admin, "INSERT INTO raced VALUES (2)") // commits after the snapshot began, before its position is read
	read, err := r.currentPosition(snap)
	if err != nil {
		t.Fatal(err)
	}
	if read.File == before.File && read.Pos == before.Pos {
		t.Fatalf("the binlog did not move with the insert (%s)", read.String())
	}
	res, err := snap.Execute("SELECT COUNT(*) FROM " + quoteIdent(dsn.DB) + ".raced")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.GetInt(0, 0); n != 1 {
		t.Fatalf("the snapshot sees %d rows; the insert committed after it began must not be among them", n)
	}

	got, err := r.positionOfSnapshot(snap, read)
	if err != nil {
		t.Fatal(err)
	}
	if got.File != before.File || got.Pos != before.Pos || got.GTIDs != before.GTIDs {
		t.Fatalf("streaming would start at %s (gtids %s); the snapshot sees the binlog at %s (gtids %s), before the insert at %s (gtids %s)",
			got.String(), got.GTIDs, before.String(), before.GTIDs, read.String(), read.GTIDs)
	}
}

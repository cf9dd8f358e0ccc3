package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/go-mysql-org/go-mysql/mysql"
)

func TestPastEndComparesFileThenPosition(t *testing.T) {
	end := mysql.Position{Name: "mariadb-bin.000009", Pos: 5000}
	for _, tc := range []struct {
		file   string
		logPos uint32
		want   bool
	}{
		{"mariadb-bin.000009", 4999, false},
		{"mariadb-bin.000009", 5000, true},
		{"mariadb-bin.000008", 9000, false}, // a bigger position in an earlier file
		{"mariadb-bin.000010", 100, true},   // rotated past the end's file
	} {
		if got := pastEnd(tc.file, tc.logPos, end); got != tc.want {
			t.Errorf("pastEnd(%s, %d) = %v, want %v", tc.file, tc.logPos, got, tc.want)
		}
	}
}

// TestMariaDBWriterAndBinlogCeiling runs the workload's writer on the test bed's MariaDB and reads the
// binlog range it wrote with the ceiling reader: the table ends as the committed changes say, and the
// reader stops at the range's end.
func TestMariaDBWriterAndBinlogCeiling(t *testing.T) {
	dsn, err := testenv.ParseMySQLDSN(testenv.MariaDB(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var server mariaServer
	if _, err := fmt.Sscanf(dsn.Addr, "127.0.0.1:%d", &server.Port); err != nil {
		t.Fatalf("address %s: %v", dsn.Addr, err)
	}
	server.Host, server.RootPassword = "127.0.0.1", dsn.Password
	server.CaptureUser, server.CapturePassword = testenv.MariaDBCaptureUser, testenv.MariaDBCapturePassword
	db, err := openMariaDB(ctx, server, fmt.Sprintf("cdcd_bench_test_%d", time.Now().UnixNano()%1e9), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := db.close(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	c := &capture{table: "t_mix"}
	if err := db.prepare(ctx, c); err != nil {
		t.Fatal(err)
	}
	w := newWriter(db, c.table)
	if err := w.populate(ctx, 50); err != nil {
		t.Fatal(err)
	}
	ceiling, err := db.markCeiling(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	changes, err := w.backlog(ctx, mixWorkload, 300, 40)
	if err != nil {
		t.Fatal(err)
	}
	if err := ceiling.markEnd(ctx); err != nil {
		t.Fatal(err)
	}

	ops := map[byte]int{}
	for _, ch := range changes {
		ops[ch.Op]++
	}
	if len(changes) != 300 || ops['c'] != 150 || ops['u'] != 135 || ops['d'] != 15 {
		t.Errorf("%d changes %v, want 300 in the mix's 150/135/15", len(changes), ops)
	}
	// Replaying the changes gives the rows' versions; the populated rows left alone keep version 0.
	live := map[int64]int32{}
	for _, ch := range changes {
		switch ch.Op {
		case 'd':
			delete(live, ch.ID)
		default:
			live[ch.ID] = ch.K
		}
	}
	res, err := db.conn.Execute("SELECT id, k, LENGTH(payload) FROM " + c.table)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Values) != len(w.live) {
		t.Errorf("table has %d rows, the writer knows %d live", len(res.Values), len(w.live))
	}
	for row := range res.Values {
		id, _ := res.GetInt(row, 0)
		k, _ := res.GetInt(row, 1)
		size, _ := res.GetInt(row, 2)
		if wantK, changed := live[id]; changed && int32(k) != wantK {
			t.Errorf("row %d has k %d, want %d", id, k, wantK)
		}
		if size != 1024 {
			t.Errorf("row %d has a payload of %d bytes, want 1024", id, size)
		}
	}

	if _, err := ceiling.read(ctx); err != nil {
		t.Fatalf("reading the backlog's binlog range: %v", err)
	}
}

package ddl

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// realTables exercise what MariaDB 10.11 prints in SHOW CREATE TABLE (the snapshot's DDL): its own types,
// generated and invisible columns, charsets the TiDB parser does not know, keys of every kind.
var realTables = []string{
	`CREATE TABLE mariadb_only (id INT NOT NULL PRIMARY KEY, u UUID DEFAULT uuid(), a INET4, b INET6 NOT NULL,
		g GEOMETRY, p POINT, l LINESTRING, pg POLYGON, mp MULTIPOINT, ml MULTILINESTRING, mpg MULTIPOLYGON,
		gc GEOMETRYCOLLECTION, j JSON, hidden INT INVISIBLE DEFAULT 3)`,
	`CREATE TABLE generated_cols (a INT, v INT AS (a + 1) VIRTUAL, s INT AS (a * 2) PERSISTENT,
		c VARCHAR(10) AS (CONCAT('x', a)) STORED, KEY (s))`,
	`CREATE TABLE charsets (id INT NOT NULL, l2 VARCHAR(10) CHARACTER SET latin2, u16 TEXT CHARACTER SET utf16,
		uc CHAR(3) CHARACTER SET ucs2 COLLATE ucs2_bin, b VARCHAR(5) BINARY, bin VARBINARY(3),
		e ENUM('a''s', 'b,c') CHARACTER SET latin1, st SET('x', 'y') DEFAULT 'x,y', UNIQUE KEY (id))
		DEFAULT CHARSET=cp1250 COMMENT='it''s'`,
	`CREATE TABLE keyed (a INT NOT NULL, b INT NOT NULL, c TEXT, ts TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
		ON UPDATE CURRENT_TIMESTAMP(3), z INT(4) UNSIGNED ZEROFILL, d DECIMAL(20,6) DEFAULT -1.5, f FLOAT(7,3),
		bt BIT(3) DEFAULT b'101', y YEAR, PRIMARY KEY (b, a), FULLTEXT KEY (c), CHECK (a > 0), KEY k (a) COMMENT 'k')
		ENGINE=InnoDB AUTO_INCREMENT=7`,
	`CREATE TABLE parted (id INT NOT NULL, d DATE NOT NULL, PRIMARY KEY (id, d)) PARTITION BY RANGE (YEAR(d))
		(PARTITION p0 VALUES LESS THAN (2000), PARTITION p1 VALUES LESS THAN MAXVALUE)`,
	`CREATE TABLE versioned (id INT NOT NULL PRIMARY KEY, v INT) WITH SYSTEM VERSIONING`,
	`CREATE TABLE child (id INT NOT NULL PRIMARY KEY, parent INT, CONSTRAINT fk FOREIGN KEY (parent)
		REFERENCES keyed (b) ON DELETE CASCADE) ENGINE=InnoDB`,
	`CREATE TABLE aria (id INT NOT NULL, s VARCHAR(4)) ENGINE=Aria PAGE_CHECKSUM=1 TRANSACTIONAL=1 ROW_FORMAT=PAGE`,
}

// TestShowCreateTableOfRealMariaDB reads back every table with SHOW CREATE TABLE, as a snapshot does, and
// checks that the catalog understands it: every column, in order, and the primary key the server reports.
func TestShowCreateTableOfRealMariaDB(t *testing.T) {
	dsn, err := testenv.ParseMySQLDSN(testenv.NewMariaDB(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := client.ConnectWithContext(ctx, dsn.Addr, dsn.User, dsn.Password, dsn.DB, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := NewCatalog(MariaDB)
	for _, create := range realTables {
		if _, err := conn.Execute(create); err != nil {
			t.Fatalf("%s: %v", create, err)
		}
	}
	res, err := conn.Execute("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME", dsn.DB)
	if err != nil {
		t.Fatal(err)
	}
	for i := range res.Values {
		name, _ := res.GetString(i, 0)
		show, err := conn.Execute(fmt.Sprintf("SHOW CREATE TABLE `%s`", name))
		if err != nil {
			t.Fatal(err)
		}
		ddl, _ := show.GetString(0, 1)
		changes, err := c.Apply(dsn.DB, ddl)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if len(changes) != 1 || changes[0].Table == nil {
			t.Errorf("%s: changes %+v", ddl, changes)
			continue
		}
		table := changes[0].Table
		var got []string
		for _, col := range table.Columns {
			got = append(got, col.Name)
		}
		columns := serverColumns(t, conn, dsn.DB, name)
		if !reflect.DeepEqual(got, columns) {
			t.Errorf("%s: columns %v, server has %v\n%s", name, got, columns, ddl)
		}
		// A system-versioned table's key also holds its hidden row_end, which SHOW CREATE TABLE (and so
		// Debezium) does not show.
		want := slices.DeleteFunc(serverPrimaryKey(t, conn, dsn.DB, name), func(k string) bool { return !slices.Contains(columns, k) })
		if len(want) > 0 && !reflect.DeepEqual(table.PrimaryKey, want) {
			t.Errorf("%s: primary key %v, server has %v", name, table.PrimaryKey, want)
		}
	}
}

func serverColumns(t *testing.T, conn *client.Conn, db, table string) []string {
	t.Helper()
	return queryStrings(t, conn, "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION", db, table)
}

func serverPrimaryKey(t *testing.T, conn *client.Conn, db, table string) []string {
	t.Helper()
	return queryStrings(t, conn, "SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY ORDINAL_POSITION", db, table)
}

func queryStrings(t *testing.T, conn *client.Conn, query string, args ...any) []string {
	t.Helper()
	res, err := conn.Execute(query, args...)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := range res.Values {
		s, _ := res.GetString(i, 0)
		out = append(out, s)
	}
	return out
}

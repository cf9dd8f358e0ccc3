package mysql

import (
	"strings"
	"testing"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/mysql/tables"
)

// TestOverrideColumns: a user's SELECT's columns land on the table's by name, whatever their order and
// case, the others null; a column the table does not have is refused, fatal, naming the key and the column.
func TestOverrideColumns(t *testing.T) {
	table := &tables.Table{Columns: []tables.Column{{Name: "k1"}, {Name: "k2"}, {Name: "v"}}}
	arrange, err := overrideColumns([]*gomysql.Field{{Name: []byte("V")}, {Name: []byte("k1")}}, table, "db.t")
	if err != nil {
		t.Fatal(err)
	}
	got := arrange([]gomysql.FieldValue{gomysql.NewFieldValue(gomysql.FieldValueTypeString, 0, []byte("x")), gomysql.NewFieldValue(gomysql.FieldValueTypeSigned, 7, nil)})
	if len(got) != 3 || got[0].AsInt64() != 7 || got[1].Type != gomysql.FieldValueTypeNull || string(got[2].AsString()) != "x" {
		t.Errorf("arranged %+v", got)
	}
	_, err = overrideColumns([]*gomysql.Field{{Name: []byte("k1")}, {Name: []byte("total")}}, table, "db.t")
	if err == nil || !source.IsFatal(err) || !strings.Contains(err.Error(), "snapshot.select.statement.overrides.db.t") || !strings.Contains(err.Error(), `"total"`) {
		t.Errorf("a foreign column: %v", err)
	}
}

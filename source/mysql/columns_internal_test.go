package mysql

import (
	"log/slog"
	"reflect"
	"testing"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source/mysql/ddl"
	"github.com/cdcd/cdcd/source/mysql/tables"
	"github.com/cdcd/cdcd/source/mysql/types"
	"github.com/go-mysql-org/go-mysql/replication"
)

// TestColumnMappersChangeTheRowNotTheKey: the column options map the row's fields, schema and values,
// while the key keeps the unmapped ones, as Debezium's TableSchemaBuilder builds them.
func TestColumnMappersChangeTheRowNotTheKey(t *testing.T) {
	cfg, err := ParseConfig("c", types.MariaDB, map[string]string{
		"database.hostname": "h", "database.user": "u", "database.server.id": "7", "topic.prefix": "p",
		"schema.history.internal.kafka.topic": "h", "schema.history.internal.kafka.bootstrap.servers": "b:9092",
		"column.mask.with.3.chars":     `d\.t\.code`,
		"column.propagate.source.type": `d\.t\.n`,
	}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	catalog := ddl.NewCatalog(types.MariaDB)
	if _, err := catalog.Apply("d", "CREATE TABLE t (code VARCHAR(10) PRIMARY KEY, n DECIMAL(6,2))"); err != nil {
		t.Fatal(err)
	}
	ts, err := cfg.newTableSchema(catalog.Table(tables.ID{Database: "d", Table: "t"}), schema.BinlogSourceSchema(schema.MariaDBSourceName), nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := ts.row.Fields[0].Schema.Param("masked"); v != "true" {
		t.Errorf("row field code: masked=%q", v)
	}
	if v, _ := ts.row.Fields[1].Schema.Param("__debezium.source.column.type"); v != "DECIMAL" {
		t.Errorf("row field n: source type %q", v)
	}
	if len(ts.key.Fields[0].Schema.Parameters) != 0 {
		t.Errorf("the key's field schema got parameters: %v", ts.key.Fields[0].Schema.Parameters)
	}
	row, err := ts.rowStruct([]any{"abc", nil}, func(_ *tables.Column, v any) (any, error) { return v, nil })
	if err != nil {
		t.Fatal(err)
	}
	if row.Values[0] != "***" {
		t.Errorf("row code %v, want masked", row.Values[0])
	}
	if key := ts.keyOf(row); key.Values[0] != "abc" {
		t.Errorf("key %v, want the unmapped value", key.Values)
	}
}

// compressedRows reads go-mysql's unexported RowsEvent.compressed; this fails when a go-mysql upgrade
// renames it, instead of the inflation bound of MariaDB's compressed rows events silently turning off.
func TestCompressedRowsSeesGoMySQLsField(t *testing.T) {
	f, ok := reflect.TypeOf(replication.RowsEvent{}).FieldByName("compressed")
	if !ok || f.Type.Kind() != reflect.Bool {
		t.Fatal("go-mysql's RowsEvent has no bool field compressed: update compressedRows")
	}
	if compressedRows(&replication.RowsEvent{}) {
		t.Error("an uncompressed event reads as compressed")
	}
}

package postgres

import (
	"log/slog"
	"testing"

	"github.com/jackc/pglogrepl"

	"github.com/cdcd/cdcd/source/postgres/catalog"
)

// TestColumnMappersChangeTheRowNotTheKey: the column options map the row's fields, schema and values,
// while the key keeps the unmapped ones, as Debezium's TableSchemaBuilder builds them.
func TestColumnMappersChangeTheRowNotTheKey(t *testing.T) {
	props := map[string]string{
		"database.hostname": "db", "database.user": "u", "database.dbname": "d", "topic.prefix": "p", "plugin.name": "pgoutput",
		"column.truncate.to.2.chars":               `public\.t\.code`,
		"column.mask.hash.v2.MD5.with.salt.pepper": `public\.t\.big`,
	}
	cfg, err := ParseConfig("c", props, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	info := &catalog.Table{Schema: "public", Name: "t", PrimaryKey: []string{"code"}, Columns: []catalog.Column{
		{Name: "code", Position: 1, TypeOID: 25, TypeMod: -1, TypeName: "text", NotNull: true},
		{Name: "big", Position: 2, TypeOID: 25, TypeMod: -1, TypeName: "text"},
	}}
	tbl, err := newTable(cfg, info, catalogColumns(info), nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := tbl.rowSchema.Fields[0].Schema.Param("truncateLength"); !ok || v != "2" {
		t.Errorf("row field code: truncateLength %q %v", v, ok)
	}
	if _, ok := tbl.keySchema.Fields[0].Schema.Param("truncateLength"); ok {
		t.Error("the key's field schema got the mapper's parameter")
	}

	tuple := func(cols ...*pglogrepl.TupleDataColumn) *pglogrepl.TupleData {
		return &pglogrepl.TupleData{ColumnNum: uint16(len(cols)), Columns: cols}
	}
	text := func(s string) *pglogrepl.TupleDataColumn {
		return &pglogrepl.TupleDataColumn{DataType: pglogrepl.TupleDataTypeText, Data: []byte(s)}
	}
	const bigHash = "e7fec256e6691a248f75733e359f776e" // md5sum of "pepperx"
	row, err := tbl.row(tuple(text("abcdef"), text("x")), nil, streamed)
	if err != nil {
		t.Fatal(err)
	}
	if row.Values[0] != "ab" || row.Values[1] != bigHash {
		t.Errorf("row values %q", row.Values)
	}
	if key := tbl.key(row); key.Values[0] != "abcdef" {
		t.Errorf("key %q, want the unmapped value", key.Values)
	}
	// An unchanged TOASTed value taken from the old row is mapped once only, and the key keeps its own.
	toast := &pglogrepl.TupleDataColumn{DataType: pglogrepl.TupleDataTypeToast}
	next, err := tbl.row(tuple(toast, toast), row, streamed)
	if err != nil {
		t.Fatal(err)
	}
	if next.Values[0] != "ab" || next.Values[1] != bigHash || tbl.key(next).Values[0] != "abcdef" {
		t.Errorf("row from old: values %q, key %q", next.Values, tbl.key(next).Values)
	}
}

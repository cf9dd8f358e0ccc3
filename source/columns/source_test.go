package columns_test

import (
	"testing"

	"github.com/cdcd/cdcd/source/columns"
	"github.com/cdcd/cdcd/source/mysql/tables"
	"github.com/cdcd/cdcd/source/postgres/catalog"
)

// pgColumn is a resolved catalog column of a builtin type.
func pgColumn(name string, oid uint32, mod int32) catalog.Column {
	return catalog.Column{Name: name, TypeOID: oid, TypeMod: mod, TypeName: name,
		Type: &catalog.TypeInfo{DeclaredOID: oid, OID: oid, Name: name, Kind: 'b', DomainMod: -1}}
}

// TestFromPostgres checks lengths, scales and JDBC types against what Debezium's pgoutput decoder
// derives from pgjdbc's TypeInfoCache for the same relation-message type and modifier.
func TestFromPostgres(t *testing.T) {
	const maxInt = 2147483647
	varcharArray := pgColumn("_varchar", 1015, 14)
	varcharArray.Type.Elem = &catalog.TypeInfo{DeclaredOID: 1043, OID: 1043, Name: "varchar", Kind: 'b', DomainMod: -1}
	domain := catalog.Column{Name: "dom", TypeOID: 16400, TypeMod: -1, TypeName: "positive_int",
		Type: &catalog.TypeInfo{DeclaredOID: 16400, OID: 23, Name: "int4", Kind: 'b', DomainMod: -1}}
	domainMod := catalog.Column{Name: "money2", TypeOID: 16401, TypeMod: -1, TypeName: "amount",
		Type: &catalog.TypeInfo{DeclaredOID: 16401, OID: 1700, Name: "numeric", Kind: 'b', DomainMod: 10<<16 | 2 + 4}}
	enum := catalog.Column{Name: "m", TypeOID: 16390, TypeMod: -1, TypeName: "mood",
		Type: &catalog.TypeInfo{DeclaredOID: 16390, OID: 16390, Name: "mood", Kind: 'e', DomainMod: -1}}
	unresolved := catalog.Column{Name: "t", TypeOID: 25, TypeMod: -1, TypeName: "text"} // no catalog type: a builtin
	for _, c := range []struct {
		col           catalog.Column
		length, scale int
		jdbc          int
	}{
		{pgColumn("varchar", 1043, 24), 20, 0, 12},
		{pgColumn("bpchar", 1042, 9), 5, 0, 1},
		{pgColumn("text", 25, -1), maxInt, 0, 12},
		{pgColumn("name", 19, -1), maxInt, 0, 12},
		{pgColumn("int4", 23, -1), 10, 0, 1111},
		{pgColumn("int2", 21, -1), 5, 0, 1111},
		{pgColumn("float8", 701, -1), 17, 17, 1111},
		{pgColumn("numeric", 1700, 10<<16|3+4), 10, 3, 1111},
		{pgColumn("numeric", 1700, -1), 131089, 0, 1111},
		{pgColumn("time", 1083, 3), 12, 3, 1111},
		{pgColumn("time", 1083, 1), 11, 1, 1111},
		{pgColumn("timestamptz", 1184, -1), 35, 6, 1111},
		{pgColumn("timestamp", 1114, 0), 22, 0, 1111},
		{pgColumn("date", 1082, -1), 13, 0, 1111},
		{pgColumn("bit", 1560, 1), 1, 0, 1111},
		{pgColumn("bit", 1560, -1), -1, 0, 1111},
		{pgColumn("uuid", 2950, -1), maxInt, 0, 1111},
		{varcharArray, 10, 0, 2003},
		{domain, 10, 0, 1111},
		{domainMod, 10, 2, 1111},
		{enum, maxInt, 0, 12},
		{unresolved, maxInt, 0, 12},
	} {
		got := columns.FromPostgres(c.col)
		if got.Length != c.length || got.Scale != c.scale || !got.HasScale || got.JDBCType != c.jdbc || got.TypeName != c.col.TypeName || got.Name != c.col.Name {
			t.Errorf("%s(%d): %+v, want length %d scale %d jdbc %d", c.col.TypeName, c.col.TypeMod, got, c.length, c.scale, c.jdbc)
		}
	}
}

// TestFromPostgresMetadata: pgjdbc's getColumns gives an unconstrained numeric no size and no scale;
// everything else is described as from a relation message.
func TestFromPostgresMetadata(t *testing.T) {
	if got := columns.FromPostgresMetadata(pgColumn("numeric", 1700, -1)); got.Length != 0 || got.HasScale {
		t.Errorf("numeric: %+v, want length 0 and no scale", got)
	}
	serial := pgColumn("int8", 20, -1)
	serial.HasDefault, serial.DefaultExpr = true, "nextval('ticket_seq'::regclass)"
	if got := columns.FromPostgresMetadata(serial); got.TypeName != "bigserial" || got.Length != 19 {
		t.Errorf("int8 with a nextval default: %+v, want bigserial", got)
	}
	if got := columns.FromPostgres(serial); got.TypeName != "int8" {
		t.Errorf("a relation message names the type itself: %+v", got)
	}
	for _, col := range []catalog.Column{pgColumn("numeric", 1700, 10<<16|3+4), pgColumn("text", 25, -1), pgColumn("time", 1083, 3)} {
		if got, want := columns.FromPostgresMetadata(col), columns.FromPostgres(col); got != want {
			t.Errorf("%s(%d): %+v, want %+v", col.TypeName, col.TypeMod, got, want)
		}
	}
}

func TestFromMySQL(t *testing.T) {
	got := columns.FromMySQL(&tables.Column{Name: "price", JDBCType: 3, TypeName: "DECIMAL", Length: 10, HasLength: true,
		Scale: 2, HasScale: true, Comment: "net", HasComment: true})
	want := columns.Column{Name: "price", TypeName: "DECIMAL", JDBCType: 3, Length: 10, Scale: 2, HasScale: true, Comment: "net"}
	if got != want {
		t.Errorf("%+v, want %+v", got, want)
	}
	if got := columns.FromMySQL(&tables.Column{Name: "n", TypeName: "INT", Scale: 3}); got.Length != -1 || got.HasScale {
		t.Errorf("no length or scale: %+v", got)
	}
}

// Package catalog reads a PostgreSQL table's structure the way Debezium's PostgreSQL connector does
// (nullability, defaults, primary key, replica identity, enum values, domains resolved to their base
// types) and turns each column into a Converter: the Kafka Connect schema Debezium publishes for it and
// the decoder of pgoutput's text-format values into Go values that fit that schema.
//
// The rules come from Debezium 3.6.1's PostgresConnection, PostgresValueConverter,
// PostgresDefaultValueConverter, TypeRegistry and pgoutput decoder, from JdbcValueConverters and
// TableSchemaBuilder, and from the pgjdbc 42.7.11 classes they lean on. Where the exact output depends on
// a Java detail, the comment at the code names the class it comes from.
package catalog

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Querier is what Load needs from a connection: *pgx.Conn, *pgxpool.Pool and pgx.Tx all satisfy it.
// Load runs only read-only catalog queries, one after another.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Table is a table's structure as Debezium sees it.
type Table struct {
	OID    uint32
	Schema string
	Name   string
	// Columns are the live columns in attnum order.
	Columns []Column
	// PrimaryKey are the columns of the event key, in key order: the primary key's, or, when the table has
	// none, those of its first unique index without expression columns, as Debezium falls back to
	// (JdbcConnection.readPrimaryKeyOrUniqueIndexNames: ordered clustered first, then by index name).
	// Empty when neither exists.
	PrimaryKey []string
	// KeyIndex names the index PrimaryKey was read from.
	KeyIndex string
	// ReplicaIdentity is pg_class.relreplident: 'd' default, 'n' nothing, 'f' full, 'i' index.
	ReplicaIdentity byte
	// IdentityColumns are the columns an UPDATE/DELETE old tuple carries: the primary key's under 'd', the
	// replica identity index's under 'i', every column under 'f', none under 'n'.
	IdentityColumns []string
}

// ColumnNames are the names of the table's columns, in attnum order.
func (t *Table) ColumnNames() []string {
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	return names
}

// Column is one live column of a table.
type Column struct {
	Name     string
	Position int // attnum
	// TypeOID and TypeMod are atttypid and atttypmod, the same numbers pgoutput's Relation message
	// carries; a caller may overwrite them with the message's (NewConverter then resolves builtin types by
	// OID itself).
	TypeOID uint32
	TypeMod int32
	// TypeName is the declared type's pg_type.typname: "int4", "varchar", "_text", or the name of a domain
	// or enum. Debezium picks the default-value parser by it.
	TypeName string
	NotNull  bool
	// HasDefault tells whether pg_attrdef has an expression for the column; DefaultExpr is its text as
	// pg_get_expr prints it (for a generated column: the generation expression, as JDBC reports it).
	HasDefault  bool
	DefaultExpr string
	// Comment is the column's comment. Debezium's PostgreSQL connector does not put it into the schema.
	Comment string
	// Type is the declared type resolved through domains; nil for a Column built by hand, which works
	// for builtin types only.
	Type *TypeInfo
}

// TypeInfo is a type resolved through domains to the base type the values are made of.
type TypeInfo struct {
	// DeclaredOID is the OID the column was declared with (a domain's own OID for a domain column).
	DeclaredOID uint32
	// OID, Name, Schema and Kind describe the base type: Kind is pg_type.typtype ('b' base, 'e' enum,
	// 'r' range, 'm' multirange, 'c' composite, 'd' domain (only for an array's element), 'p' pseudo).
	OID    uint32
	Name   string
	Schema string
	Kind   byte
	// DomainMod is the type modifier the nearest domain declares (numeric(10,2) for a domain over it), -1
	// when none; a column's own atttypmod takes precedence.
	DomainMod int32
	// EnumValues are an enum's labels in enumsortorder order.
	EnumValues []string
	// Elem is the element type of an array type, not resolved through domains: Debezium cannot capture
	// arrays of domains.
	Elem *TypeInfo
}

// columnsSQL reads a table's columns. A column is NOT NULL as pgjdbc's getColumns (Debezium's source of
// a field's optionality) says: its own constraint, or a NOT NULL domain as its direct type (not one a
// domain it uses is based on).
const columnsSQL = `
SELECT c.oid, c.relreplident, a.attnum, a.attname, a.atttypid, a.atttypmod, a.attnotnull OR (t.typtype = 'd' AND t.typnotnull),
       t.typname, d.adbin IS NOT NULL, coalesce(pg_get_expr(d.adbin, d.adrelid), ''),
       coalesce(col_description(c.oid, a.attnum), '')
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
JOIN pg_type t ON t.oid = a.atttypid
LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
WHERE n.nspname = $1 AND c.relname = $2
ORDER BY a.attnum`

// typesSQL reads the given types and, transitively, their domain base types and array element types.
const typesSQL = `
WITH RECURSIVE ts(oid) AS (
    SELECT unnest($1::oid[])
  UNION
    SELECT v.next FROM ts JOIN pg_type t ON t.oid = ts.oid,
      LATERAL (VALUES (t.typbasetype), (CASE WHEN t.typcategory = 'A' THEN t.typelem ELSE 0 END)) v(next)
    WHERE v.next <> 0
)
SELECT t.oid, t.typname, n.nspname, t.typtype, t.typbasetype, t.typtypmod,
       CASE WHEN t.typcategory = 'A' THEN t.typelem ELSE 0 END,
       coalesce((SELECT array_agg(e.enumlabel ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid), '{}')
FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
WHERE t.oid IN (SELECT oid FROM ts)`

// indexesSQL lists the unique indexes of a table with their columns in order, both as pgjdbc's
// getIndexInfo names them (pg_get_indexdef per position, double quotes trimmed) and as getPrimaryKeys
// does (attname; empty for an expression).
const indexesSQL = `
SELECT ci.relname, i.indisprimary, i.indisreplident, i.indisclustered, am.amname, k.ord,
       trim(both '"' from pg_get_indexdef(ci.oid, k.ord::int, false)), coalesce(a.attname, '')
FROM pg_index i
JOIN pg_class ci ON ci.oid = i.indexrelid
JOIN pg_am am ON am.oid = ci.relam
CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY k(attnum, ord)
LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum AND k.attnum > 0
WHERE i.indrelid = $1 AND i.indisunique
ORDER BY ci.relname, k.ord`

// Load reads one table. It returns an error wrapping pgx.ErrNoRows when the table does not exist.
func Load(ctx context.Context, q Querier, schemaName, table string) (*Table, error) {
	t := &Table{Schema: schemaName, Name: table}
	rows, err := q.Query(ctx, columnsSQL, schemaName, table)
	if err != nil {
		return nil, fmt.Errorf("reading columns of %s.%s: %w", schemaName, table, err)
	}
	for rows.Next() {
		var c Column
		var attnum int16
		var replident byte
		if err := rows.Scan(&t.OID, &replident, &attnum, &c.Name, &c.TypeOID, &c.TypeMod, &c.NotNull,
			&c.TypeName, &c.HasDefault, &c.DefaultExpr, &c.Comment); err != nil {
			rows.Close()
			return nil, fmt.Errorf("reading columns of %s.%s: %w", schemaName, table, err)
		}
		c.Position = int(attnum)
		t.ReplicaIdentity = replident
		t.Columns = append(t.Columns, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading columns of %s.%s: %w", schemaName, table, err)
	}
	if t.OID == 0 {
		return nil, fmt.Errorf("table %s.%s: %w", schemaName, table, pgx.ErrNoRows)
	}
	if err := resolveTypes(ctx, q, t.Columns); err != nil {
		return nil, fmt.Errorf("reading column types of %s.%s: %w", schemaName, table, err)
	}
	if err := readKeys(ctx, q, t); err != nil {
		return nil, fmt.Errorf("reading indexes of %s.%s: %w", schemaName, table, err)
	}
	return t, nil
}

// LoadAll reads every ordinary and partitioned table outside the system schemas that include accepts
// (nil accepts all), ordered by schema and name.
func LoadAll(ctx context.Context, q Querier, include func(schema, table string) bool) ([]*Table, error) {
	rows, err := q.Query(ctx, `
SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg\_toast%' AND n.nspname NOT LIKE 'pg\_temp\_%'
ORDER BY 1, 2`)
	if err != nil {
		return nil, fmt.Errorf("listing tables: %w", err)
	}
	names, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]string, error) {
		var n [2]string
		err := r.Scan(&n[0], &n[1])
		return n, err
	})
	if err != nil {
		return nil, fmt.Errorf("listing tables: %w", err)
	}
	var tables []*Table
	for _, n := range names {
		if include != nil && !include(n[0], n[1]) {
			continue
		}
		t, err := Load(ctx, q, n[0], n[1])
		if err != nil {
			return nil, err
		}
		tables = append(tables, t)
	}
	return tables, nil
}

type pgType struct {
	oid, base, elem uint32
	name, schema    string
	kind            byte
	mod             int32
	enumValues      []string
}

func resolveTypes(ctx context.Context, q Querier, cols []Column) error {
	oids := make([]uint32, 0, len(cols))
	for _, c := range cols {
		oids = append(oids, c.TypeOID)
	}
	rows, err := q.Query(ctx, typesSQL, oids)
	if err != nil {
		return err
	}
	types := map[uint32]*pgType{}
	for rows.Next() {
		var t pgType
		var kind string
		if err := rows.Scan(&t.oid, &t.name, &t.schema, &kind, &t.base, &t.mod, &t.elem, &t.enumValues); err != nil {
			rows.Close()
			return err
		}
		t.kind = kind[0]
		types[t.oid] = &t
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for i := range cols {
		info, err := resolve(types, cols[i].TypeOID)
		if err != nil {
			return fmt.Errorf("column %s: %w", cols[i].Name, err)
		}
		cols[i].Type = info
	}
	return nil
}

// resolve follows domains to the base type. The depth bound guards against a malformed catalog.
func resolve(types map[uint32]*pgType, oid uint32) (*TypeInfo, error) {
	info := &TypeInfo{DeclaredOID: oid, DomainMod: -1}
	for depth := 0; ; depth++ {
		t, ok := types[oid]
		if !ok || depth > 64 {
			return nil, fmt.Errorf("type %d not found in pg_type", oid)
		}
		if t.kind == 'd' {
			if info.DomainMod == -1 {
				info.DomainMod = t.mod
			}
			oid = t.base
			continue
		}
		info.OID, info.Name, info.Schema, info.Kind, info.EnumValues = t.oid, t.name, t.schema, t.kind, t.enumValues
		if t.elem != 0 {
			e, ok := types[t.elem]
			if !ok {
				return nil, fmt.Errorf("element type %d of %s not found in pg_type", t.elem, t.name)
			}
			info.Elem = &TypeInfo{DeclaredOID: e.oid, OID: e.oid, Name: e.name, Schema: e.schema, Kind: e.kind, DomainMod: -1, EnumValues: e.enumValues}
		}
		return info, nil
	}
}

type indexColumn struct {
	index                         string
	primary, replIdent, clustered bool
	method                        string
	position                      int64
	column                        string // as getIndexInfo prints it
	attname                       string // as getPrimaryKeys names it
}

func readKeys(ctx context.Context, q Querier, t *Table) error {
	rows, err := q.Query(ctx, indexesSQL, t.OID)
	if err != nil {
		return err
	}
	cols, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (indexColumn, error) {
		var c indexColumn
		err := r.Scan(&c.index, &c.primary, &c.replIdent, &c.clustered, &c.method, &c.position, &c.column, &c.attname)
		return c, err
	})
	if err != nil {
		return err
	}
	columnsOf := func(keep func(indexColumn) bool) (names []string, index string) {
		for _, c := range cols {
			if keep(c) && (index == "" || index == c.index) {
				index = c.index
				names = append(names, c.attname)
			}
		}
		return names, index
	}
	pk, pkIndex := columnsOf(func(c indexColumn) bool { return c.primary })
	t.PrimaryKey, t.KeyIndex = pk, pkIndex
	if len(pk) == 0 {
		t.PrimaryKey, t.KeyIndex = firstUsableUniqueIndex(cols)
	}
	switch t.ReplicaIdentity {
	case 'd':
		t.IdentityColumns = pk
	case 'i':
		t.IdentityColumns, _ = columnsOf(func(c indexColumn) bool { return c.replIdent })
	case 'f':
		for _, c := range t.Columns {
			t.IdentityColumns = append(t.IdentityColumns, c.Name)
		}
	}
	return nil
}

// Patterns of PostgresConnection.isTableUniqueIndexIncluded: an index with a column that looks like a
// function call or an expression is not a usable key. Java's matches() is a whole-string match.
var (
	functionColumn   = regexp.MustCompile(`^(?:[(]?[A-Za-z0-9_.]+\((?:.+(?:, ?.+)*)?\))$`)
	expressionColumn = regexp.MustCompile(`^(?:\(+(?:.+(?:[+ \-*/<>=~!@#%^&|` + "`" + `?] ?.+)+)+\))$`)
)

// firstUsableUniqueIndex picks the index JdbcConnection.readTableUniqueIndices would: pgjdbc's
// getIndexInfo orders by index type (clustered, hashed, other), then index name, then position, and the
// first index none of whose columns is an expression wins.
func firstUsableUniqueIndex(cols []indexColumn) ([]string, string) {
	rank := func(c indexColumn) int {
		switch {
		case c.clustered:
			return 1
		case c.method == "hash":
			return 2
		}
		return 3
	}
	sorted := slices.Clone(cols)
	slices.SortStableFunc(sorted, func(a, b indexColumn) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		if d := strings.Compare(a.index, b.index); d != 0 {
			return d
		}
		return int(a.position - b.position)
	})
	excluded := map[string]bool{}
	for _, c := range sorted {
		if functionColumn.MatchString(c.column) || expressionColumn.MatchString(c.column) {
			excluded[c.index] = true
		}
	}
	var names []string
	var index string
	for _, c := range sorted {
		if excluded[c.index] || (index != "" && c.index != index) {
			continue
		}
		index = c.index
		names = append(names, c.column)
	}
	return names, index
}

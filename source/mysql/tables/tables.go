// Package tables is the MySQL/MariaDB connectors' model of a captured table's structure, the same model
// Debezium keeps (io.debezium.relational.Table/Column): the DDL parser builds it, the schema history stores
// it (as the `tableChanges` documents), and the type mapper turns its columns into Connect schemas.
package tables

import "strings"

// ID names a table: its database and its name, as the server spells them.
type ID struct {
	Database string
	Table    string
}

// String is Debezium's TableId form in schema history documents: "db"."table".
func (id ID) String() string { return `"` + id.Database + `"."` + id.Table + `"` }

// Table is one table's structure at one binlog position.
type Table struct {
	ID ID
	// DefaultCharset is the table's default character set (defaultCharsetName), "" when unknown.
	DefaultCharset string
	// PrimaryKey lists the primary key's column names in key order; empty for a table without one.
	PrimaryKey []string
	Columns    []Column
	// Comment is the table comment, "" for none.
	Comment string
}

// ColumnNames are the names of the table's columns, in order.
func (t *Table) ColumnNames() []string {
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	return names
}

// Column returns the column named name (MySQL column names are case-insensitive), or nil.
func (t *Table) Column(name string) *Column {
	for i := range t.Columns {
		if strings.EqualFold(t.Columns[i].Name, name) {
			return &t.Columns[i]
		}
	}
	return nil
}

// Column is one column as Debezium's DDL parser records it. The field comments give the name the
// column has in a schema history `tableChanges` document.
type Column struct {
	Name string // name
	// JDBCType is java.sql.Types' code for the column (jdbcType): 4 INTEGER, 5 SMALLINT, -5 BIGINT, 12 VARCHAR…
	JDBCType int
	// TypeName is the upper-case type with UNSIGNED/ZEROFILL where given (typeName): "INT UNSIGNED", "ENUM".
	TypeName string
	// TypeExpression is what typeExpression carries; for the MySQL grammar it equals TypeName.
	TypeExpression string
	// Charset is the column's character set (charsetName) for character types, "" (null) otherwise.
	Charset string
	// Length is the declared or implied length/precision (length); HasLength false omits it.
	Length    int
	HasLength bool
	// Scale is the declared scale (scale); HasScale false omits it.
	Scale    int
	HasScale bool
	// Position is the 1-based ordinal position (position).
	Position        int
	Optional        bool // optional: NULL allowed
	AutoIncremented bool // autoIncremented
	Generated       bool // generated (Debezium sets it for AUTO_INCREMENT columns too)
	Comment         string
	HasComment      bool // comment present (non-null)
	// HasDefault is hasDefaultValue; Default is defaultValueExpression, present only when DefaultSet.
	HasDefault bool
	Default    string
	DefaultSet bool
	// EnumValues are the ENUM/SET members as written in the DDL, quotes included (enumValues): "'small'".
	EnumValues []string
}

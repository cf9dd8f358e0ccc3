package ddl

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cdcd/cdcd/source/mysql/tables"
)

// The edits below follow Debezium's TableEditor, quirks included: a table's columns keep their order and
// 1-based positions, and names match case-insensitively.

func cloneTable(t *tables.Table) *tables.Table {
	c := *t
	c.PrimaryKey = slices.Clone(t.PrimaryKey)
	c.Columns = slices.Clone(t.Columns)
	for i := range c.Columns {
		c.Columns[i].EnumValues = slices.Clone(t.Columns[i].EnumValues)
	}
	return &c
}

func columnIndex(t *tables.Table, name string) int {
	return slices.IndexFunc(t.Columns, func(c tables.Column) bool { return strings.EqualFold(c.Name, name) })
}

// addColumn replaces the column of the same name in place, or appends it.
func addColumn(t *tables.Table, c tables.Column) {
	if i := columnIndex(t, c.Name); i >= 0 {
		c.Position = t.Columns[i].Position
		t.Columns[i] = c
		return
	}
	c.Position = len(t.Columns) + 1
	t.Columns = append(t.Columns, c)
}

// removeColumn drops a column and its primary key membership.
func removeColumn(t *tables.Table, name string) {
	i := columnIndex(t, name)
	if i < 0 {
		t.PrimaryKey = slices.DeleteFunc(t.PrimaryKey, func(k string) bool { return k == name })
		return
	}
	stored := t.Columns[i].Name
	t.Columns = slices.Delete(t.Columns, i, i+1)
	renumber(t)
	t.PrimaryKey = slices.DeleteFunc(t.PrimaryKey, func(k string) bool { return k == stored })
}

// moveColumn puts a column first (after == "") or just after another; as in Debezium, an after-column that
// does not exist also puts it first.
func moveColumn(t *tables.Table, name, after string) {
	i := columnIndex(t, name)
	if i < 0 {
		return
	}
	c := t.Columns[i]
	t.Columns = slices.Delete(t.Columns, i, i+1)
	at := 0
	if after != "" {
		if j := columnIndex(t, after); j >= 0 {
			at = j + 1
		}
	}
	t.Columns = slices.Insert(t.Columns, at, c)
	renumber(t)
}

// renameColumn renames in place, carrying the primary key along.
func renameColumn(t *tables.Table, oldName, newName string) {
	i := columnIndex(t, oldName)
	if i < 0 {
		return
	}
	stored := t.Columns[i].Name
	t.Columns[i].Name = newName
	for k, pk := range t.PrimaryKey {
		if pk == stored {
			t.PrimaryKey[k] = newName
		}
	}
}

func renumber(t *tables.Table) {
	for i := range t.Columns {
		t.Columns[i].Position = i + 1
	}
}

// setPrimaryKeyFromIndex is Debezium's parsePrimaryIndexColumnNames: the key's columns become NOT NULL
// (losing an implicit NULL default), and the key lists the columns' own spelling.
func setPrimaryKeyFromIndex(t *tables.Table, names []string) {
	key := make([]string, 0, len(names))
	for _, n := range names {
		i := columnIndex(t, n)
		if i < 0 {
			key = append(key, n)
			continue
		}
		c := &t.Columns[i]
		if c.Optional {
			c.Optional = false
			if c.HasDefault && !c.DefaultSet {
				c.HasDefault = false
			}
		}
		key = append(key, c.Name)
	}
	t.PrimaryKey = key
}

// setPrimaryKeyFromUnique is Debezium's unique-index rule: a table without a primary key takes the first
// unique index whose columns all exist and are NOT NULL.
func setPrimaryKeyFromUnique(t *tables.Table, names []string) {
	if len(t.PrimaryKey) > 0 {
		return
	}
	key := make([]string, 0, len(names))
	for _, n := range names {
		i := columnIndex(t, n)
		if i < 0 || t.Columns[i].Optional {
			return
		}
		key = append(key, t.Columns[i].Name)
	}
	t.PrimaryKey = key
}

// finishTable is TableEditor.create(): columns of character types without a character set take the
// table's, and every key column must exist.
func finishTable(t *tables.Table) error {
	for i := range t.Columns {
		c := &t.Columns[i]
		if usesCharset(c.JDBCType) && (c.Charset == "" || strings.EqualFold(c.Charset, "DEFAULT")) {
			c.Charset = t.DefaultCharset
		}
	}
	for _, k := range t.PrimaryKey {
		if columnIndex(t, k) < 0 {
			return fmt.Errorf("%w: the column %q is referenced as PRIMARY KEY, but a matching column is not defined in table %s",
				ErrInvalid, k, t.ID)
		}
	}
	return nil
}

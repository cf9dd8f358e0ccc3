package ddl

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/mysql/tables"
)

// HistoryRecord is one document of the schema history topic (schema.history.internal.kafka.topic):
// Debezium's HistoryRecord with the connector's source partition, the offset the change was read at, the
// time and the change.
type HistoryRecord struct {
	// Server is the source partition's server: the connector's topic.prefix.
	Server string
	// Position is the source offset, in the order the reader builds it (Debezium writes it in its
	// offset map's order).
	Position []source.OffsetField
	// TsMs is when the change was processed (ts_ms).
	TsMs   int64
	Change Change
}

// Encode writes the record as Debezium's Kafka schema history does: Jackson's pretty-printed JSON.
func (r HistoryRecord) Encode() ([]byte, error) {
	pos := make(document, 0, len(r.Position))
	for _, f := range r.Position {
		pos = append(pos, field{f.Name, f.Value})
	}
	doc := document{
		{"source", document{{"server", r.Server}}},
		{"position", pos},
		{"ts_ms", r.TsMs},
		{"databaseName", r.Change.Database},
		{"ddl", r.Change.DDL},
		{"tableChanges", tableChangeDocuments(r.Change)},
	}
	var b bytes.Buffer
	if err := writePretty(&b, doc, 0); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// tableChangeDocuments is the change's tableChanges array: one entry for a table created, altered (when
// the table is known) or dropped, none otherwise.
func tableChangeDocuments(c Change) []any {
	switch {
	case c.Type == Drop:
		return []any{document{{"type", string(Drop)}, {"id", c.ID.String()}}}
	case (c.Type == Create || c.Type == Alter) && c.Table != nil:
		d := document{{"type", string(c.Type)}, {"id", c.ID.String()}}
		if c.PreviousID != (tables.ID{}) {
			d = append(d, field{"previousId", c.PreviousID.String()})
		}
		d = append(d, field{"table", tableDocument(c.Table)}, field{"comment", nullable(c.Table.Comment)})
		return []any{d}
	}
	return []any{}
}

func tableDocument(t *tables.Table) document {
	pk := make([]any, len(t.PrimaryKey))
	for i, k := range t.PrimaryKey {
		pk[i] = k
	}
	cols := make([]any, len(t.Columns))
	for i := range t.Columns {
		cols[i] = columnDocument(&t.Columns[i])
	}
	return document{
		{"defaultCharsetName", nullable(t.DefaultCharset)},
		{"primaryKeyColumnNames", pk},
		{"columns", cols},
		{"attributes", []any{}},
	}
}

func columnDocument(c *tables.Column) document {
	d := document{
		{"name", c.Name},
		{"jdbcType", c.JDBCType},
		{"typeName", c.TypeName},
		{"typeExpression", c.TypeExpression},
		{"charsetName", nullable(c.Charset)},
	}
	if c.HasLength {
		d = append(d, field{"length", c.Length})
	}
	if c.HasScale {
		d = append(d, field{"scale", c.Scale})
	}
	var comment any
	if c.HasComment {
		comment = c.Comment
	}
	d = append(d,
		field{"position", c.Position},
		field{"optional", c.Optional},
		field{"autoIncremented", c.AutoIncremented},
		field{"generated", c.Generated},
		field{"comment", comment},
		field{"hasDefaultValue", c.HasDefault},
	)
	if c.DefaultSet {
		d = append(d, field{"defaultValueExpression", c.Default})
	}
	enums := make([]any, len(c.EnumValues))
	for i, e := range c.EnumValues {
		enums[i] = e
	}
	return append(d, field{"enumValues", enums})
}

// nullable is "" as JSON null.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// DecodeHistoryRecord reads a schema history document. A record without table changes decodes as a
// Database change (its DDL is what recovery re-applies).
func DecodeHistoryRecord(data []byte) (HistoryRecord, error) {
	doc, err := readDocument(data)
	if err != nil {
		return HistoryRecord{}, err
	}
	var r HistoryRecord
	if src, ok := doc.get("source"); ok {
		if d, ok := src.(document); ok {
			r.Server = str(d, "server")
		}
	}
	if pos, ok := doc.get("position"); ok {
		if d, ok := pos.(document); ok {
			for _, f := range d {
				r.Position = append(r.Position, source.OffsetField{Name: f.name, Value: f.value})
			}
		}
	}
	if ts, ok := doc.get("ts_ms"); ok {
		r.TsMs, _ = ts.(int64)
	}
	r.Change = Change{Type: Database, Database: str(doc, "databaseName"), DDL: str(doc, "ddl")}
	changes, _ := doc.get("tableChanges")
	list, _ := changes.([]any)
	switch len(list) {
	case 0:
		return r, nil
	case 1:
	default:
		return HistoryRecord{}, fmt.Errorf("%w: %d table changes in one record", ErrHistory, len(list))
	}
	tc, ok := list[0].(document)
	if !ok {
		return HistoryRecord{}, fmt.Errorf("%w: a table change is not an object", ErrHistory)
	}
	if err := decodeTableChange(tc, &r.Change); err != nil {
		return HistoryRecord{}, err
	}
	return r, nil
}

func decodeTableChange(d document, c *Change) error {
	c.Type = ChangeType(str(d, "type"))
	id, err := parseTableID(str(d, "id"))
	if err != nil {
		return err
	}
	c.ID = id
	if prev := str(d, "previousId"); prev != "" {
		if c.PreviousID, err = parseTableID(prev); err != nil {
			return err
		}
	}
	switch c.Type {
	case Drop:
		return nil
	case Create, Alter:
	default:
		return fmt.Errorf("%w: table change type %q", ErrHistory, c.Type)
	}
	td, ok := get[document](d, "table")
	if !ok {
		return fmt.Errorf("%w: %s change of %s without a table", ErrHistory, c.Type, id)
	}
	t := &tables.Table{ID: id, DefaultCharset: str(td, "defaultCharsetName"), Comment: str(d, "comment")}
	pk, _ := get[[]any](td, "primaryKeyColumnNames")
	for _, k := range pk {
		if s, ok := k.(string); ok {
			t.PrimaryKey = append(t.PrimaryKey, s)
		}
	}
	cols, _ := get[[]any](td, "columns")
	for _, cv := range cols {
		cd, ok := cv.(document)
		if !ok {
			return fmt.Errorf("%w: a column of %s is not an object", ErrHistory, id)
		}
		t.Columns = append(t.Columns, decodeColumn(cd))
	}
	c.Table = t
	return nil
}

func decodeColumn(d document) tables.Column {
	c := tables.Column{
		Name:           str(d, "name"),
		JDBCType:       integer(d, "jdbcType"),
		TypeName:       str(d, "typeName"),
		TypeExpression: str(d, "typeExpression"),
		Charset:        str(d, "charsetName"),
		Position:       integer(d, "position"),
	}
	if c.TypeExpression == "" {
		c.TypeExpression = c.TypeName
	}
	_, c.HasLength = get[int64](d, "length")
	c.Length = integer(d, "length")
	_, c.HasScale = get[int64](d, "scale")
	c.Scale = integer(d, "scale")
	c.Optional, _ = get[bool](d, "optional")
	c.AutoIncremented, _ = get[bool](d, "autoIncremented")
	c.Generated, _ = get[bool](d, "generated")
	c.Comment, c.HasComment = get[string](d, "comment")
	c.HasDefault, _ = get[bool](d, "hasDefaultValue")
	if c.Default, c.DefaultSet = get[string](d, "defaultValueExpression"); c.DefaultSet {
		c.HasDefault = true
	}
	enums, _ := get[[]any](d, "enumValues")
	for _, e := range enums {
		if s, ok := e.(string); ok {
			c.EnumValues = append(c.EnumValues, s)
		}
	}
	return c
}

// get returns the named field when it has type T.
func get[T any](d document, name string) (T, bool) {
	v, _ := d.get(name)
	t, ok := v.(T)
	return t, ok
}

func str(d document, name string) string {
	s, _ := get[string](d, name)
	return s
}

func integer(d document, name string) int {
	n, _ := get[int64](d, name)
	return int(n)
}

// parseTableID reads Debezium's "db"."table" form (a doubled quote stands for a quote in a name).
func parseTableID(s string) (tables.ID, error) {
	var parts []string
	for i := 0; i < len(s); {
		if s[i] == '.' {
			i++
			continue
		}
		if s[i] != '"' {
			j := strings.IndexByte(s[i:], '.')
			if j < 0 {
				j = len(s) - i
			}
			parts = append(parts, s[i:i+j])
			i += j
			continue
		}
		var b strings.Builder
		j := i + 1
		for ; j < len(s); j++ {
			if s[j] == '"' {
				if j+1 < len(s) && s[j+1] == '"' {
					b.WriteByte('"')
					j++
					continue
				}
				break
			}
			b.WriteByte(s[j])
		}
		parts = append(parts, b.String())
		i = j + 1
	}
	switch len(parts) {
	case 1:
		return tables.ID{Table: parts[0]}, nil
	case 2:
		return tables.ID{Database: parts[0], Table: parts[1]}, nil
	}
	return tables.ID{}, fmt.Errorf("%w: table id %q", ErrHistory, s)
}

// Recover rebuilds the catalog from the schema history, oldest record first, as Debezium does on a
// restart: a record's table changes are applied as stored; a record without any has its DDL applied again
// (SET, CREATE DATABASE and USE restore the character sets new tables inherit). include selects the records
// to apply (those at or before the connector's stored offset, for this server); nil applies all.
func Recover(flavor Flavor, records [][]byte, include func(HistoryRecord) bool) (*Catalog, error) {
	c := NewCatalog(flavor)
	for i, data := range records {
		r, err := DecodeHistoryRecord(data)
		if err != nil {
			return nil, fmt.Errorf("schema history record %d: %w", i, err)
		}
		if include != nil && !include(r) {
			continue
		}
		switch ch := r.Change; {
		case ch.Type == Drop:
			delete(c.tables, ch.ID)
		case ch.Table != nil:
			if ch.PreviousID != (tables.ID{}) {
				delete(c.tables, ch.PreviousID)
			}
			c.tables[ch.ID] = ch.Table
		default:
			if _, err := c.Apply(ch.Database, ch.DDL); err != nil {
				return nil, fmt.Errorf("schema history record %d: %w", i, err)
			}
		}
	}
	return c, nil
}

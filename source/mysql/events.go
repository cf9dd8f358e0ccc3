package mysql

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/columns"
	"github.com/cdcd/cdcd/source/mysql/tables"
)

// tableSchema is one captured table's Connect schemas and column converters at one structure: rebuilt
// whenever a DDL changes the table.
type tableSchema struct {
	id      tables.ID
	topic   string
	table   *tables.Table
	fields  []int             // table column index → row field index, -1 for a column left out (column.exclude.list)
	mappers []*columns.Mapper // table column index → its column.mask/truncate/propagate mapper, nil for none
	// booleans: table column index → the boolean schema a TinyIntOneToBooleanConverter gives it, nil for none
	booleans []*schema.Schema
	row      *schema.Schema
	key      *schema.Schema // nil for a table without a primary key or message.key.columns: null keys
	keyCols  []int          // row field indexes of the key columns
	envelope *schema.Schema
	headers  []source.Header
	// keyMapped: a key column's row values are mapped, so rows carry the key's own (columns.NewRow).
	keyMapped bool
}

// newTableSchema builds a table's schemas as Debezium's TableSchemaBuilder does: the row (<topic>.Value)
// from the captured columns, the key (<topic>.Key) from the primary key, both names through
// schema.name.adjustment.mode and the field names through field.name.adjustment.mode.
func (c *Config) newTableSchema(t *tables.Table, src *schema.Schema, headers []source.Header) (*tableSchema, error) {
	ts := &tableSchema{id: t.ID, topic: c.Topics.DatabaseTableTopic(t.ID.Database, t.ID.Table), table: t, headers: headers}
	names := [3]string{schema.ValueSchemaName(ts.topic), schema.EnvelopeSchemaName(ts.topic), schema.KeySchemaName(ts.topic)}
	for i := range names {
		adjusted, err := c.SchemaNames.Adjust(names[i])
		if err != nil {
			return nil, fmt.Errorf("schema names of %s.%s: %w", t.ID.Database, t.ID.Table, err)
		}
		names[i] = adjusted
	}
	var fields []schema.Field
	var unmapped []*schema.Schema // field schemas before the column mappers: the key's
	fieldOf := map[string]int{}
	for i := range t.Columns {
		col := &t.Columns[i]
		if !c.Filter.IncludeColumn(t.ID.Database, t.ID.Table, col.Name) {
			ts.fields = append(ts.fields, -1)
			ts.mappers = append(ts.mappers, nil)
			ts.booleans = append(ts.booleans, nil)
			continue
		}
		s, err := c.Modes.Schema(col)
		if err != nil {
			return nil, fmt.Errorf("column %s of %s.%s: %w", col.Name, t.ID.Database, t.ID.Table, err)
		}
		var converted *schema.Schema
		if c.booleanColumn(t.ID.Database+"."+t.ID.Table, col) {
			s = booleanSchema(s)
			converted = s
		}
		ts.booleans = append(ts.booleans, converted)
		name, err := c.FieldNames.Adjust(col.Name)
		if err != nil {
			return nil, fmt.Errorf("column %s of %s.%s: %w", col.Name, t.ID.Database, t.ID.Table, err)
		}
		m := c.Columns.For(t.ID.Database+"."+t.ID.Table, columns.FromMySQL(col))
		fieldOf[col.Name] = len(fields)
		ts.fields = append(ts.fields, len(fields))
		ts.mappers = append(ts.mappers, m)
		fields = append(fields, schema.Field{Name: name, Schema: m.Schema(s)})
		unmapped = append(unmapped, s)
	}
	ts.row = &schema.Schema{Type: schema.StructT, Optional: true, Name: names[0], Fields: fields}
	ts.envelope = schema.EnvelopeSchema(names[1], ts.row, src)
	// message.key.columns names a table's key columns instead of its primary key, or gives a table
	// without one a key, as Debezium's KeyMapper does.
	keyCols := t.PrimaryKey
	if override, ok := c.MessageKeyColumns[t.ID.Database+"."+t.ID.Table]; ok {
		keyCols = override
	}
	if len(keyCols) > 0 {
		var keyFields []schema.Field
		for _, name := range keyCols {
			i, ok := fieldOf[name]
			if !ok {
				// Column names are case-insensitive in MySQL and MariaDB.
				for n, f := range fieldOf {
					if strings.EqualFold(n, name) {
						i, ok = f, true
					}
				}
			}
			if !ok {
				return nil, fmt.Errorf("key column %q of %s.%s is not among the captured columns (check message.key.columns and column.exclude.list)", name, t.ID.Database, t.ID.Table)
			}
			ts.keyCols = append(ts.keyCols, i)
			keyFields = append(keyFields, schema.Field{Name: fields[i].Name, Schema: unmapped[i]})
			ts.keyMapped = ts.keyMapped || ts.mappers[slices.Index(ts.fields, i)].Changes()
		}
		ts.key = &schema.Schema{Type: schema.StructT, Name: names[2], Fields: keyFields}
	}
	return ts, nil
}

// rowStruct converts one row's values (in table column order) with convert.
func (ts *tableSchema) rowStruct(values []any, convert func(col *tables.Column, v any) (any, error)) (*schema.Struct, error) {
	if len(values) != len(ts.table.Columns) {
		return nil, fmt.Errorf("row of %s.%s has %d values but the table has %d columns: the schema history does not match the binlog (was a DDL missed?)",
			ts.id.Database, ts.id.Table, len(values), len(ts.table.Columns))
	}
	row := columns.NewRow(ts.row, len(ts.keyCols))
	for i, v := range values {
		f := ts.fields[i]
		if f < 0 {
			continue
		}
		col := &ts.table.Columns[i]
		conv, err := convert(col, v)
		if err != nil {
			return nil, fmt.Errorf("column %s of %s.%s: %w", col.Name, ts.id.Database, ts.id.Table, err)
		}
		if b := ts.booleans[i]; b != nil {
			conv = asBoolean(conv, b.Optional, b.Default)
		}
		if k := slices.Index(ts.keyCols, f); ts.keyMapped && k >= 0 {
			columns.SetKeyValue(row, k, conv)
		}
		row.Values[f] = ts.mappers[i].Value(conv)
	}
	return row, nil
}

// keyOf is the key struct of a row, nil for a table without a primary key.
func (ts *tableSchema) keyOf(row *schema.Struct) *schema.Struct {
	if ts.key == nil {
		return nil
	}
	key := schema.NewStruct(ts.key)
	for i, f := range ts.keyCols {
		if ts.keyMapped {
			key.Values[i] = columns.KeyValue(row, i)
		} else {
			key.Values[i] = row.Values[f]
		}
	}
	return key
}

// event is a record of the table's topic: the envelope, or a tombstone when value is nil. extra headers
// (the key-change ones) come before the context headers, as Debezium orders them.
func (ts *tableSchema) event(key, value *schema.Struct, extra ...source.Header) source.Event {
	ev := source.Event{Topic: ts.topic, Headers: append(extra, ts.headers...)}
	if key != nil {
		ev.KeySchema, ev.Key = ts.key, key
	}
	if value != nil {
		ev.ValueSchema, ev.Value = ts.envelope, value
	}
	return ev
}

// envelope is a change event's value; now is the processing time (ts_ms/ts_us/ts_ns).
func (ts *tableSchema) envelopeValue(op string, before, after, src *schema.Struct, now time.Time) *schema.Struct {
	env := schema.NewStruct(ts.envelope)
	env.Set(schema.EnvelopeSource, src).Set(schema.EnvelopeOp, op).
		Set(schema.EnvelopeTsMs, now.UnixMilli()).Set(schema.EnvelopeTsUs, now.UnixMicro()).Set(schema.EnvelopeTsNs, now.UnixNano())
	if before != nil {
		env.Set(schema.EnvelopeBefore, before)
	}
	if after != nil {
		env.Set(schema.EnvelopeAfter, after)
	}
	return env
}

// sourceBlock is what a source block says about one event.
type sourceBlock struct {
	ts       time.Time // the event's time (binlog header seconds; the read time in a snapshot)
	snapshot string    // the marker, "" while streaming
	db       string
	table    string // "" for database-level events
	serverID int64
	gtid     string
	file     string
	pos      int64
	row      int32
	thread   int64 // -1 when unknown
	query    string
}

func (c *Config) sourceStruct(s *schema.Schema, b sourceBlock) *schema.Struct {
	src := schema.NewStruct(s).
		Set(schema.SourceVersion, source.Version).
		Set(schema.SourceConnector, c.Connector()).
		Set(schema.SourceName, c.TopicPrefix).
		Set(schema.SourceTsMs, b.ts.UnixMilli()).
		Set(schema.SourceDB, b.db).
		Set(schema.SourceTsUs, b.ts.UnixMicro()).
		Set(schema.SourceTsNs, b.ts.UnixMicro()*1000).
		Set(schema.SourceServerID, b.serverID).
		Set(schema.SourceFile, b.file).
		Set(schema.SourcePos, b.pos).
		Set(schema.SourceRow, b.row)
	if b.snapshot != "" {
		src.Set(schema.SourceSnapshot, b.snapshot)
	}
	if b.table != "" {
		src.Set(schema.SourceTable, b.table)
	}
	if b.gtid != "" {
		src.Set(schema.SourceGTID, b.gtid)
	}
	if b.thread >= 0 {
		src.Set(schema.SourceThread, b.thread)
	}
	if c.IncludeQuery && b.query != "" {
		src.Set(schema.SourceQuery, b.query)
	}
	return src
}

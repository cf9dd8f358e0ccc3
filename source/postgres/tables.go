package postgres

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/columns"
	"github.com/cdcd/cdcd/source/postgres/catalog"
)

// table is a captured table as the stream knows it: its columns in relation-message order, each with the
// converter of its type, and the Debezium schemas of its events. It is rebuilt on every relation message,
// so an ALTER TABLE is reflected from the next change on.
type table struct {
	schemaName, name string
	topic            string
	cols             []tableColumn // one per relation-message column
	rowSchema        *schema.Schema
	keySchema        *schema.Schema  // nil: no primary key (and no message.key.columns): null keys
	keyFields        []int           // row field indexes that form the key
	keyMapped        bool            // a key column's row values are mapped: rows carry the key's own (columns.NewRow)
	pkColumns        []int           // tuple column indexes of the primary key (snapshot chunk order)
	pkTypes          []string        // their SQL type names, quoted
	headers          []source.Header // Debezium's __debezium.context.* headers, on every record of the table
	log              *slog.Logger
	envelope         *schema.Schema
}

type tableColumn struct {
	name   string
	field  int // index in the row struct; -1 when the column is excluded or its type unsupported
	conv   catalog.Converter
	mapper *columns.Mapper // column.mask/truncate/propagate options; nil: none
}

// tableCache maps relation ids to tables. Relation messages arrive before a table's first change on every
// connection and again after DDL; nil entries are relations the filters exclude.
type tableCache struct {
	cfg     *Config
	sql     *pgx.Conn
	log     *slog.Logger
	headers []source.Header
	byID    map[uint32]*table
	msgVal  *schema.Schema
	// enums pins enum labels to the first list read (nil: none pinned).
	enums *catalog.EnumLabels
}

func newTableCache(cfg *Config, sql *pgx.Conn, headers []source.Header, log *slog.Logger) *tableCache {
	return &tableCache{cfg: cfg, sql: sql, headers: headers, log: log, byID: map[uint32]*table{}}
}

// get returns the table of relID, nil when it is not captured.
func (c *tableCache) get(relID uint32) (*table, error) {
	t, ok := c.byID[relID]
	if !ok {
		return nil, fmt.Errorf("change for relation %d before its relation message", relID)
	}
	return t, nil
}

// relation (re)builds a table from a relation message and the catalog. Nullability, defaults, comments,
// enum values and the primary key come from the catalog, as Debezium reads them; the column list and types
// come from the message, which describes the rows that follow it (the catalog may already show a later ALTER).
func (c *tableCache) relation(ctx context.Context, m *pglogrepl.RelationMessage) error {
	if !c.cfg.Filter.IncludeTable(m.Namespace, m.RelationName) {
		c.byID[m.RelationID] = nil
		return nil
	}
	info, err := catalog.Load(ctx, c.sql, m.Namespace, m.RelationName)
	if err != nil {
		return fmt.Errorf("reading the catalog for %s.%s: %w", m.Namespace, m.RelationName, err)
	}
	c.enums.Pin(info)
	cols := make([]relColumn, len(m.Columns))
	for i, rc := range m.Columns {
		cols[i] = relColumn{name: rc.Name, typeOID: rc.DataType, typeMod: rc.TypeModifier}
	}
	t, err := newTable(c.cfg, info, cols, c.headers, c.log)
	if err != nil {
		return err
	}
	c.byID[m.RelationID] = t
	return nil
}

// relColumn is a column as the rows that follow describe it.
type relColumn struct {
	name    string
	typeOID uint32
	typeMod int32
	// fromCatalog: the column comes from the catalog (a snapshot) rather than a relation message, and
	// Debezium describes it to the column mappers from JDBC metadata.
	fromCatalog bool
}

// catalogColumns lists a table's live columns as the catalog has them: what a snapshot's SELECT returns.
func catalogColumns(info *catalog.Table) []relColumn {
	cols := make([]relColumn, len(info.Columns))
	for i, col := range info.Columns {
		cols[i] = relColumn{name: col.Name, typeOID: col.TypeOID, typeMod: col.TypeMod, fromCatalog: true}
	}
	return cols
}

// newTable builds a table's converters and schemas for rows laid out as cols. Like Debezium's
// TableSchemaBuilder it passes the key, row and envelope schema names through schema.name.adjustment.mode
// and the column field names through field.name.adjustment.mode.
func newTable(cfg *Config, info *catalog.Table, cols []relColumn, headers []source.Header, log *slog.Logger) (*table, error) {
	t := &table{schemaName: info.Schema, name: info.Name, topic: cfg.Topics.SchemaTableTopic(info.Schema, info.Name), headers: headers, log: log}
	byName := make(map[string]catalog.Column, len(info.Columns))
	for _, col := range info.Columns {
		byName[col.Name] = col
	}
	var fields []schema.Field
	var unmapped []*schema.Schema // field schemas before the column mappers: the key's
	fieldOf := map[string]int{}   // column name → row field index
	for _, rc := range cols {
		tc := tableColumn{name: rc.name, field: -1}
		col, ok := byName[rc.name]
		if ok && cfg.Filter.IncludeColumn(info.Schema, info.Name, rc.name) {
			col.TypeOID, col.TypeMod = rc.typeOID, rc.typeMod
			conv, err := catalog.NewConverter(col, cfg.Modes)
			switch {
			case errors.Is(err, catalog.ErrUnsupportedType):
				log.Warn("column left out of the events: its type is not supported", "table", info.Schema+"."+info.Name, "column", rc.name, "error", err)
			case err != nil:
				return nil, fmt.Errorf("column %s of %s.%s: %w", rc.name, info.Schema, info.Name, err)
			default:
				fieldName, err := cfg.FieldNames.Adjust(rc.name)
				if err != nil {
					return nil, fmt.Errorf("column %s of %s.%s: %w", rc.name, info.Schema, info.Name, err)
				}
				tc.field, tc.conv = len(fields), conv
				describe := columns.FromPostgres
				if rc.fromCatalog {
					describe = columns.FromPostgresMetadata
				}
				tc.mapper = cfg.Columns.For(info.Schema+"."+info.Name, describe(col))
				fieldOf[rc.name] = tc.field
				fields = append(fields, schema.Field{Name: fieldName, Schema: tc.mapper.Schema(conv.Schema())})
				unmapped = append(unmapped, conv.Schema())
			}
		}
		t.cols = append(t.cols, tc)
	}
	valueName, envelopeName, keyName, err := t.schemaNames(cfg.SchemaNames)
	if err != nil {
		return nil, err
	}
	t.rowSchema = &schema.Schema{Type: schema.StructT, Optional: true, Name: valueName, Fields: fields}
	t.envelope = schema.EnvelopeSchema(envelopeName, t.rowSchema, schema.PostgresSourceSchema())

	for _, name := range info.PrimaryKey {
		for i, rc := range cols {
			if rc.name == name {
				t.pkColumns = append(t.pkColumns, i)
				t.pkTypes = append(t.pkTypes, pgx.Identifier{byName[name].TypeName}.Sanitize())
			}
		}
	}
	keyCols := info.PrimaryKey
	if override, ok := cfg.MessageKeyColumns[info.Schema+"."+info.Name]; ok {
		keyCols = override
	}
	if len(keyCols) > 0 {
		var keyFields []schema.Field
		for _, name := range keyCols {
			i, ok := fieldOf[name]
			if !ok {
				return nil, fmt.Errorf("key column %q of %s.%s is not among the captured columns (check message.key.columns and column.exclude.list)", name, info.Schema, info.Name)
			}
			t.keyFields = append(t.keyFields, i)
			keyFields = append(keyFields, schema.Field{Name: fields[i].Name, Schema: unmapped[i]})
			t.keyMapped = t.keyMapped || t.cols[slices.IndexFunc(t.cols, func(tc tableColumn) bool { return tc.field == i })].mapper.Changes()
		}
		t.keySchema = &schema.Schema{Type: schema.StructT, Name: keyName, Fields: keyFields}
	}
	return t, nil
}

// schemaNames returns the row, envelope and key schema names of the table's topic, adjusted.
func (t *table) schemaNames(adjuster *schema.NameAdjuster) (value, envelope, key string, err error) {
	names := []string{schema.ValueSchemaName(t.topic), schema.EnvelopeSchemaName(t.topic), schema.KeySchemaName(t.topic)}
	for i, name := range names {
		if names[i], err = adjuster.Adjust(name); err != nil {
			return "", "", "", fmt.Errorf("schema names of %s.%s: %w", t.schemaName, t.name, err)
		}
	}
	return names[0], names[1], names[2], nil
}

// rowOrigin says where a tuple was read: Debezium converts a few types differently in a snapshot (JDBC)
// than in the stream (catalog.Converter.DecodeSnapshot).
type rowOrigin bool

const (
	streamed    rowOrigin = false
	snapshotted rowOrigin = true
)

// row decodes a tuple into the row struct. An unchanged TOASTed value ('u') is taken from old when the old
// tuple carried it (REPLICA IDENTITY FULL), else it becomes unavailable.value.placeholder. A missing value of
// a NOT NULL column (a key-only old tuple) becomes the column's fallback, as Debezium writes it.
func (t *table) row(tuple *pglogrepl.TupleData, old *schema.Struct, origin rowOrigin) (*schema.Struct, error) {
	if len(tuple.Columns) != len(t.cols) {
		return nil, fmt.Errorf("tuple has %d columns, relation has %d", len(tuple.Columns), len(t.cols))
	}
	row := columns.NewRow(t.rowSchema, len(t.keyFields))
	for i, tc := range t.cols {
		if tc.field < 0 {
			continue
		}
		col := tuple.Columns[i]
		var v any
		mapped := false // a value taken from old is mapped already
		switch col.DataType {
		case pglogrepl.TupleDataTypeText:
			var err error
			decode := tc.conv.Decode
			if origin == snapshotted {
				decode = tc.conv.DecodeSnapshot
			}
			v, err = decode(col.Data)
			switch {
			case errors.Is(err, catalog.ErrSpecialDecimal):
				// Debezium writes null for a NaN or infinite numeric it cannot represent, with a warning.
				t.log.Warn("numeric NaN or Infinity written as null; use decimal.handling.mode=double or string to keep it", "table", t.schemaName+"."+t.name, "column", tc.name)
				v = nil
			case err != nil:
				return nil, fmt.Errorf("column %s: %w", tc.name, err)
			}
		case pglogrepl.TupleDataTypeToast:
			if old != nil && old.Values[tc.field] != nil {
				v, mapped = old.Values[tc.field], true
			} else {
				v = tc.conv.Unavailable()
			}
		case pglogrepl.TupleDataTypeBinary:
			return nil, fmt.Errorf("column %s arrived in binary format, which cdcd does not request", tc.name)
		}
		if v == nil && !t.rowSchema.Fields[tc.field].Schema.Optional {
			v = tc.conv.Fallback()
		}
		if t.keyMapped {
			if k := slices.Index(t.keyFields, tc.field); k >= 0 {
				raw := v
				if mapped {
					raw = columns.KeyValue(old, k)
				}
				columns.SetKeyValue(row, k, raw)
			}
		}
		if !mapped {
			v = tc.mapper.Value(v)
		}
		row.Values[tc.field] = v
	}
	return row, nil
}

// key extracts the key struct from a row; nil for keyless tables or a missing row.
func (t *table) key(row *schema.Struct) *schema.Struct {
	if t.keySchema == nil || row == nil {
		return nil
	}
	k := schema.NewStruct(t.keySchema)
	for i, f := range t.keyFields {
		if t.keyMapped {
			k.Values[i] = columns.KeyValue(row, i)
		} else {
			k.Values[i] = row.Values[f]
		}
	}
	return k
}

// event builds a record of this table; a nil value is a tombstone. Debezium writes the headers of a
// primary-key change (first) and its context headers on every data record and tombstone.
func (t *table) event(key *schema.Struct, value *schema.Struct, first ...source.Header) source.Event {
	ev := source.Event{Topic: t.topic, Headers: append(first, t.headers...)}
	if key != nil {
		ev.KeySchema, ev.Key = t.keySchema, key
	}
	if value != nil {
		ev.ValueSchema, ev.Value = t.envelope, value
	}
	return ev
}

func keysEqual(a, b *schema.Struct) bool {
	if a == nil || b == nil {
		return a == b
	}
	for i := range a.Values {
		x, y := a.Values[i], b.Values[i]
		if xb, ok := x.([]byte); ok {
			if yb, ok := y.([]byte); !ok || !bytes.Equal(xb, yb) {
				return false
			}
			continue
		}
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

// messageValueSchema is the value schema of logical decoding messages; content follows binary.handling.mode.
func (c *tableCache) messageValueSchema() *schema.Schema {
	if c.msgVal == nil {
		content := &schema.Schema{Type: schema.Bytes, Optional: true}
		if c.cfg.Modes.Binary != catalog.BinaryBytes {
			content = &schema.Schema{Type: schema.String, Optional: true}
		}
		c.msgVal = schema.PostgresMessageValueSchema(content)
	}
	return c.msgVal
}

// messageContent renders a message's content as binary.handling.mode says.
func (c *tableCache) messageContent(b []byte) (any, error) {
	switch c.cfg.Modes.Binary {
	case catalog.BinaryBytes:
		return b, nil
	case catalog.BinaryBase64:
		return base64.StdEncoding.EncodeToString(b), nil
	case catalog.BinaryBase64URLSafe:
		return base64.URLEncoding.EncodeToString(b), nil
	case catalog.BinaryHex:
		return hex.EncodeToString(b), nil
	}
	return nil, fmt.Errorf("unknown binary.handling.mode %q", c.cfg.Modes.Binary)
}

// keyAtMost reports whether the primary key of tuple is ≤ bound in the table's key order, asking
// PostgreSQL so that the comparison uses the same types, operators and collations as the snapshot's
// ORDER BY. Only asked while streaming overlaps a resumed snapshot.
func (c *tableCache) keyAtMost(t *table, tuple *pglogrepl.TupleData, bound []string) (bool, error) {
	if len(t.pkColumns) != len(bound) || tuple == nil {
		return false, fmt.Errorf("%s.%s: the snapshot's key has %d columns, the table now %d", t.schemaName, t.name, len(bound), len(t.pkColumns))
	}
	ctx := context.Background()
	var left, right []string
	args := make([]any, 0, 2*len(bound))
	for i, ci := range t.pkColumns {
		col := tuple.Columns[ci]
		if col.DataType != pglogrepl.TupleDataTypeText {
			return false, fmt.Errorf("%s.%s: key column %s has no value in the change", t.schemaName, t.name, t.cols[ci].name)
		}
		args = append(args, string(col.Data), bound[i])
		left = append(left, fmt.Sprintf("$%d::text::%s", 2*i+1, t.pkTypes[i]))
		right = append(right, fmt.Sprintf("$%d::text::%s", 2*i+2, t.pkTypes[i]))
	}
	var le bool
	err := c.sql.QueryRow(ctx, "SELECT ("+strings.Join(left, ", ")+") <= ("+strings.Join(right, ", ")+")", args...).Scan(&le)
	return le, err
}

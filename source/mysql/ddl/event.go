package ddl

import (
	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source/mysql/tables"
)

// SchemaChangeSchemas are the key and value schemas of a connector's schema change topic (<topic.prefix>).
type SchemaChangeSchemas struct {
	Key, Value *schema.Schema
	change     *schema.Schema
	table      *schema.Schema
	column     *schema.Schema
}

var (
	requiredString  = &schema.Schema{Type: schema.String}
	optionalString  = &schema.Schema{Type: schema.String, Optional: true}
	requiredInt32   = &schema.Schema{Type: schema.Int32}
	optionalInt32   = &schema.Schema{Type: schema.Int32, Optional: true}
	requiredInt64   = &schema.Schema{Type: schema.Int64}
	optionalBoolean = &schema.Schema{Type: schema.Boolean, Optional: true}
	stringArray     = &schema.Schema{Type: schema.Array, Optional: true, Items: requiredString}
)

// NewSchemaChangeSchemas builds the schemas for connector "mariadb" or "mysql"
// (io.debezium.connector.<connector>.SchemaChangeKey/Value) around the connector's source block schema.
func NewSchemaChangeSchemas(connector string, sourceSchema *schema.Schema) SchemaChangeSchemas {
	column := &schema.Schema{Type: schema.StructT, Name: "io.debezium.connector.schema.Column", Version: 1, Fields: []schema.Field{
		{Name: "name", Schema: requiredString},
		{Name: "jdbcType", Schema: requiredInt32},
		{Name: "nativeType", Schema: optionalInt32},
		{Name: "typeName", Schema: requiredString},
		{Name: "typeExpression", Schema: optionalString},
		{Name: "charsetName", Schema: optionalString},
		{Name: "length", Schema: optionalInt32},
		{Name: "scale", Schema: optionalInt32},
		{Name: "position", Schema: requiredInt32},
		{Name: "optional", Schema: optionalBoolean},
		{Name: "autoIncremented", Schema: optionalBoolean},
		{Name: "generated", Schema: optionalBoolean},
		{Name: "comment", Schema: optionalString},
		{Name: "defaultValueExpression", Schema: optionalString},
		{Name: "enumValues", Schema: stringArray},
	}}
	table := &schema.Schema{Type: schema.StructT, Optional: true, Name: "io.debezium.connector.schema.Table", Version: 1, Fields: []schema.Field{
		{Name: "defaultCharsetName", Schema: optionalString},
		{Name: "primaryKeyColumnNames", Schema: stringArray},
		{Name: "columns", Schema: &schema.Schema{Type: schema.Array, Items: column}},
		{Name: "comment", Schema: optionalString},
	}}
	change := &schema.Schema{Type: schema.StructT, Name: "io.debezium.connector.schema.Change", Version: 1, Fields: []schema.Field{
		{Name: "type", Schema: requiredString},
		{Name: "id", Schema: requiredString},
		{Name: "table", Schema: table},
	}}
	prefix := "io.debezium.connector." + connector + "."
	return SchemaChangeSchemas{
		Key: &schema.Schema{Type: schema.StructT, Name: prefix + "SchemaChangeKey", Version: 1, Fields: []schema.Field{
			{Name: "databaseName", Schema: requiredString},
		}},
		Value: &schema.Schema{Type: schema.StructT, Name: prefix + "SchemaChangeValue", Version: 1, Fields: []schema.Field{
			{Name: "source", Schema: sourceSchema},
			{Name: "ts_ms", Schema: requiredInt64},
			{Name: "databaseName", Schema: optionalString},
			{Name: "schemaName", Schema: optionalString},
			{Name: "ddl", Schema: optionalString},
			{Name: "tableChanges", Schema: &schema.Schema{Type: schema.Array, Items: change}},
		}},
		change: change,
		table:  table,
		column: column,
	}
}

// Record builds the schema change topic's key and value for a change, given the source block the reader
// built for it and the time it was processed (ts_ms, the same as its history record's).
func (s SchemaChangeSchemas) Record(sourceBlock *schema.Struct, tsMs int64, c Change) (key, value *schema.Struct) {
	key = schema.NewStruct(s.Key).Set("databaseName", c.Database)
	changes := []any{}
	switch {
	case c.Type == Drop:
		changes = append(changes, schema.NewStruct(s.change).Set("type", string(Drop)).Set("id", c.ID.String()))
	case (c.Type == Create || c.Type == Alter) && c.Table != nil:
		changes = append(changes, schema.NewStruct(s.change).Set("type", string(c.Type)).Set("id", c.ID.String()).
			Set("table", s.tableStruct(c.Table)))
	}
	value = schema.NewStruct(s.Value).
		Set("source", sourceBlock).
		Set("ts_ms", tsMs).
		Set("databaseName", c.Database).
		Set("ddl", c.DDL).
		Set("tableChanges", changes)
	return key, value
}

func (s SchemaChangeSchemas) tableStruct(t *tables.Table) *schema.Struct {
	pk := make([]any, len(t.PrimaryKey))
	for i, k := range t.PrimaryKey {
		pk[i] = k
	}
	cols := make([]any, len(t.Columns))
	for i := range t.Columns {
		c := &t.Columns[i]
		st := schema.NewStruct(s.column).
			Set("name", c.Name).
			Set("jdbcType", int32(c.JDBCType)).
			Set("typeName", c.TypeName).
			Set("typeExpression", c.TypeExpression).
			Set("charsetName", nullable(c.Charset)).
			Set("position", int32(c.Position)).
			Set("optional", c.Optional).
			Set("autoIncremented", c.AutoIncremented).
			Set("generated", c.Generated)
		if c.HasLength {
			st.Set("length", int32(c.Length))
		}
		if c.HasScale {
			st.Set("scale", int32(c.Scale))
		}
		if c.HasComment {
			st.Set("comment", c.Comment)
		}
		if c.DefaultSet {
			st.Set("defaultValueExpression", c.Default)
		}
		if len(c.EnumValues) > 0 {
			enums := make([]any, len(c.EnumValues))
			for j, e := range c.EnumValues {
				enums[j] = e
			}
			st.Set("enumValues", enums)
		}
		cols[i] = st
	}
	return schema.NewStruct(s.table).
		Set("defaultCharsetName", nullable(t.DefaultCharset)).
		Set("primaryKeyColumnNames", pk).
		Set("columns", cols).
		Set("comment", nullable(t.Comment))
}

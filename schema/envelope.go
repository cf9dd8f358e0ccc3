package schema

import "sync"

// Debezium 3.6.1's own schemas: the change-event envelope, the source block, the transaction block, and
// the heartbeat, transaction-metadata and PostgreSQL logical-message records (spec §1, §2, §4; Debezium's
// SchemaFactory, Envelope, *SourceInfoStructMaker and PostgresSchemaFactory). Field order, optionality,
// names and versions are part of the byte-level contract: JsonConverter writes them in this order and the
// Avro converter derives record schemas from them.
//
// The fixed schemas are built once and shared: they are immutable like every Schema, and converters cache
// their rendering per *Schema, so handing out one pointer keeps that cache small and hot.

// DebeziumVersion is the Debezium release cdcd reproduces; it fills the source block's version field.
const DebeziumVersion = "3.6.1.Final"

// Envelope field names, in schema order.
const (
	EnvelopeBefore      = "before"
	EnvelopeAfter       = "after"
	EnvelopeSource      = "source"
	EnvelopeTransaction = "transaction"
	EnvelopeOp          = "op"
	EnvelopeTsMs        = "ts_ms"
	EnvelopeTsUs        = "ts_us"
	EnvelopeTsNs        = "ts_ns"
)

// EnvelopeVersion is the envelope schema version (Envelope.SCHEMA_VERSION, 2 since Debezium 2.6).
const EnvelopeVersion = 2

// Op codes of Envelope.Operation.
const (
	OpRead     = "r"
	OpCreate   = "c"
	OpUpdate   = "u"
	OpDelete   = "d"
	OpTruncate = "t"
	OpMessage  = "m"
)

// Source block field names. The first nine are common to every connector, in this order.
const (
	SourceVersion   = "version"
	SourceConnector = "connector"
	SourceName      = "name"
	SourceTsMs      = "ts_ms"
	SourceSnapshot  = "snapshot"
	SourceDB        = "db"
	SourceSequence  = "sequence"
	SourceTsUs      = "ts_us"
	SourceTsNs      = "ts_ns"

	// PostgreSQL's fields after the common ones.
	SourceSchema    = "schema"
	SourceTable     = "table"
	SourceTxID      = "txId"
	SourceLSN       = "lsn"
	SourceXmin      = "xmin"
	SourceOrigin    = "origin"
	SourceOriginLSN = "origin_lsn"

	// The MySQL and MariaDB connectors' fields after the common ones (table as above).
	SourceServerID = "server_id"
	SourceGTID     = "gtid"
	SourceFile     = "file"
	SourcePos      = "pos"
	SourceRow      = "row"
	SourceThread   = "thread"
	SourceQuery    = "query"
)

// Values of the source block's snapshot field (SnapshotRecord, lower-cased), in the schema's allowed order.
// Streaming events leave the field null and JsonConverter prints the default, SnapshotFalse.
const (
	SnapshotTrue                  = "true"
	SnapshotFirst                 = "first"
	SnapshotFirstInDataCollection = "first_in_data_collection"
	SnapshotLastInDataCollection  = "last_in_data_collection"
	SnapshotLast                  = "last"
	SnapshotFalse                 = "false"
	SnapshotIncremental           = "incremental"
)

// Names of Debezium's fixed schemas. They are valid Avro names, so every schema.name.adjustment.mode leaves
// them as they are, although Debezium passes some of them through the adjuster.
const (
	PostgresSourceName           = "io.debezium.connector.postgresql.Source"
	MySQLSourceName              = "io.debezium.connector.mysql.Source"
	MariaDBSourceName            = "io.debezium.connector.mariadb.Source"
	TransactionBlockName         = "event.block"
	TransactionEventCountName    = "event.collection"
	HeartbeatKeyName             = "io.debezium.connector.common.ServerNameKey"
	HeartbeatValueName           = "io.debezium.connector.common.Heartbeat"
	TransactionMetadataKeyName   = "io.debezium.connector.common.TransactionMetadataKey"
	TransactionMetadataValueName = "io.debezium.connector.common.TransactionMetadataValue"
	PostgresMessageKeyName       = "io.debezium.connector.postgresql.MessageKey"
	PostgresMessageValueName     = "io.debezium.connector.postgresql.MessageValue"
	PostgresMessageName          = "io.debezium.connector.postgresql.Message"
)

// Field names of the transaction block and of the heartbeat, transaction-metadata and logical-message
// records, for the readers that fill them. Their ts_ms and op fields use the envelope's names.
const (
	HeartbeatServerName            = "serverName"
	TransactionStatus              = "status"
	TransactionID                  = "id"
	TransactionTotalOrder          = "total_order"
	TransactionDataCollectionOrder = "data_collection_order"
	TransactionEventCount          = "event_count"
	TransactionDataCollections     = "data_collections"
	TransactionDataCollection      = "data_collection"
	MessagePrefix                  = "prefix"
	MessageContent                 = "content"
	MessageBlock                   = "message"
)

// Primitive field schemas, shared like Connect's Schema.STRING_SCHEMA and friends.
var (
	requiredStringSchema = &Schema{Type: String}
	optionalStringSchema = &Schema{Type: String, Optional: true}
	requiredInt64Schema  = &Schema{Type: Int64}
	optionalInt64Schema  = &Schema{Type: Int64, Optional: true}
)

// EnvelopeSchema builds a data-change envelope (<topic>.Envelope): before and after share the optional row
// schema, then the required source block, the optional transaction block, the required op and the
// processing timestamps. name is the already adjusted envelope name.
func EnvelopeSchema(name string, row, source *Schema) *Schema {
	return &Schema{
		Type:    StructT,
		Name:    name,
		Version: EnvelopeVersion,
		Fields: []Field{
			{EnvelopeBefore, row},
			{EnvelopeAfter, row},
			{EnvelopeSource, source},
			{EnvelopeTransaction, TransactionBlockSchema()},
			{EnvelopeOp, requiredStringSchema},
			{EnvelopeTsMs, optionalInt64Schema},
			{EnvelopeTsUs, optionalInt64Schema},
			{EnvelopeTsNs, optionalInt64Schema},
		},
	}
}

// SnapshotSchema is the source block's snapshot field: an optional io.debezium.data.Enum listing every
// SnapshotRecord value, with default "false".
var SnapshotSchema = sync.OnceValue(func() *Schema {
	s := Enum([]string{SnapshotTrue, SnapshotFirst, SnapshotFirstInDataCollection, SnapshotLastInDataCollection,
		SnapshotLast, SnapshotFalse, SnapshotIncremental})
	s.Optional = true
	s.Default, s.HasDefault = SnapshotFalse, true
	return s
})

// sourceSchema builds a connector's source block, version 1: the nine fields every Debezium connector
// shares (SchemaFactory.sourceInfoSchemaBuilder), then the connector's own.
func sourceSchema(name string, connectorFields ...Field) *Schema {
	fields := []Field{
		{SourceVersion, requiredStringSchema},
		{SourceConnector, requiredStringSchema},
		{SourceName, requiredStringSchema},
		{SourceTsMs, requiredInt64Schema},
		{SourceSnapshot, SnapshotSchema()},
		{SourceDB, requiredStringSchema},
		{SourceSequence, optionalStringSchema},
		{SourceTsUs, optionalInt64Schema},
		{SourceTsNs, optionalInt64Schema},
	}
	return &Schema{Type: StructT, Name: name, Version: 1, Fields: append(fields, connectorFields...)}
}

// PostgresSourceSchema is io.debezium.connector.postgresql.Source (PostgresSourceInfoStructMaker).
var PostgresSourceSchema = sync.OnceValue(func() *Schema {
	return sourceSchema(PostgresSourceName,
		Field{SourceSchema, requiredStringSchema},
		Field{SourceTable, requiredStringSchema},
		Field{SourceTxID, optionalInt64Schema},
		Field{SourceLSN, optionalInt64Schema},
		Field{SourceXmin, optionalInt64Schema},
		Field{SourceOrigin, optionalStringSchema},
		Field{SourceOriginLSN, optionalInt64Schema},
	)
})

// BinlogSourceSchema is the MySQL or MariaDB source block (BinlogSourceInfoStructMaker), named
// MySQLSourceName or MariaDBSourceName; build it once per connector.
func BinlogSourceSchema(name string) *Schema {
	return sourceSchema(name,
		Field{SourceTable, optionalStringSchema},
		Field{SourceServerID, requiredInt64Schema},
		Field{SourceGTID, optionalStringSchema},
		Field{SourceFile, requiredStringSchema},
		Field{SourcePos, requiredInt64Schema},
		Field{SourceRow, &Schema{Type: Int32}},
		Field{SourceThread, optionalInt64Schema},
		Field{SourceQuery, optionalStringSchema},
	)
}

// TransactionBlockSchema is the envelope's optional transaction block, event.block v1.
var TransactionBlockSchema = sync.OnceValue(func() *Schema {
	return &Schema{Type: StructT, Optional: true, Name: TransactionBlockName, Version: 1, Fields: []Field{
		{TransactionID, requiredStringSchema},
		{TransactionTotalOrder, requiredInt64Schema},
		{TransactionDataCollectionOrder, requiredInt64Schema},
	}}
})

// HeartbeatKeySchema is the heartbeat record's key, {serverName: <topic.prefix>}.
var HeartbeatKeySchema = sync.OnceValue(func() *Schema {
	return &Schema{Type: StructT, Name: HeartbeatKeyName, Version: 1, Fields: []Field{
		{HeartbeatServerName, requiredStringSchema},
	}}
})

// HeartbeatValueSchema is the heartbeat record's value, {ts_ms: <now>}.
var HeartbeatValueSchema = sync.OnceValue(func() *Schema {
	return &Schema{Type: StructT, Name: HeartbeatValueName, Version: 1, Fields: []Field{
		{EnvelopeTsMs, requiredInt64Schema},
	}}
})

// TransactionKeySchema is the key of the transaction-metadata topic's records, {id}.
var TransactionKeySchema = sync.OnceValue(func() *Schema {
	return &Schema{Type: StructT, Name: TransactionMetadataKeyName, Version: 1, Fields: []Field{
		{TransactionID, requiredStringSchema},
	}}
})

// TransactionEventCountSchema is one entry of data_collections in a transaction END record.
var TransactionEventCountSchema = sync.OnceValue(func() *Schema {
	return &Schema{Type: StructT, Optional: true, Name: TransactionEventCountName, Version: 1, Fields: []Field{
		{TransactionDataCollection, requiredStringSchema},
		{TransactionEventCount, requiredInt64Schema},
	}}
})

// TransactionValueSchema is the value of the transaction-metadata topic's BEGIN and END records; ts_ms is
// the last field, although Debezium's documentation lists it earlier.
var TransactionValueSchema = sync.OnceValue(func() *Schema {
	return &Schema{Type: StructT, Name: TransactionMetadataValueName, Version: 1, Fields: []Field{
		{TransactionStatus, requiredStringSchema},
		{TransactionID, requiredStringSchema},
		{TransactionEventCount, optionalInt64Schema},
		{TransactionDataCollections, &Schema{Type: Array, Optional: true, Items: TransactionEventCountSchema()}},
		{EnvelopeTsMs, requiredInt64Schema},
	}}
})

// PostgresMessageKeySchema is the key of a logical decoding message record, {prefix}.
var PostgresMessageKeySchema = sync.OnceValue(func() *Schema {
	return &Schema{Type: StructT, Name: PostgresMessageKeyName, Version: 1, Fields: []Field{
		{MessagePrefix, optionalStringSchema},
	}}
})

// PostgresMessageSchema is the message block {prefix, content}; content is the binary.handling.mode
// schema of the message body (BYTES for bytes, STRING for base64, base64-url-safe and hex), made optional
// here as Debezium does.
func PostgresMessageSchema(content *Schema) *Schema {
	return &Schema{Type: StructT, Name: PostgresMessageName, Version: 1, Fields: []Field{
		{MessagePrefix, optionalStringSchema},
		{MessageContent, content.WithOptional(true)},
	}}
}

// PostgresMessageValueSchema is the value of a logical decoding message record: op, ts_ms, source,
// transaction and the message block. Build it once per connector: each call returns a new schema.
func PostgresMessageValueSchema(content *Schema) *Schema {
	return &Schema{Type: StructT, Name: PostgresMessageValueName, Version: 1, Fields: []Field{
		{EnvelopeOp, requiredStringSchema},
		{EnvelopeTsMs, optionalInt64Schema},
		{EnvelopeSource, PostgresSourceSchema()},
		{EnvelopeTransaction, TransactionBlockSchema()},
		{MessageBlock, PostgresMessageSchema(content)},
	}}
}

// Package source holds what every database reader shares: the events a reader emits, grouped into batches
// that end where a durable position may be recorded, and the typed position a reader releases to its
// database once that position is durable.
package source

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/cdcd/cdcd/schema"
)

// Event is one Kafka Connect record before conversion: a topic, a key and a value with their schemas, and
// headers. A nil ValueSchema with a nil Value is a tombstone.
type Event struct {
	Topic       string
	KeySchema   *schema.Schema
	Key         any
	ValueSchema *schema.Schema
	Value       any
	Headers     []Header
	// Timestamp is the record's Kafka timestamp; zero (as on Debezium's own records) lets the producer
	// stamp it when sending. Transforms such as the outbox EventRouter set it.
	Timestamp time.Time
}

// Header is a Connect header: converted by the worker's header.converter.
type Header struct {
	Key    string
	Schema *schema.Schema
	Value  any
}

// Position is a reader's typed position (a PostgreSQL LSN, a binlog file and offset, a GTID set). Its String
// form is what logs and stream errors show.
type Position interface {
	String() string
}

// Batch is a run of events that the pipeline delivers in order. Batches end at transaction boundaries, except
// that a transaction too large to hold is split into several batches: every part but the last carries a nil
// Offset, so nothing is recorded until the whole transaction is delivered.
type Batch struct {
	Events []Event
	// Offset is the source offset (Connect's offset map) to record once this batch and every batch before it
	// are acknowledged by Kafka; nil when the batch ends inside a transaction.
	Offset []OffsetField
	// Position is the database position that Offset stands for; the reader may release it to the database
	// only after Offset is durable.
	Position Position
}

// Version is cdcd's version: what source.version carries in every event and `cdcd version` prints. Release
// builds set it with -ldflags "-X github.com/cdcd/cdcd/source.Version=…".
var Version = "0.1.0-dev"

// OffsetField is one entry of a source offset map. An offset is a list, not a Go map, because Debezium's
// offsets are Java HashMaps: where two keys share a hash bucket, the stored JSON lists them in the order
// Debezium put them, and byte-equal offsets need that order.
type OffsetField struct {
	Name  string
	Value any
}

// TableSchemas is a captured table's topic and the key and envelope schemas its next events would carry.
type TableSchemas struct {
	Schema, Table string // the table's schema (PostgreSQL) or database (MySQL), and its name
	Topic         string
	Key           *schema.Schema // nil: the table has no key, its events have null keys
	Value         *schema.Schema // the envelope
}

// ContextHeaders are the headers Debezium puts on every data record and tombstone: the connector's logical
// name (topic.prefix), task id, connector type (postgresql, mysql, mariadb) and a run id new at every start.
func ContextHeaders(logicalName, connector string) []Header {
	str := &schema.Schema{Type: schema.String}
	return []Header{
		{Key: "__debezium.context.connectorLogicalName", Schema: str, Value: logicalName},
		{Key: "__debezium.context.taskId", Schema: str, Value: "0"},
		{Key: "__debezium.context.connectorName", Schema: str, Value: connector},
		{Key: "__debezium.context.runId", Schema: str, Value: newRunID()},
	}
}

// newRunID is Debezium's __debezium.context.runId: a time-ordered UUID (version 7) per task run.
func newRunID() string {
	var b [16]byte
	rand.Read(b[:])
	ms := uint64(time.Now().UnixMilli())
	for i := 0; i < 6; i++ {
		b[i] = byte(ms >> (40 - 8*i))
	}
	b[6] = 0x70 | b[6]&0x0f
	b[8] = 0x80 | b[8]&0x3f
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// HeartbeatEvent is Debezium's heartbeat record on topic: key {serverName: logicalName}, value {ts_ms}.
func HeartbeatEvent(topic, logicalName string, now time.Time) Event {
	keySchema, valueSchema := schema.HeartbeatKeySchema(), schema.HeartbeatValueSchema()
	return Event{
		Topic:     topic,
		KeySchema: keySchema, Key: schema.NewStruct(keySchema).Set(schema.HeartbeatServerName, logicalName),
		ValueSchema: valueSchema, Value: schema.NewStruct(valueSchema).Set(schema.EnvelopeTsMs, now.UnixMilli()),
	}
}

// OffsetInt64 reads a number of a stored offset, as Debezium's offset loaders cast to Long: the value may
// arrive as any Go integer, a json.Number or a float64 from a generic JSON decoder, but must be integral.
func OffsetInt64(v any) (int64, error) {
	switch n := v.(type) {
	case int64:
		return n, nil
	case int:
		return int64(n), nil
	case int32:
		return int64(n), nil
	case uint64:
		if n > math.MaxInt64 {
			return 0, fmt.Errorf("%d overflows int64", n)
		}
		return int64(n), nil
	case json.Number:
		return n.Int64()
	case float64:
		if n != math.Trunc(n) {
			return 0, fmt.Errorf("%v is not an integer", n)
		}
		return int64(n), nil
	}
	return 0, fmt.Errorf("%v (%T) is not a number", v, v)
}

package transforms

import (
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
)

// outboxChangeWithColumn is outboxChange (a create routed to "order") of an outbox table with one more
// column, "created", of the given schema and value.
func outboxChangeWithColumn(columnSchema *schema.Schema, value any) source.Event {
	ev := outboxChange(schema.OpCreate, "order", `{"id":1}`)
	env := ev.Value.(*schema.Struct)
	base := env.Get(schema.EnvelopeAfter).(*schema.Struct)
	rowSchema := *outboxRowSchema
	rowSchema.Fields = append(append([]schema.Field(nil), outboxRowSchema.Fields...), schema.Field{Name: "created", Schema: columnSchema})
	r := &schema.Struct{Schema: &rowSchema, Values: append(append([]any(nil), base.Values...), value)}
	envSchema := schema.EnvelopeSchema("srv.public.outbox.Envelope", &rowSchema, schema.PostgresSourceSchema())
	ev.ValueSchema = envSchema
	ev.Value = schema.NewStruct(envSchema).Set(schema.EnvelopeOp, schema.OpCreate).
		Set(schema.EnvelopeTsMs, env.Get(schema.EnvelopeTsMs)).Set(schema.EnvelopeAfter, r)
	return ev
}

// envelopeTsMs is the ts_ms of outboxChange's envelopes.
var envelopeTsMs = time.UnixMilli(1700000000123)

// Without table.field.event.timestamp the routed record carries the envelope's ts_ms, as Debezium's does.
func TestEventRouterTimestampDefaultsToEnvelopeTsMs(t *testing.T) {
	ev, _ := run(t, mustChain(t, outboxProps()), outboxChange(schema.OpCreate, "order", "p"))
	if !ev.Timestamp.Equal(envelopeTsMs) {
		t.Errorf("timestamp %v, want the envelope's ts_ms %v", ev.Timestamp, envelopeTsMs)
	}
	noTs := outboxChange(schema.OpCreate, "order", "p")
	noTs.Value.(*schema.Struct).Set(schema.EnvelopeTsMs, nil)
	if ev, _ := run(t, mustChain(t, outboxProps()), noTs); !ev.Timestamp.IsZero() {
		t.Errorf("timestamp %v without ts_ms, want none", ev.Timestamp)
	}
}

// The column's Debezium timestamp types are truncated to milliseconds (toward zero, as Java's division);
// a null column falls back to ts_ms.
func TestEventRouterTimestampColumn(t *testing.T) {
	c := mustChain(t, outboxProps("table.field.event.timestamp", "created"))
	for _, tc := range []struct {
		name   string
		schema *schema.Schema
		value  any
		want   time.Time
	}{
		{"Timestamp", schema.DebeziumTimestamp(), int64(1600000000001), time.UnixMilli(1600000000001)},
		{"MicroTimestamp", schema.MicroTimestamp(), int64(1600000000001999), time.UnixMilli(1600000000001)},
		{"NanoTimestamp", schema.NanoTimestamp(), int64(1600000000001999999), time.UnixMilli(1600000000001)},
		{"negative MicroTimestamp", schema.MicroTimestamp(), int64(-1500), time.UnixMilli(-1)},
		{"null", schema.MicroTimestamp().WithOptional(true), nil, envelopeTsMs},
	} {
		ev, keep := run(t, c, outboxChangeWithColumn(tc.schema, tc.value))
		if !keep || !ev.Timestamp.Equal(tc.want) {
			t.Errorf("%s: timestamp %v (kept %v), want %v", tc.name, ev.Timestamp, keep, tc.want)
		}
	}
}

func TestEventRouterTimestampColumnErrors(t *testing.T) {
	c := mustChain(t, outboxProps("table.field.event.timestamp", "created"))
	for _, tc := range []struct {
		name   string
		schema *schema.Schema
		value  any
		want   string
	}{
		{"ZonedTimestamp", schema.ZonedTimestamp(), "2020-09-13T12:26:40Z", `field "created" is not of type INT64`},
		{"plain INT64", &schema.Schema{Type: schema.Int64}, int64(1), "without logical schema name"},
		{"Connect Timestamp", schema.ConnectTimestamp(), int64(1), "unsupported field type org.apache.kafka.connect.data.Timestamp"},
		// Debezium checks the type before the value: a null of the wrong type fails too.
		{"null ZonedTimestamp", schema.ZonedTimestamp().WithOptional(true), nil, "not of type INT64"},
	} {
		ev := outboxChangeWithColumn(tc.schema, tc.value)
		if _, err := c.Transform(&ev); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	ev := outboxChange(schema.OpCreate, "order", "p")
	if _, err := c.Transform(&ev); err == nil || !strings.Contains(err.Error(), "unable to find timestamp field created") {
		t.Errorf("missing column: error %v", err)
	}
}

// A later transform sees the routed record's timestamp, as Kafka's TimestampRouter does after Debezium's.
func TestEventRouterTimestampReachesLaterTransforms(t *testing.T) {
	props := outboxProps("table.field.event.timestamp", "created")
	props["transforms"] = "outbox,ts"
	props["transforms.ts.type"] = "org.apache.kafka.connect.transforms.TimestampRouter"
	props["transforms.ts.timestamp.format"] = "yyyy-MM-dd"
	ev, _ := run(t, mustChain(t, props), outboxChangeWithColumn(schema.DebeziumTimestamp(), int64(1600000000001)))
	if ev.Topic != "outbox.event.order-2020-09-13" {
		t.Errorf("topic %q, want outbox.event.order-2020-09-13", ev.Topic)
	}
}

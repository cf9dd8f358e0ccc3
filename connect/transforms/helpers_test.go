package transforms

import (
	"log/slog"
	"testing"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
)

// Fixtures: a PostgreSQL change event for table public.customers of server "srv", as the reader builds it.
var (
	keySchema = &schema.Schema{Type: schema.StructT, Name: "srv.public.customers.Key", Fields: []schema.Field{
		{Name: "id", Schema: &schema.Schema{Type: schema.Int32}},
	}}
	rowSchema = &schema.Schema{Type: schema.StructT, Optional: true, Name: "srv.public.customers.Value", Fields: []schema.Field{
		{Name: "id", Schema: &schema.Schema{Type: schema.Int32}},
		{Name: "name", Schema: &schema.Schema{Type: schema.String, Optional: true}},
		{Name: "status", Schema: &schema.Schema{Type: schema.String, Optional: true, Default: "new", HasDefault: true}},
	}}
	envelopeSchema = schema.EnvelopeSchema("srv.public.customers.Envelope", rowSchema, schema.PostgresSourceSchema())
)

func row(id int32, name, status any) *schema.Struct {
	return &schema.Struct{Schema: rowSchema, Values: []any{id, name, status}}
}

// change builds a change event; before or after may be nil.
func change(op string, before, after *schema.Struct) source.Event {
	src := schema.NewStruct(schema.PostgresSourceSchema()).
		Set(schema.SourceVersion, schema.DebeziumVersion).Set(schema.SourceConnector, "postgresql").
		Set(schema.SourceName, "srv").Set(schema.SourceTsMs, int64(1700000000000)).Set(schema.SourceDB, "app").
		Set(schema.SourceSchema, "public").Set(schema.SourceTable, "customers").Set(schema.SourceLSN, int64(4242))
	env := schema.NewStruct(envelopeSchema).Set(schema.EnvelopeSource, src).Set(schema.EnvelopeOp, op).
		Set(schema.EnvelopeTsMs, int64(1700000000123))
	if before != nil {
		env.Set(schema.EnvelopeBefore, before)
	}
	if after != nil {
		env.Set(schema.EnvelopeAfter, after)
	}
	id := int32(1)
	if after != nil {
		id = after.Values[0].(int32)
	} else if before != nil {
		id = before.Values[0].(int32)
	}
	return source.Event{Topic: "srv.public.customers", KeySchema: keySchema,
		Key: &schema.Struct{Schema: keySchema, Values: []any{id}}, ValueSchema: envelopeSchema, Value: env}
}

func tombstone() source.Event {
	return source.Event{Topic: "srv.public.customers", KeySchema: keySchema, Key: &schema.Struct{Schema: keySchema, Values: []any{int32(1)}}}
}

func heartbeat() source.Event {
	return source.Event{Topic: "__debezium-heartbeat.srv", KeySchema: schema.HeartbeatKeySchema(),
		Key:         schema.NewStruct(schema.HeartbeatKeySchema()).Set(schema.HeartbeatServerName, "srv"),
		ValueSchema: schema.HeartbeatValueSchema(),
		Value:       schema.NewStruct(schema.HeartbeatValueSchema()).Set(schema.EnvelopeTsMs, int64(5))}
}

func mustChain(t *testing.T, props map[string]string) *Chain {
	t.Helper()
	c, err := New(props, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// run applies the chain to ev and returns the result and whether it was kept.
func run(t *testing.T, c *Chain, ev source.Event) (source.Event, bool) {
	t.Helper()
	keep, err := c.Transform(&ev)
	if err != nil {
		t.Fatalf("Transform: %v", err)
	}
	return ev, keep
}

// fieldNames lists a struct schema's fields as name:type[?] for compact comparison.
func fieldNames(s *schema.Schema) []string {
	var out []string
	for _, f := range s.Fields {
		n := f.Name + ":" + string(f.Schema.Type)
		if f.Schema.Optional {
			n += "?"
		}
		out = append(out, n)
	}
	return out
}

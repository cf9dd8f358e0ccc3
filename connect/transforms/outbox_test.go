package transforms

import (
	"errors"
	"log/slog"
	"reflect"
	"testing"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
)

// Fixtures: the outbox table public.outbox of server "srv" with Debezium's default columns and a version.
var (
	uuidSchema      = &schema.Schema{Type: schema.String, Name: "io.debezium.data.Uuid", Version: 1}
	outboxRowSchema = &schema.Schema{Type: schema.StructT, Optional: true, Name: "srv.public.outbox.Value", Fields: []schema.Field{
		{Name: "id", Schema: uuidSchema},
		{Name: "aggregatetype", Schema: &schema.Schema{Type: schema.String}},
		{Name: "aggregateid", Schema: &schema.Schema{Type: schema.String}},
		{Name: "type", Schema: &schema.Schema{Type: schema.String}},
		{Name: "payload", Schema: &schema.Schema{Type: schema.String, Optional: true}},
		{Name: "version", Schema: &schema.Schema{Type: schema.Int32, Optional: true}},
	}}
	outboxEnvelopeSchema = schema.EnvelopeSchema("srv.public.outbox.Envelope", outboxRowSchema, schema.PostgresSourceSchema())
)

// outboxChange builds a change event of the outbox table whose row (after, or before for a delete) has
// the given aggregate type and payload.
func outboxChange(op, aggregateType string, payload any) source.Event {
	r := &schema.Struct{Schema: outboxRowSchema, Values: []any{"6f1c0a8e-0000-4000-8000-000000000001", aggregateType, "o-1", "OrderCreated", payload, int32(3)}}
	env := schema.NewStruct(outboxEnvelopeSchema).Set(schema.EnvelopeOp, op).Set(schema.EnvelopeTsMs, int64(1700000000123))
	if op == schema.OpDelete {
		env.Set(schema.EnvelopeBefore, r)
	} else {
		env.Set(schema.EnvelopeAfter, r)
	}
	return source.Event{Topic: "srv.public.outbox", ValueSchema: outboxEnvelopeSchema, Value: env,
		Headers: []source.Header{{Key: "__debezium.context.taskId", Schema: requiredStringSchema, Value: "0"}}}
}

func outboxProps(extra ...string) map[string]string {
	p := map[string]string{"transforms": "outbox", "transforms.outbox.type": "io.debezium.transforms.outbox.EventRouter"}
	for i := 0; i+1 < len(extra); i += 2 {
		p["transforms.outbox."+extra[i]] = extra[i+1]
	}
	return p
}

func headerKeys(ev source.Event) []string {
	var keys []string
	for _, h := range ev.Headers {
		keys = append(keys, h.Key)
	}
	return keys
}

func TestEventRouterDefaults(t *testing.T) {
	ev, keep := run(t, mustChain(t, outboxProps()), outboxChange(schema.OpCreate, "order", `{"id":1}`))
	if !keep {
		t.Fatal("create dropped")
	}
	if ev.Topic != "outbox.event.order" {
		t.Errorf("topic %q, want outbox.event.order", ev.Topic)
	}
	if ev.Key != "o-1" || ev.KeySchema != outboxRowSchema.Fields[2].Schema {
		t.Errorf("key %v (%+v), want the aggregateid column", ev.Key, ev.KeySchema)
	}
	// Without envelope placements the value is the bare payload column.
	if ev.Value != `{"id":1}` || ev.ValueSchema != outboxRowSchema.Fields[4].Schema {
		t.Errorf("value %v (%+v), want the payload column", ev.Value, ev.ValueSchema)
	}
	if got := headerKeys(ev); !reflect.DeepEqual(got, []string{"__debezium.context.taskId", "id"}) {
		t.Errorf("headers %v", got)
	}
	if h := ev.Headers[1]; h.Value != "6f1c0a8e-0000-4000-8000-000000000001" || h.Schema != uuidSchema {
		t.Errorf("id header %+v, want the event id with its column schema", h)
	}
}

func TestEventRouterSkips(t *testing.T) {
	c := mustChain(t, outboxProps())
	for _, tc := range []struct {
		name string
		in   source.Event
		keep bool
	}{
		{"update skipped with a warning", outboxChange(schema.OpUpdate, "order", "x"), false},
		{"delete skipped", outboxChange(schema.OpDelete, "order", "x"), false},
		{"tombstone dropped", tombstone(), false},
		{"heartbeat passes", heartbeat(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, keep := run(t, c, tc.in)
			if keep != tc.keep {
				t.Fatalf("keep %v, want %v", keep, tc.keep)
			}
			if keep && ev.Topic != tc.in.Topic {
				t.Errorf("topic changed to %q", ev.Topic)
			}
		})
	}
	fatal := mustChain(t, outboxProps("table.op.invalid.behavior", "fatal"))
	ev := outboxChange(schema.OpUpdate, "order", "x")
	if _, err := fatal.Transform(&ev); err == nil {
		t.Error("fatal: an update passed")
	}
}

func TestEventRouterEnvelopeAndHeaders(t *testing.T) {
	c := mustChain(t, outboxProps("route.topic.replacement", "events.${routedByValue}",
		"table.fields.additional.placement", "type:header:eventType,aggregateid:envelope:aggregate"))
	ev, _ := run(t, c, outboxChange(schema.OpCreate, "order", "p1"))
	if ev.Topic != "events.order" {
		t.Errorf("topic %q", ev.Topic)
	}
	if got := headerKeys(ev); !reflect.DeepEqual(got, []string{"__debezium.context.taskId", "id", "eventType"}) {
		t.Errorf("headers %v", got)
	}
	if ev.ValueSchema.Name != "srv.public.outbox.order.Value" || !reflect.DeepEqual(fieldNames(ev.ValueSchema), []string{"payload:string?", "aggregate:string"}) {
		t.Errorf("value schema %s %v", ev.ValueSchema.Name, fieldNames(ev.ValueSchema))
	}
	if got := ev.Value.(*schema.Struct).Values; !reflect.DeepEqual(got, []any{"p1", "o-1"}) {
		t.Errorf("value %v", got)
	}
	// Debezium caches the value schema by payload schema: the first route-by value keeps naming it.
	ev, _ = run(t, c, outboxChange(schema.OpCreate, "customer", "p2"))
	if ev.Topic != "events.customer" || ev.ValueSchema.Name != "srv.public.outbox.order.Value" {
		t.Errorf("second event: topic %q, schema %q", ev.Topic, ev.ValueSchema.Name)
	}
}

func TestEventRouterSchemaVersion(t *testing.T) {
	c := mustChain(t, outboxProps("table.field.event.schema.version", "version",
		"table.fields.additional.placement", "type:envelope"))
	ev, _ := run(t, c, outboxChange(schema.OpCreate, "order", "p"))
	if ev.ValueSchema.Version != 3 {
		t.Errorf("version %d, want the row's 3", ev.ValueSchema.Version)
	}
}

func TestEventRouterTombstoneOnEmptyPayload(t *testing.T) {
	on := mustChain(t, outboxProps("route.tombstone.on.empty.payload", "true", "table.fields.additional.placement", "type:envelope"))
	off := mustChain(t, outboxProps())
	for _, payload := range []any{nil, "", " \t\n"} {
		ev, keep := run(t, on, outboxChange(schema.OpCreate, "order", payload))
		if !keep || ev.Value != nil || ev.ValueSchema != nil || ev.Key != "o-1" || ev.Topic != "outbox.event.order" {
			t.Errorf("payload %q: keep %v, value %v (%v), key %v, topic %s: want a routed tombstone", payload, keep, ev.Value, ev.ValueSchema, ev.Key, ev.Topic)
		}
		ev, _ = run(t, off, outboxChange(schema.OpCreate, "order", payload))
		if ev.ValueSchema == nil {
			t.Errorf("payload %q: a tombstone although route.tombstone.on.empty.payload is off", payload)
		}
	}
	if ev, _ := run(t, on, outboxChange(schema.OpCreate, "order", " x ")); ev.Value == nil {
		t.Error("a non-blank payload became a tombstone")
	}
}

func TestEventRouterMissingFields(t *testing.T) {
	ev := outboxChange(schema.OpCreate, "order", "p")
	c := mustChain(t, outboxProps("table.fields.additional.placement", "nope:envelope,nope:header", "table.field.additional.missing", "ignore"))
	out, _ := run(t, c, ev)
	if got := fieldNames(out.ValueSchema); !reflect.DeepEqual(got, []string{"payload:string?"}) {
		t.Errorf("ignore: value fields %v", got)
	}
	for _, props := range []map[string]string{
		outboxProps("table.fields.additional.placement", "nope:envelope"),
		outboxProps("table.field.event.payload", "body"),
		outboxProps("table.field.event.id", "uuid"),
		outboxProps("route.by.field", "nope"),
	} {
		ev := outboxChange(schema.OpCreate, "order", "p")
		if _, err := mustChain(t, props).Transform(&ev); err == nil {
			t.Errorf("%v: no error for a missing column", props)
		}
	}
}

func TestEventRouterConfig(t *testing.T) {
	for _, extra := range [][]string{
		{"table.fields.additional.placement", "type"},
		{"table.fields.additional.placement", "type:sideways"},
		{"table.fields.additional.placement", "type:partition"},
		{"table.op.invalid.behavior", "shrug"},
		{"table.expand.json.payload", "maybe"},
		{"table.json.payload.null.behavior", "keep"},
		{"table.expand.json.payload", "true", "field.name.adjustment.mode", "camel"},
		{"route.topic.regex", "(a"},
		{"route.topic.replacement", "${nope}"},
	} {
		_, err := New(outboxProps(extra...), slog.New(slog.DiscardHandler))
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%v: got %v, want a *ConfigError", extra, err)
		}
	}
}

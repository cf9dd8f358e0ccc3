package transforms

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/schema"
)

// renderSchema renders a schema compactly: type, "?" when optional, a struct's name and fields, an
// array's items.
func renderSchema(s *schema.Schema) string {
	if s == nil {
		return "<nil>"
	}
	out := string(s.Type)
	if s.Optional {
		out += "?"
	}
	switch s.Type {
	case schema.StructT:
		var fields []string
		for _, f := range s.Fields {
			fields = append(fields, f.Name+":"+renderSchema(f.Schema))
		}
		out += " " + s.Name + " {" + strings.Join(fields, ", ") + "}"
	case schema.Array:
		out += "<" + renderSchema(s.Items) + ">"
	}
	return out
}

// renderValue renders a value compactly, structs as {field=value ...} with null fields left out.
func renderValue(v any) string {
	switch v := v.(type) {
	case *schema.Struct:
		var fields []string
		for i, f := range v.Schema.Fields {
			if v.Values[i] != nil {
				fields = append(fields, f.Name+"="+renderValue(v.Values[i]))
			}
		}
		return "{" + strings.Join(fields, " ") + "}"
	case []any:
		var items []string
		for _, item := range v {
			items = append(items, renderValue(item))
		}
		return "[" + strings.Join(items, " ") + "]"
	case nil:
		return "null"
	case string:
		return `"` + v + `"`
	}
	return fmt.Sprintf("%T(%v)", v, v)
}

func expandProps(extra ...string) map[string]string {
	return outboxProps(append([]string{"table.expand.json.payload", "true"}, extra...)...)
}

// A JSON object payload becomes a struct whose schema is inferred as Debezium's JsonSchemaData infers it.
func TestEventRouterExpandsJSONPayload(t *testing.T) {
	payload := `{"s":"x","b":true,"i":-7,"l":3000000000,"d":1.5,"e":1e2,"n":null,"o":{"k":"v","p":{"q":1}},` +
		`"a":[1,null,2],"ea":[],"aa":[["x"],["y","z"]],"ao":[{"x":1},null,{"x":2}]}`
	ev, _ := run(t, mustChain(t, expandProps()), outboxChange(schema.OpCreate, "order", payload))
	wantSchema := "struct? payload {s:string?, b:boolean?, i:int32?, l:int64?, d:double?, e:double?, " +
		"o:struct? payload.o {k:string?, p:struct? payload.o.p {q:int32?}}, a:array?<int32?>, aa:array?<array?<string?>>, " +
		"ao:array?<struct? payload.ao {x:int32?}>}"
	if got := renderSchema(ev.ValueSchema); got != wantSchema {
		t.Errorf("schema\n got %s\nwant %s", got, wantSchema)
	}
	wantValue := `{s="x" b=bool(true) i=int32(-7) l=int64(3000000000) d=float64(1.5) e=float64(100) o={k="v" p={q=int32(1)}} ` +
		`a=[int32(1) null int32(2)] aa=[["x"] ["y" "z"]] ao=[{x=int32(1)} null {x=int32(2)}]}`
	if got := renderValue(ev.Value); got != wantValue {
		t.Errorf("value\n got %s\nwant %s", got, wantValue)
	}
}

// Objects of different shapes in one array merge into one struct, which, built as SchemaUtil's copy of
// the first, is no longer optional; with table.json.payload.null.behavior=optional_bytes a null member is
// an optional bytes field, which a typed member of another item replaces.
func TestEventRouterExpandsMergedArraysAndNulls(t *testing.T) {
	payload := `{"n":null,"items":[{"code":"1","d":null},{"code":"2","d":"two"},{"extra":true}]}`
	ev, _ := run(t, mustChain(t, expandProps("table.json.payload.null.behavior", "optional_bytes")),
		outboxChange(schema.OpCreate, "order", payload))
	want := "struct? payload {n:bytes?, items:array?<struct payload.items {code:string?, d:string?, extra:boolean?}>}"
	if got := renderSchema(ev.ValueSchema); got != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
	wantValue := `{items=[{code="1"} {code="2" d="two"} {extra=bool(true)}]}`
	if got := renderValue(ev.Value); got != wantValue {
		t.Errorf("value\n got %s\nwant %s", got, wantValue)
	}
}

// Jackson's tree keeps a repeated member in its first place with its last value, and ignores what
// follows the first document.
func TestEventRouterExpandsAsJacksonParses(t *testing.T) {
	ev, _ := run(t, mustChain(t, expandProps()), outboxChange(schema.OpCreate, "order", `{"a":1,"b":2,"a":"x"} trailing`))
	if got, want := renderSchema(ev.ValueSchema), "struct? payload {a:string?, b:int32?}"; got != want {
		t.Errorf("schema %s, want %s", got, want)
	}
	if got, want := renderValue(ev.Value), `{a="x" b=int32(2)}`; got != want {
		t.Errorf("value %s, want %s", got, want)
	}
}

// With field.name.adjustment.mode the field names are adjusted, but Debezium then looks the values up by
// the adjusted names, so a renamed member's value is lost.
func TestEventRouterExpandAdjustsFieldNames(t *testing.T) {
	ev, _ := run(t, mustChain(t, expandProps("field.name.adjustment.mode", "avro")),
		outboxChange(schema.OpCreate, "order", `{"a-b":1,"ok":2}`))
	if got, want := renderSchema(ev.ValueSchema), "struct? payload {a_b:int32?, ok:int32?}"; got != want {
		t.Errorf("schema %s, want %s", got, want)
	}
	if got, want := renderValue(ev.Value), `{ok=int32(2)}`; got != want {
		t.Errorf("value %s, want %s", got, want)
	}
}

// A payload that is not JSON, or whose schema cannot be inferred, is routed unchanged with a warning.
func TestEventRouterKeepsUnexpandablePayloads(t *testing.T) {
	var logs bytes.Buffer
	c, err := New(expandProps(), slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	for _, payload := range []string{
		"", "not json", `"text"`, " {\"a\":1}", `{"a":`, `{"a":1,}`, `{"a" 1}`, `{"a":01}`, `{'a':1}`, `{"a":NaN}`,
		`{"a":[1,"x"]}`, `{"a":[1,3000000000]}`, `{"a":[null]}`, `{"a":[[]]}`, `[1,"x"]`,
	} {
		ev, keep := run(t, c, outboxChange(schema.OpCreate, "order", payload))
		if !keep || ev.Value != payload || ev.ValueSchema != outboxRowSchema.Fields[4].Schema {
			t.Errorf("%s: routed %v (%s), want the payload column unchanged", payload, ev.Value, renderSchema(ev.ValueSchema))
		}
	}
	if n := strings.Count(logs.String(), "JSON expansion failed"); n != 15 {
		t.Errorf("%d warnings, want 15:\n%s", n, logs.String())
	}
	// A null payload is left alone without a warning.
	logs.Reset()
	if ev, _ := run(t, c, outboxChange(schema.OpCreate, "order", nil)); ev.Value != nil || logs.Len() != 0 {
		t.Errorf("null payload: %v, logs %q", ev.Value, logs.String())
	}
}

// A document whose schema was inferred but whose value does not fit it fails the record: in Debezium the
// inferred schema has replaced the column's while the payload stayed a string.
func TestEventRouterExpansionFailsOnValuesThatDoNotFit(t *testing.T) {
	c := mustChain(t, expandProps())
	for _, payload := range []string{
		`{"a":[{"x":1},{"x":"s"}]}`,      // merged struct keeps the first item's type
		`{"a":123456789012345678901234}`, // a BigDecimal in a FLOAT64 field
		`[{"a":1}]`,                      // only an object expands to a Struct
	} {
		ev := outboxChange(schema.OpCreate, "order", payload)
		if _, err := c.Transform(&ev); err == nil {
			t.Errorf("%s: no error", payload)
		}
	}
}

// An empty array's schema is null: as the bare value the text goes out without a schema, and in a value
// envelope it fails the record, as in Debezium.
func TestEventRouterExpandsEmptyArrayToSchemalessText(t *testing.T) {
	ev, _ := run(t, mustChain(t, expandProps()), outboxChange(schema.OpCreate, "order", `[]`))
	if ev.ValueSchema != nil || ev.Value != `[]` {
		t.Errorf("value %v (%s), want the text without a schema", ev.Value, renderSchema(ev.ValueSchema))
	}
	ev = outboxChange(schema.OpCreate, "order", `[]`)
	if _, err := mustChain(t, expandProps("table.fields.additional.placement", "type:envelope")).Transform(&ev); err == nil {
		t.Error("envelope placement: no error")
	}
}

// Equal inferred schemas are one schema, so the value schema cache (keyed by payload schema, as
// Debezium's is by schema equality) names every later record's schema after the first route-by value.
func TestEventRouterExpandedSchemasAreShared(t *testing.T) {
	c := mustChain(t, expandProps("table.fields.additional.placement", "type:envelope:eventType"))
	first, _ := run(t, c, outboxChange(schema.OpCreate, "order", `{"id":1}`))
	second, _ := run(t, c, outboxChange(schema.OpCreate, "invoice", `{"id":2}`))
	if first.ValueSchema != second.ValueSchema {
		t.Fatalf("equal payload shapes gave two value schemas:\n%s\n%s", renderSchema(first.ValueSchema), renderSchema(second.ValueSchema))
	}
	want := "struct srv.public.outbox.order.Value {payload:struct? payload {id:int32?}, eventType:string}"
	if got := renderSchema(second.ValueSchema); got != want {
		t.Errorf("schema %s, want %s", got, want)
	}
	if got := renderValue(second.Value); got != `{payload={id=int32(2)} eventType="OrderCreated"}` {
		t.Errorf("value %s", got)
	}
	other, _ := run(t, c, outboxChange(schema.OpCreate, "order", `{"id":"x"}`))
	if other.ValueSchema == first.ValueSchema {
		t.Error("a different payload shape shared the first value schema")
	}
}

// A payload column that is not a string (bytes here) is left as it is.
func TestEventRouterExpandIgnoresNonStringPayloads(t *testing.T) {
	ev := outboxChangeWithColumn(&schema.Schema{Type: schema.Bytes}, []byte(`{"a":1}`))
	out, _ := run(t, mustChain(t, expandProps("table.field.event.payload", "created")), ev)
	if b, ok := out.Value.([]byte); !ok || string(b) != `{"a":1}` {
		t.Errorf("value %v, want the bytes unchanged", out.Value)
	}
}

// The top-level struct is named after the payload column.
func TestEventRouterExpandNamesStructsAfterPayloadColumn(t *testing.T) {
	ev := outboxChangeWithColumn(schema.Json(), `{"o":{"k":1}}`)
	out, _ := run(t, mustChain(t, expandProps("table.field.event.payload", "created")), ev)
	if got, want := renderSchema(out.ValueSchema), "struct? created {o:struct? created.o {k:int32?}}"; got != want {
		t.Errorf("schema %s, want %s", got, want)
	}
}

package transforms

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
)

func singleProps(class string, extra ...string) map[string]string {
	p := map[string]string{"transforms": "t", "transforms.t.type": class}
	for i := 0; i+1 < len(extra); i += 2 {
		p["transforms.t."+extra[i]] = extra[i+1]
	}
	return p
}

const (
	valueToKeyClass   = "org.apache.kafka.connect.transforms.ValueToKey"
	extractKeyClass   = "org.apache.kafka.connect.transforms.ExtractField$Key"
	extractValueClass = "org.apache.kafka.connect.transforms.ExtractField$Value"
)

// unwrapped is a row as a record value, as ExtractNewRecordState leaves it.
func unwrapped(r *schema.Struct) source.Event {
	ev := change(schema.OpCreate, nil, r)
	ev.ValueSchema, ev.Value = r.Schema, r
	return ev
}

func TestValueToKey(t *testing.T) {
	cases := []struct {
		name     string
		settings []string
		values   []any
		fields   []string
	}{
		{"fields in list order", []string{"fields", "status, name"}, []any{"s", "ann"}, []string{"status:string?", "name:string?"}},
		{"a null reads as the field's default", []string{"fields", "status"}, []any{"new"}, []string{"status:string?"}},
		{"replace.null.with.default=false keeps the null", []string{"fields", "status", "replace.null.with.default", "false"},
			[]any{nil}, []string{"status:string?"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status := any(nil)
			if tc.values[0] == "s" {
				status = "s"
			}
			in := unwrapped(row(1, "ann", status))
			out, _ := run(t, mustChain(t, singleProps(valueToKeyClass, tc.settings...)), in)
			key := out.Key.(*schema.Struct)
			if key.Schema != out.KeySchema || out.KeySchema.Name != "" || out.KeySchema.Optional {
				t.Errorf("key schema = %+v, want the key's own unnamed required struct", out.KeySchema)
			}
			if got := fieldNames(out.KeySchema); !reflect.DeepEqual(got, tc.fields) {
				t.Errorf("key fields = %v, want %v", got, tc.fields)
			}
			if !reflect.DeepEqual(key.Values, tc.values) {
				t.Errorf("key values = %#v, want %#v", key.Values, tc.values)
			}
			if out.Value != in.Value || out.ValueSchema != in.ValueSchema {
				t.Error("the value changed")
			}
		})
	}
	c := mustChain(t, singleProps(valueToKeyClass, "fields", "id"))
	a, _ := run(t, c, unwrapped(row(1, "a", nil)))
	b, _ := run(t, c, unwrapped(row(2, "b", nil)))
	if a.KeySchema != b.KeySchema || a.KeySchema.Fields[0].Schema != rowSchema.Fields[0].Schema {
		t.Error("the key schema is not reused, or does not carry the value field's schema")
	}
}

func TestValueToKeyErrors(t *testing.T) {
	cases := []struct {
		name   string
		fields string
		in     source.Event
		want   string
	}{
		{"a missing field", "id,nosuch", unwrapped(row(1, "a", nil)), "field does not exist: nosuch"},
		{"a field listed twice", "id,id", unwrapped(row(1, "a", nil)), `cannot create field "id"`},
		{"a tombstone, as in Kafka", "id", tombstone(), "only Map objects supported in absence of schema"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev := tc.in
			_, err := mustChain(t, singleProps(valueToKeyClass, "fields", tc.fields)).Transform(&ev)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestExtractField(t *testing.T) {
	cases := []struct {
		name      string
		class     string
		settings  []string
		in        source.Event
		keySide   bool
		schema    *schema.Schema
		value     any
		nilSchema bool
	}{
		{name: "$Key takes the key's field", class: extractKeyClass, settings: []string{"field", "id"},
			in: change(schema.OpCreate, nil, row(7, "a", nil)), keySide: true, schema: keySchema.Fields[0].Schema, value: int32(7)},
		{name: "$Value takes the value's field", class: extractValueClass, settings: []string{"field", "name"},
			in: unwrapped(row(1, "ann", nil)), schema: rowSchema.Fields[1].Schema, value: "ann"},
		{name: "a null reads as the default", class: extractValueClass, settings: []string{"field", "status"},
			in: unwrapped(row(1, "ann", nil)), schema: rowSchema.Fields[2].Schema, value: "new"},
		{name: "replace.null.with.default=false keeps the null", class: extractValueClass,
			settings: []string{"field", "status", "replace.null.with.default", "false"},
			in:       unwrapped(row(1, "ann", nil)), schema: rowSchema.Fields[2].Schema, value: nil},
		{name: "V1 takes a dotted name as one field", class: extractValueClass, settings: []string{"field", "source.db"},
			in: change(schema.OpCreate, nil, row(1, "a", nil)), value: "<error>"},
		{name: "V2 follows a nested path", class: extractValueClass, settings: []string{"field", "after.name", "field.syntax.version", "v2"},
			in: change(schema.OpCreate, nil, row(1, "ann", nil)), schema: rowSchema.Fields[1].Schema, value: "ann"},
		{name: "V2 yields null through a null struct", class: extractValueClass, settings: []string{"field", "before.name", "field.syntax.version", "V2"},
			in: change(schema.OpCreate, nil, row(1, "ann", nil)), schema: rowSchema.Fields[1].Schema, value: nil},
		{name: "a null value stays null with the field's schema", class: extractValueClass, settings: []string{"field", "name"},
			in: func() source.Event { ev := unwrapped(row(1, "a", nil)); ev.Value = nil; return ev }(), schema: rowSchema.Fields[1].Schema},
		{name: "a tombstone passes", class: extractValueClass, settings: []string{"field", "name"}, in: tombstone(), nilSchema: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev := tc.in
			_, err := mustChain(t, singleProps(tc.class, tc.settings...)).Transform(&ev)
			if tc.value == "<error>" {
				if err == nil || !strings.Contains(err.Error(), "unknown field: source.db") {
					t.Errorf("error = %v, want unknown field", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gotSchema, gotValue := ev.ValueSchema, ev.Value
			other, otherIn := ev.Key, tc.in.Key
			if tc.keySide {
				gotSchema, gotValue = ev.KeySchema, ev.Key
				other, otherIn = ev.Value, tc.in.Value
			}
			if other != otherIn {
				t.Error("the other side changed")
			}
			if tc.nilSchema {
				if gotSchema != nil || gotValue != nil {
					t.Errorf("got %v / %v, want nothing", gotSchema, gotValue)
				}
				return
			}
			if gotSchema != tc.schema || gotValue != tc.value {
				t.Errorf("got %+v = %#v, want %+v = %#v", gotSchema, gotValue, tc.schema, tc.value)
			}
		})
	}
}

func TestFieldPathV2(t *testing.T) {
	cases := []struct {
		path string
		want []string
	}{
		{"a", []string{"a"}},
		{"a.b.c", []string{"a", "b", "c"}},
		{"a.", []string{"a", ""}},
		{"`a.b`.c", []string{"a.b", "c"}},
		{"`a.b`", []string{"a.b"}},
		{"`a`b`.c", []string{"a`b", "c"}},
		{"`a\\`.b`.c", []string{"a`.b", "c"}},
		{"`a`.", []string{"a", ""}},
	}
	for _, tc := range cases {
		got, err := fieldPathV2(tc.path)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("fieldPathV2(%s) = %q, %v; want %q", tc.path, got, err, tc.want)
		}
	}
	for _, bad := range []string{"`a", "`a\\`", ""} {
		if _, err := fieldPathV2(bad); err == nil {
			t.Errorf("fieldPathV2(%s) succeeded", bad)
		}
	}
}

func TestFieldTransformConfigErrors(t *testing.T) {
	cases := []struct {
		props map[string]string
		key   string
		want  string
	}{
		{singleProps(valueToKeyClass), "transforms.t.fields", "missing required"},
		{singleProps(valueToKeyClass, "fields", " , "), "transforms.t.fields", "empty list"},
		{singleProps(extractKeyClass), "transforms.t.field", "missing required"},
		{singleProps(extractValueClass, "field", "a", "field.syntax.version", "V3"), "transforms.t.field.syntax.version", "supported values are V1, V2"},
		{singleProps(extractValueClass, "field", "`a", "field.syntax.version", "V2"), "transforms.t.field", "incomplete backtick pair"},
	}
	for _, tc := range cases {
		err := Validate(tc.props)
		ce, ok := err.(*ConfigError)
		if !ok || ce.Key != tc.key || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%v) = %v, want key %s and %q", tc.props, err, tc.key, tc.want)
		}
	}
}

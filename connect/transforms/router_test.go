package transforms

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
)

const logicalRouterClass = "io.debezium.transforms.ByLogicalTableRouter"

// routerProps configures a ByLogicalTableRouter "route" merging srv.public.* into srv.all, with extra
// settings as key, value pairs (an empty value removes the setting).
func routerProps(extra ...string) map[string]string {
	p := map[string]string{"transforms": "route", "transforms.route.type": logicalRouterClass,
		"transforms.route.topic.regex": `srv\.public\.(.*)`, "transforms.route.topic.replacement": "srv.all"}
	for i := 0; i+1 < len(extra); i += 2 {
		p["transforms.route."+extra[i]] = extra[i+1]
		if extra[i+1] == "" {
			delete(p, "transforms.route."+extra[i])
		}
	}
	return p
}

func TestByLogicalTableRouter(t *testing.T) {
	noKey := change(schema.OpCreate, nil, row(1, "ann", nil))
	noKey.Key = nil // a table without a primary key: the reader still sets no key, and the schema goes too
	unmatched := change(schema.OpCreate, nil, row(1, "ann", nil))
	unmatched.Topic = "srv.other.customers"
	cases := []struct {
		name      string
		settings  []string
		in        source.Event
		topic     string
		keyName   string // "" with nilKey
		keyFields []string
		keyValues []any
		nilKey    bool
		envelope  string // the value schema's name; "" when the value must be the input's, untouched
	}{
		{name: "a change gets the new topic, renamed schemas and the original topic in the key",
			in: change(schema.OpCreate, nil, row(1, "ann", nil)), topic: "srv.all", keyName: "srv.all.Key",
			keyFields: []string{"id:int32", "__dbz__physicalTableIdentifier:string"},
			keyValues: []any{int32(1), "srv.public.customers"}, envelope: "srv.all.Envelope"},
		{name: "key.enforce.uniqueness=false only renames the key", settings: []string{"key.enforce.uniqueness", "false"},
			in: change(schema.OpCreate, nil, row(1, "ann", nil)), topic: "srv.all", keyName: "srv.all.Key",
			keyFields: []string{"id:int32"}, keyValues: []any{int32(1)}, envelope: "srv.all.Envelope"},
		{name: "key.field.name and key.field.regex derive the identifier",
			settings: []string{"key.field.name", "shard", "key.field.regex", `srv\.(.*)\.(.*)`, "key.field.replacement", "$2@$1"},
			in:       change(schema.OpUpdate, row(1, "a", nil), row(1, "b", nil)), topic: "srv.all", keyName: "srv.all.Key",
			keyFields: []string{"id:int32", "shard:string"}, keyValues: []any{int32(1), "customers@public"}, envelope: "srv.all.Envelope"},
		{name: "a key.field.regex that does not match leaves the original topic",
			settings: []string{"key.field.regex", `nomatch(.*)`, "key.field.replacement", "$1"},
			in:       change(schema.OpCreate, nil, row(1, "ann", nil)), topic: "srv.all", keyName: "srv.all.Key",
			keyFields: []string{"id:int32", "__dbz__physicalTableIdentifier:string"},
			keyValues: []any{int32(1), "srv.public.customers"}, envelope: "srv.all.Envelope"},
		{name: "topic.replacement expands groups",
			settings: []string{"topic.regex", `srv\.(public)\.cust(.*)`, "topic.replacement", "$1.$2"},
			in:       change(schema.OpCreate, nil, row(1, "ann", nil)), topic: "public.omers", keyName: "public.omers.Key",
			keyFields: []string{"id:int32", "__dbz__physicalTableIdentifier:string"},
			keyValues: []any{int32(1), "srv.public.customers"}, envelope: "public.omers.Envelope"},
		{name: "avro adjustment rewrites the new schema names",
			settings: []string{"topic.replacement", "srv.all-tables", "schema.name.adjustment.mode", "avro"},
			in:       change(schema.OpCreate, nil, row(1, "ann", nil)), topic: "srv.all-tables", keyName: "srv.all_tables.Key",
			keyFields: []string{"id:int32", "__dbz__physicalTableIdentifier:string"},
			keyValues: []any{int32(1), "srv.public.customers"}, envelope: "srv.all_tables.Envelope"},
		{name: "a tombstone gets the new topic and key, its value stays null",
			in: tombstone(), topic: "srv.all", keyName: "srv.all.Key",
			keyFields: []string{"id:int32", "__dbz__physicalTableIdentifier:string"},
			keyValues: []any{int32(1), "srv.public.customers"}},
		{name: "a heartbeat that matches is routed with its value unchanged",
			settings: []string{"topic.regex", `__debezium-heartbeat\.(.*)`, "topic.replacement", "beats"},
			in:       heartbeat(), topic: "beats", keyName: "beats.Key",
			keyFields: []string{"serverName:string", "__dbz__physicalTableIdentifier:string"},
			keyValues: []any{"srv", "__debezium-heartbeat.srv"}},
		{name: "a null key stays null, with no schema", in: noKey, topic: "srv.all", nilKey: true, envelope: "srv.all.Envelope"},
		{name: "a topic that does not match passes unchanged", in: unmatched, topic: "srv.other.customers",
			keyName: keySchema.Name, keyFields: []string{"id:int32"}, keyValues: []any{int32(1)}},
		{name: "an empty new topic passes the record unchanged", settings: []string{"topic.regex", `srv\.public\.customers()`, "topic.replacement", "$1"},
			in: change(schema.OpCreate, nil, row(1, "ann", nil)), topic: "srv.public.customers",
			keyName: keySchema.Name, keyFields: []string{"id:int32"}, keyValues: []any{int32(1)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, keep := run(t, mustChain(t, routerProps(tc.settings...)), tc.in)
			if !keep {
				t.Fatal("dropped")
			}
			if out.Topic != tc.topic {
				t.Errorf("topic = %q, want %q", out.Topic, tc.topic)
			}
			if tc.nilKey {
				if out.Key != nil || out.KeySchema != nil {
					t.Errorf("key = %v with schema %v, want none", out.Key, out.KeySchema)
				}
			} else {
				key := out.Key.(*schema.Struct)
				if key.Schema != out.KeySchema || out.KeySchema.Name != tc.keyName || out.KeySchema.Optional {
					t.Errorf("key schema %q (optional %v), want the key's own, named %q", out.KeySchema.Name, out.KeySchema.Optional, tc.keyName)
				}
				if got := fieldNames(out.KeySchema); !reflect.DeepEqual(got, tc.keyFields) {
					t.Errorf("key fields = %v, want %v", got, tc.keyFields)
				}
				if !reflect.DeepEqual(key.Values, tc.keyValues) {
					t.Errorf("key values = %#v, want %#v", key.Values, tc.keyValues)
				}
			}
			if tc.envelope == "" {
				if out.ValueSchema != tc.in.ValueSchema || out.Value != tc.in.Value {
					t.Errorf("the value changed")
				}
				return
			}
			checkRoutedEnvelope(t, out, tc.in, tc.envelope, strings.TrimSuffix(tc.envelope, ".Envelope")+".Value")
		})
	}
}

// checkRoutedEnvelope checks that out's envelope is in's, renamed, with before and after in the renamed
// row schema and every other field untouched.
func checkRoutedEnvelope(t *testing.T, out, in source.Event, envelopeName, rowName string) {
	t.Helper()
	env, old := out.Value.(*schema.Struct), in.Value.(*schema.Struct)
	if env.Schema != out.ValueSchema || env.Schema.Name != envelopeName || env.Schema.Optional != old.Schema.Optional {
		t.Fatalf("envelope schema %q, want %q", env.Schema.Name, envelopeName)
	}
	if got, want := fieldNames(env.Schema), fieldNames(old.Schema); !reflect.DeepEqual(got, want) {
		t.Errorf("envelope fields = %v, want %v", got, want)
	}
	for i, f := range env.Schema.Fields {
		oldValue := old.Values[i]
		if f.Name != schema.EnvelopeBefore && f.Name != schema.EnvelopeAfter {
			if f.Schema != old.Schema.Fields[i].Schema || env.Values[i] != oldValue {
				t.Errorf("field %s changed", f.Name)
			}
			continue
		}
		if f.Schema.Name != rowName || !f.Schema.Optional || !reflect.DeepEqual(fieldNames(f.Schema), fieldNames(rowSchema)) {
			t.Errorf("%s schema = %q optional=%v %v, want optional %q with the row's fields", f.Name, f.Schema.Name, f.Schema.Optional, fieldNames(f.Schema), rowName)
		}
		if oldValue == nil {
			if env.Values[i] != nil {
				t.Errorf("%s = %v, want null", f.Name, env.Values[i])
			}
			continue
		}
		st := env.Values[i].(*schema.Struct)
		if st.Schema != f.Schema || !reflect.DeepEqual(st.Values, oldValue.(*schema.Struct).Values) {
			t.Errorf("%s = %#v with schema %q, want the row's values in the routed schema", f.Name, st.Values, st.Schema.Name)
		}
	}
}

// Nulls are copied as nulls (getWithoutDefault), unlike the unwrap's rewrite which reads defaults.
func TestByLogicalTableRouterKeepsNullsWithDefaults(t *testing.T) {
	out, _ := run(t, mustChain(t, routerProps()), change(schema.OpDelete, row(1, nil, nil), nil))
	before := out.Value.(*schema.Struct).Get(schema.EnvelopeBefore).(*schema.Struct)
	if got := before.Values; !reflect.DeepEqual(got, []any{int32(1), nil, nil}) {
		t.Errorf("before = %#v, want the nulls kept", got)
	}
}

// Converters cache per *Schema; and as in Debezium, a schema's rewrite is cached by the original schema
// alone, so every record of a table carries the same key and envelope schemas.
func TestByLogicalTableRouterReusesSchemas(t *testing.T) {
	c := mustChain(t, routerProps())
	a, _ := run(t, c, change(schema.OpCreate, nil, row(1, "a", nil)))
	b, _ := run(t, c, change(schema.OpDelete, row(2, "b", nil), nil))
	if a.KeySchema != b.KeySchema || a.ValueSchema != b.ValueSchema {
		t.Error("routed schemas differ between records of one table")
	}
}

func TestByLogicalTableRouterChainsWithUnwrap(t *testing.T) {
	props := routerProps()
	props["transforms"] = "route,unwrap"
	props["transforms.unwrap.type"] = unwrapClass
	out, _ := run(t, mustChain(t, props), change(schema.OpCreate, nil, row(1, "a", nil)))
	if out.Topic != "srv.all" || out.ValueSchema.Name != "srv.all.Value" || out.KeySchema.Name != "srv.all.Key" {
		t.Errorf("topic %q, value %q, key %q", out.Topic, out.ValueSchema.Name, out.KeySchema.Name)
	}
}

func TestByLogicalTableRouterErrors(t *testing.T) {
	notStruct := change(schema.OpCreate, nil, row(1, "a", nil))
	notStruct.KeySchema, notStruct.Key = &schema.Schema{Type: schema.Int32}, int32(1)
	cases := []struct {
		name     string
		settings []string
		in       source.Event
		want     string
	}{
		{"the key field clashes with a key column", []string{"key.field.name", "id"},
			change(schema.OpCreate, nil, row(1, "a", nil)), `cannot create field "id"`},
		{"a key that is not a struct", nil, notStruct, "only Struct objects supported for [Updating schema]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev := tc.in
			_, err := mustChain(t, routerProps(tc.settings...)).Transform(&ev)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `transform "route"`) {
				t.Errorf("error = %v, want one naming the transform and containing %q", err, tc.want)
			}
		})
	}
}

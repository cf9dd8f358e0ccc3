package transforms

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
)

func unwrapProps(extra ...string) map[string]string {
	p := map[string]string{"transforms": "unwrap", "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState"}
	for i := 0; i+1 < len(extra); i += 2 {
		p["transforms.unwrap."+extra[i]] = extra[i+1]
	}
	return p
}

func TestExtractNewRecordState(t *testing.T) {
	base := []string{"id:int32", "name:string?", "status:string?"}
	withDeleted := append(append([]string{}, base...), "__deleted:string?")
	cases := []struct {
		name       string
		settings   []string
		in         source.Event
		dropped    bool
		topic      string
		nilSchema  bool     // the value schema is nil (a true tombstone)
		fields     []string // the value schema's fields; nil with a non-nil schema means a null value
		values     []any
		headerKeys []string
	}{
		{name: "create unwraps after into a required copy of the row schema",
			in: change(schema.OpCreate, nil, row(1, "ann", nil)), topic: "srv.public.customers",
			fields: base, values: []any{int32(1), "ann", nil}},
		{name: "update unwraps after",
			in: change(schema.OpUpdate, row(1, "ann", "x"), row(1, "bob", "y")), topic: "srv.public.customers",
			fields: base, values: []any{int32(1), "bob", "y"}},
		{name: "delete defaults to a null value with the row schema",
			in: change(schema.OpDelete, row(1, "ann", nil), nil), topic: "srv.public.customers"},
		{name: "tombstone dropped by default", in: tombstone(), dropped: true},
		{name: "truncate dropped", in: change(schema.OpTruncate, nil, nil), dropped: true},
		{name: "heartbeat passes unchanged", in: heartbeat(), topic: "__debezium-heartbeat.srv",
			fields: []string{"ts_ms:int64"}, values: []any{int64(5)}},
		{name: "drop mode drops deletes", settings: []string{"delete.tombstone.handling.mode", "drop"},
			in: change(schema.OpDelete, row(1, "ann", nil), nil), dropped: true},
		{name: "drop mode drops tombstones", settings: []string{"delete.tombstone.handling.mode", "DROP"},
			in: tombstone(), dropped: true},
		{name: "delete-to-tombstone", settings: []string{"delete.tombstone.handling.mode", "delete-to-tombstone"},
			in: change(schema.OpDelete, row(1, "ann", nil), nil), topic: "srv.public.customers", nilSchema: true},
		{name: "rewrite marks updates not deleted", settings: []string{"delete.tombstone.handling.mode", "rewrite"},
			in: change(schema.OpUpdate, nil, row(2, "bob", nil)), topic: "srv.public.customers",
			fields: withDeleted, values: []any{int32(2), "bob", "new", "false"}},
		{name: "rewrite turns a delete into before plus __deleted=true",
			settings: []string{"delete.tombstone.handling.mode", "rewrite"},
			in:       change(schema.OpDelete, row(1, "ann", nil), nil), topic: "srv.public.customers",
			fields: withDeleted, values: []any{int32(1), "ann", "new", "true"}},
		{name: "rewrite without replace.null.with.default keeps nulls",
			settings: []string{"delete.tombstone.handling.mode", "rewrite", "replace.null.with.default", "false"},
			in:       change(schema.OpDelete, row(1, "ann", nil), nil), topic: "srv.public.customers",
			fields: withDeleted, values: []any{int32(1), "ann", nil, "true"}},
		{name: "rewrite drops tombstones", settings: []string{"delete.tombstone.handling.mode", "rewrite"},
			in: tombstone(), dropped: true},
		{name: "rewrite-with-tombstone keeps tombstones",
			settings: []string{"delete.tombstone.handling.mode", "rewrite-with-tombstone"},
			in:       tombstone(), topic: "srv.public.customers", nilSchema: true},
		{name: "add.fields appends prefixed envelope, source and transaction fields",
			settings: []string{"add.fields", "op, table,lsn,source.ts_ms,ts_ms:EVENT_TS,id,nosuch"},
			in:       change(schema.OpCreate, nil, row(1, "ann", nil)), topic: "srv.public.customers",
			fields: append(append([]string{}, base...), "__op:string?", "__table:string?", "__lsn:int64?",
				"__source_ts_ms:int64?", "__EVENT_TS:int64?", "__id:string?"),
			values: []any{int32(1), "ann", nil, "c", "customers", int64(4242), int64(1700000000000), int64(1700000000123), nil}},
		{name: "add.fields with a prefix, after the rewrite field",
			settings: []string{"add.fields", "op", "add.fields.prefix", "cdc_", "delete.tombstone.handling.mode", "rewrite"},
			in:       change(schema.OpDelete, row(1, "ann", "s"), nil), topic: "srv.public.customers",
			fields: append(append([]string{}, withDeleted...), "cdc_op:string?"),
			values: []any{int32(1), "ann", "s", "true", "d"}},
		{name: "add.headers on a change", settings: []string{"add.headers", "op,source.db"},
			in: change(schema.OpCreate, nil, row(1, "ann", nil)), topic: "srv.public.customers",
			fields: base, values: []any{int32(1), "ann", nil}, headerKeys: []string{"__op", "__source_db"}},
		{name: "add.headers on a kept tombstone adds only op",
			settings: []string{"add.headers", "op,db", "add.headers.prefix", "h_", "delete.tombstone.handling.mode", "rewrite-with-tombstone"},
			in:       tombstone(), topic: "srv.public.customers", nilSchema: true, headerKeys: []string{"h_op"}},
		{name: "route.by.field routes a change by its after image",
			settings: []string{"route.by.field", "name"},
			in:       change(schema.OpCreate, nil, row(1, "ann", nil)), topic: "ann",
			fields: base, values: []any{int32(1), "ann", nil}},
		{name: "route.by.field routes a delete by its before image",
			settings: []string{"route.by.field", "name"},
			in:       change(schema.OpDelete, row(1, "bob", nil), nil), topic: "bob"},
		{name: "route.by.field keeps the topic on a null column",
			settings: []string{"route.by.field", "name"},
			in:       change(schema.OpCreate, nil, row(1, nil, nil)), topic: "srv.public.customers",
			fields: base, values: []any{int32(1), nil, nil}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, keep := run(t, mustChain(t, unwrapProps(tc.settings...)), tc.in)
			if keep == tc.dropped {
				t.Fatalf("kept = %v, want %v", keep, !tc.dropped)
			}
			if tc.dropped {
				return
			}
			if out.Topic != tc.topic {
				t.Errorf("topic = %q, want %q", out.Topic, tc.topic)
			}
			if out.Key != tc.in.Key || out.KeySchema != tc.in.KeySchema {
				t.Errorf("key changed")
			}
			var gotHeaders []string
			for _, h := range out.Headers {
				gotHeaders = append(gotHeaders, h.Key)
			}
			if !reflect.DeepEqual(gotHeaders, tc.headerKeys) {
				t.Errorf("headers = %v, want %v", gotHeaders, tc.headerKeys)
			}
			switch {
			case tc.nilSchema:
				if out.ValueSchema != nil || out.Value != nil {
					t.Errorf("value = %v / %v, want a tombstone", out.ValueSchema, out.Value)
				}
			case tc.fields == nil:
				if out.Value != nil || out.ValueSchema != rowSchema {
					t.Errorf("value = %v with schema %v, want null with the row schema", out.Value, out.ValueSchema)
				}
			default:
				st := out.Value.(*schema.Struct)
				if st.Schema != out.ValueSchema {
					t.Errorf("value's schema differs from the record's value schema")
				}
				if got := fieldNames(out.ValueSchema); !reflect.DeepEqual(got, tc.fields) {
					t.Errorf("fields = %v, want %v", got, tc.fields)
				}
				if !reflect.DeepEqual(st.Values, tc.values) {
					t.Errorf("values = %#v, want %#v", st.Values, tc.values)
				}
				if tc.in.ValueSchema == envelopeSchema {
					if out.ValueSchema.Name != rowSchema.Name || out.ValueSchema.Optional {
						t.Errorf("schema %q optional=%v, want %q required", out.ValueSchema.Name, out.ValueSchema.Optional, rowSchema.Name)
					}
				}
			}
		})
	}
}

func TestExtractNewRecordStateHeaderValues(t *testing.T) {
	c := mustChain(t, unwrapProps("add.headers", "op,source.db,lsn"))
	in := change(schema.OpUpdate, nil, row(1, "ann", nil))
	in.Headers = []source.Header{{Key: "existing", Value: "x"}}
	out, _ := run(t, c, in)
	want := []source.Header{{Key: "existing", Value: "x"}, {Key: "__op", Value: "u"}, {Key: "__source_db", Value: "app"}, {Key: "__lsn", Value: int64(4242)}}
	if len(out.Headers) != len(want) {
		t.Fatalf("headers = %+v", out.Headers)
	}
	for i, h := range out.Headers {
		if h.Key != want[i].Key || h.Value != want[i].Value {
			t.Errorf("header %d = %s:%v, want %s:%v", i, h.Key, h.Value, want[i].Key, want[i].Value)
		}
	}
	if s := out.Headers[3].Schema; s.Type != schema.Int64 || !s.Optional {
		t.Errorf("__lsn header schema = %+v, want optional int64", s)
	}
	if len(in.Headers) != 1 {
		t.Errorf("the input's headers were modified")
	}

	tomb := tombstone()
	out, keep := run(t, mustChain(t, unwrapProps("add.headers", "op", "delete.tombstone.handling.mode", "rewrite-with-tombstone")), tomb)
	if !keep || len(out.Headers) != 1 || out.Headers[0].Value != "d" || out.Headers[0].Schema.Optional {
		t.Errorf("tombstone headers = %+v, want __op=d with a required string schema", out.Headers)
	}
}

// Converters cache per *Schema: every record of a table must carry the same derived schema pointers.
func TestExtractNewRecordStateReusesSchemas(t *testing.T) {
	c := mustChain(t, unwrapProps("add.fields", "op,lsn", "add.headers", "db", "delete.tombstone.handling.mode", "rewrite"))
	a, _ := run(t, c, change(schema.OpCreate, nil, row(1, "a", nil)))
	b, _ := run(t, c, change(schema.OpUpdate, nil, row(2, "b", nil)))
	if a.ValueSchema != b.ValueSchema || a.Headers[0].Schema != b.Headers[0].Schema {
		t.Errorf("derived schemas differ between records of one table")
	}
}

func TestExtractNewRecordStateErrors(t *testing.T) {
	cases := []struct {
		name     string
		settings []string
		in       source.Event
		want     string
	}{
		{"route.by.field names a missing column", []string{"route.by.field", "nosuch"},
			change(schema.OpCreate, nil, row(1, "a", nil)), "unknown field: nosuch"},
		{"route.by.field names a non-string column", []string{"route.by.field", "id"},
			change(schema.OpCreate, nil, row(1, "a", nil)), "not of type STRING"},
		{"add.fields clashes with a column", []string{"add.fields", "op:name", "add.fields.prefix", ""},
			change(schema.OpCreate, nil, row(1, "a", nil)), `cannot create field "name"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev := tc.in
			_, err := mustChain(t, unwrapProps(tc.settings...)).Transform(&ev)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `transform "unwrap"`) {
				t.Errorf("error = %v, want one naming the transform and containing %q", err, tc.want)
			}
		})
	}
}

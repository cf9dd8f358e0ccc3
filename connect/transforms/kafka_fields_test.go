package transforms

import (
	"errors"
	"log/slog"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
)

const kafkaSMT = "org.apache.kafka.connect.transforms."

// transformOne applies the single transform class (with settings kv, alternating keys and values) to ev.
func transformOne(t *testing.T, class string, ev source.Event, kv ...string) (source.Event, error) {
	t.Helper()
	props := map[string]string{"transforms": "x", "transforms.x.type": kafkaSMT + class}
	for i := 0; i+1 < len(kv); i += 2 {
		props["transforms.x."+kv[i]] = kv[i+1]
	}
	c, err := New(props, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	_, err = c.Transform(&ev)
	return ev, err
}

// mustTransformOne is transformOne for a transform that must succeed.
func mustTransformOne(t *testing.T, class string, ev source.Event, kv ...string) source.Event {
	t.Helper()
	out, err := transformOne(t, class, ev, kv...)
	if err != nil {
		t.Fatalf("%s: %v", class, err)
	}
	return out
}

// configError validates a one-transform config and returns the *ConfigError it must produce.
func configError(t *testing.T, class string, kv ...string) *ConfigError {
	t.Helper()
	props := map[string]string{"transforms": "x", "transforms.x.type": kafkaSMT + class}
	for i := 0; i+1 < len(kv); i += 2 {
		props["transforms.x."+kv[i]] = kv[i+1]
	}
	var ce *ConfigError
	if err := Validate(props); !errors.As(err, &ce) {
		t.Fatalf("Validate(%v) = %v, want a *ConfigError", kv, err)
	}
	return ce
}

// rowEvent is an unwrapped change: the row struct as the value.
func rowEvent(r *schema.Struct) source.Event {
	return source.Event{Topic: customersName, KeySchema: keySchema,
		Key: &schema.Struct{Schema: keySchema, Values: []any{r.Values[0]}}, ValueSchema: rowSchema, Value: r}
}

func valueStruct(t *testing.T, ev source.Event) *schema.Struct {
	t.Helper()
	st, ok := ev.Value.(*schema.Struct)
	if !ok || st.Schema != ev.ValueSchema {
		t.Fatalf("value %#v is not a struct of the value schema", ev.Value)
	}
	return st
}

func TestInsertFieldValue(t *testing.T) {
	out := mustTransformOne(t, "InsertField$Value", rowEvent(row(7, "ann", nil)),
		"topic.field", "topic!", "partition.field", "part", "timestamp.field", "ts?", "static.field", "origin",
		"static.value", "pg")
	want := []string{"id:int32", "name:string?", "status:string?", "topic:string", "part:int32?", "ts:int64?", "origin:string?"}
	if got := fieldNames(out.ValueSchema); !slices.Equal(got, want) {
		t.Errorf("fields = %v, want %v", got, want)
	}
	if s := out.ValueSchema; s.Name != rowSchema.Name || s.Optional || s.Field("ts").Name != schema.TimestampName {
		t.Errorf("schema = %+v: want the row's name, required, and a Timestamp field", s)
	}
	// Debezium's records have neither partition nor timestamp when transforms run; status reads its default.
	if got := valueStruct(t, out).Values; !slices.Equal(got, []any{int32(7), "ann", "new", customersName, nil, nil, "pg"}) {
		t.Errorf("values = %v", got)
	}
	again := mustTransformOne(t, "InsertField$Value", rowEvent(row(8, "bo", nil)), "topic.field", "topic",
		"replace.null.with.default", "false")
	if got := valueStruct(t, again).Values[2]; got != nil {
		t.Errorf("replace.null.with.default=false: status = %v, want null", got)
	}
}

func TestInsertFieldMetadata(t *testing.T) {
	hb := mustTransformOne(t, "InsertField$Value", heartbeat(), "partition.field", "p")
	if got := valueStruct(t, hb).Values[1]; got != int32(0) {
		t.Errorf("heartbeat partition = %v, want 0 (Debezium addresses heartbeats to partition 0)", got)
	}
	if _, err := transformOne(t, "InsertField$Value", rowEvent(row(1, "a", nil)), "offset.field", "o"); err == nil ||
		!strings.Contains(err.Error(), "only SinkRecord supported") {
		t.Errorf("offset.field on a source record: %v, want Kafka's SinkRecord refusal", err)
	}
	tomb := mustTransformOne(t, "InsertField$Value", tombstone(), "topic.field", "t")
	if tomb.Value != nil || tomb.ValueSchema != nil {
		t.Errorf("a tombstone changed: %+v", tomb)
	}
	key := mustTransformOne(t, "InsertField$Key", rowEvent(row(3, "c", nil)), "static.field", "s", "static.value", "v")
	if got := fieldNames(key.KeySchema); !slices.Equal(got, []string{"id:int32", "s:string?"}) {
		t.Errorf("key fields = %v", got)
	}
	schemaless := source.Event{Topic: "t", Value: []schema.MapEntry{{Key: "a", Value: int32(1)}}}
	out := mustTransformOne(t, "InsertField$Value", schemaless, "topic.field", "topic")
	if got := out.Value.([]schema.MapEntry); mapGet(got, "topic") != "t" || mapGet(got, "a") != int32(1) || len(got) != 2 {
		t.Errorf("schemaless value = %v", got)
	}
	if _, err := transformOne(t, "InsertField$Value", rowEvent(row(1, "a", nil)), "topic.field", "name"); err == nil {
		t.Error("inserting a field that exists succeeded")
	}
}

func TestInsertFieldConfig(t *testing.T) {
	if ce := configError(t, "InsertField$Value", "replace.null.with.default", "true"); !strings.Contains(ce.Problem, "No field insertion configured") {
		t.Errorf("error = %v", ce)
	}
	if ce := configError(t, "InsertField$Value", "static.field", "s"); ce.Key != "transforms.x.static.value" {
		t.Errorf("error = %v, want static.value named", ce)
	}
}

func TestReplaceField(t *testing.T) {
	cases := []struct {
		name   string
		kv     []string
		fields []string
		values []any
	}{
		{"exclude", []string{"exclude", "name"}, []string{"id:int32", "status:string?"}, []any{int32(1), "new"}},
		{"include", []string{"include", "status, id"}, []string{"id:int32", "status:string?"}, []any{int32(1), "new"}},
		{"exclude wins over include", []string{"include", "id,name", "exclude", "name"}, []string{"id:int32"}, []any{int32(1)}},
		{"renames", []string{"renames", "id:customer_id,status:state"}, []string{"customer_id:int32", "name:string?", "state:string?"},
			[]any{int32(1), "a", "new"}},
		{"no default", []string{"exclude", "id", "replace.null.with.default", "false"}, []string{"name:string?", "status:string?"},
			[]any{"a", nil}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := mustTransformOne(t, "ReplaceField$Value", rowEvent(row(1, "a", nil)), tc.kv...)
			if got := fieldNames(out.ValueSchema); !slices.Equal(got, tc.fields) {
				t.Errorf("fields = %v, want %v", got, tc.fields)
			}
			if got := valueStruct(t, out).Values; !slices.Equal(got, tc.values) {
				t.Errorf("values = %v, want %v", got, tc.values)
			}
			if out.ValueSchema.Name != rowSchema.Name || out.ValueSchema.Optional {
				t.Errorf("schema basics: name %q optional %v, want the name, not optional (copySchemaBasics)", out.ValueSchema.Name, out.ValueSchema.Optional)
			}
		})
	}
	key := mustTransformOne(t, "ReplaceField$Key", rowEvent(row(1, "a", nil)), "renames", "id:key_id")
	if got := fieldNames(key.KeySchema); !slices.Equal(got, []string{"key_id:int32"}) {
		t.Errorf("key fields = %v", got)
	}
	schemaless := source.Event{Value: []schema.MapEntry{{Key: "a", Value: 1}, {Key: "b", Value: 2}, {Key: "c", Value: 3}}}
	out := mustTransformOne(t, "ReplaceField$Value", schemaless, "exclude", "b", "renames", "c:z")
	if got := out.Value.([]schema.MapEntry); !slices.Equal(got, []schema.MapEntry{{Key: "a", Value: 1}, {Key: "z", Value: 3}}) {
		t.Errorf("schemaless = %v", got)
	}
	if _, err := transformOne(t, "ReplaceField$Value", rowEvent(row(1, "a", nil)), "renames", "id:name"); err == nil {
		t.Error("renaming onto an existing field succeeded")
	}
}

func TestReplaceFieldConfig(t *testing.T) {
	if ce := configError(t, "ReplaceField$Value", "renames", "a:b:c"); !strings.Contains(ce.Problem, "Invalid rename mapping: a:b:c") {
		t.Errorf("error = %v", ce)
	}
	for old, now := range map[string]string{"whitelist": "include", "blacklist": "exclude"} {
		if ce := configError(t, "ReplaceField$Value", old, "id"); ce.Key != "transforms.x."+old || !strings.Contains(ce.Problem, now) {
			t.Errorf("%s: error = %v, want it refused with advice to use %s", old, ce, now)
		}
	}
}

var typesSchema = &schema.Schema{Type: schema.StructT, Name: "types", Fields: []schema.Field{
	{Name: "i8", Schema: &schema.Schema{Type: schema.Int8}},
	{Name: "i64", Schema: &schema.Schema{Type: schema.Int64, Optional: true}},
	{Name: "f64", Schema: &schema.Schema{Type: schema.Float64}},
	{Name: "b", Schema: &schema.Schema{Type: schema.Boolean}},
	{Name: "s", Schema: &schema.Schema{Type: schema.String}},
	{Name: "bytes", Schema: &schema.Schema{Type: schema.Bytes}},
	{Name: "dec", Schema: schema.ConnectDecimal(2)},
	{Name: "ts", Schema: schema.ConnectTimestamp()},
	{Name: "arr", Schema: &schema.Schema{Type: schema.Array, Items: &schema.Schema{Type: schema.Int32}}},
}}

func typesEvent() source.Event {
	v := &schema.Struct{Schema: typesSchema, Values: []any{int8(5), int64(-3), 2.5e10, true, "text", []byte("hi"),
		schema.Decimal{Unscaled: big.NewInt(-12345), Scale: 2}, int64(86400000 + 1500), []any{int32(1)}}}
	return source.Event{Topic: "types", ValueSchema: typesSchema, Value: v}
}

func TestMaskField(t *testing.T) {
	out := mustTransformOne(t, "MaskField$Value", typesEvent(), "fields", "i8,i64,f64,b,s,dec,ts,arr")
	want := []any{int8(0), int64(0), float64(0), false, "", []byte("hi"), nil, int64(0), nil}
	got := valueStruct(t, out).Values
	for i, w := range want {
		switch i {
		case 5, 8: // bytes untouched; the array is emptied
			continue
		case 6:
			if d := got[6].(schema.Decimal); d.Unscaled.Sign() != 0 || d.Scale != 0 {
				t.Errorf("decimal masked to %v, want BigDecimal.ZERO", d)
			}
			continue
		}
		if got[i] != w {
			t.Errorf("field %s masked to %#v, want %#v", typesSchema.Fields[i].Name, got[i], w)
		}
	}
	if a := got[8].([]any); len(a) != 0 {
		t.Errorf("array masked to %v", a)
	}
	repl := mustTransformOne(t, "MaskField$Value", typesEvent(), "fields", "i64,s,dec", "replacement", "42")
	if v := valueStruct(t, repl).Values; v[1] != int64(42) || v[4] != "42" || v[6].(schema.Decimal).Unscaled.String() != "42" || v[6].(schema.Decimal).Scale != 0 {
		t.Errorf("replaced = %v", v)
	}
	frac := valueStruct(t, mustTransformOne(t, "MaskField$Value", typesEvent(), "fields", "i8,i64,f64,dec", "replacement", "-7.125")).Values
	if frac[0] != int8(-7) || frac[1] != int64(-7) || frac[2] != -7.125 || frac[6].(schema.Decimal).Scale != 3 {
		t.Errorf("masked with a fraction = %v: want BigDecimal's longValue, doubleValue and scale", frac)
	}
	for _, tc := range []struct{ fields, replacement, want string }{
		{"bytes", "", "cannot mask value of type: class [B"},
		{"b", "x", "cannot mask value of type class java.lang.Boolean with custom replacement"},
		{"i8", "abc", "unable to convert abc"},
	} {
		kv := []string{"fields", tc.fields}
		if tc.replacement != "" {
			kv = append(kv, "replacement", tc.replacement)
		}
		if _, err := transformOne(t, "MaskField$Value", typesEvent(), kv...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("mask %s: %v, want %q", tc.fields, err, tc.want)
		}
	}
	if _, err := transformOne(t, "MaskField$Value", tombstone(), "fields", "id"); err == nil {
		t.Error("a tombstone was masked: Kafka's MaskField fails on a null value")
	}
	if ce := configError(t, "MaskField$Value", "fields", " , "); !strings.Contains(ce.Problem, "empty list") {
		t.Errorf("error = %v", ce)
	}
	if ce := configError(t, "MaskField$Value", "fields", "a", "replacement", ""); !strings.Contains(ce.Problem, "non-empty") {
		t.Errorf("error = %v", ce)
	}
}

func TestCast(t *testing.T) {
	out := mustTransformOne(t, "Cast$Value", typesEvent(),
		"spec", "i8:string, i64:int8, f64:string, b:int32, s:boolean, bytes:string, dec:string, ts:string")
	v := valueStruct(t, out).Values
	want := []any{"5", int8(-3), "2.5E10", int32(1), false, "aGk=", "-123.45", "1970-01-02T00:00:01.500Z"}
	for i, w := range want {
		if v[i] != w {
			t.Errorf("field %s cast to %#v, want %#v", typesSchema.Fields[i].Name, v[i], w)
		}
	}
	if fs := out.ValueSchema.Field("i64"); fs.Type != schema.Int8 || !fs.Optional || fs.Name != "" {
		t.Errorf("cast field schema = %+v, want an optional int8", fs)
	}
	num := valueStruct(t, mustTransformOne(t, "Cast$Value", typesEvent(), "spec", "f64:int32,dec:int64,ts:int64")).Values
	if num[2] != int32(2147483647) || num[6] != int64(-123) || num[7] != int64(86401500) {
		t.Errorf("numeric casts = %v", num)
	}
	// Kafka's message quotes the value; cdcd's is a task's trace, which /status shows, so it does not.
	if _, err := transformOne(t, "Cast$Value", typesEvent(), "spec", "s:int32"); err == nil ||
		!strings.Contains(err.Error(), "not a number of type INT32") || strings.Contains(err.Error(), "text") {
		t.Errorf("casting text to int32: %v", err)
	}
	if _, err := transformOne(t, "Cast$Value", typesEvent(), "spec", "arr:string"); err == nil ||
		!strings.Contains(err.Error(), "does not support casting from ARRAY") {
		t.Errorf("casting an array: %v", err)
	}
	if _, err := transformOne(t, "Cast$Value", typesEvent(), "spec", "bytes:int32"); err == nil {
		t.Error("bytes cast to a number")
	}
}

func TestCastNumbersAsJava(t *testing.T) {
	cases := []struct {
		in     any
		target schema.Type
		want   any
	}{
		{2.5e10, schema.Int32, int32(2147483647)}, // (int) saturates
		{2.5e10, schema.Int16, int16(-1)},         // (short)(int) keeps the low bits of the saturated int
		{int64(300), schema.Int8, int8(44)},
		{float32(1.5), schema.Int64, int64(1)},
		{-0.5, schema.Boolean, false},
		{int32(2), schema.Boolean, true},
		{"TRUE", schema.Boolean, true},
		{"yes", schema.Boolean, false},
		{" 1.5f ", schema.Float32, float32(1.5)},
		{"1e3", schema.Float64, 1000.0},
		{true, schema.Float64, 1.0},
		{float32(0.1), schema.String, "0.1"},
		{1e-7, schema.String, "1.0E-7"},
		{int64(-7), schema.String, "-7"},
		{schema.Decimal{Unscaled: big.NewInt(1), Scale: 8}, schema.String, "1E-8"},
		{schema.Decimal{Unscaled: big.NewInt(-199), Scale: 2}, schema.Int32, int32(-1)},
	}
	for _, tc := range cases {
		var s *schema.Schema
		if d, ok := tc.in.(schema.Decimal); ok {
			s = schema.ConnectDecimal(int(d.Scale))
		}
		got, err := castValue(s, tc.in, tc.target)
		if err != nil || got != tc.want {
			t.Errorf("cast %#v to %s = %#v, %v; want %#v", tc.in, tc.target, got, err, tc.want)
		}
	}
	if _, err := castValue(nil, "128", schema.Int8); err == nil {
		t.Error(`"128" cast to int8`)
	}
}

func TestCastWholeValueAndDefaults(t *testing.T) {
	key := source.Event{KeySchema: &schema.Schema{Type: schema.Int64, Name: "k", Optional: true, HasDefault: true, Default: int64(9)},
		Key: int64(300)}
	out := mustTransformOne(t, "Cast$Key", key, "spec", "int16")
	if out.Key != int16(300) || out.KeySchema.Type != schema.Int16 || out.KeySchema.Name != "k" || !out.KeySchema.Optional ||
		out.KeySchema.Default != int16(9) {
		t.Errorf("whole-key cast = %#v %+v", out.Key, out.KeySchema)
	}
	if _, err := transformOne(t, "Cast$Key", rowEvent(row(1, "a", nil)), "spec", "string"); err == nil {
		t.Error("a struct key was cast whole")
	}
	schemaless := mustTransformOne(t, "Cast$Value", source.Event{Value: []schema.MapEntry{{Key: "n", Value: "12"}}}, "spec", "n:int64")
	if got := schemaless.Value.([]schema.MapEntry); mapGet(got, "n") != int64(12) {
		t.Errorf("schemaless cast = %v", got)
	}
	withDefault := mustTransformOne(t, "Cast$Value", rowEvent(row(1, "a", nil)), "spec", "status:boolean")
	if fs := withDefault.ValueSchema.Field("status"); fs.Default != false || !fs.HasDefault {
		t.Errorf("cast default = %+v, want false", fs)
	}
	for _, tc := range []struct{ spec, want string }{
		{"a:int32,int64", "may only specify a single cast"},
		{"a:bytes", "does not support casting to BYTES"},
		{"a:varchar", "Invalid type found in casting spec: varchar"},
		{"a:b:c", "Invalid rename mapping"},
		{" ", "at least one field"},
	} {
		if ce := configError(t, "Cast$Value", "spec", tc.spec); !strings.Contains(ce.Problem, tc.want) {
			t.Errorf("spec %q: %v, want %q", tc.spec, ce, tc.want)
		}
	}
}

func TestFlattenEnvelope(t *testing.T) {
	out := mustTransformOne(t, "Flatten$Value", change(schema.OpUpdate, row(1, "old", nil), row(1, "new", "vip")), "delimiter", "_")
	names := fieldNames(out.ValueSchema)
	for _, want := range []string{"before_id:int32?", "before_status:string?", "after_name:string?", "source_version:string", "op:string", "ts_ms:int64?"} {
		if !slices.Contains(names, want) {
			t.Errorf("flattened fields %v lack %s", names, want)
		}
	}
	st := valueStruct(t, out)
	if got := st.Get("before_name"); got != "old" {
		t.Errorf("before_name = %v", got)
	}
	if got := st.Get("before_status"); got != "new" {
		t.Errorf("before_status = %v, want its default", got)
	}
	if got := out.ValueSchema.Field("after_status").Default; got != "new" {
		t.Errorf("after_status default = %v", got)
	}
	if got := st.Get("source_lsn"); got != int64(4242) {
		t.Errorf("source_lsn = %v", got)
	}
	created := mustTransformOne(t, "Flatten$Value", change(schema.OpCreate, nil, row(2, "x", nil)))
	if got := valueStruct(t, created).Get("before.id"); got != nil {
		t.Errorf("before.id of a create = %v, want null", got)
	}
}

func TestFlattenRefusesMapsAndFlattensSchemaless(t *testing.T) {
	withMap := &schema.Schema{Type: schema.StructT, Fields: []schema.Field{
		{Name: "m", Schema: &schema.Schema{Type: schema.Map, Keys: &schema.Schema{Type: schema.String}, Values: &schema.Schema{Type: schema.String}}}}}
	ev := source.Event{ValueSchema: withMap, Value: &schema.Struct{Schema: withMap, Values: []any{[]schema.MapEntry{}}}}
	if _, err := transformOne(t, "Flatten$Value", ev, "delimiter", "."); err == nil || !strings.Contains(err.Error(), "does not support MAP") {
		t.Errorf("flatten of a map field: %v", err)
	}
	nested := source.Event{Value: []schema.MapEntry{{Key: "a", Value: []schema.MapEntry{{Key: "b", Value: int32(1)}, {Key: "c", Value: nil}}},
		{Key: "d", Value: "x"}}}
	out := mustTransformOne(t, "Flatten$Value", nested)
	want := []schema.MapEntry{{Key: "a.b", Value: int32(1)}, {Key: "a.c"}, {Key: "d", Value: "x"}}
	if got := out.Value.([]schema.MapEntry); !slices.Equal(got, want) {
		t.Errorf("schemaless flatten = %v, want %v", got, want)
	}
}

func TestHoistField(t *testing.T) {
	out := mustTransformOne(t, "HoistField$Key", rowEvent(row(4, "d", nil)), "field", "k")
	if out.KeySchema.Name != "" || len(out.KeySchema.Fields) != 1 || out.KeySchema.Fields[0].Schema != keySchema {
		t.Errorf("hoisted key schema = %+v", out.KeySchema)
	}
	if inner := out.Key.(*schema.Struct).Values[0].(*schema.Struct); inner.Values[0] != int32(4) {
		t.Errorf("hoisted key = %v", inner)
	}
	tomb := mustTransformOne(t, "HoistField$Value", tombstone(), "field", "v")
	if got := tomb.Value.([]schema.MapEntry); !slices.Equal(got, []schema.MapEntry{{Key: "v"}}) {
		t.Errorf("a schemaless null hoists to %v, want {v=null}", got)
	}
	required := source.Event{ValueSchema: &schema.Schema{Type: schema.String}}
	if _, err := transformOne(t, "HoistField$Value", required, "field", "v"); err == nil {
		t.Error("a null for a required schema was hoisted")
	}
}

func TestSetSchemaMetadata(t *testing.T) {
	out := mustTransformOne(t, "SetSchemaMetadata$Value", rowEvent(row(1, "a", nil)), "schema.name", "com.example.Customer", "schema.version", "3")
	if s := out.ValueSchema; s.Name != "com.example.Customer" || s.Version != 3 || !s.Optional || len(s.Fields) != 3 {
		t.Errorf("schema = %+v", s)
	}
	if st := valueStruct(t, out); st.Values[2] != "new" {
		t.Errorf("values = %v", st.Values)
	}
	key := mustTransformOne(t, "SetSchemaMetadata$Key", rowEvent(row(1, "a", nil)), "schema.version", "2")
	if key.KeySchema.Name != keySchema.Name || key.KeySchema.Version != 2 || key.Key.(*schema.Struct).Schema != key.KeySchema {
		t.Errorf("key schema = %+v", key.KeySchema)
	}
	if _, err := transformOne(t, "SetSchemaMetadata$Value", source.Event{Value: "x"}, "schema.name", "n"); err == nil {
		t.Error("a schemaless value was renamed")
	}
	if ce := configError(t, "SetSchemaMetadata$Value", "replace.null.with.default", "true"); !strings.Contains(ce.Problem, "Neither schema name nor version") {
		t.Errorf("error = %v", ce)
	}
	if ce := configError(t, "SetSchemaMetadata$Value", "schema.version", "v1"); !strings.Contains(ce.Problem, "INT") {
		t.Errorf("error = %v", ce)
	}
}

func TestHeaderTransforms(t *testing.T) {
	ev := rowEvent(row(5, "e", nil))
	ev.Headers = []source.Header{{Key: "a", Value: "1"}, {Key: "b", Value: "2"}, {Key: "a", Value: "3"}}
	dropped := mustTransformOne(t, "DropHeaders", ev, "headers", "a")
	if len(dropped.Headers) != 1 || dropped.Headers[0].Key != "b" || len(ev.Headers) != 3 {
		t.Errorf("DropHeaders left %v (input now %v)", dropped.Headers, ev.Headers)
	}
	inserted := mustTransformOne(t, "InsertHeader", ev, "header", "env", "value.literal", "42")
	if h := inserted.Headers[3]; h.Key != "env" || h.Value != int8(42) || h.Schema.Type != schema.Int8 {
		t.Errorf("InsertHeader added %+v", h)
	}
	moved := mustTransformOne(t, "HeaderFrom$Value", ev, "fields", "name,status", "headers", "n,s", "operation", "move")
	if got := fieldNames(moved.ValueSchema); !slices.Equal(got, []string{"id:int32"}) {
		t.Errorf("moved value fields = %v", got)
	}
	if h := moved.Headers[3:]; len(h) != 2 || h[0].Value != "e" || h[1].Value != "new" || h[1].Schema != rowSchema.Fields[2].Schema {
		t.Errorf("moved headers = %+v", h)
	}
	copied := mustTransformOne(t, "HeaderFrom$Key", ev, "fields", "id", "headers", "key_id", "operation", "copy")
	if copied.KeySchema != keySchema || copied.Headers[3].Value != int32(5) {
		t.Errorf("copied: key schema changed or header %+v", copied.Headers[3])
	}
	if ce := configError(t, "HeaderFrom$Value", "fields", "a,b", "headers", "x", "operation", "copy"); !strings.Contains(ce.Problem, "same number of elements") {
		t.Errorf("error = %v", ce)
	}
	if ce := configError(t, "HeaderFrom$Value", "fields", "a", "headers", "x", "operation", "Move"); !strings.Contains(ce.Problem, "must be one of") {
		t.Errorf("error = %v", ce)
	}
}

func TestConnectLiteralTypes(t *testing.T) {
	cases := []struct {
		literal string
		typ     schema.Type
		want    any
	}{
		{"hello", schema.String, "hello"},
		{"", schema.String, ""},
		{" padded ", schema.String, " padded "},
		{"true", schema.Boolean, true},
		{"-5", schema.Int8, int8(-5)},
		{"300", schema.Int16, int16(300)},
		{"70000", schema.Int32, int32(70000)},
		{"5000000000", schema.Int64, int64(5000000000)},
		{"1e2", schema.Int8, int8(100)},
		{"1.5", schema.Float32, float32(1.5)},
		{"a:b", schema.String, "a:b"},
		{"+x", schema.String, "+x"},
	}
	for _, tc := range cases {
		s, v, err := parseConnectLiteral(tc.literal)
		if err != nil || s.Type != tc.typ || v != tc.want {
			t.Errorf("parseConnectLiteral(%q) = %v %#v %v, want %s %#v", tc.literal, s, v, err, tc.typ, tc.want)
		}
	}
	if s, v, _ := parseConnectLiteral("null"); s != nil || v != nil {
		t.Errorf("null = %v %v", s, v)
	}
	if s, v, _ := parseConnectLiteral("99999999999999999999"); s.Name != schema.DecimalName || v.(schema.Decimal).Unscaled.String() != "99999999999999999999" || v.(schema.Decimal).Scale != 0 {
		t.Errorf("a long-overflowing integer = %v %v, want a Decimal", s, v)
	}
	for _, refused := range []string{"[1,2]", "{a:1}", "12:30", "2024-01-02"} {
		if _, _, err := parseConnectLiteral(refused); err == nil {
			t.Errorf("parseConnectLiteral(%q) accepted a literal cdcd cannot type as Connect does", refused)
		}
	}
}

func TestFieldTransformEdges(t *testing.T) {
	if ce := configError(t, "SetSchemaMetadata$Value", "schema.version", "0"); !strings.Contains(ce.Problem, "positive") {
		t.Errorf("schema.version=0: %v", ce)
	}
	if _, err := transformOne(t, "HeaderFrom$Value", rowEvent(row(1, "a", nil)), "fields", "nope", "headers", "h", "operation", "copy"); err == nil {
		t.Error("HeaderFrom copied a field the value lacks")
	}
	clash := &schema.Schema{Type: schema.StructT, Fields: []schema.Field{
		{Name: "a_b", Schema: &schema.Schema{Type: schema.Int32}},
		{Name: "a", Schema: &schema.Schema{Type: schema.StructT, Fields: []schema.Field{{Name: "b", Schema: &schema.Schema{Type: schema.Int32}}}}},
	}}
	ev := source.Event{ValueSchema: clash, Value: &schema.Struct{Schema: clash, Values: []any{int32(1), &schema.Struct{Schema: clash.Fields[1].Schema, Values: []any{int32(2)}}}}}
	if _, err := transformOne(t, "Flatten$Value", ev, "delimiter", "_"); err == nil || !strings.Contains(err.Error(), "duplication") {
		t.Errorf("flattening onto an existing name: %v", err)
	}
	// A LinkedHashMap keeps a repeated key where it was first put, with the last value.
	repeated := source.Event{Value: []schema.MapEntry{{Key: "a.b", Value: int32(1)}, {Key: "x", Value: int32(0)},
		{Key: "a", Value: []schema.MapEntry{{Key: "b", Value: int32(2)}}}}}
	out := mustTransformOne(t, "Flatten$Value", repeated)
	if got := out.Value.([]schema.MapEntry); !slices.Equal(got, []schema.MapEntry{{Key: "a.b", Value: int32(2)}, {Key: "x", Value: int32(0)}}) {
		t.Errorf("schemaless flatten with a repeated name = %v", got)
	}
	// ConfigDef trims string settings: a blank delimiter is empty, a literal loses its padding.
	joined := mustTransformOne(t, "Flatten$Value", change(schema.OpCreate, nil, row(2, "x", nil)), "delimiter", " ")
	if joined.ValueSchema.Field("afterid") == nil {
		t.Errorf("a blank delimiter: fields %v", fieldNames(joined.ValueSchema))
	}
	padded := mustTransformOne(t, "InsertHeader", rowEvent(row(1, "a", nil)), "header", "h", "value.literal", " hi ")
	if padded.Headers[0].Value != "hi" {
		t.Errorf("literal = %q", padded.Headers[0].Value)
	}
	shared := rowEvent(row(1, "a", nil))
	shared.Headers = make([]source.Header, 1, 4)
	inserted := mustTransformOne(t, "InsertHeader", shared, "header", "h", "value.literal", "v")
	if len(inserted.Headers) != 2 || shared.Headers[:2][1].Key == "h" {
		t.Error("InsertHeader wrote into the input's header array")
	}
}

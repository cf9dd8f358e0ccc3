package avro

import (
	"errors"
	"math/big"
	"strings"
	"testing"

	hamba "github.com/hamba/avro/v2"

	"github.com/cdcd/cdcd/schema"
)

// The expected texts below were derived by hand from Confluent's AvroData.fromConnectSchema (7.0–8.3) and
// Avro's Schema.toJson (1.11/1.12): property insertion order, ["null",T] vs [T,"null"], the namespace
// written only where it changes, a record spelled out once and then named. They are not captured from a
// running AvroConverter (its jars are not on Maven Central); see the package report.

func customersRow() *schema.Schema {
	return &schema.Schema{Type: schema.StructT, Optional: true, Name: "pg1.public.customers.Value", Fields: []schema.Field{
		{Name: "id", Schema: &schema.Schema{Type: schema.Int32, Default: int32(0), HasDefault: true}},
		{Name: "email", Schema: &schema.Schema{Type: schema.String}},
	}}
}

func customersEnvelope() *schema.Schema {
	return schema.EnvelopeSchema("pg1.public.customers.Envelope", customersRow(), schema.PostgresSourceSchema())
}

// pgEnvelopeText is the value schema of pg1.public.customers (id serial primary key, email varchar not
// null), written in the order Java prints it.
const pgEnvelopeText = `{"type":"record","name":"Envelope","namespace":"pg1.public.customers","fields":[` +
	`{"name":"before","type":["null",{"type":"record","name":"Value","fields":[` +
	`{"name":"id","type":{"type":"int","connect.default":0},"default":0},` +
	`{"name":"email","type":"string"}],"connect.name":"pg1.public.customers.Value"}],"default":null},` +
	`{"name":"after","type":["null","Value"],"default":null},` +
	`{"name":"source","type":{"type":"record","name":"Source","namespace":"io.debezium.connector.postgresql","fields":[` +
	`{"name":"version","type":"string"},{"name":"connector","type":"string"},{"name":"name","type":"string"},` +
	`{"name":"ts_ms","type":"long"},` +
	`{"name":"snapshot","type":[{"type":"string","connect.version":1,"connect.parameters":{"allowed":"true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"},"connect.default":"false","connect.name":"io.debezium.data.Enum"},"null"],"default":"false"},` +
	`{"name":"db","type":"string"},{"name":"sequence","type":["null","string"],"default":null},` +
	`{"name":"ts_us","type":["null","long"],"default":null},{"name":"ts_ns","type":["null","long"],"default":null},` +
	`{"name":"schema","type":"string"},{"name":"table","type":"string"},` +
	`{"name":"txId","type":["null","long"],"default":null},{"name":"lsn","type":["null","long"],"default":null},` +
	`{"name":"xmin","type":["null","long"],"default":null},{"name":"origin","type":["null","string"],"default":null},` +
	`{"name":"origin_lsn","type":["null","long"],"default":null}],` +
	`"connect.version":1,"connect.name":"io.debezium.connector.postgresql.Source"}},` +
	`{"name":"transaction","type":["null",{"type":"record","name":"block","namespace":"event","fields":[` +
	`{"name":"id","type":"string"},{"name":"total_order","type":"long"},{"name":"data_collection_order","type":"long"}],` +
	`"connect.version":1,"connect.name":"event.block"}],"default":null},` +
	`{"name":"op","type":"string"},` +
	`{"name":"ts_ms","type":["null","long"],"default":null},{"name":"ts_us","type":["null","long"],"default":null},` +
	`{"name":"ts_ns","type":["null","long"],"default":null}],` +
	`"connect.version":2,"connect.name":"pg1.public.customers.Envelope"}`

// row wraps field schemas in a required record t.Value, so that each case shows how a field is written.
func row(fields ...schema.Field) *schema.Schema {
	return &schema.Schema{Type: schema.StructT, Name: "t.Value", Fields: fields}
}

func rowText(fields string) string {
	return `{"type":"record","name":"Value","namespace":"t","fields":[` + fields + `],"connect.name":"t.Value"}`
}

func optional(s *schema.Schema) *schema.Schema { return s.WithOptional(true) }

func withDefault(s *schema.Schema, v any) *schema.Schema {
	c := *s
	c.Default, c.HasDefault = v, true
	return &c
}

// doubleVector and sparseVector are Debezium's io.debezium.data.DoubleVector and SparseVector (pgvector's
// vector and sparsevec, which no reader of cdcd maps yet): a named array, and a named struct holding a map
// with INT16 keys.
func doubleVector() *schema.Schema {
	return &schema.Schema{Type: schema.Array, Name: "io.debezium.data.DoubleVector", Version: 1, Items: &schema.Schema{Type: schema.Float64}}
}

func sparseVector() *schema.Schema {
	return &schema.Schema{Type: schema.StructT, Name: "io.debezium.data.SparseVector", Version: 1, Doc: "Sparse double vector",
		Fields: []schema.Field{
			{Name: "dimensions", Schema: &schema.Schema{Type: schema.Int16}},
			{Name: "vector", Schema: &schema.Schema{Type: schema.Map, Keys: &schema.Schema{Type: schema.Int16}, Values: &schema.Schema{Type: schema.Float64}}},
		}}
}

func TestSchemaTextMatchesAvroData(t *testing.T) {
	decimalText := `{"type":"bytes","scale":2,"precision":10,"connect.version":1,"connect.parameters":{"scale":"2","connect.decimal.precision":"10"},"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}`
	vsdText := `{"type":"record","name":"VariableScaleDecimal","namespace":"io.debezium.data","fields":[{"name":"scale","type":"int"},{"name":"value","type":"bytes"}],"connect.doc":"Variable scaled decimal","connect.version":1,"connect.name":"io.debezium.data.VariableScaleDecimal"}`
	commented := &schema.Schema{Type: schema.Int64, Doc: "the \"total\"\n"}
	cases := []struct {
		name   string
		schema *schema.Schema
		want   string
	}{
		{"pg envelope", customersEnvelope(), pgEnvelopeText},
		{"key", &schema.Schema{Type: schema.StructT, Name: "pg1.public.customers.Key", Fields: []schema.Field{
			{Name: "id", Schema: &schema.Schema{Type: schema.Int32, Default: int32(0), HasDefault: true}}}},
			`{"type":"record","name":"Key","namespace":"pg1.public.customers","fields":[{"name":"id","type":{"type":"int","connect.default":0},"default":0}],"connect.name":"pg1.public.customers.Key"}`},
		{"decimal", row(
			schema.Field{Name: "price", Schema: schema.DecimalSchema(2, 10)},
			schema.Field{Name: "maybe", Schema: optional(schema.DecimalSchema(2, 10))},
			schema.Field{Name: "money", Schema: schema.ConnectDecimal(2)}),
			rowText(`{"name":"price","type":` + decimalText + `},` +
				`{"name":"maybe","type":["null",` + decimalText + `],"default":null},` +
				`{"name":"money","type":{"type":"bytes","scale":2,"precision":64,"connect.version":1,"connect.parameters":{"scale":"2"},"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}}`)},
		{"decimal scale above precision keeps the legacy form", row(
			schema.Field{Name: "d", Schema: schema.DecimalSchema(5, 3)}),
			rowText(`{"name":"d","type":{"type":"bytes","scale":5,"precision":3,"connect.version":1,"connect.parameters":{"scale":"5","connect.decimal.precision":"3"},"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}}`)},
		{"variable scale decimal written once then named", row(
			schema.Field{Name: "a", Schema: optional(schema.VariableScaleDecimal())},
			schema.Field{Name: "b", Schema: optional(schema.VariableScaleDecimal())}),
			rowText(`{"name":"a","type":["null",` + vsdText + `],"default":null},` +
				`{"name":"b","type":["null","io.debezium.data.VariableScaleDecimal"],"default":null}`)},
		{"enum", row(
			schema.Field{Name: "e", Schema: schema.Enum([]string{"a", "b", "c"})}),
			rowText(`{"name":"e","type":{"type":"string","connect.version":1,"connect.parameters":{"allowed":"a,b,c"},"connect.name":"io.debezium.data.Enum"}}`)},
		{"optional with default puts null second", row(
			schema.Field{Name: "status", Schema: withDefault(optional(&schema.Schema{Type: schema.String}), "new")},
			schema.Field{Name: "n", Schema: withDefault(optional(&schema.Schema{Type: schema.Int16}), int16(5))},
			schema.Field{Name: "nulldefault", Schema: withDefault(optional(&schema.Schema{Type: schema.Int32}), nil)}),
			rowText(`{"name":"status","type":[{"type":"string","connect.default":"new"},"null"],"default":"new"},` +
				`{"name":"n","type":[{"type":"int","connect.default":5,"connect.type":"int16"},"null"],"default":5},` +
				`{"name":"nulldefault","type":["null","int"],"default":null}`)},
		{"int8 int16", row(
			schema.Field{Name: "a", Schema: &schema.Schema{Type: schema.Int8}},
			schema.Field{Name: "b", Schema: optional(&schema.Schema{Type: schema.Int16})}),
			rowText(`{"name":"a","type":{"type":"int","connect.type":"int8"}},` +
				`{"name":"b","type":["null",{"type":"int","connect.type":"int16"}],"default":null}`)},
		{"connect logical types", row(
			schema.Field{Name: "d", Schema: schema.ConnectDate()},
			schema.Field{Name: "t", Schema: schema.ConnectTime()},
			schema.Field{Name: "ts", Schema: optional(schema.ConnectTimestamp())}),
			rowText(`{"name":"d","type":{"type":"int","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Date","logicalType":"date"}},` +
				`{"name":"t","type":{"type":"int","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Time","logicalType":"time-millis"}},` +
				`{"name":"ts","type":["null",{"type":"long","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Timestamp","logicalType":"timestamp-millis"}],"default":null}`)},
		{"debezium semantic types have no logical type", row(
			schema.Field{Name: "ts", Schema: schema.MicroTimestamp()},
			schema.Field{Name: "z", Schema: optional(schema.ZonedTimestamp())},
			schema.Field{Name: "bits", Schema: schema.Bits(3)}),
			rowText(`{"name":"ts","type":{"type":"long","connect.version":1,"connect.name":"io.debezium.time.MicroTimestamp"}},` +
				`{"name":"z","type":["null",{"type":"string","connect.version":1,"connect.name":"io.debezium.time.ZonedTimestamp"}],"default":null},` +
				`{"name":"bits","type":{"type":"bytes","connect.version":1,"connect.parameters":{"length":"3"},"connect.name":"io.debezium.data.Bits"}}`)},
		{"column comment is connect.doc on the type", row(
			schema.Field{Name: "total", Schema: commented}),
			rowText(`{"name":"total","type":{"type":"long","connect.doc":"the \"total\"\n"}}`)},
		{"maps", row(
			schema.Field{Name: "h", Schema: &schema.Schema{Type: schema.Map, Keys: &schema.Schema{Type: schema.String}, Values: optional(&schema.Schema{Type: schema.String})}},
			schema.Field{Name: "sv", Schema: sparseVector()}),
			rowText(`{"name":"h","type":{"type":"map","values":["null","string"]}},` +
				`{"name":"sv","type":{"type":"record","name":"SparseVector","namespace":"io.debezium.data","fields":[` +
				`{"name":"dimensions","type":{"type":"int","connect.type":"int16"}},` +
				`{"name":"vector","type":{"type":"array","items":{"type":"record","name":"MapEntry","namespace":"io.confluent.connect.avro","fields":[` +
				`{"name":"key","type":{"type":"int","connect.type":"int16"}},{"name":"value","type":"double"}]}}}],` +
				`"connect.doc":"Sparse double vector","connect.version":1,"connect.name":"io.debezium.data.SparseVector"}}`)},
		{"array of named records refers to the first", row(
			schema.Field{Name: "p", Schema: schema.Point()},
			schema.Field{Name: "ps", Schema: &schema.Schema{Type: schema.Array, Optional: true, Items: schema.Point()}}),
			rowText(`{"name":"p","type":{"type":"record","name":"Point","namespace":"io.debezium.data.geometry","fields":[` +
				`{"name":"x","type":"double"},{"name":"y","type":"double"},{"name":"wkb","type":["null","bytes"],"default":null},` +
				`{"name":"srid","type":["null","int"],"default":null}],"connect.doc":"Geometry (POINT)","connect.version":1,"connect.name":"io.debezium.data.geometry.Point"}},` +
				`{"name":"ps","type":["null",{"type":"array","items":"io.debezium.data.geometry.Point"}],"default":null}`)},
		{"defaults of bytes, floats and structs", row(
			schema.Field{Name: "b", Schema: withDefault(&schema.Schema{Type: schema.Bytes}, []byte{0, 0xff, 'a'})},
			schema.Field{Name: "f", Schema: withDefault(&schema.Schema{Type: schema.Float32}, float32(1.1))},
			schema.Field{Name: "d", Schema: withDefault(&schema.Schema{Type: schema.Float64}, 1e10)},
			schema.Field{Name: "dec", Schema: withDefault(schema.DecimalSchema(1, 3), schema.Decimal{Unscaled: bigInt(-1), Scale: 1})}),
			rowText(`{"name":"b","type":{"type":"bytes","connect.default":"\u0000ÿa"},"default":"\u0000ÿa"},` +
				`{"name":"f","type":{"type":"float","connect.default":1.1},"default":1.1},` +
				`{"name":"d","type":{"type":"double","connect.default":1.0E10},"default":1.0E10},` +
				`{"name":"dec","type":{"type":"bytes","scale":1,"precision":3,"connect.version":1,"connect.parameters":{"scale":"1","connect.decimal.precision":"3"},"connect.default":"ÿ","connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"},"default":"ÿ"}`)},
		{"unnamed structs", &schema.Schema{Type: schema.StructT, Fields: []schema.Field{
			{Name: "inner", Schema: &schema.Schema{Type: schema.StructT, Fields: []schema.Field{{Name: "x", Schema: &schema.Schema{Type: schema.Boolean}}}}}}},
			`{"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro","fields":[` +
				`{"name":"inner","type":{"type":"record","name":"ConnectDefault2","fields":[{"name":"x","type":"boolean"}]}}]}`},
		{"record in the null namespace inside a named one", row(
			schema.Field{Name: "r", Schema: &schema.Schema{Type: schema.StructT, Name: "Top", Fields: []schema.Field{{Name: "x", Schema: &schema.Schema{Type: schema.Int32}}}}}),
			rowText(`{"name":"r","type":{"type":"record","name":"Top","namespace":"","fields":[{"name":"x","type":"int"}],"connect.name":"Top"}}`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SchemaText(tc.schema)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("schema text\n got %s\nwant %s", got, tc.want)
			}
			// Every text must be valid Avro to an independent parser.
			if _, err := hamba.ParseWithCache(got, "", &hamba.SchemaCache{}); err != nil {
				t.Errorf("hamba/avro refuses the text: %v", err)
			}
		})
	}
}

func TestSchemaTextWithoutConnectMetaData(t *testing.T) {
	root, err := toAvroSchema(row(schema.Field{Name: "price", Schema: schema.DecimalSchema(2, 10)},
		schema.Field{Name: "e", Schema: schema.Enum([]string{"a"})}), false)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"record","name":"Value","namespace":"t","fields":[` +
		`{"name":"price","type":{"type":"bytes","scale":2,"precision":10,"logicalType":"decimal"}},{"name":"e","type":"string"}]}`
	if got := string(renderSchema(root)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestSchemaTextRefusesWhatAvroRefuses(t *testing.T) {
	cases := map[string]*schema.Schema{
		"dash in a record name":   {Type: schema.StructT, Name: "pg-1.public.t.Value"},
		"field name with a digit": row(schema.Field{Name: "1st", Schema: &schema.Schema{Type: schema.Int32}}),
		"decimal without scale":   row(schema.Field{Name: "d", Schema: &schema.Schema{Type: schema.Bytes, Name: schema.DecimalName}}),
		"no schema":               nil,
		"default of a wrong type": row(schema.Field{Name: "d", Schema: withDefault(&schema.Schema{Type: schema.Int32}, "zero")}),
	}
	for name, s := range cases {
		_, err := SchemaText(s)
		if !errors.Is(err, ErrSchema) && !errors.Is(err, ErrValueType) {
			t.Errorf("%s: got %v, want ErrSchema or ErrValueType", name, err)
		}
	}
	_, err := SchemaText(&schema.Schema{Type: schema.StructT, Name: "pg-1.public.t.Value"})
	if err == nil || !strings.Contains(err.Error(), "pg-1") {
		t.Errorf("error should name the bad name: %v", err)
	}
}

func bigInt(n int64) *big.Int { return big.NewInt(n) }

package jsonconv

import (
	"math/big"
	"testing"

	"github.com/cdcd/cdcd/schema"
)

// BenchmarkEncodeRow encodes a create event of a 10-column row in Debezium's envelope with schemas on,
// the common case of the product's hot path. The buffer is reused, as a producer loop would.
func BenchmarkEncodeRow(b *testing.B) {
	row := structOf("bench.public.orders.Value", true,
		schema.Field{Name: "id", Schema: withDefault(prim(schema.Int64, false), int64(0))},
		schema.Field{Name: "customer_id", Schema: prim(schema.Int32, false)},
		schema.Field{Name: "status", Schema: prim(schema.String, false)},
		schema.Field{Name: "note", Schema: prim(schema.String, true)},
		schema.Field{Name: "amount", Schema: decimalSchema("2", false)},
		schema.Field{Name: "weight", Schema: prim(schema.Float64, true)},
		schema.Field{Name: "paid", Schema: prim(schema.Boolean, false)},
		schema.Field{Name: "created_at", Schema: &schema.Schema{Type: schema.Int64, Name: "io.debezium.time.MicroTimestamp", Version: 1}},
		schema.Field{Name: "payload", Schema: prim(schema.Bytes, true)},
		schema.Field{Name: "comment", Schema: withDefault(prim(schema.String, true), "none")},
	)
	env := schema.EnvelopeSchema("bench.public.orders.Envelope", row, schema.PostgresSourceSchema())
	src := schema.NewStruct(schema.PostgresSourceSchema()).
		Set(schema.SourceVersion, schema.DebeziumVersion).Set(schema.SourceConnector, "postgresql").Set(schema.SourceName, "bench").
		Set(schema.SourceTsMs, int64(1700000000123)).Set(schema.SourceDB, "app").Set(schema.SourceSequence, `["24023119","24023128"]`).
		Set(schema.SourceTsUs, int64(1700000000123456)).Set(schema.SourceTsNs, int64(1700000000123456000)).
		Set(schema.SourceSchema, "public").Set(schema.SourceTable, "orders").Set(schema.SourceTxID, int64(555)).
		Set(schema.SourceLSN, int64(24023128))
	after := schema.NewStruct(row).Set("id", int64(123456789)).Set("customer_id", int32(42)).Set("status", "shipped").
		Set("amount", schema.Decimal{Unscaled: big.NewInt(1999), Scale: 2}).Set("weight", 12.5).Set("paid", true).
		Set("created_at", int64(1700000000123456)).Set("payload", []byte("some binary payload")).
		Set("note", "fragile – handle with care ✓")
	value := schema.NewStruct(env).Set(schema.EnvelopeAfter, after).Set(schema.EnvelopeSource, src).
		Set(schema.EnvelopeOp, schema.OpCreate).Set(schema.EnvelopeTsMs, int64(1700000000200)).
		Set(schema.EnvelopeTsUs, int64(1700000000200111)).Set(schema.EnvelopeTsNs, int64(1700000000200111222))
	c := New()
	buf, err := c.EncodeAppend(nil, env, value)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if buf, err = c.EncodeAppend(buf[:0], env, value); err != nil {
			b.Fatal(err)
		}
	}
}

package jsonconv

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/schema"
)

// Encode builds records in a pooled buffer; each result must still be the caller's own bytes, untouched by
// later calls, and exactly what EncodeAppend writes.
func TestEncodeResultsAreIndependentOfLaterCalls(t *testing.T) {
	row := structOf("t.Value", false, schema.Field{Name: "payload", Schema: prim(schema.String, true)})
	c := New()
	encode := func(text string) []byte {
		t.Helper()
		b, err := c.Encode(row, schema.NewStruct(row).Set("payload", text))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := encode(strings.Repeat("a", 3000))
	want := bytes.Clone(first)
	second := encode(strings.Repeat("b", 3000))
	if !bytes.Equal(first, want) {
		t.Fatal("a later Encode overwrote an earlier result")
	}
	appended, err := c.EncodeAppend(nil, row, schema.NewStruct(row).Set("payload", strings.Repeat("b", 3000)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(second, appended) {
		t.Errorf("Encode and EncodeAppend disagree:\n%s\n%s", second, appended)
	}
}

func TestEncodeErrorReturnsNothing(t *testing.T) {
	row := structOf("t.Value", false, schema.Field{Name: "id", Schema: prim(schema.Int64, false)})
	b, err := New().Encode(row, schema.NewStruct(row)) // a required field without a value
	if err == nil || b != nil {
		t.Errorf("Encode = %q, %v; want nil bytes and an error", b, err)
	}
}

// BenchmarkEncodeFreshRecord is the producer's path, a new record per event, for a row like the
// benchmark's (1 KB text) in the envelope with schemas on; "append-to-nil" is what Encode did before it
// used pooled buffers.
func BenchmarkEncodeFreshRecord(b *testing.B) {
	row := structOf("bench.public.t.Value", true,
		schema.Field{Name: "id", Schema: prim(schema.Int64, false)},
		schema.Field{Name: "k", Schema: prim(schema.Int32, true)},
		schema.Field{Name: "payload", Schema: prim(schema.String, true)},
		schema.Field{Name: "updated_at", Schema: prim(schema.String, true)},
	)
	env := schema.EnvelopeSchema("bench.public.t.Envelope", row, schema.PostgresSourceSchema())
	after := schema.NewStruct(row).Set("id", int64(123456)).Set("k", int32(42)).
		Set("payload", strings.Repeat("0123456789abcdef", 64)).Set("updated_at", "2026-11-30T09:00:00.123456Z")
	src := schema.NewStruct(schema.PostgresSourceSchema()).
		Set(schema.SourceVersion, schema.DebeziumVersion).Set(schema.SourceConnector, "postgresql").Set(schema.SourceName, "bench").
		Set(schema.SourceTsMs, int64(1700000000123)).Set(schema.SourceDB, "app").Set(schema.SourceSchema, "public").
		Set(schema.SourceTable, "t").Set(schema.SourceTxID, int64(555)).Set(schema.SourceLSN, int64(24023128))
	value := schema.NewStruct(env).Set(schema.EnvelopeAfter, after).Set(schema.EnvelopeSource, src).
		Set(schema.EnvelopeOp, schema.OpCreate).Set(schema.EnvelopeTsMs, int64(1700000000200))
	c := New()
	b.Run("Encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Encode(env, value); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("append-to-nil", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.EncodeAppend(nil, env, value); err != nil {
				b.Fatal(err)
			}
		}
	})
}

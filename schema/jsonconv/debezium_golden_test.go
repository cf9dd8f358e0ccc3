package jsonconv

import (
	"bufio"
	"encoding/base64"
	"os"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/schema"
)

// customersRow is the row schema of the golden envelope (a reader builds it from the table).
func customersRow() *schema.Schema {
	return structOf("pg1.public.customers.Value", true,
		schema.Field{Name: "id", Schema: withDefault(prim(schema.Int32, false), int32(0))},
		schema.Field{Name: "email", Schema: prim(schema.String, false)},
	)
}

func debeziumCases() map[string]goldenCase {
	cs := map[string]goldenCase{}
	row := customersRow()
	env := schema.EnvelopeSchema("pg1.public.customers.Envelope", row, schema.PostgresSourceSchema())
	src := schema.NewStruct(schema.PostgresSourceSchema()).
		Set(schema.SourceVersion, schema.DebeziumVersion).Set(schema.SourceConnector, "postgresql").Set(schema.SourceName, "pg1").
		Set(schema.SourceTsMs, int64(1700000000123)).Set(schema.SourceDB, "app").Set(schema.SourceSequence, `["24023119","24023128"]`).
		Set(schema.SourceTsUs, int64(1700000000123456)).Set(schema.SourceTsNs, int64(1700000000123456000)).
		Set(schema.SourceSchema, "public").Set(schema.SourceTable, "customers").Set(schema.SourceTxID, int64(555)).
		Set(schema.SourceLSN, int64(24023128))
	cs["envelope_create"] = goldenCase{env, schema.NewStruct(env).
		Set(schema.EnvelopeAfter, schema.NewStruct(row).Set("id", int32(1)).Set("email", "a@b.c")).
		Set(schema.EnvelopeSource, src).Set(schema.EnvelopeOp, schema.OpCreate).Set(schema.EnvelopeTsMs, int64(1700000000200)).
		Set(schema.EnvelopeTsUs, int64(1700000000200111)).Set(schema.EnvelopeTsNs, int64(1700000000200111222))}

	hbKey, hbValue := schema.HeartbeatKeySchema(), schema.HeartbeatValueSchema()
	cs["heartbeat_key"] = goldenCase{hbKey, schema.NewStruct(hbKey).Set(schema.HeartbeatServerName, "pg1")}
	cs["heartbeat_value"] = goldenCase{hbValue, schema.NewStruct(hbValue).Set(schema.EnvelopeTsMs, int64(1700000000000))}

	txKey, txValue, perTable := schema.TransactionKeySchema(), schema.TransactionValueSchema(), schema.TransactionEventCountSchema()
	cs["transaction_key"] = goldenCase{txKey, schema.NewStruct(txKey).Set(schema.TransactionID, "571:53195829")}
	cs["transaction_begin"] = goldenCase{txValue, schema.NewStruct(txValue).Set(schema.TransactionStatus, "BEGIN").
		Set(schema.TransactionID, "571:53195829").Set(schema.EnvelopeTsMs, int64(1486500577125))}
	cs["transaction_end"] = goldenCase{txValue, schema.NewStruct(txValue).Set(schema.TransactionStatus, "END").
		Set(schema.TransactionID, "571:53195832").Set(schema.TransactionEventCount, int64(2)).Set(schema.EnvelopeTsMs, int64(1486500577691)).
		Set(schema.TransactionDataCollections, []any{
			schema.NewStruct(perTable).Set(schema.TransactionDataCollection, "s1.a").Set(schema.TransactionEventCount, int64(1)),
			schema.NewStruct(perTable).Set(schema.TransactionDataCollection, "s2.a").Set(schema.TransactionEventCount, int64(1)),
		})}

	msgKey := schema.PostgresMessageKeySchema()
	cs["message_key"] = goldenCase{msgKey, schema.NewStruct(msgKey).Set(schema.MessagePrefix, "pfx")}
	for mode, content := range map[string]struct {
		schema *schema.Schema
		value  any
	}{"bytes": {prim(schema.Bytes, false), []byte{1, 2, 3}}, "base64": {prim(schema.String, false), "AQID"}} {
		value := schema.PostgresMessageValueSchema(content.schema)
		msrc := schema.NewStruct(schema.PostgresSourceSchema()).
			Set(schema.SourceVersion, schema.DebeziumVersion).Set(schema.SourceConnector, "postgresql").Set(schema.SourceName, "pg1").
			Set(schema.SourceTsMs, int64(1)).Set(schema.SourceDB, "app").Set(schema.SourceSchema, "").Set(schema.SourceTable, "").
			Set(schema.SourceLSN, int64(5))
		block := value.Field(schema.MessageBlock)
		cs["message_value_"+mode] = goldenCase{value, schema.NewStruct(value).Set(schema.EnvelopeOp, schema.OpMessage).
			Set(schema.EnvelopeTsMs, int64(2)).Set(schema.EnvelopeSource, msrc).
			Set(schema.MessageBlock, schema.NewStruct(block).Set(schema.MessagePrefix, "pfx").Set(schema.MessageContent, content.value))}
	}
	return cs
}

// TestDebeziumSchemasMatchDebezium compares cdcd's envelope, source, heartbeat, transaction and message
// schemas, written through the converter, with Debezium 3.6.1's own schemas written by JsonConverter.
func TestDebeziumSchemasMatchDebezium(t *testing.T) {
	cases := debeziumCases()
	f, err := os.Open("testdata/debezium_golden.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		name, b64, ok := strings.Cut(sc.Text(), "\t")
		gc, known := cases[name]
		if !ok || !known {
			t.Fatalf("golden line %q has no Go twin", sc.Text())
		}
		want, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			t.Fatal(err)
		}
		got, err := New().Encode(gc.schema, gc.value)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if string(got) != string(want) {
			t.Errorf("%s differs\n got: %s\nwant: %s", name, got, want)
		}
		n++
	}
	if n != len(cases) {
		t.Fatalf("%d golden lines for %d cases", n, len(cases))
	}
}

package avro

import (
	"reflect"
	"testing"

	"github.com/cdcd/cdcd/schema"
)

// TestTransactionRecordsRoundTrip: the transaction topic's key and END value (provide.transaction.metadata)
// go through the Avro converter as any record does, and decode as a consumer would.
func TestTransactionRecordsRoundTrip(t *testing.T) {
	reg, _ := newRegistry(t)
	keyConv := newConverter(t, true, map[string]string{"schema.registry.url": reg.URL()})
	valueConv := newConverter(t, false, map[string]string{"schema.registry.url": reg.URL()})
	key := schema.NewStruct(schema.TransactionKeySchema()).Set(schema.TransactionID, "571:53195832")
	entry := schema.NewStruct(schema.TransactionEventCountSchema()).
		Set(schema.TransactionDataCollection, "s1.a").Set(schema.TransactionEventCount, int64(2))
	value := schema.NewStruct(schema.TransactionValueSchema()).
		Set(schema.TransactionStatus, "END").Set(schema.TransactionID, "571:53195832").
		Set(schema.TransactionEventCount, int64(2)).Set(schema.TransactionDataCollections, []any{entry}).
		Set(schema.EnvelopeTsMs, int64(1486500577691))
	kb, err := keyConv.Encode("pg1.transaction", schema.TransactionKeySchema(), key)
	if err != nil {
		t.Fatal(err)
	}
	vb, err := valueConv.Encode("pg1.transaction", schema.TransactionValueSchema(), value)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := decodeRecord(t, reg, kb); !reflect.DeepEqual(got, any(map[string]any{"id": "571:53195832"})) {
		t.Errorf("key decoded as %#v", got)
	}
	// Optional records in unions come keyed by their full name (event.collection is optional in Debezium).
	want := map[string]any{"status": "END", "id": "571:53195832", "event_count": int64(2),
		"data_collections": map[string]any{"array": []any{map[string]any{"event.collection": map[string]any{"data_collection": "s1.a", "event_count": int64(2)}}}},
		"ts_ms":            int64(1486500577691)}
	if got, _ := decodeRecord(t, reg, vb); !reflect.DeepEqual(got, any(want)) {
		t.Errorf("value decoded as\n got %#v\nwant %#v", got, want)
	}
}

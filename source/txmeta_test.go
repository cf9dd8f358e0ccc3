package source

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// TestParseTxOffset reads the transaction keys of stored offsets as Debezium's TransactionContext.load
// does, whatever JSON decoder produced the numbers.
func TestParseTxOffset(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   map[string]any
		want []OffsetField
	}{
		{"none", map[string]any{"lsn": 1}, nil},
		{"json.Number", map[string]any{"transaction_id": "7", "transaction_data_collection_order_public.a": json.Number("3"), "lsn": 1},
			[]OffsetField{{Name: "transaction_id", Value: "7"}, {Name: "transaction_data_collection_order_public.a", Value: int64(3)}}},
		{"float64", map[string]any{"transaction_id": "0-1-5", "transaction_data_collection_order_d.t": float64(2)},
			[]OffsetField{{Name: "transaction_id", Value: "0-1-5"}, {Name: "transaction_data_collection_order_d.t", Value: int64(2)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ParseTxOffset(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestTxMonitorRestore: a restored transaction continues its counters when it begins again, and a new one
// starts from zero with a BEGIN; counters without a transaction id are not a transaction.
func TestTxMonitorRestore(t *testing.T) {
	restored := []OffsetField{{Name: TxOffsetID, Value: "7"}, {Name: TxOffsetCountPrefix + "public.a", Value: int64(2)}}
	m := NewTxMonitor("p.transaction", restored)
	if _, ok := m.Begin("7", "7:100", time.Unix(0, 0)); ok {
		t.Error("a BEGIN for the restored transaction")
	}
	if b := m.Event("public.a", "7:110"); b.Get("total_order") != int64(3) || b.Get("data_collection_order") != int64(3) {
		t.Errorf("block %v, want total and collection order 3", b.Values)
	}
	if _, ok := m.Begin("8", "8:200", time.Unix(0, 0)); !ok {
		t.Error("no BEGIN for a new transaction")
	}
	if b := m.Event("public.a", "8:210"); b.Get("total_order") != int64(1) {
		t.Errorf("block %v, want total order 1", b.Values)
	}
	orphan := NewTxMonitor("p.transaction", restored[1:])
	if orphan.ID() != "" || orphan.Event("public.a", "x") != nil {
		t.Error("counters without a transaction id opened a transaction")
	}
}

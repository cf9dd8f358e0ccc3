package source

import (
	"strings"
	"time"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/javacompat"
)

// Debezium's offset keys for an open transaction (TransactionContext.store): the transaction's id, and one
// event counter per data collection under the prefix.
const (
	TxOffsetID          = "transaction_id"
	TxOffsetCountPrefix = "transaction_data_collection_order_"
)

// TxMonitor is Debezium's transaction metadata (provide.transaction.metadata=true, TransactionMonitor and
// TransactionContext): it numbers a transaction's data events in total and per data collection, and makes
// the BEGIN and END records of the transaction topic. One reader goroutine owns it.
//
// A transaction is open from Begin until Reset. Begin with the id of the open transaction does nothing: that
// is how a transaction restored from an offset Debezium wrote inside it keeps its counters when it is read
// again, and why it gets no second BEGIN.
type TxMonitor struct {
	topic  string
	id     string // the open transaction's id as the offset stores it; "" when none is open
	total  int64
	counts []txCount // per data collection, in the order each was first counted
}

// txCount is one data collection's event count in a transaction.
type txCount struct {
	Collection string
	Count      int64
}

// NewTxMonitor returns a monitor writing BEGIN and END records to topic, with the transaction an offset
// holds (TxOffsetID and the counters, as ParseTxOffset reads them) open, as Debezium loads it.
func NewTxMonitor(topic string, restored []OffsetField) *TxMonitor {
	m := &TxMonitor{topic: topic}
	for _, f := range restored {
		switch {
		case f.Name == TxOffsetID:
			m.id, _ = f.Value.(string)
		case strings.HasPrefix(f.Name, TxOffsetCountPrefix):
			n, _ := OffsetInt64(f.Value)
			m.counts = append(m.counts, txCount{Collection: strings.TrimPrefix(f.Name, TxOffsetCountPrefix), Count: n})
			m.total += n
		}
	}
	if m.id == "" {
		m.counts, m.total = nil, 0
	}
	return m
}

// ParseTxOffset picks the transaction keys out of a stored offset map, so a reader can hand them to
// NewTxMonitor and write them back unchanged until its first transaction boundary.
func ParseTxOffset(m map[string]any) []OffsetField {
	var out []OffsetField
	if id, ok := m[TxOffsetID].(string); ok {
		out = append(out, OffsetField{Name: TxOffsetID, Value: id})
	}
	for k, v := range m {
		if strings.HasPrefix(k, TxOffsetCountPrefix) {
			if n, err := OffsetInt64(v); err == nil {
				out = append(out, OffsetField{Name: k, Value: n})
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	// A Go map has no order; the offset writer puts the keys in Java's HashMap order anyway.
	return javacompat.HashMapOrderFunc(out, func(f OffsetField) string { return f.Name })
}

// ID is the open transaction's id as the offset stores it, "" when none is open.
func (m *TxMonitor) ID() string { return m.id }

// Begin opens transaction id and returns its BEGIN record, shown with shownID (PostgreSQL adds the LSN to
// the xid) and stamped ts. It returns false, and keeps the counters, when id is already open.
func (m *TxMonitor) Begin(id, shownID string, ts time.Time) (Event, bool) {
	if id == m.id {
		return Event{}, false
	}
	m.Reset()
	m.id = id
	value := schema.NewStruct(schema.TransactionValueSchema()).
		Set(schema.TransactionStatus, "BEGIN").
		Set(schema.TransactionID, shownID).
		Set(schema.EnvelopeTsMs, ts.UnixMilli())
	return m.record(shownID, value), true
}

// Event counts one data event of collection (schema.table, db.table) and returns the transaction block it
// carries, shown with shownID; nil when no transaction is open, where Debezium leaves the block null.
// Tombstones are not data events.
func (m *TxMonitor) Event(collection, shownID string) *schema.Struct {
	if m.id == "" {
		return nil
	}
	m.total++
	i := m.index(collection)
	if i < 0 {
		m.counts = append(m.counts, txCount{Collection: collection})
		i = len(m.counts) - 1
	}
	m.counts[i].Count++
	order := m.counts[i].Count
	return schema.NewStruct(schema.TransactionBlockSchema()).
		Set(schema.TransactionID, shownID).
		Set(schema.TransactionTotalOrder, m.total).
		Set(schema.TransactionDataCollectionOrder, order)
}

func (m *TxMonitor) index(collection string) int {
	for i, c := range m.counts {
		if c.Collection == collection {
			return i
		}
	}
	return -1
}

// End returns the END record of the open transaction, shown with shownID and stamped ts: its event count
// and the count per data collection, in the order Debezium's HashMap of them iterates. It returns false
// when no transaction is open. The transaction stays open until Reset, so that OffsetFields still holds it,
// as the END record's offset does in Debezium.
func (m *TxMonitor) End(shownID string, ts time.Time) (Event, bool) {
	if m.id == "" {
		return Event{}, false
	}
	entrySchema := schema.TransactionEventCountSchema()
	counts := m.hashMapCounts()
	collections := make([]any, len(counts))
	for i, c := range counts {
		collections[i] = schema.NewStruct(entrySchema).
			Set(schema.TransactionDataCollection, c.Collection).
			Set(schema.TransactionEventCount, c.Count)
	}
	value := schema.NewStruct(schema.TransactionValueSchema()).
		Set(schema.TransactionStatus, "END").
		Set(schema.TransactionID, shownID).
		Set(schema.TransactionEventCount, m.total).
		Set(schema.TransactionDataCollections, collections).
		Set(schema.EnvelopeTsMs, ts.UnixMilli())
	return m.record(shownID, value), true
}

func (m *TxMonitor) hashMapCounts() []txCount {
	return javacompat.HashMapOrderFunc(m.counts, func(c txCount) string { return c.Collection })
}

// OffsetFields are the offset keys of the open transaction, in the order Debezium puts them; nil when none
// is open.
func (m *TxMonitor) OffsetFields() []OffsetField {
	if m.id == "" {
		return nil
	}
	out := []OffsetField{{Name: TxOffsetID, Value: m.id}}
	for _, c := range m.hashMapCounts() {
		out = append(out, OffsetField{Name: TxOffsetCountPrefix + c.Collection, Value: c.Count})
	}
	return out
}

// Reset closes the open transaction, if any.
func (m *TxMonitor) Reset() {
	m.id, m.total, m.counts = "", 0, nil
}

func (m *TxMonitor) record(shownID string, value *schema.Struct) Event {
	keySchema := schema.TransactionKeySchema()
	return Event{
		Topic:     m.topic,
		KeySchema: keySchema, Key: schema.NewStruct(keySchema).Set(schema.TransactionID, shownID),
		ValueSchema: value.Schema, Value: value,
	}
}

package postgres

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
)

// Transaction metadata (provide.transaction.metadata=true) as Debezium's PostgresTransactionMonitor writes
// it: the offset keeps the bare xid, while every record shows "<xid>:<lsn>" with the LSN of the message at
// hand, so BEGIN, each event and END of one transaction carry different ids.

// messageCollectionPrefix is what Debezium counts a logical decoding message under: its
// LogicalDecodingMessageId has no toString, so the name is Object.toString's, class@identity-hash, new for
// every message (data_collection_order is therefore always 1, and END lists each message on its own).
const messageCollectionPrefix = "io.debezium.connector.postgresql.LogicalDecodingMessageMonitor$LogicalDecodingMessageId@"

// shownTxID is the id a record of transaction xid shows at lsn.
func shownTxID(xid uint32, lsn LSN) string {
	return strconv.FormatUint(uint64(xid), 10) + ":" + strconv.FormatUint(uint64(lsn), 10)
}

// txBegin writes the BEGIN record of the transaction a BEGIN message at lsn opens.
func (st *streamState) txBegin(lsn LSN) {
	if st.txm == nil {
		return
	}
	if ev, ok := st.txm.Begin(strconv.FormatUint(uint64(st.xid), 10), shownTxID(st.xid, lsn), st.commitTime); ok {
		st.events = append(st.events, ev)
	}
}

// txEvent gives a data event (a change, a truncate, a transactional message) its transaction block and
// counts it. Tombstones and events outside a transaction get none, as in Debezium.
func (st *streamState) txEvent(ev *source.Event) {
	value, ok := ev.Value.(*schema.Struct)
	if st.txm == nil || !ok || value.Schema.FieldIndex(schema.EnvelopeTransaction) < 0 {
		return
	}
	src, _ := value.Get(schema.EnvelopeSource).(*schema.Struct)
	if src == nil || value.Get(schema.EnvelopeOp) == schema.OpRead {
		return // snapshot rows, incremental ones included, are no transaction's events in Debezium either
	}
	lsn, _ := src.Get(schema.SourceLSN).(int64)
	collection := fmt.Sprintf("%s.%s", src.Get(schema.SourceSchema), src.Get(schema.SourceTable))
	if value.Get(schema.EnvelopeOp) == schema.OpMessage {
		// Java's identity hashes are 31-bit and printed in lower-case hex without leading zeros.
		collection = messageCollectionPrefix + strconv.FormatUint(uint64(rand.Uint32N(1<<31-1)+1), 16)
	}
	if block := st.txm.Event(collection, shownTxID(st.xid, LSN(lsn))); block != nil {
		value.Set(schema.EnvelopeTransaction, block)
	}
}

// txEnd writes the END record of the transaction committed at end and returns the offset keys Debezium's
// END record carries (the xid and the counters), which cdcd records with the commit.
func (st *streamState) txEnd(end LSN) []source.OffsetField {
	if st.txm == nil {
		return nil
	}
	ev, ok := st.txm.End(shownTxID(st.xid, end), st.commitTime)
	if !ok {
		return nil
	}
	st.events = append(st.events, ev)
	fields := st.txm.OffsetFields()
	st.txm.Reset()
	return fields
}

package mysql

import (
	"fmt"
	"time"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/mysql/types"
)

// Transaction metadata (provide.transaction.metadata=true) as Debezium's binlog connectors write it. A
// transaction is opened by MariaDB's GTID event or by a BEGIN query (MySQL sends one after its GTID event),
// and ended by its XID or COMMIT. Its id is its GTID, else file=<binlog>,pos=<its BEGIN's position>.
//
// A DDL statement is its own transaction without an XID: MariaDB opens it with a GTID event and nothing
// ends it, so Debezium writes a BEGIN and no END, and the transaction stays open (in the offsets too) until
// the next one begins. cdcd does the same.

// txID is the current transaction's id.
func (st *stream) txID() string {
	if st.txGTID != "" {
		return st.txGTID
	}
	return fmt.Sprintf("file=%s,pos=%d", st.file, st.txStart)
}

// txTime is the time Debezium stamps a BEGIN or END record with: its binlog clock, which the event at hand
// has not moved yet (Debezium's handlers run before its listener that reads the event's time), so the
// previous event's time; on MySQL with GTIDs, the GTID event's original commit time.
func (st *stream) txTime() time.Time {
	switch {
	case st.r.cfg.Flavor == types.MySQL && !st.commitTime.IsZero():
		return st.commitTime
	case st.prevTs.IsZero():
		return st.ts
	}
	return st.prevTs
}

// txBegin writes the BEGIN record of the transaction a GTID event (MariaDB) or a BEGIN query opens; none
// when it is open already (a BEGIN after MariaDB's GTID, or the transaction an offset was written inside).
func (st *stream) txBegin() {
	if st.txm == nil {
		return
	}
	id := st.txID()
	if ev, ok := st.txm.Begin(id, id, st.txTime()); ok {
		st.emit(ev)
	}
}

// txEvent gives a data event (a row change or a truncate) its transaction block and counts it. Tombstones,
// schema change events and changes outside a transaction get none, as in Debezium.
func (st *stream) txEvent(ev *source.Event) {
	value, ok := ev.Value.(*schema.Struct)
	if st.txm == nil || !ok || value.Schema.FieldIndex(schema.EnvelopeTransaction) < 0 {
		return
	}
	src, _ := value.Get(schema.EnvelopeSource).(*schema.Struct)
	if src == nil || value.Get(schema.EnvelopeOp) == schema.OpRead {
		return // snapshot rows, incremental ones included, are no transaction's events in Debezium either
	}
	collection := fmt.Sprintf("%s.%s", src.Get(schema.SourceDB), src.Get(schema.SourceTable))
	if block := st.txm.Event(collection, st.txm.ID()); block != nil {
		value.Set(schema.EnvelopeTransaction, block)
	}
}

// txEnd writes the END record of the transaction an XID or COMMIT ends, keeping the offset keys its END
// record carries for the commit's offset (txOffset); the transaction is closed.
func (st *stream) txEnd() {
	if st.txm == nil {
		return
	}
	if ev, ok := st.txm.End(st.txm.ID(), st.txTime()); ok {
		st.emit(ev)
		st.txEndFields = st.txm.OffsetFields()
		st.txm.Reset()
	}
}

// txOffset is the transaction metadata of the offset recorded at a transaction boundary: the END record's
// keys after a commit, those of the still open transaction after a DDL statement.
func (st *stream) txOffset() *txOffset {
	if st.txm == nil {
		return nil
	}
	if f := st.txEndFields; f != nil {
		st.txEndFields = nil
		return newTxOffset(f)
	}
	return newTxOffset(st.txm.OffsetFields())
}

// txOffset holds an offset's transaction keys (Offset.Transaction).
type txOffset struct{ fields []source.OffsetField }

// newTxOffset is nil without fields, so that offsets without transaction metadata compare equal.
func newTxOffset(fields []source.OffsetField) *txOffset {
	if len(fields) == 0 {
		return nil
	}
	return &txOffset{fields}
}

// list is the keys, nil for a nil txOffset.
func (t *txOffset) list() []source.OffsetField {
	if t == nil {
		return nil
	}
	return t.fields
}

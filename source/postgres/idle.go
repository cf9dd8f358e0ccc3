package postgres

import (
	"slices"

	"github.com/cdcd/cdcd/source"
)

// No WAL held for nothing. A slot moves only when cdcd confirms a position, and cdcd confirms only
// positions whose offsets are durable. When no captured table changes, no commit reaches the pipeline — from
// PostgreSQL 15 on pgoutput does not even send the BEGIN and COMMIT of a transaction that touched only
// tables outside the publication — so, without a heartbeat, the slot would keep all the WAL the other
// tables write. The server's keepalives say how far it has decoded (ServerWALEnd, the walsender's sentPtr):
// every transaction whose commit record lies before that position has been sent, in order, ahead of the
// keepalive, and every transaction that commits later starts its output after it. Such a position is a
// transaction boundary of the stream, as good as a commit: cdcd records it as an offset (an empty batch
// through the pipeline, so its offset is written only after every batch before it is acknowledged) and
// the pipeline releases it once that offset is durable. A restart resumes there and PostgreSQL sends what
// commits after it: nothing lost, nothing repeated, and the offset never falls behind the slot (which
// offset.mismatch.strategy would refuse).

// idleConfirm turns keepalive positions into offsets. It belongs to the stream goroutine and lives for one
// replication connection: a new connection starts from the durable position and hears positions anew.
type idleConfirm struct {
	// server is the highest ServerWALEnd heard between two transactions.
	server LSN
	// at is the position of the last idle batch handed over; 0: none on this connection.
	at LSN
	// last is the last offset the stream produced on this connection: an idle offset is that boundary moved
	// forward, so its other keys (txId, ts_usec, transaction metadata, snapshot progress) stay as recorded.
	last []source.OffsetField
}

// heard notes a keepalive's ServerWALEnd. One heard inside a transaction is ignored: the walsender sends
// keepalives while it writes a transaction out, and their position lies before that transaction's commit.
func (ic *idleConfirm) heard(walEnd LSN, st *streamState) {
	if !st.inTx {
		ic.server = max(ic.server, walEnd)
	}
}

// offer queues an empty batch recording the server's position when nothing of cdcd's is pending: no
// transaction open, nothing read that is not yet handed over, and everything handed over durable
// (released). The last condition is what bounds the idle batches to one in flight; the pipeline's
// in-order acknowledgement is what makes the offset safe whatever came before it. Called by the stream
// goroutine between two messages, before it hands over what is ready.
func (ic *idleConfirm) offer(st *streamState, released LSN) {
	for _, b := range st.ready {
		if b.Offset != nil {
			ic.last = b.Offset
		}
	}
	done := max(st.lastCommit, ic.at)
	switch {
	case ic.server <= done, released < done:
		return
	case st.inTx, len(st.events) > 0, len(st.ready) > 0:
		return
	case st.skipBelow != 0:
		// The first transaction after a Debezium offset written inside it is still to come: the offset
		// must keep saying which of its changes were delivered.
		return
	case st.inc.Offset() != nil:
		// A running incremental snapshot's progress can change between commits (a signal from outside the
		// database), and it moves the slot itself: its watermarks are captured rows, committed. With
		// read.only it does not (its windows' rows go out at the last boundary, readonly.go's
		// boundaryBatch): the slot waits for the snapshot's end or the next captured commit.
		return
	}
	at := ic.server
	st.ready = append(st.ready, source.Batch{Offset: ic.offsetAt(st, at), Position: lsnPosition(at)})
	ic.at = at
	st.log.Debug("recording a position past WAL without captured changes", "slot", st.cfg.SlotName, "from", done.String(), "to", at.String())
}

// offsetAt is the offset of an idle batch at lsn: the last recorded boundary with its positions moved to
// lsn, or, before the stream recorded one on this connection or while a finished snapshot's coverage is
// still to be passed (a snapshot's batches do not go through st.ready), a boundary of the last commit read
// with that coverage, as a commit would record it.
func (ic *idleConfirm) offsetAt(st *streamState, lsn LSN) []source.OffsetField {
	if moved, ok := movedOffset(ic.last, lsn); ok && st.covered == nil {
		return moved
	}
	off := st.boundaryOffset(lsn, "COMMIT")
	if st.covered != nil {
		off.SnapshotProgress = st.covered.Encode() // a restart must keep dropping what the snapshot holds
	}
	return off.Fields()
}

// movedOffset copies a boundary offset with lsn, lsn_proc and lsn_commit set to lsn and messageType to
// COMMIT, keeping the order of the keys. ok is false for an offset without all of them.
func movedOffset(fields []source.OffsetField, lsn LSN) ([]source.OffsetField, bool) {
	out := slices.Clone(fields)
	found := 0
	for i := range out {
		switch out[i].Name {
		case "lsn", "lsn_proc", "lsn_commit":
			out[i].Value = int64(lsn)
			found++
		case "messageType":
			out[i].Value = "COMMIT"
			found++
		}
	}
	return out, found == 4
}

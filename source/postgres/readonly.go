package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/signal"
)

// Read-only incremental snapshots (read.only=true, Debezium's PostgresReadOnlyIncrementalSnapshotChangeEventSource):
// a window's open and close watermarks are the server's pg_current_snapshot() just before (low) and just
// after (high) its chunk query, held in memory, instead of rows written into the signal table. Nothing is
// written to the database: the connector's user needs SELECT and REPLICATION only, and without a signal
// table the signals come from the REST API, the signal file or Kafka. The offsets keep Debezium's
// incremental_snapshot_* keys; the watermarks are not in them (a restart reads its chunk anew, as Debezium's).
//
// Why the windows are right. A transaction visible to a snapshot committed before the snapshot was taken,
// and one invisible to it commits after (an aborted one never reaches the stream), so in the stream's
// commit order the transactions visible to the low snapshot come before the invisible ones. The chunk
// query's own snapshot is taken after the low one and sees every transaction the low one sees.
//   - Open: at the BEGIN of the first streamed transaction the low snapshot does not see, before its
//     changes. Every transaction streamed before that one the chunk query saw, so none of them can be newer
//     than a chunk row; the ones from there on may be, and inside the window they drop the chunk's row of
//     their key. Opening later would let such a change be overwritten by a stale chunk row; opening earlier
//     would only drop rows the stream delivers anyway.
//   - Close, by transaction: at the BEGIN of the first streamed transaction the high snapshot does not see,
//     before its changes: it committed after the chunk query, so its events must follow the chunk's rows.
//   - Close, by position: the high snapshot is read with the WAL insert position in the same statement.
//     Every transaction the chunk query saw is visible to the high snapshot, so its commit record was
//     inserted before that position; once the stream has passed that position between transactions (a
//     commit's end, or a keepalive's WAL end: the walsender sends that only for WAL it has decoded, after
//     the output of every transaction committed before it), the stream holds every change the chunk query
//     saw. This closes windows on an idle database, where no transaction comes to close them, with or
//     without heartbeats (Debezium's needs heartbeat.interval.ms).
// One hole is closed by hand: a committing backend writes its commit record before it leaves the
// ProcArray, so the stream may already have delivered a transaction that a snapshot taken a moment later
// still shows running. Such a transaction is streamed before the window yet may be missing from the chunk,
// so a low snapshot is taken again until it sees the last transactions streamed (recentXids).

// pgSnapshot is a pg_current_snapshot() value: transactions below xmin are finished, those from xmax on
// had not finished, and xip lists the ones in between still running when the snapshot was taken.
type pgSnapshot struct {
	xmin, xmax uint64
	xip        []uint64
}

// parsePgSnapshot reads pg_current_snapshot()'s text, xmin:xmax:xip1,xip2 (xip may be empty).
func parsePgSnapshot(text string) (pgSnapshot, error) {
	var s pgSnapshot
	parts := strings.Split(text, ":")
	if len(parts) != 3 {
		return s, fmt.Errorf("pg_current_snapshot() %q is not xmin:xmax:xip", text)
	}
	var err error
	if s.xmin, err = strconv.ParseUint(parts[0], 10, 64); err != nil {
		return s, fmt.Errorf("pg_current_snapshot() %q: xmin: %w", text, err)
	}
	if s.xmax, err = strconv.ParseUint(parts[1], 10, 64); err != nil {
		return s, fmt.Errorf("pg_current_snapshot() %q: xmax: %w", text, err)
	}
	if s.xmin > s.xmax {
		return s, fmt.Errorf("pg_current_snapshot() %q: xmin above xmax", text)
	}
	if parts[2] == "" {
		return s, nil
	}
	for _, x := range strings.Split(parts[2], ",") {
		xid, err := strconv.ParseUint(x, 10, 64)
		if err != nil {
			return s, fmt.Errorf("pg_current_snapshot() %q: running transaction: %w", text, err)
		}
		if xid < s.xmin || xid >= s.xmax {
			return s, fmt.Errorf("pg_current_snapshot() %q: running transaction %d outside [xmin, xmax)", text, xid)
		}
		s.xip = append(s.xip, xid)
	}
	return s, nil
}

func (s pgSnapshot) String() string {
	xip := make([]string, len(s.xip))
	for i, x := range s.xip {
		xip[i] = strconv.FormatUint(x, 10)
	}
	return fmt.Sprintf("%d:%d:%s", s.xmin, s.xmax, strings.Join(xip, ","))
}

// visible reports whether the 32-bit transaction id of a streamed BEGIN (pgoutput sends no epoch) had
// finished when the snapshot was taken, as pg_visible_in_snapshot would say of its full id. The epoch is
// the one that puts xid nearest the snapshot's xmax: a streamed transaction is never 2^31 transactions away
// from the server's next one. An id that would fall before the first epoch cannot come from the server and
// counts as invisible, which errs on the safe side (a window opens early).
func (s pgSnapshot) visible(xid uint32) bool {
	full := int64(s.xmax) + int64(int32(xid-uint32(s.xmax)))
	if full < 0 {
		return false
	}
	return s.visibleFull(uint64(full))
}

// visibleFull is pg_visible_in_snapshot for a full (epoch-qualified) transaction id.
func (s pgSnapshot) visibleFull(xid uint64) bool {
	switch {
	case xid < s.xmin:
		return true
	case xid >= s.xmax:
		return false
	}
	return !slices.Contains(s.xip, xid)
}

// readOnlyWatermark is a window bound of a read-only snapshot, waiting for the stream to pass it.
type readOnlyWatermark struct {
	id, kind string // the watermark signal's, as the Runner wrote it (signal.OpenWindow or signal.CloseWindow)
	snap     pgSnapshot
	// at, for a close, is the WAL insert position read with snap: every transaction snap sees committed
	// below it.
	at LSN
}

// streamPoint is where the stream stands when it asks which watermarks it passed: at the BEGIN of
// transaction xid (begin), or between transactions with everything before position at received.
type streamPoint struct {
	begin bool
	xid   uint32
	at    LSN
}

// passes reports whether the stream, at p, passes the first of the pending watermarks ws (see the rules
// above). An open watermark passes by position only together with its close: an idle stream opens and
// closes the window at once, nothing having streamed that the low snapshot does not see.
func passes(ws []readOnlyWatermark, p streamPoint) bool {
	if len(ws) == 0 {
		return false
	}
	if p.begin {
		return !ws[0].snap.visible(p.xid)
	}
	closing := ws[0]
	if closing.kind == signal.OpenWindow {
		if len(ws) < 2 {
			return false
		}
		closing = ws[1]
	}
	return closing.kind == signal.CloseWindow && p.at >= closing.at
}

// recentXids are the ids of the last transactions the stream delivered. A low watermark must see them all
// (see above); one delivered longer ago left the ProcArray long since.
type recentXids struct {
	xids [256]uint32
	n    int
}

func (r *recentXids) add(xid uint32) {
	r.xids[r.n%len(r.xids)] = xid
	r.n++
}

// unseen returns a delivered transaction s does not see.
func (r *recentXids) unseen(s pgSnapshot) (uint32, bool) {
	for _, x := range r.xids[:min(r.n, len(r.xids))] {
		if !s.visible(x) {
			return x, true
		}
	}
	return 0, false
}

// walPageHeader and walLongPageHeader are the sizes of a WAL page's header (SizeOfXLogShortPHD) and of the
// first page's of a segment (SizeOfXLogLongPHD).
const walPageHeader, walLongPageHeader = 24, 40

// emptyPageStart moves an insert position that stands just past a page's header back to the page's start.
// No record has begun on that page yet, and pg_current_wal_insert_lsn() then points where the next one will
// go (XLogBytePosToRecPtr) while the walsender's decoded position is the end of the last record, the page's
// start: without this an idle stream would wait at the page start for WAL that nothing writes. Only a
// position exactly at the header's end means that: a record continued onto the page may end right after
// a longer header, but never at the header's own end.
func emptyPageStart(at LSN, blockSize, segmentSize uint64) LSN {
	if blockSize == 0 || segmentSize == 0 {
		return at
	}
	header := uint64(walPageHeader)
	if uint64(at)%segmentSize < blockSize {
		header = walLongPageHeader
	}
	if uint64(at)%blockSize == header {
		return at - LSN(header)
	}
	return at
}

// lowWatermarkTries bounds the low snapshots taken while one misses a delivered transaction (its backend
// leaves the ProcArray microseconds after its commit record), lowWatermarkRetry apart.
const (
	lowWatermarkTries = 100
	lowWatermarkRetry = 10 * time.Millisecond
)

// currentSnapshotQuery reads a watermark: the snapshot, and the position below which every transaction it
// sees committed (on a standby, what it has replayed: the standby's walsender decodes up to there), and the
// WAL's page and segment sizes for emptyPageStart. pg_current_snapshot() returns the statement's snapshot,
// taken before the position is read. Every function is executable by any user.
const currentSnapshotQuery = `SELECT pg_current_snapshot()::text,
	(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_insert_lsn() END)::text,
	current_setting('wal_block_size')::bigint,
	(SELECT setting::bigint FROM pg_settings WHERE name = 'wal_segment_size')`

// errNoWALPosition is a watermark read on a standby that has replayed nothing yet.
var errNoWALPosition = errors.New("the server reports no WAL position (a standby that has replayed nothing yet)")

// currentSnapshot reads a watermark's snapshot and position.
func (st *streamState) currentSnapshot(ctx context.Context) (pgSnapshot, LSN, error) {
	var snapText string
	var lsnText *string
	var blockSize, segmentSize uint64
	if err := st.sql.QueryRow(ctx, currentSnapshotQuery).Scan(&snapText, &lsnText, &blockSize, &segmentSize); err != nil {
		return pgSnapshot{}, 0, err
	}
	snap, err := parsePgSnapshot(snapText)
	if err != nil {
		return snap, 0, err
	}
	if lsnText == nil {
		return snap, 0, errNoWALPosition
	}
	at, err := pglogrepl.ParseLSN(*lsnText)
	if err != nil {
		return snap, 0, fmt.Errorf("WAL position %q: %w", *lsnText, err)
	}
	return snap, emptyPageStart(at, blockSize, segmentSize), nil
}

// readOnlyWatermark records a watermark of a read-only snapshot (incDB's WriteWatermark and DeleteWatermark
// under read.only): the stream passes it in passWatermarks.
func (st *streamState) readOnlyWatermark(ctx context.Context, id, kind string) error {
	for try := 1; ; try++ {
		snap, at, err := st.currentSnapshot(ctx)
		if err != nil {
			return fmt.Errorf("reading the %s watermark of the read-only incremental snapshot (pg_current_snapshot()): %w", kind, err)
		}
		if kind == signal.OpenWindow {
			if xid, missed := st.delivered.unseen(snap); missed {
				if try < lowWatermarkTries {
					st.log.Debug("the read-only incremental snapshot's low watermark shows a delivered transaction running; taking it again", "xid", xid, "snapshot", snap.String())
					select {
					case <-ctx.Done():
						return ctx.Err()
					case <-time.After(lowWatermarkRetry):
					}
					continue
				}
				st.log.Warn("the read-only incremental snapshot's low watermark still shows a delivered transaction running; opening its window with it",
					"xid", xid, "snapshot", snap.String())
			}
		}
		st.watermarks = append(st.watermarks, readOnlyWatermark{id: id, kind: kind, snap: snap, at: at})
		st.log.Debug("read-only incremental snapshot watermark", "kind", kind, "snapshot", snap.String(), "wal", at.String())
		return nil
	}
}

// passWatermarks acts, in order, on each read-only watermark the stream passes at p: opening a window, or
// closing it, which emits its rows in a batch of their own (between transactions, at the last boundary
// recorded, with the snapshot's progress) and reads the next chunk, whose watermarks p may pass too. With
// read.only off nothing is pending and it returns at once.
func (st *streamState) passWatermarks(ctx context.Context, p streamPoint) error {
	for !st.inTx && passes(st.watermarks, p) {
		w := st.watermarks[0]
		st.watermarks = st.watermarks[1:]
		st.log.Debug("the stream passed a read-only incremental snapshot's watermark", "kind", w.kind, "snapshot", w.snap.String(), "wal", w.at.String(),
			"at transaction", p.begin, "xid", p.xid, "position", p.at.String())
		// The rows carry the position the stream stands at in source.sequence, as Debezium's carry the
		// position of the event that closed their window.
		src := newSource(st.cfg, st.now(), st.lastCommit, max(p.at, st.lastCommit), "", "")
		if err := st.signal(ctx, signal.Signal{ID: w.id, Type: w.kind}, src); err != nil {
			return err
		}
		if w.kind == signal.CloseWindow {
			st.boundaryBatch()
		}
	}
	return nil
}

// boundaryBatch hands over the events gathered between transactions (a window's rows) with an offset at
// the last transaction boundary recorded, so that the snapshot's progress is durable with them even when
// no transaction follows; its positions are those of the boundary, which never moves back.
func (st *streamState) boundaryBatch() {
	at := max(st.lastCommit, st.boundary)
	if at == 0 {
		return // nothing to record yet: the events wait for the next commit
	}
	off := st.boundaryOffset(at, "COMMIT")
	if st.covered != nil {
		off.SnapshotProgress = st.covered.Encode() // a restart must keep dropping what the snapshot holds
	}
	st.ready = append(st.ready, source.Batch{Events: st.events, Offset: off.Fields(), Position: lsnPosition(at)})
	st.events = nil
}

// checkReadOnly refuses read.only=true on a server without pg_current_snapshot() (PostgreSQL 13), as
// Debezium's validation does, before cdcd's own version check refuses the server altogether.
func checkReadOnly(versionNum int, cfg *Config) error {
	if !cfg.Signals.ReadOnly || versionNum >= readOnlySince {
		return nil
	}
	return source.Fatal(fmt.Errorf("read.only=true needs PostgreSQL 13 or newer (its watermarks are pg_current_snapshot()), and the server at %s is PostgreSQL %s: upgrade the server, or set read.only=false and give the connector a signal table it may write (signal.data.collection)",
		cfg.addr(), versionString(versionNum)))
}

// readOnlySince is the first server_version_num with pg_current_snapshot().
const readOnlySince = 130000

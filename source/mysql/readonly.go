package mysql

import (
	"context"
	"errors"
	"fmt"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/mysql/types"
	"github.com/cdcd/cdcd/source/signal"
)

// Read-only incremental snapshots (read.only=true, Debezium's BinlogReadOnlyIncrementalSnapshotChangeEventSource):
// a window's open and close watermarks are the server's executed GTID set just before and just after its
// chunk query, instead of rows written into the signal table. The window opens once the stream has read
// every transaction of the first set and closes once it has read every one of the second: the changes
// streamed between them are the ones that can be newer than the chunk's rows, as with written watermarks.
// Nothing is written to the database, so the connector's user needs no write privilege; the server must
// have GTIDs (MariaDB always has; MySQL with gtid_mode=ON).

// gtidWatermark is a watermark of a read-only snapshot: a window's open or close, at a GTID set.
type gtidWatermark struct {
	id, kind string
	at       gomysql.GTIDSet
}

// errReadOnlyNeedsGTIDs refuses a read-only snapshot on a stream without GTIDs.
var errReadOnlyNeedsGTIDs = errors.New("read.only=true needs GTIDs: the stream reads the binlog by file and position (MySQL without gtid_mode=ON); set read.only=false and give the connector a signal table it may write (signal.data.collection)")

// gtidWatermark records a watermark at the server's executed GTID set (incDB.WriteWatermark under
// read.only): the stream passes it in passWatermarks.
func (st *stream) gtidWatermark(ctx context.Context, id, kind string) error {
	if st.gtids == nil {
		return source.Fatal(errReadOnlyNeedsGTIDs)
	}
	conn, err := incDB{st}.conn(ctx)
	if err != nil {
		return err
	}
	q := "SELECT @@GLOBAL.gtid_executed"
	if st.r.cfg.Flavor == types.MariaDB {
		q = "SELECT @@GLOBAL.gtid_binlog_pos"
	}
	text, err := queryString(conn, q)
	if err != nil {
		st.closeSQL()
		return fmt.Errorf("reading the %s watermark of the read-only incremental snapshot: %w", kind, err)
	}
	set, err := st.r.cfg.parseGTIDSet(text)
	if err != nil {
		return fmt.Errorf("the server's GTID set %q: %w", text, err)
	}
	// Without the sources gtid.source.includes/excludes leave out, as the stream's own set is.
	st.watermarks = append(st.watermarks, gtidWatermark{id: id, kind: kind, at: st.r.cfg.restartGTIDs(set)})
	return nil
}

// passWatermarks acts, between transactions, on each read-only watermark the stream has passed, in
// order: opening a window, or closing it, whose rows go out with the offset of the last boundary (and the
// snapshot's progress). Closing a window reads the next chunk, whose watermarks may be passed already.
func (st *stream) passWatermarks() error {
	for len(st.watermarks) > 0 && !st.inTx {
		w := st.watermarks[0]
		if !st.gtids.Contain(w.at) {
			return nil
		}
		st.watermarks = st.watermarks[1:]
		at := sourceBlock{serverID: st.serverID, file: st.committed.File, pos: st.committed.Pos, thread: -1}
		if err := st.signal(signal.Signal{ID: w.id, Type: w.kind}, &at); err != nil {
			return err
		}
		off := st.committed
		off.Incremental = st.inc.Offset()
		st.send(source.Batch{Events: st.pending, Offset: off.Fields(), Position: binlogPosition{off}})
		st.pending, st.committed = nil, off
	}
	return nil
}

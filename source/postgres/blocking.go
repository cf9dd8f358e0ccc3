package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/cdcd/cdcd/snapshot"
	"github.com/cdcd/cdcd/source"
)

// A blocking snapshot (execute-snapshot with "type": "blocking"): streaming pauses at a transaction
// boundary, the tables are read again in a fresh exported snapshot, as the initial snapshot reads them
// (source.snapshot markers, the offset's snapshot BLOCKING with cdcd's progress), and streaming resumes
// where it paused; a crash resumes the snapshot after its last acknowledged chunk, then streams on.
//
// The changes that committed between the pause and the snapshot are streamed after its rows, as Debezium
// streams them: a key changed there shows its older values once more, then its newest. They are not
// dropped: Kafka already holds those tables, and a dropped delete of a row the snapshot no longer has would
// leave the row in Kafka for good. (The MariaDB connector streams on to the snapshot's position before it
// reads, so it has neither; see source/mysql/blocking.go.)

// blockingRequest is a blocking snapshot the stream is to run at its next transaction boundary.
type blockingRequest struct {
	tables     []string          // schema.table
	conditions map[string]string // additional-conditions by table
	prev       *snapshot.Progress
}

// requestBlocking notes a blocking snapshot for the stream loop (incremental.Runner.Blocking): it runs
// once the open transaction is handed over.
func (st *streamState) requestBlocking(_ context.Context, tables []string, conditions map[string]string) error {
	if st.blocking != nil {
		st.log.Warn("a blocking snapshot is already waiting to run; this one is ignored", "tables", tables)
		return nil
	}
	st.blocking = &blockingRequest{tables: tables, conditions: conditions}
	return nil
}

// resumedBlocking is the blocking snapshot a stored offset was written in, to finish its tables.
func resumedBlocking(prev *snapshot.Progress) *blockingRequest {
	req := &blockingRequest{prev: prev}
	if prev != nil {
		for _, t := range prev.Tables {
			req.tables = append(req.tables, t.ID)
		}
	}
	return req
}

// blockingSnapshot runs the stream's blocking snapshot, positioned at streamAt: the last transaction
// boundary handed over. Its batches stand for streamAt, so nothing streamed after it is released before
// the stream resumes.
//
// The replication connection is not read meanwhile; sendStatus keeps it alive: the stream goroutine hands
// the connection to a goroutine that sends status updates every status interval (so wal_sender_timeout does
// not end it during a long snapshot) and takes it back, that goroutine ended, before it returns.
func (r *Reader) blockingSnapshot(ctx context.Context, st *streamState, streamAt LSN, out chan<- source.Batch, sendStatus func() error) error {
	req := st.blocking
	st.blocking = nil
	if len(req.tables) == 0 {
		return nil
	}
	done, alive := make(chan struct{}), make(chan error, 1)
	go func() {
		tick := time.NewTicker(r.statusEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				alive <- nil
				return
			case <-tick.C:
				if err := sendStatus(); err != nil {
					alive <- err // the stream reconnects after the snapshot; the snapshot goes on
					return
				}
			}
		}
	}()
	err := r.runBlocking(ctx, st, streamAt, out, req)
	close(done)
	if keepErr := <-alive; keepErr != nil && err == nil {
		return fmt.Errorf("status update during the blocking snapshot: %w", keepErr)
	}
	return err
}

func (r *Reader) runBlocking(ctx context.Context, st *streamState, streamAt LSN, out chan<- source.Batch, req *blockingRequest) error {
	exp, err := r.exportSnapshot(ctx, fmt.Sprintf("cdcd_blk_%d", time.Now().UnixNano()%1e12), true)
	if err != nil {
		return fmt.Errorf("blocking snapshot: %w", err)
	}
	kind := snapshotKind{name: "BLOCKING", conditions: req.conditions,
		include: func(schemaName, table string) bool { return slices.Contains(req.tables, schemaName+"."+table) }}
	if _, err := r.snapshot(ctx, out, exp, streamAt, req.prev, kind); err != nil {
		return fmt.Errorf("blocking snapshot: %w", err)
	}
	return nil
}

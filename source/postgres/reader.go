// Package postgres is cdcd's PostgreSQL reader: it streams a logical replication slot over pgoutput and turns
// each change into Debezium 3.6's change events.
//
// One goroutine (Run) owns the replication connection. It never blocks on one thing alone: handing a batch to
// the pipeline, the status-update ticker and cancellation share one select, so a slow Kafka stops the reading
// but not the keepalives that hold the connection open.
package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/cdcd/cdcd/snapshot"
	"github.com/cdcd/cdcd/source"
)

// maxBatchEvents bounds a batch; a larger transaction is split into several batches that share its commit.
const maxBatchEvents = 1024

// Reader streams one connector's slot. Create it with NewReader; Run it once.
type Reader struct {
	cfg   *Config
	log   *slog.Logger
	start *Offset // the stored offset, nil for a first start

	// headers are Debezium's context headers: this run's identity on every data record.
	headers []source.Header

	// statusEvery is how often the stream reports its position: status.update.interval.ms, but often
	// enough that the server's wal_sender_timeout never fires while the pipeline is full.
	statusEvery time.Duration

	// Recorder, when set, is told about the slot and publication the reader creates.
	Recorder Recorder

	// released is the highest LSN whose offset is durable: the only position ever reported to the server as
	// flushed, so confirmed_flush_lsn never passes the durable offset.
	released atomic.Uint64
}

// Recorder learns which slots and publications a reader creates, so that the slot guardian can tell a
// slot cdcd made for a connector that is gone (orphaned) from one it knows nothing of (foreign).
type Recorder interface {
	RecordCreated(server, database, slot, connector string) error
	RecordPublication(server, database, publication, connector string) error
}

// record tells the recorder about a slot or publication this reader created; a failure only costs the
// guardian's knowledge, so it is logged, not returned.
func (r *Reader) record(kind, name string) {
	if r.Recorder == nil {
		return
	}
	var err error
	if kind == "slot" {
		err = r.Recorder.RecordCreated(r.cfg.Server(), r.cfg.DBName, name, r.cfg.Name)
	} else {
		err = r.Recorder.RecordPublication(r.cfg.Server(), r.cfg.DBName, name, r.cfg.Name)
	}
	if err != nil {
		r.log.Warn("could not record a created "+kind+" for the slot guardian", "name", name, "error", err)
	}
}

// NewReader returns a reader for cfg resuming after start (nil: no stored offset).
func NewReader(cfg *Config, start *Offset, log *slog.Logger) *Reader {
	r := &Reader{cfg: cfg, start: start, log: log, headers: source.ContextHeaders(cfg.TopicPrefix, "postgresql")}
	if start != nil {
		r.released.Store(uint64(start.ResumeLSN()))
	}
	return r
}

// lsnPosition is the source.Position of this reader.
type lsnPosition LSN

func (p lsnPosition) String() string { return LSN(p).String() }

// Release records that everything up to pos is durable in the offset store. The next status update tells the
// server, which may then recycle the WAL before it. Safe to call from any goroutine; never blocks.
func (r *Reader) Release(pos source.Position) {
	lsn, ok := pos.(lsnPosition)
	if !ok {
		return
	}
	for {
		cur := r.released.Load()
		if uint64(lsn) <= cur {
			return
		}
		if r.released.CompareAndSwap(cur, uint64(lsn)) {
			releasedLSN.WithLabelValues(r.cfg.Name).Set(float64(lsn))
			return
		}
	}
}

// Run connects, checks the server, prepares the publication and slot, takes the snapshot snapshot.mode
// asks for, and streams until ctx is cancelled or the stream fails. It sends batches on out, blocking while
// out is full. A broken connection is retried slot.max.retries times, slot.retry.delay.ms apart, before Run
// gives up with the last error.
func (r *Reader) Run(ctx context.Context, out chan<- source.Batch) error {
	sqlConn, err := r.connectSQL(ctx)
	if err != nil {
		return err
	}
	defer sqlConn.Close(context.Background())

	senderTimeout, err := checkServer(ctx, sqlConn, r.cfg)
	if err != nil {
		return err
	}
	r.statusEvery = statusInterval(r.cfg.StatusInterval, senderTimeout)
	if err := ensurePublication(ctx, sqlConn, r.cfg, r.log, func() { r.record("publication", r.cfg.PublicationName) }); err != nil {
		return err
	}
	slot, err := r.inspectSlot(ctx, sqlConn)
	if err != nil {
		return err
	}
	startLSN, lost, err := r.resumePosition(slot)
	if err != nil {
		return err
	}
	state := snapshot.State{HasOffset: r.start != nil, PositionLost: lost}
	var prev *snapshot.Progress
	if r.start != nil && r.start.SnapshotInProgress() {
		state.InProgress = true
		if r.start.SnapshotProgress != "" {
			if prev, err = snapshot.DecodeProgress(r.start.SnapshotProgress); err != nil {
				return source.Fatal(err)
			}
		}
	}
	plan := r.cfg.SnapshotMode.Decide(state)
	if plan.Snapshot {
		if err := checkSnapshotPrivileges(ctx, sqlConn, r.cfg, r.includeInSnapshot); err != nil {
			return err
		}
	}
	if lost {
		r.log.Warn("the stored offset's position is gone from the slot; taking a new snapshot (snapshot.mode=when_needed)", "slot", r.cfg.SlotName)
		prev = nil
	}

	var exp *exportedSnapshot
	switch {
	case !slot.exists:
		// A new slot's exported snapshot holds exactly what streaming from its consistent point leaves out.
		if startLSN, exp, err = r.createSlot(ctx, plan.Snapshot); err != nil {
			return err
		}
		r.record("slot", r.cfg.SlotName)
	case plan.Snapshot:
		// The slot exists: a temporary slot exports a fresh snapshot, and the stream drops each snapshotted
		// table's changes that the snapshot already holds.
		if exp, err = r.exportSnapshot(ctx, fmt.Sprintf("cdcd_snap_%d", time.Now().UnixNano()%1e12), true); err != nil {
			return err
		}
	}
	if r.cfg.SlotDropOnStop {
		defer r.dropSlot(sqlConn)
	}

	st := newStreamState(r.cfg, sqlConn, r.start, r.headers, r.log)
	if plan.Snapshot {
		progress, err := r.snapshot(ctx, out, exp, startLSN, prev)
		if err != nil {
			return err
		}
		st.coverFrom(progress, startLSN)
	}
	if !plan.Stream {
		r.log.Info("snapshot.mode=initial_only: the snapshot is done and nothing is streamed")
		<-ctx.Done()
		return ctx.Err()
	}

	attempts := 0
	for {
		before := r.released.Load()
		err := r.stream(ctx, st, startLSN, out)
		if r.released.Load() > before {
			attempts = 0 // the connection worked for a while: count only consecutive failures
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if source.IsFatal(err) || attempts >= r.cfg.SlotMaxRetries {
			return err
		}
		attempts++
		r.log.Warn("replication connection lost; retrying", "attempt", attempts, "of", r.cfg.SlotMaxRetries, "delay", r.cfg.SlotRetryDelay, "error", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(r.cfg.SlotRetryDelay):
		}
		// Restart from what is durable: anything read but not yet released is read again and the pipeline
		// has already delivered or will redeliver it (at-least-once).
		startLSN = LSN(r.released.Load())
		st.resetAfterReconnect()
	}
}

// stream runs one replication connection from startLSN.
func (r *Reader) stream(ctx context.Context, st *streamState, startLSN LSN, out chan<- source.Batch) error {
	conn, err := pgconn.Connect(ctx, r.cfg.dsn(true))
	if err != nil {
		return fmt.Errorf("replication connection to %s: %w", r.cfg.addr(), err)
	}
	defer conn.Close(context.Background())

	args := []string{"proto_version '1'", fmt.Sprintf("publication_names '%s'", r.cfg.PublicationName), "messages 'true'"}
	if err := pglogrepl.StartReplication(ctx, conn, r.cfg.SlotName, startLSN, pglogrepl.StartReplicationOptions{PluginArgs: args}); err != nil {
		return source.Fatal(fmt.Errorf("START_REPLICATION of slot %q at %s: %w", r.cfg.SlotName, startLSN, err))
	}
	r.log.Info("streaming", "slot", r.cfg.SlotName, "from", startLSN.String())
	st.metrics.Connected(true)
	defer st.metrics.Connected(false)

	var received LSN = startLSN
	receivedGauge := receivedLSN.WithLabelValues(r.cfg.Name)
	nextStatus := time.Now()
	var heartbeat <-chan time.Time
	if r.cfg.HeartbeatInterval > 0 {
		t := time.NewTicker(r.cfg.HeartbeatInterval)
		defer t.Stop()
		heartbeat = t.C
	}
	sendStatus := func() error {
		flushed := LSN(r.released.Load())
		nextStatus = time.Now().Add(r.statusEvery)
		// Write is what was received, flush is what is durable: PostgreSQL moves confirmed_flush_lsn to the
		// flush position only.
		return pglogrepl.SendStandbyStatusUpdate(ctx, conn, pglogrepl.StandbyStatusUpdate{
			WALWritePosition: max(received, flushed), WALFlushPosition: flushed, WALApplyPosition: flushed,
		})
	}
	// Reads wait at most until the next status update is due: a deadline on the socket, moved only when
	// that time moves, and cancellation reaches a blocked read through one AfterFunc. (A context with a
	// deadline per message cost an allocation and a watcher registration in pgconn for every change.)
	socket := conn.Conn()
	defer context.AfterFunc(ctx, func() { socket.SetReadDeadline(time.Now()) })()
	var readDeadline time.Time
	for {
		// Hand over every finished batch first. While the pipeline is full, keep the connection alive: the
		// status ticker fires inside the same select.
		for len(st.ready) > 0 {
			select {
			case out <- st.ready[0]:
				st.ready = st.ready[1:]
			case <-time.After(time.Until(nextStatus)):
				if err := sendStatus(); err != nil {
					return fmt.Errorf("status update @ %s: %w", received, err)
				}
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if time.Now().After(nextStatus) {
			if err := sendStatus(); err != nil {
				return fmt.Errorf("status update @ %s: %w", received, err)
			}
		}
		select {
		case <-heartbeat:
			if err := st.heartbeat(ctx); err != nil {
				return err
			}
			continue
		default:
		}

		if !nextStatus.Equal(readDeadline) {
			if err := socket.SetReadDeadline(nextStatus); err != nil {
				return fmt.Errorf("receive @ %s: %w", received, err)
			}
			readDeadline = nextStatus
		}
		// Checked after the deadline moved: a cancellation that came before it would be undone by it.
		if ctx.Err() != nil {
			return ctx.Err()
		}
		msg, err := conn.ReceiveMessage(context.Background()) // Background: pgconn skips its context watcher
		if err != nil {
			if pgconn.Timeout(err) && ctx.Err() == nil {
				continue
			}
			return fmt.Errorf("receive @ %s: %w", received, err)
		}
		switch m := msg.(type) {
		case *pgproto3.CopyData:
			switch m.Data[0] {
			case pglogrepl.PrimaryKeepaliveMessageByteID:
				ka, err := pglogrepl.ParsePrimaryKeepaliveMessage(m.Data[1:])
				if err != nil {
					return fmt.Errorf("keepalive @ %s: %w", received, err)
				}
				if ka.ReplyRequested {
					nextStatus = time.Time{}
				}
			case pglogrepl.XLogDataByteID:
				xld, err := pglogrepl.ParseXLogData(m.Data[1:])
				if err != nil {
					return fmt.Errorf("xlogdata @ %s: %w", received, err)
				}
				if err := st.handle(ctx, xld); err != nil {
					return source.Fatal(fmt.Errorf("stream error @ %s: %w", xld.WALStart, err))
				}
				received = max(received, xld.WALStart)
				receivedGauge.Set(float64(received))
			}
		case *pgproto3.ErrorResponse:
			return fmt.Errorf("server error @ %s: %s (%s)", received, m.Message, m.Code)
		default:
			return fmt.Errorf("unexpected replication message %T @ %s", msg, received)
		}
	}
}

func (r *Reader) connectSQL(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, r.cfg.dsn(false))
	if err != nil {
		return nil, fmt.Errorf("cannot connect to PostgreSQL at %s (database.hostname, database.port, database.user, database.dbname): %w", r.cfg.addr(), err)
	}
	return conn, nil
}

// statusInterval is the period of standby status updates: the configured interval, at least 100 ms, and at
// most half the server's wal_sender_timeout, which is how long a walsender waits for a sign of life.
func statusInterval(configured, senderTimeout time.Duration) time.Duration {
	d := max(configured, 100*time.Millisecond)
	if senderTimeout > 0 {
		d = min(d, senderTimeout/2)
	}
	return d
}

// Package postgres is cdcd's PostgreSQL reader: it streams a logical replication slot over pgoutput and turns
// each change into Debezium 3.6's change events.
//
// One goroutine (Run) owns the replication connection. It never blocks on one thing alone: handing a batch to
// the pipeline, the status-update ticker and cancellation share one select, so a slow Kafka stops the reading
// but not the keepalives that hold the connection open.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/cdcd/cdcd/snapshot"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/metrics"
	"github.com/cdcd/cdcd/source/notify"
	"github.com/cdcd/cdcd/source/postgres/catalog"
	"github.com/cdcd/cdcd/source/signal"
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

	// enums pins each enum type's labels to the list first read in this run, as Debezium's type registry.
	enums *catalog.EnumLabels

	// server is the server's version and settings, read by Run before anything else.
	server serverInfo

	// statusEvery is how often the stream reports its position: status.update.interval.ms, but often
	// enough that the server's wal_sender_timeout never fires while the pipeline is full.
	statusEvery time.Duration

	// Recorder, when set, is told about the slot and publication the reader creates.
	Recorder Recorder

	// KafkaSignals opens the kafka signal channel's consumer (signal.enabled.channels=kafka). The runtime
	// sets it after NewReader.
	KafkaSignals signal.KafkaOpener
	// Waiting is source.Env.Waiting (may be nil).
	Waiting func(what string)

	// released is the highest LSN whose offset is durable: the only position ever reported to the server as
	// flushed, so confirmed_flush_lsn never passes the durable offset.
	released atomic.Uint64

	// signals are the signals of the channels outside the database (the signal file, the Kafka topic, the REST API), for
	// the stream goroutine to act on between two messages; its wake-up interrupts the wait for the next one.
	signals *signal.Queue
}

var _ source.Signaler = (*Reader)(nil)

// Signal queues a signal from outside the database for the stream to act on. It never blocks: with the
// queue full it fails. Safe to call from any goroutine. Watermarks are the snapshot's own and refused.
func (r *Reader) Signal(id, kind, data string) error { return r.signals.Signal(id, kind, data) }

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
	metrics.Identify(cfg.Name, "postgres", cfg.TopicPrefix) // debezium.postgres:…,server=<topic.prefix>
	r := &Reader{cfg: cfg, start: start, log: log, headers: source.ContextHeaders(cfg.TopicPrefix, "postgresql"),
		signals: signal.NewQueue(cfg.Name, cfg.Signals), enums: catalog.NewEnumLabels()}
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

	if r.server, err = checkServer(ctx, sqlConn, r.cfg); err != nil {
		return err
	}
	r.statusEvery = statusInterval(r.cfg.StatusInterval, r.server.senderTimeout)
	if err := r.enums.Prime(ctx, sqlConn); err != nil {
		return err
	}
	r.warnSlotSurvival(ctx, sqlConn)
	if !r.server.standby {
		if err := setReplicaIdentities(ctx, sqlConn, r.cfg, r.log); err != nil {
			return err
		}
	}
	if err := ensurePublication(ctx, sqlConn, r.server.standby, r.cfg, r.log, func() { r.record("publication", r.cfg.PublicationName) }); err != nil {
		return err
	}
	slot, err := r.inspectSlot(ctx, sqlConn)
	if err != nil {
		return err
	}
	if slot.exists {
		if err := r.ensureFailover(ctx, sqlConn); err != nil {
			return err
		}
	}
	startLSN, lost, err := r.resumePosition(slot)
	if err != nil {
		return err
	}
	state := snapshot.State{HasOffset: r.start != nil, PositionLost: lost}
	var prev *snapshot.Progress
	var blocking *blockingRequest // a blocking snapshot the stored offset was written in
	if r.start != nil && r.start.SnapshotInProgress() {
		state.InProgress = true
		if r.start.SnapshotProgress != "" {
			if prev, err = snapshot.DecodeProgress(r.start.SnapshotProgress); err != nil {
				return source.Fatal(err)
			}
		}
		if r.start.Snapshot == "BLOCKING" {
			// Not snapshot.mode's business: streaming resumes at the blocking snapshot's position, which
			// first finishes the tables it had left.
			state.InProgress, blocking = false, resumedBlocking(prev)
			prev = nil
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
	st.tables.enums = r.enums
	st.blocking = blocking
	if r.cfg.Signals.File {
		go r.signals.PollFile(ctx, r.cfg.Signals.FilePath, r.cfg.Signals.PollInterval, r.log)
	}
	if r.cfg.Signals.Kafka {
		// Its signals wait in the queue until the stream loop takes them; its last commit is bounded.
		stop, err := r.signals.StartKafka(ctx, r.KafkaSignals, r.cfg.Signals.KafkaChannel, r.cfg.Signals.PollInterval, r.log)
		if err != nil {
			return source.Fatal(err)
		}
		defer stop()
	}
	if !plan.Snapshot {
		st.notify(notify.Notification{AggregateType: notify.InitialSnapshot, Type: notify.Skipped})
	}
	if r.start != nil {
		if err := st.inc.Resume(r.start.Incremental); err != nil {
			return source.Fatal(err)
		}
	}
	if plan.Snapshot {
		progress, err := r.snapshot(ctx, out, exp, startLSN, prev, r.initialSnapshot())
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
		var lost *sqlConnectionLost
		if source.IsFatal(err) || errors.As(err, &lost) || attempts >= r.cfg.SlotMaxRetries {
			return err
		}
		attempts++
		r.log.Warn("replication connection lost; retrying", "attempt", attempts, "of", r.cfg.SlotMaxRetries, "delay", r.cfg.SlotRetryDelay, "error", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(r.cfg.SlotRetryDelay):
		}
		// The server may have restarted, taking the SQL connection with it; streaming on would fail at the
		// next catalog read. Then the task starts again with new connections, from the durable offset.
		if perr := pingWithin(ctx, sqlConn, r.cfg.SlotRetryDelay+5*time.Second); perr != nil {
			return &sqlConnectionLost{fmt.Errorf("after the replication connection was lost (%w), the SQL connection to %s did not answer: %w", err, r.cfg.addr(), perr)}
		}
		// Restart from what is durable: anything read but not yet released is read again and the pipeline
		// has already delivered or will redeliver it (at-least-once).
		startLSN = LSN(r.released.Load())
		st.resetAfterReconnect()
	}
}

// stream runs one replication connection from startLSN.
func (r *Reader) stream(ctx context.Context, st *streamState, startLSN LSN, out chan<- source.Batch) error {
	conn, err := r.cfg.connectReplication(ctx)
	if err != nil {
		return fmt.Errorf("replication connection to %s: %w", r.cfg.addr(), err)
	}
	defer conn.Close(context.Background())

	args := []string{"proto_version '1'", publicationNamesArg(r.cfg.PublicationName)}
	args = append(args, r.server.pluginArgs()...) // options the server's version knows
	args = append(args, r.cfg.streamParamArgs()...)
	if err := pglogrepl.StartReplication(ctx, conn, r.cfg.SlotName, startLSN, pglogrepl.StartReplicationOptions{PluginArgs: args}); err != nil {
		return source.Fatal(fmt.Errorf("START_REPLICATION of slot %q at %s: %w", r.cfg.SlotName, startLSN, err))
	}
	r.log.Info("streaming", "slot", r.cfg.SlotName, "from", startLSN.String())
	if err := st.inc.Resumed(ctx); err != nil {
		return err
	}
	st.metrics.Connected(true)
	defer st.metrics.Connected(false)

	var received LSN = startLSN
	st.boundary = startLSN // a read-only snapshot's rows may be recorded here before anything commits
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
		if r.cfg.ManualFlush {
			flushed = 0 // lsn.flush.mode=manual: nothing is ever confirmed
		}
		nextStatus = time.Now().Add(r.statusEvery)
		// Write is what was received, flush is what is durable: PostgreSQL moves confirmed_flush_lsn to the
		// flush position only, and not at all for an invalid (0) one. With nothing durable yet (a new
		// connector before its first offset) the write position is sent as 0 too: pglogrepl turns a zero
		// flush position into the write position, which would confirm every change received.
		written := max(received, flushed)
		if flushed == 0 {
			written = 0
		}
		return pglogrepl.SendStandbyStatusUpdate(ctx, conn, pglogrepl.StandbyStatusUpdate{
			WALWritePosition: written, WALFlushPosition: flushed, WALApplyPosition: flushed,
		})
	}
	// Reads wait at most until the next status update is due: a deadline on the socket, moved only when
	// that time moves, and cancellation reaches a blocked read through one AfterFunc. (A context with a
	// deadline per message cost an allocation and a watcher registration in pgconn for every change.)
	socket := conn.Conn()
	defer context.AfterFunc(ctx, func() { socket.SetReadDeadline(time.Now()) })()
	wake := func() { socket.SetReadDeadline(time.Now()) }
	r.signals.SetWake(wake)
	defer r.signals.SetWake(nil)
	var readDeadline time.Time
	var idle idleConfirm // keepalive positions recorded while no captured table changes (idle.go)
	for {
		// INVARIANT: an idle batch's position is released, like any batch's, only after Kafka acknowledged
		// every batch before it and its offset is durable; offer only adds it to what is handed over.
		idle.offer(st, LSN(r.released.Load()))
		st.boundary = max(st.boundary, idle.at)
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
		// A blocking snapshot runs between transactions, after everything streamed before it is handed
		// over; the stream goes on from where it paused, dropping the changes the snapshot holds.
		if st.blocking != nil && !st.inTx {
			// An idle batch (idle.go) may stand past the last commit: the snapshot's offsets must not fall behind it.
			if err := r.blockingSnapshot(ctx, st, max(st.lastCommit, startLSN, idle.at), out, sendStatus); err != nil {
				return err
			}
			continue
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
		case sig := <-r.signals.C():
			if err := st.signal(ctx, sig, nil); err != nil {
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
				readDeadline = time.Time{} // a wake-up may have moved it: set it again
				continue
			}
			return fmt.Errorf("receive @ %s: %w", received, err)
		}
		switch m := msg.(type) {
		case *pgproto3.CopyData:
			kind, ka, xld, err := parseCopyData(m.Data)
			if err != nil {
				return source.Fatal(fmt.Errorf("stream error @ %s: %w", received, err))
			}
			switch kind {
			case pglogrepl.PrimaryKeepaliveMessageByteID:
				idle.heard(ka.ServerWALEnd, st)
				if ka.ReplyRequested {
					nextStatus = time.Time{}
				}
				// The walsender has sent every transaction that commits before its WAL end: a read-only
				// snapshot's window whose chunk query saw nothing later closes here, on an idle database too.
				if err := st.passWatermarks(ctx, streamPoint{at: ka.ServerWALEnd}); err != nil {
					return streamError(max(received, ka.ServerWALEnd), err)
				}
			case pglogrepl.XLogDataByteID:
				if err := st.handle(ctx, xld); err != nil {
					return streamError(max(received, xld.WALStart), err) // a relation message may carry no WAL position
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

// streamError is the error that ends the stream when handling what it received at failed: the SQL
// connection (catalog reads, heartbeats, watermarks) gone with the server, after which the task starts again
// with new connections from the durable offset, or else a fatal one.
func streamError(at LSN, err error) error {
	if connectionLost(err) {
		return &sqlConnectionLost{fmt.Errorf("stream error @ %s: %w", at, err)}
	}
	return source.Fatal(fmt.Errorf("stream error @ %s: %w", at, err))
}

// sqlConnectionLost is a reader's failure because its SQL connection is gone (a server restart): not
// fatal, the task restarts with new connections from its durable offset.
type sqlConnectionLost struct{ err error }

func (e *sqlConnectionLost) Error() string { return e.err.Error() }
func (e *sqlConnectionLost) Unwrap() error { return e.err }

// connectionLost reports whether err is a lost or refused connection, or the server shutting down, rather
// than a problem with what was read or asked: what a reconnection heals.
func connectionLost(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// connection_exception (08…), admin_shutdown, crash_shutdown, cannot_connect_now
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03"
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) || pgconn.SafeToRetry(err)
}

// pingWithin checks that conn answers within timeout.
func pingWithin(ctx context.Context, conn *pgx.Conn, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return conn.Ping(ctx)
}

// parseCopyData decodes one CopyData message of the replication stream: kind says which of a primary
// keepalive (ka) or WAL data (xld) it is; other kinds the stream does not use are returned undecoded. A
// malformed message is an error: the server would send the same bytes again, so the caller fails the stream
// (source.Fatal) with the position reached. Values, not pointers: nothing is allocated per message.
func parseCopyData(data []byte) (kind byte, ka pglogrepl.PrimaryKeepaliveMessage, xld pglogrepl.XLogData, err error) {
	if len(data) == 0 {
		return 0, ka, xld, errors.New("empty CopyData message")
	}
	kind = data[0]
	switch kind {
	case pglogrepl.PrimaryKeepaliveMessageByteID:
		if ka, err = pglogrepl.ParsePrimaryKeepaliveMessage(data[1:]); err != nil {
			err = fmt.Errorf("keepalive: %w", err)
		}
	case pglogrepl.XLogDataByteID:
		if xld, err = pglogrepl.ParseXLogData(data[1:]); err != nil {
			err = fmt.Errorf("XLogData: %w", err)
		}
	}
	return kind, ka, xld, err
}

// publicationNamesArg is pgoutput's publication_names option naming pub alone. pgoutput splits the value
// at commas into identifiers and folds unquoted ones to lower case (SplitIdentifierString), so the name
// goes in as a quoted identifier ("" for each "), as the publication was created, and that as a string
// literal of the replication command (” for each '): every name PostgreSQL can hold reaches pgoutput as
// it is, and none can add options.
func publicationNamesArg(pub string) string {
	return pluginOption("publication_names", `"`+strings.ReplaceAll(pub, `"`, `""`)+`"`)
}

// pluginOption is one START_REPLICATION plugin option, name 'value', with the value quoted as a string
// literal. The name goes as it is: callers pass only names cdcd knows.
func pluginOption(name, value string) string {
	return name + " '" + strings.ReplaceAll(value, "'", "''") + "'"
}

func (r *Reader) connectSQL(ctx context.Context) (*pgx.Conn, error) {
	conn, err := r.cfg.connectSQL(ctx)
	var tlsErr *tlsError
	switch {
	case errors.As(err, &tlsErr):
		// Names its keys, and is fatal.
		return nil, fmt.Errorf("cannot connect to PostgreSQL at %s: %w", r.cfg.addr(), err)
	case err != nil:
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

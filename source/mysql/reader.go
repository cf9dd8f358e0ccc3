package mysql

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/snapshot"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/metrics"
	"github.com/cdcd/cdcd/source/mysql/ddl"
	"github.com/cdcd/cdcd/source/mysql/tables"
	"github.com/cdcd/cdcd/source/mysql/types"
	"github.com/cdcd/cdcd/source/notify"
	"github.com/cdcd/cdcd/source/signal"
)

// Reader is one MySQL or MariaDB connector task's reader: snapshot, then binlog.
type Reader struct {
	cfg          *Config
	start        *Offset // the stored offset, nil for a first start
	log          *slog.Logger
	headers      []source.Header
	sourceSchema *schema.Schema
	now          func() time.Time

	changeSchemas ddl.SchemaChangeSchemas
	catalog       *ddl.Catalog
	metrics       *metrics.Stream
	schemas       map[tables.ID]*tableSchema // built on first use, dropped when a DDL changes the table
	history       *history
	plaintext     bool // database.ssl.mode=preferred found a server without TLS: the binlog connection goes unencrypted too

	// HistoryLogs opens the schema history topic. The runtime sets it after NewReader, with its own
	// Kafka client; Run fails if it is nil.
	HistoryLogs source.LogOpener

	// KafkaSignals opens the kafka signal channel's consumer (signal.enabled.channels=kafka). The runtime
	// sets it after NewReader.
	KafkaSignals signal.KafkaOpener

	// signals are the signals of the REST API, the signal file and the Kafka topic, for the stream goroutine.
	signals *signal.Queue
	// seenSignals are the ids of the signals acted on in this run, across the streams a set-binlog-position
	// signal moved: one read again after a move back is not acted on twice.
	seenSignals signal.Seen
}

// NewReader returns a reader for cfg resuming after start (nil: no stored offset).
func NewReader(cfg *Config, start *Offset, log *slog.Logger) *Reader {
	name := schema.MySQLSourceName
	if cfg.Flavor == types.MariaDB {
		name = schema.MariaDBSourceName
	}
	src := schema.BinlogSourceSchema(name)
	metrics.Identify(cfg.Name, cfg.Connector(), cfg.TopicPrefix) // debezium.mysql or debezium.mariadb
	return &Reader{cfg: cfg, start: start, log: log, headers: source.ContextHeaders(cfg.TopicPrefix, cfg.Connector()),
		sourceSchema: src, changeSchemas: ddl.NewSchemaChangeSchemas(cfg.Connector(), src), now: time.Now, schemas: map[tables.ID]*tableSchema{},
		metrics: metrics.NewStream(cfg.Name), signals: signal.NewQueue(cfg.Name, cfg.Signals)}
}

// Release is a no-op: unlike a replication slot, the binlog is kept by the server's expiry settings, not
// by its readers, so there is nothing to tell the server. The durable offset is where a restart resumes.
func (r *Reader) Release(source.Position) {}

// Run snapshots and streams until ctx ends or the stream fails.
func (r *Reader) Run(ctx context.Context, out chan<- source.Batch) error {
	if r.HistoryLogs == nil {
		return fatal(errNoHistoryLogs)
	}
	conn, err := r.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := r.checkServer(conn); err != nil {
		return err
	}
	r.history, err = openHistory(ctx, r.cfg, r.HistoryLogs)
	if err != nil {
		return err
	}
	defer r.history.Close()

	// An offset of a blocking snapshot is a streaming one: the stream finishes that snapshot first.
	state := snapshot.State{HasOffset: r.start != nil, InProgress: r.start != nil && r.start.Snapshot != "" && r.start.Snapshot != blockingSnapshot}
	if r.start != nil && !state.InProgress {
		lost, err := r.positionLost(conn, *r.start)
		if err != nil {
			return err
		}
		state.PositionLost = lost != ""
		if lost != "" && r.cfg.SnapshotMode != snapshot.WhenNeeded {
			return fatal(fmt.Errorf("the stored offset %s can no longer be read: %s. To recover, take a new snapshot: set snapshot.mode=when_needed (snapshots only when needed) or delete the connector's offsets (DELETE /connectors/{name}/offsets on a stopped connector) and restart", r.start, lost))
		}
	}
	plan := r.cfg.SnapshotMode.Decide(state)

	var pos Offset
	switch {
	case plan.Snapshot:
		var resumed *Offset
		if plan.Resume {
			resumed = r.start
		}
		if pos, err = r.snapshot(ctx, conn, out, true, resumed); err != nil {
			return err
		}
	case r.start == nil:
		// no_data without an offset: the structure is still read (Debezium's schema-only snapshot), the
		// data is not; streaming starts at the current position.
		if pos, err = r.snapshot(ctx, conn, out, false, nil); err != nil {
			return err
		}
	default:
		pos = *r.start
		if err := r.recoverSchemas(ctx, conn, pos); err != nil {
			return err
		}
	}
	if !plan.Snapshot {
		// As the PostgreSQL connector's: Debezium tells of an initial snapshot it did not take.
		if ev, ok := r.cfg.Notify.Send(notify.Notification{AggregateType: notify.InitialSnapshot, Type: notify.Skipped}, r.cfg.TopicPrefix, r.now(), r.log); ok {
			select {
			case out <- source.Batch{Events: []source.Event{ev}}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	if !plan.Stream {
		r.log.Info("snapshot.mode=initial_only: the snapshot is done and nothing is streamed")
		<-ctx.Done()
		return ctx.Err()
	}
	for {
		err := r.stream(ctx, pos, out)
		var moved *repositioned
		var pause *blockingPause
		switch {
		case errors.As(err, &moved):
			// As a restart from the moved offset would: the structure as of there, from the schema history.
			pos = moved.to
			if err := r.recoverSchemas(ctx, conn, pos); err != nil {
				return err
			}
			clear(r.schemas)
		case errors.As(err, &pause):
			if pos, err = r.blockingSnapshot(ctx, pause, out); err != nil {
				return err
			}
		default:
			return err
		}
	}
}

// recoverSchemas rebuilds the table structure as of pos from the schema history; in recovery mode, or
// when the history is empty, from the tables as they are now (written to the history first).
func (r *Reader) recoverSchemas(ctx context.Context, conn *client.Conn, pos Offset) error {
	records, err := r.history.readAll(ctx)
	if err != nil {
		return err
	}
	if r.cfg.SnapshotMode == snapshot.Recovery || len(records) == 0 {
		if r.cfg.SnapshotMode != snapshot.Recovery {
			return fatal(fmt.Errorf("the schema history topic %s is empty but the connector has a stored offset (%s): cdcd cannot know the captured tables' structure at that position. If the tables have not changed since, restart with snapshot.mode=recovery to rebuild the history from their current structure; otherwise delete the offsets to take a new snapshot", r.cfg.HistoryTopic, pos))
		}
		r.log.Warn("snapshot.mode=recovery: rebuilding the schema history from the tables' current structure", "topic", r.cfg.HistoryTopic)
		_, err := r.readStructure(ctx, conn, pos, nil, nil)
		return err
	}
	cat, err := ddl.Recover(r.cfg.Flavor, records, func(rec ddl.HistoryRecord) bool { return r.atOrBefore(rec, pos) })
	if err != nil {
		return fmt.Errorf("recovering the table structure from the schema history topic %s: %w", r.cfg.HistoryTopic, err)
	}
	r.catalog = cat
	return nil
}

// atOrBefore reports whether a history record belongs to this connector and was written at or before
// the offset pos: a DDL recorded after the last durable offset is read again from the binlog and applied
// then, so it must not be applied twice.
func (r *Reader) atOrBefore(rec ddl.HistoryRecord, pos Offset) bool {
	if rec.Server != r.cfg.TopicPrefix {
		return false
	}
	m := map[string]any{}
	for _, f := range rec.Position {
		m[f.Name] = f.Value
	}
	at, err := ParseOffset(m)
	if err != nil {
		return true // a position cdcd cannot read is kept, as Debezium keeps records it cannot compare
	}
	if at.Snapshot != "" {
		return true // the snapshot's structure: everything streamed comes after it
	}
	if at.File != pos.File {
		return at.File < pos.File // binlog file names are zero-padded sequence numbers
	}
	if at.Pos != pos.Pos {
		return at.Pos < pos.Pos
	}
	return at.Events <= pos.Events
}

// tableSchema returns the schemas of a captured table as the catalog has it now, nil if it is unknown.
func (r *Reader) tableSchema(id tables.ID) (*tableSchema, error) {
	if ts, ok := r.schemas[id]; ok {
		return ts, nil
	}
	t := r.catalog.Table(id)
	if t == nil {
		return nil, nil
	}
	ts, err := r.cfg.newTableSchema(t, r.sourceSchema, r.headers)
	if err != nil {
		return nil, err
	}
	r.schemas[id] = ts
	return ts, nil
}

// stream reads the binlog from pos until ctx ends or it fails. A panic while handling an event fails
// the task (a *source.PanicError) with the stream's position; go-mysql's goroutine, which decodes the
// events, recovers its own panics into read errors (see readError).
func (r *Reader) stream(ctx context.Context, pos Offset, out chan<- source.Batch) (err error) {
	syncer := replication.NewBinlogSyncer(r.syncerConfig())
	defer syncer.Close()
	st, err := r.newStream(ctx, out, pos)
	if err != nil {
		return err
	}
	defer st.closeSQL()
	defer func() {
		if st.blocking != nil {
			st.blocking.close() // a blocking snapshot's view the stream did not hand over
		}
	}()
	defer func() {
		if v := recover(); v != nil {
			err = source.Recovered(v, binlogPosition{st.committed})
		}
	}()
	var streamer *replication.BinlogStreamer
	if st.gtids != nil {
		streamer, err = syncer.StartSyncGTID(st.gtids.Clone())
	} else {
		streamer, err = syncer.StartSync(gomysql.Position{Name: pos.File, Pos: uint32(pos.Pos)})
	}
	if err != nil {
		if tlsErr := r.cfg.tlsError(net.JoinHostPort(r.cfg.Host, strconv.Itoa(r.cfg.Port)), err); tlsErr != nil {
			err = tlsErr
		}
		return fmt.Errorf("starting binlog replication at %s: %w", pos, err)
	}
	r.log.Info("streaming the binlog", "position", pos.String())
	r.metrics.Connected(true)
	defer r.metrics.Connected(false)
	if r.cfg.Signals.File {
		pollCtx, stopPolling := context.WithCancel(ctx)
		defer stopPolling()
		go r.signals.PollFile(pollCtx, r.cfg.Signals.FilePath, r.cfg.Signals.PollInterval, r.log)
	}
	if r.cfg.Signals.Kafka {
		// Its signals wait in the queue until the stream loop takes them; its last commit is bounded.
		stop, err := r.signals.StartKafka(ctx, r.KafkaSignals, r.cfg.Signals.KafkaChannel, r.cfg.Signals.PollInterval, r.log)
		if err != nil {
			return source.Fatal(err)
		}
		defer stop()
	}
	// A signal queued from outside cancels the wait for the next event (wake), and the loop acts on it
	// between two events; the wait context is renewed after each wake-up, not per event.
	wait, wake := context.WithCancel(ctx)
	r.signals.SetWake(wake)
	defer func() { r.signals.SetWake(nil); wake() }()
	if err := st.inc.Resumed(ctx); err != nil { // a snapshot the stored offset was written in
		return st.errorf(pos.Pos, "resuming the incremental snapshot: %w", err)
	}
	for {
		if err := st.queuedSignals(); err != nil {
			return err
		}
		if err := st.betweenTransactions(); err != nil {
			return err
		}
		ev, err := r.nextEvent(wait, streamer)
		if errors.Is(err, context.Canceled) && ctx.Err() == nil {
			wait, wake = context.WithCancel(ctx)
			r.signals.SetWake(wake)
			continue
		}
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			if err := st.heartbeat(); err != nil { // a quiet binlog
				return err
			}
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return st.readError(err)
		}
		if err := st.handle(ctx, ev); err != nil {
			return err
		}
		if err := st.betweenTransactions(); err != nil {
			return err
		}
		if err := st.heartbeat(); err != nil {
			return err
		}
	}
}

// syncerConfig is the binlog connection's: the query connections' TLS, unless database.ssl.mode=preferred
// found the server without TLS (see connect).
func (r *Reader) syncerConfig() replication.BinlogSyncerConfig {
	cfg := replication.BinlogSyncerConfig{
		ServerID: r.cfg.ServerID, Flavor: r.cfg.flavorName(), Host: r.cfg.Host, Port: uint16(r.cfg.Port),
		User: r.cfg.User, Password: r.cfg.Password.Reveal(), HeartbeatPeriod: 10 * time.Second, ReadTimeout: 30 * time.Second,
		// A lost connection ends the task attempt; the worker restarts it from the durable offset.
		MaxReconnectAttempts: 1, DisableRetrySync: true, Logger: r.log.With("component", "binlog"),
		// Events go-mysql decodes ahead of the pipeline: its default (10,240) made memory grow with the
		// backlog; the pipeline's own bounded queue does the buffering.
		EventCacheCount:     256,
		Dialer:              r.cfg.dialer(r.cfg.ConnectTimeout),
		RowsEventDecodeFunc: decodeRowsEvent,
	}
	if !r.plaintext {
		cfg.TLSConfig = r.cfg.TLS
	}
	if r.cfg.IncludeQuery && r.cfg.Flavor == types.MariaDB {
		// A MariaDB primary sends its annotate rows events (the statement of each rows event, for
		// include.query) only to a replica that asks for them.
		cfg.DumpCommandFlag |= replication.BINLOG_SEND_ANNOTATE_ROWS_EVENT
	}
	types.SyncerConfig(&cfg)
	return cfg
}

// nextEvent waits for the next binlog event; with heartbeats on, at most one heartbeat interval.
func (r *Reader) nextEvent(ctx context.Context, streamer *replication.BinlogStreamer) (*replication.BinlogEvent, error) {
	if r.cfg.HeartbeatInterval <= 0 {
		return streamer.GetEvent(ctx)
	}
	wait, cancel := context.WithTimeout(ctx, r.cfg.HeartbeatInterval)
	defer cancel()
	return streamer.GetEvent(wait)
}

// dialer opens the TCP connections: within timeout, with keepalive probes unless database.tcpKeepAlive=false,
// and dropped once sent data stays unacknowledged for source.UnackedTimeout (a partition).
func (c *Config) dialer(timeout time.Duration) client.Dialer {
	d := &net.Dialer{Timeout: timeout, Control: source.BoundUnacked}
	if !c.TCPKeepAlive {
		d.KeepAlive = -1
	}
	return d.DialContext
}

func (c *Config) flavorName() string {
	if c.Flavor == types.MariaDB {
		return gomysql.MariaDBFlavor
	}
	return gomysql.MySQLFlavor
}

// connect opens a client connection for the snapshot, the checks and the history, with database.ssl.*.
// With database.ssl.mode=preferred, a server that does not offer TLS is connected to unencrypted, and the
// binlog connection that follows goes unencrypted too (plaintext); no other mode ever connects unencrypted
// with TLS asked for.
func (r *Reader) connect(ctx context.Context) (*client.Conn, error) {
	addr := net.JoinHostPort(r.cfg.Host, strconv.Itoa(r.cfg.Port))
	conn, err := r.dial(ctx, addr, r.cfg.TLS)
	if r.cfg.SSLMode == SSLPreferred && errServerWithoutTLS(err) {
		r.log.Info("database.ssl.mode=preferred: the server does not offer TLS; connecting unencrypted", "server", addr)
		r.plaintext = true
		conn, err = r.dial(ctx, addr, nil)
	}
	if tlsErr := r.cfg.tlsError(addr, err); tlsErr != nil {
		return nil, tlsErr
	}
	if err != nil {
		return nil, fmt.Errorf("cannot connect to %s at %s as %s with database.ssl.mode=%s (database.hostname, database.port, database.user, database.password, database.ssl.*): %w",
			r.cfg.Connector(), addr, r.cfg.User, sslModeName(r.cfg.Flavor, r.cfg.SSLMode), err)
	}
	return conn, nil
}

// dial opens one query connection, over TLS unless tlsConfig is nil.
func (r *Reader) dial(ctx context.Context, addr string, tlsConfig *tls.Config) (*client.Conn, error) {
	return client.ConnectWithDialer(ctx, "", addr, r.cfg.User, r.cfg.Password.Reveal(), "", r.cfg.dialer(r.cfg.QueryConnectTimeout), func(c *client.Conn) error {
		// database.socketTimeout bounds every read and write, as the JDBC drivers' socket timeout does.
		c.ReadTimeout, c.WriteTimeout = r.cfg.SocketTimeout, r.cfg.SocketTimeout
		if tlsConfig != nil {
			c.SetTLSConfig(tlsConfig)
		}
		return c.SetCharset("utf8mb4")
	})
}

// checkServer refuses a server the connector cannot read correctly, with what to change.
func (r *Reader) checkServer(conn *client.Conn) error {
	var facts serverFacts
	var err error
	if facts.version, err = queryString(conn, "SELECT VERSION()"); err != nil {
		return err
	}
	facts.variables = map[string]string{}
	for _, name := range []string{"log_bin", "binlog_format", "binlog_row_image"} {
		if facts.variables[name], err = queryString(conn, "SELECT @@GLOBAL."+name); err != nil {
			return err
		}
	}
	if facts.grants, err = queryColumn(conn, "SHOW GRANTS FOR CURRENT_USER()"); err != nil {
		return err
	}
	if err := r.cfg.refuse(facts); err != nil {
		return fatal(err)
	}
	if err := r.cfg.checkDriverTimeZone(conn); err != nil {
		return fatal(err)
	}
	return nil
}

// readError is the stream's error for a failure to read the next event, at the end of the last event
// handled. An event that cannot be decoded is fatal, as with Debezium's
// event.deserialization.failure.handling.mode=fail: a restart would read the same bytes.
func (st *stream) readError(err error) error {
	switch {
	case undecodable(err):
		return fatal(st.errorf(st.lastEnd, "the binlog holds an event cdcd cannot decode (a column type the binlog library does not know, such as MariaDB's COMPRESSED columns): %s", shortDecodeError(err)))
	case decoderPanic(err):
		msg, _, _ := strings.Cut(err.Error(), "\n") // the stack stays out of the message
		return fatal(st.errorf(st.lastEnd, "the binlog library failed on the event after this position (a malformed event): %s", msg))
	case st.r.cfg.duplicateServerID(err):
		return fatal(st.errorf(st.lastEnd, "database.server.id %d is used by another replica of this server (another connector, or a real replica), which took over the binlog stream: give each connector its own database.server.id: %w", st.r.cfg.ServerID, err))
	}
	st.r.metrics.Disconnected()
	return st.errorf(st.lastEnd, "reading the binlog: %w", err)
}

// undecodable reports go-mysql's failure to decode an event, which it reports as text quoting the event's
// header and bytes.
func undecodable(err error) bool {
	return strings.HasPrefix(err.Error(), "Header &replication.EventHeader")
}

// decoderPanic reports a panic of go-mysql's reading goroutine, which it recovers into the stream's error
// as "panic <value>\nstack: …" (BinlogSyncer.onStream): it decodes the events without checking their
// lengths first (a table map event's, a rows event's header).
func decoderPanic(err error) bool {
	return strings.HasPrefix(err.Error(), "panic ")
}

// decodeRowsEvent is go-mysql's decoding of a rows event (BinlogSyncerConfig.RowsEventDecodeFunc), checked
// where go-mysql trusts the event: its column count must be its table map's (go-mysql indexes the map's
// column types by it), its bitmaps must select a column (else go-mysql loops on rows of no bytes), and a
// MariaDB compressed event may not declare more bytes than its data inflates to (go-mysql allocates the
// declared size first, up to 2^56 bytes). A panic of go-mysql's (it slices the
// header without checking its length) is returned as the error. The parser reports an error as an
// undecodable event, with its header.
func decodeRowsEvent(e *replication.RowsEvent, data []byte) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("malformed rows event of %d bytes: %v", len(data), v)
		}
	}()
	pos, err := e.DecodeHeader(data)
	if err != nil {
		return err
	}
	if n := len(e.Table.ColumnType); e.ColumnCount != uint64(n) {
		return fmt.Errorf("rows event of %d columns for table %s.%s, whose table map has %d", e.ColumnCount, e.Table.Schema, e.Table.Table, n)
	}
	if pos < len(data) && !selectsColumn(e.ColumnBitmap1, e.ColumnCount) && !selectsColumn(e.ColumnBitmap2, e.ColumnCount) {
		// Each row image would take no bytes: go-mysql would append empty rows until memory runs out.
		return fmt.Errorf("rows event of table %s.%s whose column bitmaps select no column", e.Table.Schema, e.Table.Table)
	}
	if compressedRows(e) {
		if err := checkInflatedSize(data[pos:]); err != nil {
			return err
		}
	}
	if err := e.DecodeData(pos, data); err != nil {
		return err
	}
	if isPartialUpdate(e) {
		return applyPartialJSON(e, data[pos:])
	}
	return nil
}

// selectsColumn reports whether bitmap (nil: none) selects one of the first count columns.
func selectsColumn(bitmap []byte, count uint64) bool {
	for i := uint64(0); i < count && i/8 < uint64(len(bitmap)); i++ {
		if bitmap[i/8]&(1<<(i%8)) != 0 {
			return true
		}
	}
	return false
}

// compressedRows reports whether e is one of MariaDB's compressed rows events, which go-mysql records in
// an unexported field only.
func compressedRows(e *replication.RowsEvent) bool {
	f := reflect.ValueOf(e).Elem().FieldByName("compressed")
	return f.IsValid() && f.Kind() == reflect.Bool && f.Bool()
}

// maxInflation is the most bytes DEFLATE (zlib) makes of one compressed byte.
const maxInflation = 1032

// checkInflatedSize refuses a MariaDB compressed body (a header byte whose low 3 bits count the big-endian
// bytes of the uncompressed size, that size, then zlib data) that declares more than its data can inflate to.
func checkInflatedSize(body []byte) error {
	if len(body) == 0 {
		return errors.New("compressed rows event without data")
	}
	n := int(body[0] & 0x07)
	if len(body) < 1+n {
		return fmt.Errorf("compressed rows event of %d bytes with a %d-byte size header", len(body), n)
	}
	declared, compressed := gomysql.BFixedLengthInt(body[1:1+n]), uint64(len(body)-1-n)
	if declared > compressed*maxInflation {
		return fmt.Errorf("compressed rows event declares %d bytes uncompressed, more than zlib makes of its %d compressed bytes", declared, compressed)
	}
	return nil
}

// shortDecodeError keeps the header and the cause of a decoding failure, not the event's bytes.
func shortDecodeError(err error) string {
	msg := err.Error()
	header, _, _ := strings.Cut(msg, ", Data ")
	if i := strings.LastIndex(msg, "Err: "); i >= 0 {
		return header + ": " + msg[i+len("Err: "):]
	}
	return header
}

// duplicateServerID reports the server's answer to a replica whose server id another replica now uses:
// MariaDB's ER_SLAVE_SAME_ID (4052), MySQL's ER_MASTER_FATAL_ERROR_READING_BINLOG (1236) naming the id.
func (c *Config) duplicateServerID(err error) bool {
	var myErr *gomysql.MyError
	if !errors.As(err, &myErr) {
		return false
	}
	return myErr.Code == 4052 || (myErr.Code == 1236 && strings.Contains(myErr.Message, "same server_uuid/server_id"))
}

// serverFacts is what the connector checks about a server before reading it.
type serverFacts struct {
	version   string
	variables map[string]string // global variables by name
	grants    []string          // SHOW GRANTS FOR CURRENT_USER()
}

// refuse says why the connector cannot read a server with these facts, and what to change; nil when it can.
func (c *Config) refuse(f serverFacts) error {
	isMariaDB := strings.Contains(strings.ToLower(f.version), "mariadb")
	if isMariaDB != (c.Flavor == types.MariaDB) {
		want := MySQLConnectorClass
		if isMariaDB {
			want = MariaDBConnectorClass
		}
		return fmt.Errorf("the server at %s:%d runs %s, which the %s connector cannot read: set connector.class=%s", c.Host, c.Port, f.version, c.Connector(), want)
	}
	required := []struct{ variable, want, why string }{
		{"log_bin", "ON", "the binlog is off: start the server with log_bin"},
		{"binlog_format", "ROW", "set binlog_format=ROW (SET GLOBAL binlog_format=ROW and in the server config)"},
		{"binlog_row_image", "FULL", "set binlog_row_image=FULL so updates and deletes carry whole rows"},
	}
	for _, req := range required {
		v := f.variables[req.variable]
		if v == "1" {
			v = "ON"
		}
		if !strings.EqualFold(v, req.want) {
			return fmt.Errorf("server variable %s is %q, not %s: %s", req.variable, v, req.want, req.why)
		}
	}
	all := strings.ToUpper(strings.Join(f.grants, "\n"))
	if strings.Contains(all, "ALL PRIVILEGES ON *.*") {
		return nil
	}
	// MariaDB 10.5+ renamed two of them; either name will do.
	aliases := map[string]string{"REPLICATION SLAVE": "REPLICATION REPLICA", "REPLICATION CLIENT": "BINLOG MONITOR"}
	for _, priv := range []string{"REPLICATION SLAVE", "REPLICATION CLIENT", "RELOAD"} {
		alias := aliases[priv]
		if !strings.Contains(all, priv) && (alias == "" || !strings.Contains(all, alias)) {
			return fmt.Errorf("user %s lacks the %s privilege the connector needs: GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO %s", c.User, priv, c.User)
		}
	}
	return nil
}

// positionLost says why the binlog at o cannot be read any more, or "" when it can: its file was purged,
// or (MySQL) the server purged transactions the offset's GTID set does not hold (gtid_purged).
func (r *Reader) positionLost(conn *client.Conn, o Offset) (string, error) {
	if r.cfg.Flavor == types.MySQL && o.GTIDs != "" {
		purged, err := queryString(conn, "SELECT @@GLOBAL.gtid_purged")
		if err != nil {
			return "", err
		}
		if lost, err := r.cfg.gtidsLost(o.GTIDs, strings.ReplaceAll(purged, "\n", "")); err != nil || lost != "" {
			return lost, err
		}
	}
	files, err := queryColumn(conn, "SHOW BINARY LOGS")
	if err != nil {
		return "", err
	}
	for _, f := range files {
		if f == o.File {
			return "", nil
		}
	}
	if len(files) == 0 {
		return fmt.Sprintf("binlog file %s is not on the server, which keeps no binlog files", o.File), nil
	}
	if newest := files[len(files)-1]; binlogSequence(o.File, 0) > binlogSequence(newest, 0) {
		return fmt.Sprintf("binlog file %s is not on the server yet (the newest is %s)", o.File, newest), nil
	}
	return fmt.Sprintf("binlog file %s was purged (the oldest the server keeps is %s)", o.File, files[0]), nil
}

// gtidsLost says which purged transactions an offset's GTID set has not seen, "" when it holds them all.
func (c *Config) gtidsLost(offsetGTIDs, purged string) (string, error) {
	if strings.TrimSpace(purged) == "" {
		return "", nil
	}
	have, err := c.parseGTIDSet(offsetGTIDs)
	if err != nil {
		return "", fmt.Errorf("the stored offset's gtids %q: %w", offsetGTIDs, err)
	}
	gone, err := c.parseGTIDSet(purged)
	if err != nil {
		return "", fmt.Errorf("the server's gtid_purged %q: %w", purged, err)
	}
	// A source gtid.source.includes/excludes leaves out is resumed where the server has it (restartGTIDs):
	// its purged transactions are not the offset's to have seen.
	if have, gone = c.restartGTIDs(have), c.restartGTIDs(gone); have.Contain(gone) {
		return "", nil
	}
	return fmt.Sprintf("the server purged transactions (gtid_purged %s) that the offset (gtids %s) has not seen", purged, offsetGTIDs), nil
}

func queryString(conn *client.Conn, q string) (string, error) {
	col, err := queryColumn(conn, q)
	if err != nil {
		return "", err
	}
	if len(col) == 0 {
		return "", fmt.Errorf("%s returned no rows", q)
	}
	return col[0], nil
}

// queryColumn runs q and returns its first column as text.
func queryColumn(conn *client.Conn, q string) ([]string, error) {
	res, err := conn.Execute(q)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", q, err)
	}
	defer res.Close()
	var out []string
	for i := range res.Values {
		v, err := res.GetString(i, 0)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", q, err)
		}
		out = append(out, strings.Clone(v)) // v shares the result's buffer, which Close recycles
	}
	return out, nil
}

// fatalError marks an error a restart cannot fix: the task fails and says what to change.
type fatalError struct{ error }

func (e fatalError) Fatal() bool   { return true }
func (e fatalError) Unwrap() error { return e.error }

func fatal(err error) error { return fatalError{err} }

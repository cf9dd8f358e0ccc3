package mysql

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"

	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/mysql/types"
)

// The set-binlog-position signal (Debezium's SetBinlogPositionSignal): {"binlog_filename": …,
// "binlog_position": …} or {"gtid_set": …} moves the stream there. Debezium records the position in the
// offset with a heartbeat and takes it up only when the connector is restarted; cdcd records it the same
// way and moves at once, at the next transaction boundary, as a restart from that offset would: the tables'
// structure is recovered from the schema history as of the new position. A position the server no longer
// has is refused before anything moves, so the signal cannot leave an offset no restart can read.

// positionRequest is a set-binlog-position signal's data.
type positionRequest struct {
	File  string `json:"binlog_filename"`
	Pos   *int64 `json:"binlog_position"`
	GTIDs string `json:"gtid_set"`
}

// binlogFileName is the file name form Debezium accepts: a base name, a dot and six digits.
var binlogFileName = regexp.MustCompile(`^[a-zA-Z0-9_-]+\.\d{6}$`)

// parseReposition reads a set-binlog-position signal's data and checks it as Debezium does: a file and a
// position, or a GTID set, never both.
func parseReposition(data string) (positionRequest, error) {
	var req positionRequest
	if strings.TrimSpace(data) == "" {
		return req, errors.New("the signal has no data: give binlog_filename and binlog_position, or gtid_set")
	}
	if err := json.NewDecoder(bytes.NewReader([]byte(data))).Decode(&req); err != nil {
		return req, fmt.Errorf("the signal's data is not {\"binlog_filename\": string, \"binlog_position\": number} or {\"gtid_set\": string}: %w", err)
	}
	req.GTIDs = strings.TrimSpace(strings.NewReplacer("\n", "", "\r", "").Replace(req.GTIDs))
	byFile := req.File != "" || req.Pos != nil
	switch {
	case byFile && req.GTIDs != "":
		return req, errors.New("give either binlog_filename and binlog_position or gtid_set, not both")
	case !byFile && req.GTIDs == "":
		return req, errors.New("give binlog_filename and binlog_position, or gtid_set")
	case req.GTIDs != "":
		return req, nil
	case req.File == "":
		return req, errors.New("binlog_position needs binlog_filename")
	case req.Pos == nil:
		return req, errors.New("binlog_filename needs binlog_position")
	case *req.Pos < 0:
		return req, fmt.Errorf("binlog_position %d is negative", *req.Pos)
	case !binlogFileName.MatchString(req.File):
		return req, fmt.Errorf("binlog_filename %q is not a binlog file name (<base name>.<six digits>, as SHOW BINARY LOGS lists them)", req.File)
	}
	return req, nil
}

// reposition takes a set-binlog-position signal (incremental.Runner.Reposition): the stream moves to its
// position once the open transaction is handed over (moveIfAsked). Data it cannot act on is logged and
// ignored; a failed query fails the stream.
func (st *stream) reposition(ctx context.Context, data string, log *slog.Logger) error {
	req, err := parseReposition(data)
	if err != nil {
		log.Warn("signal ignored", "error", err)
		return nil
	}
	to, refused, err := st.target(ctx, req)
	if err != nil {
		return err
	}
	if refused != "" {
		log.Warn("signal ignored", "error", refused)
		return nil
	}
	st.moveTo = &to
	log.Info("the stream moves to the signal's position at the next transaction boundary", "from", st.committed.String(), "to", to.String())
	return nil
}

// target is the offset a request moves the stream to, or why it cannot: a GTID set replaces the stream's
// (the file and position stay the last boundary's, as Debezium's setCompletedGtidSet leaves them); a file
// and position on a stream that tracks GTIDs carry, on MariaDB, the GTID position the server says they
// stand for, and on MySQL, which cannot say, stream by file and position from there on.
func (st *stream) target(ctx context.Context, req positionRequest) (Offset, string, error) {
	to := Offset{File: st.committed.File, Pos: st.committed.Pos, ServerID: st.committed.ServerID, TsSec: st.committed.TsSec}
	conn, err := incDB{st}.conn(ctx)
	if err != nil {
		return to, "", err
	}
	if req.GTIDs != "" {
		if st.gtids == nil {
			return to, "this stream reads the binlog by file and position (its offset has no GTID set): give binlog_filename and binlog_position", nil
		}
		set, err := st.r.cfg.parseGTIDSet(req.GTIDs)
		if err != nil || set.String() == "" {
			return to, fmt.Sprintf("gtid_set %q is not a %s GTID set", req.GTIDs, st.r.cfg.flavorName()), nil
		}
		to.GTIDs = set.String()
	} else {
		to.File, to.Pos = req.File, *req.Pos
	}
	lost, err := st.r.positionLost(conn, to)
	if err != nil {
		st.closeSQL()
		return to, "", err
	}
	if lost != "" {
		return to, fmt.Sprintf("%s cannot be read: %s", to, lost), nil
	}
	if req.GTIDs == "" {
		switch {
		case st.gtids == nil:
		case st.r.cfg.Flavor == types.MariaDB:
			pos, err := queryString(conn, fmt.Sprintf("SELECT BINLOG_GTID_POS(%s, %d)", sqlString(req.File), *req.Pos))
			if err != nil {
				st.closeSQL()
				return to, "", err
			}
			if pos == "" {
				return to, fmt.Sprintf("%s:%d is not where an event group starts in a binlog file the server has (SHOW BINLOG EVENTS lists them)", req.File, *req.Pos), nil
			}
			to.GTIDs = pos
		default:
			st.r.log.Warn("set-binlog-position by file and position: MySQL cannot tell the GTID set there, so the stream goes on by file and position without one", "position", to.String())
		}
	}
	return to, "", nil
}

// sqlString quotes s as an SQL string literal.
func sqlString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
}

// repositioned ends a stream that a set-binlog-position signal moved: Run streams again from to.
type repositioned struct{ to Offset }

func (m *repositioned) Error() string { return "the stream moved to " + m.to.String() }

// moveIfAsked moves the stream to a set-binlog-position signal's offset between transactions: the offset
// is handed over as a batch of its own (with a heartbeat record when heartbeats are on, as Debezium's forced
// heartbeat), behind every batch before it, so it becomes durable only after they are acknowledged; then
// the stream ends with *repositioned for Run to read from there.
func (st *stream) moveIfAsked() error {
	if st.moveTo == nil || st.inTx {
		return nil
	}
	to := *st.moveTo
	to.Incremental = st.inc.Offset() // a running incremental snapshot goes on from the new position
	b := source.Batch{Offset: to.Fields(), Position: binlogPosition{to}}
	if st.r.cfg.HeartbeatInterval > 0 {
		b.Events = []source.Event{source.HeartbeatEvent(st.r.cfg.Topics.HeartbeatTopic(), st.r.cfg.TopicPrefix, st.r.now())}
	}
	st.send(b)
	if err := st.ctx.Err(); err != nil {
		return err
	}
	st.r.log.Info("streaming moved by a set-binlog-position signal", "from", st.committed.String(), "to", to.String())
	return &repositioned{to: to}
}

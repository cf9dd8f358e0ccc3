package mysql

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"

	"github.com/cdcd/cdcd/source"
)

var _ source.ConnectionChecker = task{}

// CheckConnection is Debezium's validateConnection for MySQL and MariaDB: it connects with the task's
// settings (TLS included) and checks the server as a start would (flavor, log_bin, binlog_format,
// binlog_row_image, the user's replication privileges).
func (t task) CheckConnection(ctx context.Context) error {
	// A reader of its own, never run: no metrics, no history, only its connection code.
	r := &Reader{cfg: t.cfg, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	conn, err := r.connect(ctx) // names the server, the user and the TLS mode
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() }) // the queries take no context
	defer stop()
	if err := r.checkServer(conn); err != nil {
		server := net.JoinHostPort(t.cfg.Host, strconv.Itoa(t.cfg.Port))
		if strings.Contains(err.Error(), server) {
			return err // it names the server already
		}
		return fmt.Errorf("%s at %s: %w", t.cfg.Connector(), server, err)
	}
	return nil
}

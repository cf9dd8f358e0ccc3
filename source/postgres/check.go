package postgres

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/cdcd/cdcd/source"
)

var _ source.ConnectionChecker = task{}

// CheckConnection is Debezium's PostgresConnector.validateConnection: it connects with the task's
// settings and checks the server as a start would (version, wal_level, the user's REPLICATION
// attribute), without creating anything.
func (t task) CheckConnection(ctx context.Context) error {
	server := net.JoinHostPort(t.cfg.Host, strconv.Itoa(t.cfg.Port))
	conn, err := t.cfg.connectSQL(ctx)
	if err != nil {
		return fmt.Errorf("cannot connect to PostgreSQL at %s (database %s) as %s: %w", server, t.cfg.DBName, t.cfg.User, err)
	}
	defer func() {
		// A server that stopped answering must not hold validation past its bound.
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(closeCtx)
	}()
	if _, err := checkServer(ctx, conn, t.cfg); err != nil {
		if strings.Contains(err.Error(), server) {
			return err // it names the server already
		}
		return fmt.Errorf("PostgreSQL at %s: %w", server, err)
	}
	return nil
}

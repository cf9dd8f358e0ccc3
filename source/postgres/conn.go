package postgres

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cdcd/cdcd/source"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The pgjdbc options a Debezium config sets under database.* reach the connections here: connect_timeout
// (database.connectTimeout), application_name (database.ApplicationName) in the connection string, TCP
// keepalive (database.tcpKeepAlive) and a read deadline (database.socketTimeout) on the dialer. Every
// connection the connector opens — queries, snapshots, replication — goes through connectSQL or
// connectReplication.

// connectReplication opens a walsender connection (replication=database). A failure of TLS is a
// *tlsError.
func (c *Config) connectReplication(ctx context.Context) (*pgconn.PgConn, error) {
	cfg, err := pgconn.ParseConfig(c.dsn(true))
	if err != nil {
		return nil, c.explainTLS(err)
	}
	cfg.DialFunc = c.dial
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, c.explainTLS(err)
	}
	return conn, nil
}

// connectSQL opens a query connection. A failure of TLS is a *tlsError.
func (c *Config) connectSQL(ctx context.Context) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(c.dsn(false))
	if err != nil {
		return nil, c.explainTLS(err)
	}
	cfg.DialFunc = c.dial
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, c.explainTLS(err)
	}
	return conn, nil
}

// tlsError is a connection that failed for TLS: the message says which of database.sslmode,
// database.sslrootcert, database.sslcert, database.sslkey (and database.sslpassword) fixes it. It is fatal:
// the server or the config must change, and retrying cannot help.
type tlsError struct {
	fix string
	err error
}

func (e *tlsError) Error() string { return e.fix + ": " + e.err.Error() }
func (e *tlsError) Unwrap() error { return e.err }
func (e *tlsError) Fatal() bool   { return true }

// explainTLS returns err as a *tlsError when TLS failed, unchanged otherwise. pgconn reports a server
// without TLS and a refused file only in text (errors.New), so those are matched by their words.
func (c *Config) explainTLS(err error) error {
	mode := "database.sslmode=" + c.SSLMode
	var (
		parse     *pgconn.ParseConfigError
		pgErr     *pgconn.PgError
		hostname  x509.HostnameError
		unknownCA x509.UnknownAuthorityError
		invalid   x509.CertificateInvalidError
		verify    *tls.CertificateVerificationError
		alert     *net.OpError
	)
	fix := ""
	switch {
	case errors.As(err, &parse) && strings.Contains(parse.Error(), "failed to configure TLS"):
		// The DSN is built from the config, so only a TLS file can make it unparsable.
		fix = "the TLS files cannot be used: fix " + tlsFileKey(errors.Unwrap(parse))
	case strings.Contains(err.Error(), "server refused TLS connection"):
		fix = fmt.Sprintf("%s needs TLS, but the PostgreSQL server at %s does not offer it, and cdcd never falls back to an unencrypted connection in this mode: enable ssl on the server, or set database.sslmode=prefer (TLS when offered) or disable", mode, c.addr())
	case errors.As(err, &hostname):
		fix = fmt.Sprintf("%s: the server's certificate does not name database.hostname %s: connect by a name the certificate holds, or set database.sslmode=verify-ca to verify the CA only", mode, c.Host)
	case errors.As(err, &unknownCA) && c.SSLRootCert == "":
		fix = mode + ": the server's certificate is not signed by a CA of the system's roots (database.sslrootcert is not set): set database.sslrootcert to the CA that signed it"
	case errors.As(err, &unknownCA):
		fix = fmt.Sprintf("%s: the server's certificate is not signed by a CA of database.sslrootcert %s: set database.sslrootcert to the CA that signed it", mode, c.SSLRootCert)
	case errors.As(err, &invalid), errors.As(err, &verify):
		fix = mode + ": the server's certificate is not valid: renew the server's certificate, or check database.sslrootcert"
	case errors.As(err, &pgErr) && pgErr.Code == "28000" && strings.Contains(pgErr.Message, "certificate"):
		// pg_hba.conf's cert method or clientcert=verify-ca/verify-full.
		fix = "the server requires a client certificate it trusts, of this user: set database.sslcert and database.sslkey (database.sslpassword for an encrypted key)"
	case errors.As(err, &pgErr) && pgErr.Code == "28000" && strings.Contains(pgErr.Message, "no encryption"):
		fix = mode + ": the server accepts this user from this host over TLS only (pg_hba.conf's hostssl): set database.sslmode=require, verify-ca or verify-full"
	case errors.As(err, &alert) && alert.Op == "remote error":
		// A TLS alert: the server refused the handshake, mostly the client certificate.
		fix = "the server refused the TLS handshake: check database.sslcert and database.sslkey (a client certificate the server trusts)"
	default:
		return err
	}
	return &tlsError{fix: fix, err: err}
}

// tlsFileKey names the key of the file pgconn refused, by the words of its configTLS.
func tlsFileKey(err error) string {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	switch {
	case strings.Contains(msg, "CA"):
		return "database.sslrootcert"
	case strings.Contains(msg, "sslpassword"), strings.Contains(msg, "decrypt"):
		return "database.sslpassword"
	case strings.Contains(msg, "sslkey"):
		return "database.sslkey"
	case strings.Contains(msg, "cert"):
		return "database.sslcert"
	}
	return "database.sslrootcert, database.sslcert, database.sslkey or database.sslpassword"
}

// connectParams are the connection-string parameters of the mapped JDBC options.
func (c *Config) connectParams() map[string]string {
	out := map[string]string{"application_name": c.ApplicationName}
	if out["application_name"] == "" {
		out["application_name"] = "cdcd-" + c.Name
	}
	if c.ConnectTimeout > 0 {
		out["connect_timeout"] = strconv.Itoa(int(c.ConnectTimeout / time.Second))
	}
	if c.Options != "" {
		out["options"] = c.Options
	}
	return out
}

// dial is pgconn's default dialer (keepalive probes every 5 minutes) with database.tcpKeepAlive=false
// turning the probes off, and database.socketTimeout bounding every read, as pgjdbc's socket timeout does.
// Sent data unacknowledged for source.UnackedTimeout drops the connection: a partition is found out.
func (c *Config) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{KeepAlive: 5 * time.Minute, Control: source.BoundUnacked}
	if !c.TCPKeepAlive {
		d.KeepAlive = -1
	}
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil || c.SocketTimeout <= 0 {
		return conn, err
	}
	return &readTimeoutConn{Conn: conn, timeout: c.SocketTimeout}, nil
}

// readTimeoutConn fails a read that receives nothing for timeout. pgconn sets deadlines of its own to
// interrupt a read when its context ends; the earlier of the two always applies, so a cancellation is never
// postponed by the timeout.
type readTimeoutConn struct {
	net.Conn
	timeout time.Duration

	mu     sync.Mutex
	caller time.Time // the read deadline pgconn set; zero: none
}

func (c *readTimeoutConn) Read(b []byte) (int, error) {
	c.mu.Lock()
	deadline := time.Now().Add(c.timeout)
	if !c.caller.IsZero() && c.caller.Before(deadline) {
		deadline = c.caller
	}
	err := c.Conn.SetReadDeadline(deadline)
	c.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return c.Conn.Read(b)
}

func (c *readTimeoutConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.caller = t
	return c.Conn.SetDeadline(t)
}

func (c *readTimeoutConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.caller = t
	return c.Conn.SetReadDeadline(t)
}

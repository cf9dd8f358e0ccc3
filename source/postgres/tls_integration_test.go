package postgres

import (
	"context"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/cdcd/cdcd/source"
)

// tlsProps is a connector config for database db of the TLS-only cluster at addr, as SecureUser, with
// the TLS keys given.
func tlsProps(addr, db string, tlsKeys map[string]string) map[string]string {
	host, port, _ := net.SplitHostPort(addr)
	props := map[string]string{
		"topic.prefix": "tls", "database.hostname": host, "database.port": port, "database.dbname": db,
		"database.user": testenv.SecureUser, "database.password": testenv.SecurePassword,
	}
	for k, v := range tlsKeys {
		props[k] = v
	}
	return props
}

// connectBoth opens the connector's query and replication connections with props and reports whether
// each is encrypted (pg_stat_ssl of its own backend); the first failure is returned.
func connectBoth(t *testing.T, props map[string]string) (bool, error) {
	t.Helper()
	cfg, err := ParseConfig("tls", props, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	sql, err := cfg.connectSQL(ctx)
	if err != nil {
		return false, err
	}
	defer sql.Close(context.Background())
	var encrypted bool
	if err := sql.QueryRow(ctx, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").Scan(&encrypted); err != nil {
		t.Fatal(err)
	}
	repl, err := cfg.connectReplication(ctx)
	if err != nil {
		return encrypted, err
	}
	defer repl.Close(context.Background())
	return encrypted, nil
}

// checkTLSFailure fails t unless each connection of props fails for TLS, fatally, with want in its message
// and the keys named: the query connection as Run reports it (reader.go) and the replication connection.
func checkTLSFailure(t *testing.T, props map[string]string, want string, keys ...string) {
	t.Helper()
	cfg, err := ParseConfig("tls", props, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	r := &Reader{cfg: cfg}
	sql, sqlErr := r.connectSQL(ctx)
	if sqlErr == nil {
		sql.Close(context.Background())
	}
	repl, replErr := cfg.connectReplication(ctx)
	if replErr == nil {
		repl.Close(context.Background())
	}
	for conn, err := range map[string]error{"query": sqlErr, "replication": replErr} {
		switch {
		case err == nil || !strings.Contains(err.Error(), want):
			t.Errorf("%s connection: got %v, want a failure containing %q", conn, err, want)
		case !source.IsFatal(err):
			t.Errorf("%s connection: %v is not fatal; retrying a TLS failure cannot help", conn, err)
		}
		for _, key := range keys {
			if err != nil && !strings.Contains(err.Error(), key) {
				t.Errorf("%s connection: %v does not name %s", conn, err, key)
			}
		}
	}
	if sqlErr != nil && strings.Contains(sqlErr.Error(), "database.hostname, database.port") {
		t.Errorf("a TLS failure blames the address and the user: %v", sqlErr)
	}
}

// database.sslmode and the certificate keys against the TLS-only cluster, on the query and the
// replication connection: the verify modes check the CA and (verify-full) the host name, a client
// certificate logs in the certificate's user, and no mode connects unencrypted where TLS is required.
// Each TLS failure is fatal and names the key that fixes it.
func TestTLSModesAgainstATLSOnlyServer(t *testing.T) {
	p := testenv.PostgresTLS(t)
	dsn, err := pgx.ParseConfig(testenv.NewPostgresTLSDB(t))
	if err != nil {
		t.Fatal(err)
	}
	db := dsn.Database
	elsewhere := testenv.ForwardFromOtherHost(t, p.Addr)
	verifyFull := map[string]string{"database.sslmode": "verify-full", "database.sslrootcert": p.TLS.CA}
	for _, tc := range []struct {
		name, addr string
		keys       map[string]string
		fails      string   // "" when both connections must work, over TLS
		names      []string // what the failure must name: the keys that fix it
	}{
		{"verify-full", p.Addr, verifyFull, "", nil},
		{"require", p.Addr, map[string]string{"database.sslmode": "require"}, "", nil},
		{"verify-ca by an address the certificate lacks", elsewhere, map[string]string{"database.sslmode": "verify-ca", "database.sslrootcert": p.TLS.CA}, "", nil},
		{"verify-full by an address the certificate lacks", elsewhere, verifyFull, "127.0.0.2",
			[]string{"database.sslmode=verify-full", "does not name database.hostname 127.0.0.2", "database.sslmode=verify-ca"}},
		{"verify-full with another CA", p.Addr, map[string]string{"database.sslmode": "verify-full", "database.sslrootcert": p.TLS.OtherCA}, "certificate signed by unknown authority",
			[]string{"database.sslmode=verify-full", "not signed by a CA of database.sslrootcert " + p.TLS.OtherCA}},
		{"verify-ca with another CA", p.Addr, map[string]string{"database.sslmode": "verify-ca", "database.sslrootcert": p.TLS.OtherCA}, "certificate signed by unknown authority",
			[]string{"database.sslmode=verify-ca", "database.sslrootcert " + p.TLS.OtherCA}},
		{"verify-ca without database.sslrootcert", p.Addr, map[string]string{"database.sslmode": "verify-ca"}, "certificate signed by unknown authority",
			[]string{"database.sslrootcert is not set", "set database.sslrootcert"}},
		{"database.sslrootcert that does not exist", p.Addr, map[string]string{"database.sslmode": "verify-full", "database.sslrootcert": "/nonexistent/ca.pem"}, "no such file",
			[]string{"fix database.sslrootcert"}},
		{"disable against a TLS-only server", p.Addr, map[string]string{"database.sslmode": "disable"}, "no encryption",
			[]string{"database.sslmode=disable", "set database.sslmode=require"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			props := tlsProps(tc.addr, db, tc.keys)
			if tc.fails != "" {
				checkTLSFailure(t, props, tc.fails, tc.names...)
				return
			}
			encrypted, err := connectBoth(t, props)
			switch {
			case err != nil:
				t.Fatalf("got %v, want both connections", err)
			case !encrypted:
				t.Fatal("the query connection is not encrypted")
			}
		})
	}

	t.Run("client certificate", func(t *testing.T) {
		props := tlsProps(p.Addr, db, map[string]string{"database.sslmode": "verify-full", "database.sslrootcert": p.TLS.CA,
			"database.sslcert": p.TLS.ClientCert, "database.sslkey": p.TLS.ClientKey})
		props["database.user"], props["database.password"] = testenv.CertUser, ""
		if encrypted, err := connectBoth(t, props); err != nil || !encrypted {
			t.Fatalf("got encrypted=%v, %v; want the certificate's user logged in over TLS", encrypted, err)
		}
		keys := []string{"requires a client certificate", "set database.sslcert and database.sslkey"}
		props["database.sslcert"], props["database.sslkey"] = p.TLS.OtherClientCert, p.TLS.OtherClientKey
		checkTLSFailure(t, props, "connection requires a valid client certificate", keys...)
		props["database.sslcert"], props["database.sslkey"] = p.TLS.ClientCert, "/nonexistent/client.key"
		checkTLSFailure(t, props, "unable to read sslkey", "fix database.sslkey")
		delete(props, "database.sslcert")
		delete(props, "database.sslkey")
		checkTLSFailure(t, props, "connection requires a valid client certificate", keys...)
	})
}

// require against a server that does not offer TLS fails; it never falls back to plaintext. prefer does.
func TestTLSRequiredNeverFallsBackToPlaintext(t *testing.T) {
	dsn, err := pgx.ParseConfig(testenv.NewPostgresDB(t))
	if err != nil {
		t.Fatal(err)
	}
	props := map[string]string{
		"topic.prefix": "plain", "database.hostname": dsn.Host, "database.port": strconv.Itoa(int(dsn.Port)), "database.dbname": dsn.Database,
		"database.user": dsn.User, "database.password": dsn.Password,
	}
	for mode, fails := range map[string]bool{"require": true, "verify-ca": true, "verify-full": true, "prefer": false} {
		props["database.sslmode"] = mode
		if fails {
			checkTLSFailure(t, props, "server refused TLS connection", "database.sslmode="+mode+" needs TLS", "enable ssl on the server, or set database.sslmode=prefer")
			continue
		}
		encrypted, err := connectBoth(t, props)
		if err != nil || encrypted {
			t.Errorf("sslmode=%s against a server without TLS: got encrypted=%v, %v; want an unencrypted connection", mode, encrypted, err)
		}
	}
}

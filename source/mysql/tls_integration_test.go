package mysql

// Tests of database.ssl.* against the TLS-only MariaDB (mariadb_tls, require_secure_transport=ON) and the
// plain one of e2e/services.sh; skipped unless CDCD_E2E is set.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/cdcd/cdcd/source/mysql/types"
)

// tlsReader parses a connector config for the server at addr with settings on top and returns its reader.
func tlsReader(t *testing.T, flavor types.Flavor, addr, user, password string, settings map[string]string) *Reader {
	t.Helper()
	host, port, _ := strings.Cut(addr, ":")
	cfg := map[string]string{"database.hostname": host, "database.port": port, "database.user": user, "database.password": password,
		"database.server.id": fmt.Sprint(300000 + rand.IntN(1000000)), "topic.prefix": "tls",
		"schema.history.internal.kafka.topic": "h", "schema.history.internal.kafka.bootstrap.servers": "127.0.0.1:1"}
	for k, v := range settings {
		cfg[k] = v
	}
	parsed, err := ParseConfig("tls", flavor, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return NewReader(parsed, nil, slog.New(slog.DiscardHandler))
}

// sslCipher is the connection's TLS cipher as the server sees it, "" for an unencrypted connection.
func sslCipher(t *testing.T, conn *client.Conn) string {
	t.Helper()
	res, err := conn.Execute("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	v, err := res.GetString(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// readBinlog opens the reader's binlog connection at the server's current position and waits for its
// first event: the connection is up and reading.
func readBinlog(t *testing.T, r *Reader, conn *client.Conn) error {
	t.Helper()
	res, err := conn.Execute("SHOW MASTER STATUS")
	if err != nil {
		t.Fatal(err)
	}
	file, _ := res.GetString(0, 0)
	pos, _ := res.GetUint(0, 1)
	at := gomysql.Position{Name: strings.Clone(file), Pos: uint32(pos)} // file shares the buffer Close recycles
	res.Close()
	return startBinlog(r, at)
}

func startBinlog(r *Reader, pos gomysql.Position) error {
	syncer := replication.NewBinlogSyncer(r.syncerConfig())
	defer syncer.Close()
	streamer, err := syncer.StartSync(pos)
	if err != nil {
		if tlsErr := r.cfg.tlsError(net.JoinHostPort(r.cfg.Host, strconv.Itoa(r.cfg.Port)), err); tlsErr != nil {
			return tlsErr
		}
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = streamer.GetEvent(ctx)
	return err
}

// TestSSLModesAgainstATLSOnlyServer runs each mode and store type against mariadb_tls, on a query
// connection and on the binlog connection: a connection that works is encrypted (the server refuses any
// other, and its cipher is checked), one that must fail fails and says why.
func TestSSLModesAgainstATLSOnlyServer(t *testing.T) {
	m := testenv.MariaDBTLS(t)
	certs := m.TLS
	pem := filepath.Join(t.TempDir(), "client-keystore.pem")
	key, err := os.ReadFile(certs.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := os.ReadFile(certs.ClientCert)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pem, append(cert, key...), 0o600); err != nil {
		t.Fatal(err)
	}
	elsewhere := testenv.ForwardFromOtherHost(t, m.Addr)
	jks := map[string]string{"database.ssl.truststore": certs.TruststoreJKS, "database.ssl.truststore.password": certs.StorePassword}
	with := func(base map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	cases := []struct {
		name       string
		flavor     types.Flavor
		addr, user string
		settings   map[string]string
		fail       string // "" the connections work
	}{
		{"disable is refused by the server", types.MariaDB, m.Addr, m.User, nil, "database.ssl.mode=disable"},
		{"trust", types.MariaDB, m.Addr, m.User, with(nil, "database.ssl.mode", "trust"), ""},
		{"verify-ca, JKS truststore", types.MariaDB, m.Addr, m.User, with(jks, "database.ssl.mode", "verify-ca"), ""},
		{"verify-ca, JKS truststore without its password", types.MariaDB, m.Addr, m.User,
			with(nil, "database.ssl.mode", "verify-ca", "database.ssl.truststore", certs.TruststoreJKS), ""},
		{"verify-ca, PKCS12 truststore", types.MariaDB, m.Addr, m.User, with(nil, "database.ssl.mode", "verify-ca",
			"database.ssl.truststore", certs.TruststoreP12, "database.ssl.truststore.password", certs.StorePassword), ""},
		{"verify-ca, PEM truststore", types.MariaDB, m.Addr, m.User, with(nil, "database.ssl.mode", "verify-ca", "database.ssl.truststore", certs.CA), ""},
		{"verify-ca, another CA", types.MariaDB, m.Addr, m.User, with(nil, "database.ssl.mode", "verify-ca",
			"database.ssl.truststore", certs.OtherTruststoreJKS, "database.ssl.truststore.password", certs.StorePassword), "is not trusted"},
		{"verify-ca, no truststore: the system's roots", types.MariaDB, m.Addr, m.User, with(nil, "database.ssl.mode", "verify-ca"), "is not trusted"},
		{"verify-full by IP address", types.MariaDB, m.Addr, m.User, with(jks, "database.ssl.mode", "verify-full"), ""},
		{"verify-full by localhost", types.MariaDB, strings.Replace(m.Addr, "127.0.0.1", "localhost", 1), m.User, with(jks, "database.ssl.mode", "verify-full"), ""},
		{"verify-full, another CA", types.MariaDB, m.Addr, m.User, with(nil, "database.ssl.mode", "verify-full",
			"database.ssl.truststore", certs.OtherTruststoreP12, "database.ssl.truststore.password", certs.StorePassword), "is not trusted"},
		{"verify-full by a name the certificate lacks", types.MariaDB, elsewhere, m.User, with(jks, "database.ssl.mode", "verify-full"), "does not name database.hostname 127.0.0.2"},
		{"verify-ca by a name the certificate lacks", types.MariaDB, elsewhere, m.User, with(jks, "database.ssl.mode", "verify-ca"), ""},
		{"MySQL's names: verify_identity", types.MySQL, m.Addr, m.User, with(jks, "database.ssl.mode", "verify_identity"), ""},
		{"MySQL's preferred takes TLS when offered", types.MySQL, m.Addr, m.User, nil, ""},
		{"certificate user without a keystore", types.MariaDB, m.Addr, testenv.CertUser, with(jks, "database.ssl.mode", "verify-full"), "Access denied"},
		{"certificate user, JKS keystore", types.MariaDB, m.Addr, testenv.CertUser, with(jks, "database.ssl.mode", "verify-full",
			"database.ssl.keystore", certs.ClientKeystoreJKS, "database.ssl.keystore.password", certs.StorePassword), ""},
		{"certificate user, PKCS12 keystore", types.MariaDB, m.Addr, testenv.CertUser, with(jks, "database.ssl.mode", "trust",
			"database.ssl.keystore", certs.ClientKeystoreP12, "database.ssl.keystore.password", certs.StorePassword), ""},
		{"certificate user, PEM keystore", types.MariaDB, m.Addr, testenv.CertUser, with(jks, "database.ssl.mode", "verify-ca", "database.ssl.keystore", pem), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := tlsReader(t, c.flavor, c.addr, c.user, testenv.SecurePassword, c.settings)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			conn, err := r.connect(ctx)
			if c.fail != "" {
				if err == nil {
					conn.Close()
					t.Fatalf("connected; want a failure saying %q", c.fail)
				}
				if !strings.Contains(err.Error(), c.fail) || strings.Contains(err.Error(), testenv.SecurePassword) ||
					strings.Contains(err.Error(), testenv.StorePassword) {
					t.Fatalf("%v: want a failure saying %q, naming no password", err, c.fail)
				}
				t.Log(err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if cipher := sslCipher(t, conn); cipher == "" || r.plaintext {
				t.Fatalf("the query connection is not encrypted (cipher %q)", cipher)
			}
			if err := readBinlog(t, r, conn); err != nil {
				t.Fatalf("the binlog connection: %v", err)
			}
		})
	}
	// The binlog connection verifies on its own: with the query connection's mode, but a CA the server's
	// certificate is not signed by, it does not connect.
	good := tlsReader(t, types.MariaDB, m.Addr, m.User, testenv.SecurePassword, with(jks, "database.ssl.mode", "verify-ca"))
	conn, err := good.connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	bad := tlsReader(t, types.MariaDB, m.Addr, m.User, testenv.SecurePassword, with(nil, "database.ssl.mode", "verify-ca",
		"database.ssl.truststore", certs.OtherTruststoreJKS, "database.ssl.truststore.password", certs.StorePassword))
	if err := readBinlog(t, bad, conn); err == nil || !strings.Contains(err.Error(), "is not trusted") {
		t.Errorf("the binlog connection with another CA: %v, want it not trusted", err)
	}
}

// TestSSLRequiredAgainstAServerWithoutTLS: against the plain MariaDB (no TLS), required and stricter fail on
// the query and on the binlog connection, naming the mode and the server, fatally; only MySQL's preferred
// goes on unencrypted, on both connections.
func TestSSLRequiredAgainstAServerWithoutTLS(t *testing.T) {
	dsn, err := testenv.ParseMySQLDSN(testenv.MariaDB(t))
	if err != nil {
		t.Fatal(err)
	}
	user, password := testenv.MariaDBCaptureUser, testenv.MariaDBCapturePassword
	for _, c := range []struct {
		flavor types.Flavor
		mode   string
	}{{types.MariaDB, "trust"}, {types.MariaDB, "verify-full"}, {types.MySQL, "required"}, {types.MySQL, "verify_ca"}} {
		r := tlsReader(t, c.flavor, dsn.Addr, user, password, map[string]string{"database.ssl.mode": c.mode})
		_, err := r.connect(context.Background())
		want := "database.ssl.mode=" + c.mode + " needs TLS, but the " + connectorName(c.flavor) + " server at " + dsn.Addr + " does not offer it"
		var f interface{ Fatal() bool }
		if err == nil || !strings.Contains(err.Error(), want) || !errors.As(err, &f) || !f.Fatal() {
			t.Errorf("%s: query connection: %v, want a fatal %q", c.mode, err, want)
		}
		// The binlog connection is made only after a query connection, but holds on its own.
		if err := startBinlog(r, gomysql.Position{Name: "mariadb-bin.000001", Pos: 4}); err == nil || !strings.Contains(err.Error(), "does not offer it") {
			t.Errorf("%s: binlog connection: %v, want %q", c.mode, err, "does not offer it")
		}
	}
	r := tlsReader(t, types.MySQL, dsn.Addr, user, password, nil)
	conn, err := r.connect(context.Background())
	if err != nil {
		t.Fatalf("preferred: %v", err)
	}
	defer conn.Close()
	if cipher := sslCipher(t, conn); cipher != "" || !r.plaintext || r.syncerConfig().TLSConfig != nil {
		t.Fatalf("preferred against a server without TLS: cipher %q, plaintext %v", cipher, r.plaintext)
	}
	if err := readBinlog(t, r, conn); err != nil {
		t.Fatalf("preferred: the binlog connection: %v", err)
	}
}

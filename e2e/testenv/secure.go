package testenv

// The secured test bed of e2e/services.sh: the certificates it makes, Kafka's SASL_SSL listener,
// the TLS-only PostgreSQL cluster (postgres_tls) and the TLS-only MariaDB (mariadb_tls).
//
// The accessors skip the calling test unless CDCD_E2E is set, like the others, and also when the
// certificates have not been made or the service is not listening: a test bed started before the
// secured services existed (restart it with `e2e/services.sh stop all; e2e/services.sh start all`).
// A service that listens but refuses the right credentials fails the test.
//
// Hostname mismatch: every service presents server.pem (IP:127.0.0.1, DNS:localhost). A client
// sees a mismatch when it expects another name for the same address, e.g. tls.Config.ServerName =
// WrongHostName (TLSConfig(t, WrongHostName)); wrong-host.pem/.key is a certificate of the same CA
// for WrongHostName only, for a test's own listener (tls.Listen, an httptest server).

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/segmentio/kafka-go"
	kafkasasl "github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/twmb/franz-go/pkg/kgo"
	franzsasl "github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// The accounts and secrets e2e/services.sh sets up on the secured services.
const (
	// SecureUser and SecurePassword log in everywhere: Kafka SASL (SCRAM-SHA-512, SCRAM-SHA-256,
	// PLAIN), postgres_tls (scram-sha-256, LOGIN REPLICATION) and mariadb_tls (REQUIRE SSL, the
	// capture grants of MariaDBCaptureUser).
	SecureUser     = "cdcd"
	SecurePassword = "cdcd-secret"
	// KafkaRestrictedUser and KafkaRestrictedPassword log in to Kafka's SASL_SSL listener with PLAIN as
	// the one principal that is not a super user: ACLs a test creates for it are enforced.
	KafkaRestrictedUser     = "cdcd-restricted"
	KafkaRestrictedPassword = "cdcd-restricted-secret"
	// CertUser is authenticated by the client certificate (CN=cdcd_cert): on postgres_tls by the
	// certificate alone (pg_hba "cert", LOGIN REPLICATION), on mariadb_tls by SecurePassword plus a
	// certificate of the CA (REQUIRE X509, the capture grants).
	CertUser = "cdcd_cert"
	// StorePassword opens every PKCS12 and JKS keystore and truststore.
	StorePassword = "cdcd-store"
	// PostgresTLSAdminUser is postgres_tls's superuser, over TLS with PostgresTLSAdminPassword.
	PostgresTLSAdminUser     = "postgres"
	PostgresTLSAdminPassword = "cdcd"
	// MariaDBTLSRootPassword is root@127.0.0.1's on mariadb_tls (over TLS, like every TCP login).
	MariaDBTLSRootPassword = MariaDBRootPassword
	// WrongHostName is a name the servers' certificate does not have; wrong-host.pem has only it.
	WrongHostName = "wrong.example"
)

// Secrets are the test bed's secrets that no log line, status or validation answer of cdcd may carry: the
// secured services' password and the stores' (the plain services' "cdcd" is the product's name too, and
// cannot be told apart in a log).
var Secrets = []string{SecurePassword, StorePassword}

// KafkaSASLMechanisms are the mechanisms of the SASL_SSL listener, strongest first.
var KafkaSASLMechanisms = []string{"SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"}

// TLSFiles are the certificate files e2e/services.sh makes (under $CDCD_E2E_DIR/certs). PEM keys
// are unencrypted PKCS#8; keystores hold key, certificate and CA under the alias of their name
// ("server", "client", "wrong-host"); truststores hold their CA under the alias "ca". Every store
// opens with StorePassword.
type TLSFiles struct {
	Dir string

	CA                 string // PEM: the CA of every service's certificate
	TruststoreP12      string
	TruststoreJKS      string
	ServerCert         string // PEM: IP:127.0.0.1, DNS:localhost
	ServerKey          string
	ServerKeystoreP12  string
	ServerKeystoreJKS  string
	WrongHostCert      string // PEM: DNS:wrong.example only, signed by CA
	WrongHostKey       string
	WrongHostKeystore  string // PKCS12
	ClientCert         string // PEM: CN=cdcd_cert, signed by CA
	ClientKey          string
	ClientKeystoreP12  string
	ClientKeystoreJKS  string
	OtherCA            string // PEM: an unrelated CA no service trusts
	OtherTruststoreP12 string
	OtherTruststoreJKS string
	OtherClientCert    string // PEM: CN=cdcd_cert, signed by OtherCA
	OtherClientKey     string

	StorePassword string
}

// stateDir is e2e/services.sh's STATE_DIR.
func stateDir() string {
	if d := os.Getenv("CDCD_E2E_DIR"); d != "" {
		return d
	}
	return "/var/tmp/cdcd-e2e"
}

func tlsFiles() TLSFiles {
	dir := filepath.Join(stateDir(), "certs")
	f := func(name string) string { return filepath.Join(dir, name) }
	return TLSFiles{
		Dir:                dir,
		CA:                 f("ca.pem"),
		TruststoreP12:      f("truststore.p12"),
		TruststoreJKS:      f("truststore.jks"),
		ServerCert:         f("server.pem"),
		ServerKey:          f("server.key"),
		ServerKeystoreP12:  f("server.p12"),
		ServerKeystoreJKS:  f("server.jks"),
		WrongHostCert:      f("wrong-host.pem"),
		WrongHostKey:       f("wrong-host.key"),
		WrongHostKeystore:  f("wrong-host.p12"),
		ClientCert:         f("client.pem"),
		ClientKey:          f("client.key"),
		ClientKeystoreP12:  f("client.p12"),
		ClientKeystoreJKS:  f("client.jks"),
		OtherCA:            f("other-ca.pem"),
		OtherTruststoreP12: f("other-truststore.p12"),
		OtherTruststoreJKS: f("other-truststore.jks"),
		OtherClientCert:    f("other-client.pem"),
		OtherClientKey:     f("other-client.key"),
		StorePassword:      StorePassword,
	}
}

// complete reports whether e2e/services.sh finished making the files (it writes .complete last).
func (f TLSFiles) complete() bool {
	_, err := os.Stat(filepath.Join(f.Dir, ".complete"))
	return err == nil
}

// Certs returns the certificate files. It skips t unless CDCD_E2E is set and the files are made.
func Certs(t testing.TB) TLSFiles {
	t.Helper()
	if !enabled() {
		t.Skipf("needs the test certificates: set %s=1 after `e2e/services.sh start all` (or run `make test`)", EnableEnv)
	}
	f := tlsFiles()
	if !f.complete() {
		t.Skipf("the test certificates are not made in %s: run `e2e/services.sh start all`", f.Dir)
	}
	return f
}

// CertPool reads the PEM certificates of path into a pool, failing t if it cannot.
func CertPool(t testing.TB, path string) *x509.CertPool {
	t.Helper()
	pool, err := certPool(path)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	return pool
}

func certPool(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("no certificate in %s", path)
	}
	return pool, nil
}

// TLSConfig returns a client configuration that trusts the CA and expects the server to be
// serverName ("" for 127.0.0.1, the address of every service).
func (f TLSFiles) TLSConfig(t testing.TB, serverName string) *tls.Config {
	t.Helper()
	cfg, err := f.tlsConfig(serverName)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	return cfg
}

func (f TLSFiles) tlsConfig(serverName string) (*tls.Config, error) {
	pool, err := certPool(f.CA)
	if err != nil {
		return nil, err
	}
	if serverName == "" {
		serverName = host
	}
	return &tls.Config{RootCAs: pool, ServerName: serverName, MinVersion: tls.VersionTLS12}, nil
}

// MutualTLSConfig is TLSConfig presenting the client certificate (CN=CertUser) as well.
func (f TLSFiles) MutualTLSConfig(t testing.TB, serverName string) *tls.Config {
	t.Helper()
	cfg := f.TLSConfig(t, serverName)
	pair, err := tls.LoadX509KeyPair(f.ClientCert, f.ClientKey)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	cfg.Certificates = []tls.Certificate{pair}
	return cfg
}

// requireSecureService is requireService for the secured services: besides CDCD_E2E it needs the
// certificates and a listener on addr, and skips t without them.
func requireSecureService(t testing.TB, service, addr string, ping func(context.Context, TLSFiles) error) TLSFiles {
	t.Helper()
	if !enabled() {
		t.Skipf("needs %s: set %s=1 after `e2e/services.sh start all` (or run `make test`)", service, EnableEnv)
	}
	files := tlsFiles()
	if !files.complete() {
		t.Skipf("needs %s: the test certificates are not made in %s; run `e2e/services.sh start all`", service, files.Dir)
	}
	ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if errors.Is(err, syscall.ECONNREFUSED) {
		t.Skipf("needs %s: nothing listens on %s (a test bed started before it existed?): restart with `e2e/services.sh stop all; e2e/services.sh start all`", service, addr)
	}
	if err != nil {
		t.Fatalf("%s=1 but %s at %s does not answer: %v", EnableEnv, service, addr, err)
	}
	conn.Close()
	if err := ping(ctx, files); err != nil {
		t.Fatalf("%s=1 but %s at %s refuses the test bed's credentials: %v", EnableEnv, service, addr, err)
	}
	return files
}

// ---------------------------------------------------------------------------------------------
// Kafka SASL_SSL

// SASLSSLKafka is the SASL_SSL listener of the test-bed broker (the same broker as Kafka's
// PLAINTEXT one). The broker asks for a client certificate but does not require one: SASL decides
// who the client is.
type SASLSSLKafka struct {
	Brokers    []string
	User       string
	Password   string
	Mechanisms []string // KafkaSASLMechanisms
	TLS        TLSFiles
}

// FranzOpts are the franz-go client options that reach the SASL_SSL listener: TLS verified against the
// test bed's CA, logged in as User with SCRAM-SHA-512. Add the options of what the client does.
func (k SASLSSLKafka) FranzOpts(t testing.TB) []kgo.Opt {
	t.Helper()
	return []kgo.Opt{kgo.SeedBrokers(k.Brokers...), kgo.DialTLSConfig(k.TLS.TLSConfig(t, "")),
		kgo.SASL(scram.Auth{User: k.User, Pass: k.Password}.AsSha512Mechanism())}
}

// SCRAMProps are the Kafka client settings, as Connect and Debezium take them, that reach the SASL_SSL
// listener: SCRAM-SHA-512 as User (a JAAS line) over TLS with the JKS truststore. Prefix the keys for a
// client of its own (producer., admin., schema.history.internal.consumer., …).
func (k SASLSSLKafka) SCRAMProps() map[string]string {
	return map[string]string{
		"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
		"sasl.jaas.config":        fmt.Sprintf(`org.apache.kafka.common.security.scram.ScramLoginModule required username="%s" password="%s";`, k.User, k.Password),
		"ssl.truststore.location": k.TLS.TruststoreJKS, "ssl.truststore.password": k.TLS.StorePassword,
	}
}

func kafkaSASLSSLBrokers() []string {
	return []string{serviceAddr("CDCD_KAFKA_SASL_SSL_PORT", "59094")}
}

// KafkaSASLSSL returns the SASL_SSL listener after a PLAIN login with SecureUser succeeded. It
// skips or fails t as the file's doc says.
func KafkaSASLSSL(t testing.TB) SASLSSLKafka {
	t.Helper()
	k := SASLSSLKafka{Brokers: kafkaSASLSSLBrokers(), User: SecureUser, Password: SecurePassword, Mechanisms: KafkaSASLMechanisms}
	k.TLS = requireSecureService(t, "kafka (SASL_SSL)", k.Brokers[0], func(ctx context.Context, files TLSFiles) error {
		cfg, err := files.tlsConfig("")
		if err != nil {
			return err
		}
		mech, err := KafkaGoSASL("PLAIN", SecureUser, SecurePassword)
		if err != nil {
			return err
		}
		tr := &kafka.Transport{TLS: cfg, SASL: mech}
		defer tr.CloseIdleConnections()
		_, err = (&kafka.Client{Addr: kafka.TCP(k.Brokers...), Transport: tr}).Metadata(ctx, &kafka.MetadataRequest{})
		return err
	})
	return k
}

// KafkaGoSASL returns a kafka-go SASL mechanism (sasl.Mechanism for kafka.Transport and
// kafka.Dialer) for mechanism PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512. SCRAM comes from franz-go's
// implementation (standard library only): kafka-go's own sasl/scram needs github.com/xdg-go/scram,
// which is not in go.mod.
func KafkaGoSASL(mechanism, user, password string) (kafkasasl.Mechanism, error) {
	auth := scram.Auth{User: user, Pass: password}
	switch mechanism {
	case "PLAIN":
		return plain.Mechanism{Username: user, Password: password}, nil
	case "SCRAM-SHA-256":
		return kafkaGoMechanism{auth.AsSha256Mechanism()}, nil
	case "SCRAM-SHA-512":
		return kafkaGoMechanism{auth.AsSha512Mechanism()}, nil
	}
	return nil, fmt.Errorf("testenv: unknown SASL mechanism %q", mechanism)
}

// kafkaGoMechanism runs a franz-go SASL mechanism in kafka-go: both are the same client-first
// challenge/response loop.
type kafkaGoMechanism struct{ m franzsasl.Mechanism }

func (k kafkaGoMechanism) Name() string { return k.m.Name() }

func (k kafkaGoMechanism) Start(ctx context.Context) (kafkasasl.StateMachine, []byte, error) {
	session, first, err := k.m.Authenticate(ctx, "")
	if err != nil {
		return nil, nil, err
	}
	return kafkaGoSession{session}, first, nil
}

type kafkaGoSession struct{ s franzsasl.Session }

func (s kafkaGoSession) Next(_ context.Context, challenge []byte) (bool, []byte, error) {
	return s.s.Challenge(challenge)
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL, TLS only

// TLSPostgres is the PostgreSQL 15 cluster that takes TLS connections only (wal_level=logical,
// like the main one). Without TLS every TCP login is rejected.
type TLSPostgres struct {
	Addr     string // 127.0.0.1:port
	User     string // SecureUser: LOGIN REPLICATION, scram-sha-256
	Password string
	TLS      TLSFiles
}

func postgresTLSAddr() string { return serviceAddr("CDCD_PG_TLS_PORT", "55433") }

// PostgresTLS returns the TLS-only cluster after SecureUser logged in with sslmode=verify-full. It
// skips or fails t as the file's doc says.
func PostgresTLS(t testing.TB) TLSPostgres {
	t.Helper()
	p := TLSPostgres{Addr: postgresTLSAddr(), User: SecureUser, Password: SecurePassword, TLS: tlsFiles()}
	p.TLS = requireSecureService(t, "postgres_tls", p.Addr, func(ctx context.Context, _ TLSFiles) error {
		conn, err := pgx.Connect(ctx, p.DSN("postgres"))
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		return conn.Ping(ctx)
	})
	return p
}

// ConnString builds a URL connection string to database db of postgres_tls for user
// (password may be empty) with sslmode=verify-full and the CA as sslrootcert; params adds to or
// overrides the query (sslmode, sslrootcert, sslcert, sslkey, replication...).
func (p TLSPostgres) ConnString(user, password, db string, params url.Values) string {
	q := url.Values{"sslmode": {"verify-full"}, "sslrootcert": {p.TLS.CA}}
	for k, v := range params {
		q[k] = v
	}
	u := url.URL{Scheme: "postgres", Host: p.Addr, Path: "/" + db, RawQuery: q.Encode()}
	if password != "" {
		u.User = url.UserPassword(user, password)
	} else {
		u.User = url.User(user)
	}
	return u.String()
}

// DSN is SecureUser's connection string to db (verify-full). Add "&replication=database" for a
// logical replication connection.
func (p TLSPostgres) DSN(db string) string { return p.ConnString(p.User, p.Password, db, nil) }

// AdminDSN is the superuser's connection string to db (verify-full).
func (p TLSPostgres) AdminDSN(db string) string {
	return p.ConnString(PostgresTLSAdminUser, PostgresTLSAdminPassword, db, nil)
}

// CertDSN is CertUser's connection string to db: verify-full, authenticated by the client
// certificate alone.
func (p TLSPostgres) CertDSN(db string) string {
	return p.ConnString(CertUser, "", db, url.Values{"sslcert": {p.TLS.ClientCert}, "sslkey": {p.TLS.ClientKey}})
}

// NewPostgresTLSDB creates a database of its own for t on postgres_tls, owned by SecureUser (so
// that user may create tables and publications in it), and returns SecureUser's connection string
// to it. When t ends, its slots and the database are dropped as NewPostgresDB's are.
func NewPostgresTLSDB(t testing.TB) string {
	t.Helper()
	p := PostgresTLS(t)
	name := ownedName(t, postgresMaxIdentifier)
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, p.AdminDSN("postgres"))
	if err != nil {
		t.Fatalf("testenv: connecting to postgres_tls: %v", err)
	}
	defer conn.Close(context.Background())
	stmt := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize() + " OWNER " + pgx.Identifier{p.User}.Sanitize()
	if _, err := conn.Exec(ctx, stmt); err != nil {
		t.Fatalf("testenv: creating database %s on postgres_tls: %v", name, err)
	}
	t.Cleanup(func() {
		if err := dropPostgresDB(p.AdminDSN("postgres"), name); err != nil {
			t.Errorf("testenv: postgres_tls: %v", err)
		}
	})
	return p.DSN(name)
}

// ---------------------------------------------------------------------------------------------
// MariaDB, TLS required

// TLSMariaDB is the MariaDB 10.11 with require_secure_transport=ON (binlog like the main one).
// Every TCP login needs TLS: connect with ConnectMariaDB and a TLS config.
type TLSMariaDB struct {
	Addr     string // 127.0.0.1:port
	User     string // SecureUser: REQUIRE SSL, the capture grants of MariaDBCaptureUser
	Password string
	TLS      TLSFiles
}

func mariadbTLSAddr() string { return serviceAddr("CDCD_MARIADB_TLS_PORT", "53307") }

// MariaDBTLS returns the TLS-only MariaDB after SecureUser logged in over verified TLS. It skips
// or fails t as the file's doc says.
func MariaDBTLS(t testing.TB) TLSMariaDB {
	t.Helper()
	m := TLSMariaDB{Addr: mariadbTLSAddr(), User: SecureUser, Password: SecurePassword, TLS: tlsFiles()}
	m.TLS = requireSecureService(t, "mariadb_tls", m.Addr, func(ctx context.Context, files TLSFiles) error {
		cfg, err := files.tlsConfig("")
		if err != nil {
			return err
		}
		conn, err := ConnectMariaDB(ctx, MySQLDSN{User: m.User, Password: m.Password, Addr: m.Addr}, cfg)
		if err != nil {
			return err
		}
		defer conn.Close()
		return conn.Ping()
	})
	return m
}

// RootDSN is root's DSN (no database) in ParseMySQLDSN's format; connect with TLS.
func (m TLSMariaDB) RootDSN() string {
	return MySQLDSN{User: "root", Password: MariaDBTLSRootPassword, Addr: m.Addr}.String()
}

// NewMariaDBTLS creates a database of its own for t on mariadb_tls and returns the root DSN
// naming it (connect with TLS). When t ends, the connections using it are killed and it is dropped.
func NewMariaDBTLS(t testing.TB) string {
	t.Helper()
	m := MariaDBTLS(t)
	root, err := ParseMySQLDSN(m.RootDSN())
	if err != nil {
		t.Fatal(err)
	}
	return createMariaDB(t, "mariadb_tls", root, m.TLS.TLSConfig(t, ""))
}

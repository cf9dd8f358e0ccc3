package testenv

// Integration tests of the secured test bed: each secured service takes the right credentials and
// refuses the wrong ones. Skipped unless CDCD_E2E is set (and, see secure.go, the secured
// services are there).

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/segmentio/kafka-go"
)

// kafkaMetadata asks the SASL_SSL listener for the cluster's metadata with a fresh kafka-go
// Transport, so that no connection of another attempt is reused.
func kafkaMetadata(ctx context.Context, k SASLSSLKafka, cfg *tls.Config, mechanism, password string) (*kafka.MetadataResponse, error) {
	mech, err := KafkaGoSASL(mechanism, k.User, password)
	if err != nil {
		return nil, err
	}
	tr := &kafka.Transport{TLS: cfg, SASL: mech, DialTimeout: 5 * time.Second}
	defer tr.CloseIdleConnections()
	return (&kafka.Client{Addr: kafka.TCP(k.Brokers...), Transport: tr, Timeout: 10 * time.Second}).Metadata(ctx, &kafka.MetadataRequest{})
}

func TestSecureKafkaSASLSSL(t *testing.T) {
	k := KafkaSASLSSL(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	for _, mech := range k.Mechanisms {
		t.Run(mech, func(t *testing.T) {
			md, err := kafkaMetadata(ctx, k, k.TLS.TLSConfig(t, ""), mech, k.Password)
			if err != nil {
				t.Fatalf("%s login as %s: %v", mech, k.User, err)
			}
			// The broker must advertise its SASL_SSL address on this listener, or clients would
			// move on to the PLAINTEXT one after bootstrapping.
			if len(md.Brokers) != 1 || md.Brokers[0].Host != host || md.Brokers[0].Port != portOf(t, k.Brokers[0]) {
				t.Errorf("metadata brokers %+v, want the one broker at %s", md.Brokers, k.Brokers[0])
			}
			_, err = kafkaMetadata(ctx, k, k.TLS.TLSConfig(t, ""), mech, "wrong-"+k.Password)
			if !errors.Is(err, kafka.SASLAuthenticationFailed) {
				t.Errorf("%s with a wrong password: got %v, want %v", mech, err, kafka.SASLAuthenticationFailed)
			}
		})
	}
	t.Run("produce and fetch with SCRAM-SHA-512", func(t *testing.T) {
		mech, err := KafkaGoSASL("SCRAM-SHA-512", k.User, k.Password)
		if err != nil {
			t.Fatal(err)
		}
		tr := &kafka.Transport{TLS: k.TLS.TLSConfig(t, ""), SASL: mech}
		defer tr.CloseIdleConnections()
		topic := NewTopicPrefix(t) + ".sasl"
		c := &kafka.Client{Addr: kafka.TCP(k.Brokers...), Transport: tr}
		created, err := c.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: 1, ReplicationFactor: 1}}})
		if err != nil || created.Errors[topic] != nil {
			t.Fatalf("creating %s: %v %v", topic, err, created.Errors[topic])
		}
		w := &kafka.Writer{Addr: kafka.TCP(k.Brokers...), Topic: topic, Transport: tr, RequiredAcks: kafka.RequireAll,
			MaxAttempts: 20, WriteBackoffMin: 100 * time.Millisecond}
		defer w.Close()
		if err := w.WriteMessages(ctx, kafka.Message{Key: []byte("k"), Value: []byte("v")}); err != nil {
			t.Fatalf("producing to %s: %v", topic, err)
		}
		res, err := c.Fetch(ctx, &kafka.FetchRequest{Topic: topic, Partition: 0, Offset: 0, MaxBytes: 1 << 20})
		if err != nil || res.Error != nil {
			t.Fatalf("fetching from %s: %v %v", topic, err, res.Error)
		}
		rec, err := res.Records.ReadRecord()
		if err != nil {
			t.Fatalf("reading the fetched record: %v", err)
		}
		if key, val := readAll(t, rec.Key), readAll(t, rec.Value); key != "k" || val != "v" {
			t.Errorf("fetched %s=%s, want k=v", key, val)
		}
	})
	t.Run("client certificate of the CA is accepted", func(t *testing.T) {
		if _, err := kafkaMetadata(ctx, k, k.TLS.MutualTLSConfig(t, ""), "SCRAM-SHA-512", k.Password); err != nil {
			t.Errorf("with the client certificate: %v", err)
		}
	})
	t.Run("client certificate of another CA is refused", func(t *testing.T) {
		cfg := k.TLS.TLSConfig(t, "")
		pair, err := tls.LoadX509KeyPair(k.TLS.OtherClientCert, k.TLS.OtherClientKey)
		if err != nil {
			t.Fatal(err)
		}
		// Certificates would not do: Go sends only a certificate of a CA the server asks for.
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil }
		if _, err := kafkaMetadata(ctx, k, cfg, "SCRAM-SHA-512", k.Password); err == nil {
			t.Error("the broker accepted a client certificate of the untrusted CA")
		}
	})
	t.Run("untrusted CA", func(t *testing.T) {
		cfg := k.TLS.TLSConfig(t, "")
		cfg.RootCAs = CertPool(t, k.TLS.OtherCA)
		_, err := kafkaMetadata(ctx, k, cfg, "PLAIN", k.Password)
		if !isUnknownAuthority(err) {
			t.Errorf("trusting only the other CA: got %v, want an unknown-authority error", err)
		}
	})
	t.Run("hostname mismatch", func(t *testing.T) {
		_, err := kafkaMetadata(ctx, k, k.TLS.TLSConfig(t, WrongHostName), "PLAIN", k.Password)
		if !isHostnameMismatch(err) {
			t.Errorf("expecting %s: got %v, want a hostname error", WrongHostName, err)
		}
	})
}

func TestSecurePostgresTLSOnly(t *testing.T) {
	p := PostgresTLS(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	connect := func(dsn string, adjust func(*pgx.ConnConfig)) (*pgx.Conn, error) {
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			t.Fatal(err)
		}
		if adjust != nil {
			adjust(cfg)
		}
		return pgx.ConnectConfig(ctx, cfg)
	}
	t.Run("verify-full as the secure user", func(t *testing.T) {
		conn, err := connect(p.DSN("postgres"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		var ssl, canReplicate bool
		var walLevel string
		err = conn.QueryRow(ctx, `SELECT s.ssl, r.rolreplication, current_setting('wal_level')
			FROM pg_stat_ssl s, pg_roles r WHERE s.pid = pg_backend_pid() AND r.rolname = current_user`).Scan(&ssl, &canReplicate, &walLevel)
		if err != nil {
			t.Fatal(err)
		}
		if !ssl || !canReplicate || walLevel != "logical" {
			t.Errorf("ssl=%v replication=%v wal_level=%s, want true, true, logical", ssl, canReplicate, walLevel)
		}
	})
	t.Run("logical replication connection", func(t *testing.T) {
		conn, err := pgconn.Connect(ctx, p.DSN("postgres")+"&replication=database")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		sys, err := pglogrepl.IdentifySystem(ctx, conn)
		if err != nil {
			t.Fatal(err)
		}
		if sys.DBName != "postgres" {
			t.Errorf("IDENTIFY_SYSTEM dbname %q, want postgres", sys.DBName)
		}
	})
	t.Run("without TLS", func(t *testing.T) {
		_, err := connect(p.ConnString(p.User, p.Password, "postgres", url.Values{"sslmode": {"disable"}}), nil)
		if err == nil || !strings.Contains(err.Error(), "no encryption") {
			t.Errorf("sslmode=disable: got %v, want pg_hba's rejection of a connection without encryption", err)
		}
	})
	t.Run("wrong password", func(t *testing.T) {
		_, err := connect(p.ConnString(p.User, "wrong-"+p.Password, "postgres", nil), nil)
		if pgErr := (*pgconn.PgError)(nil); !errors.As(err, &pgErr) || pgErr.Code != "28P01" {
			t.Errorf("got %v, want invalid_password (28P01)", err)
		}
	})
	t.Run("untrusted CA", func(t *testing.T) {
		_, err := connect(p.ConnString(p.User, p.Password, "postgres", url.Values{"sslrootcert": {p.TLS.OtherCA}}), nil)
		if !isUnknownAuthority(err) {
			t.Errorf("got %v, want an unknown-authority error", err)
		}
	})
	t.Run("hostname mismatch", func(t *testing.T) {
		_, err := connect(p.DSN("postgres"), func(c *pgx.ConnConfig) { c.TLSConfig.ServerName = WrongHostName })
		if !isHostnameMismatch(err) {
			t.Errorf("got %v, want a hostname error", err)
		}
	})
	t.Run("client certificate", func(t *testing.T) {
		conn, err := connect(p.CertDSN("postgres"), nil)
		if err != nil {
			t.Fatalf("%s with its certificate: %v", CertUser, err)
		}
		conn.Close(context.Background())
		_, err = connect(p.ConnString(CertUser, "", "postgres", nil), nil)
		if err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Errorf("%s without a certificate: got %v, want a refusal", CertUser, err)
		}
		_, err = connect(p.ConnString(CertUser, "", "postgres", url.Values{"sslcert": {p.TLS.OtherClientCert}, "sslkey": {p.TLS.OtherClientKey}}), nil)
		if err == nil {
			t.Errorf("%s with a certificate of the other CA got in", CertUser)
		}
	})
	t.Run("NewPostgresTLSDB", func(t *testing.T) {
		dsn := NewPostgresTLSDB(t)
		conn, err := connect(dsn, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(ctx, "CREATE TABLE t (id int PRIMARY KEY); CREATE PUBLICATION pub FOR TABLE t"); err != nil {
			t.Errorf("the secure user cannot set up capture in its database: %v", err)
		}
	})
}

func TestSecureMariaDBRequiresTLS(t *testing.T) {
	m := MariaDBTLS(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	user := MySQLDSN{User: m.User, Password: m.Password, Addr: m.Addr}
	root, err := ParseMySQLDSN(m.RootDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Run("verified TLS as the secure user", func(t *testing.T) {
		conn, err := ConnectMariaDB(ctx, user, m.TLS.TLSConfig(t, ""))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		res, err := conn.Execute(`SELECT @@require_secure_transport, @@binlog_format, @@binlog_row_image,
			@@binlog_row_metadata, @@binlog_annotate_row_events, @@gtid_strict_mode, @@log_bin, @@version`)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"1", "ROW", "FULL", "FULL", "1", "1", "1", "10.11."}
		for col := range want {
			got, err := res.GetString(0, col)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(got, want[col]) {
				t.Errorf("%s = %q, want %q", res.Fields[col].Name, got, want[col])
			}
		}
		if _, err := conn.Execute("SHOW BINARY LOGS"); err != nil {
			t.Errorf("the secure user cannot list binlogs: %v", err)
		}
	})
	t.Run("without TLS", func(t *testing.T) {
		for _, d := range []MySQLDSN{user, root} {
			if conn, err := ConnectMariaDB(ctx, d, nil); err == nil {
				conn.Close()
				t.Errorf("%s logged in without TLS", d.User)
			} else if !isMySQLError(err, mysql.ER_ACCESS_DENIED_ERROR) {
				t.Errorf("%s without TLS: got %v, want access denied", d.User, err)
			}
		}
	})
	t.Run("wrong password", func(t *testing.T) {
		_, err := ConnectMariaDB(ctx, MySQLDSN{User: m.User, Password: "wrong-" + m.Password, Addr: m.Addr}, m.TLS.TLSConfig(t, ""))
		if !isMySQLError(err, mysql.ER_ACCESS_DENIED_ERROR) {
			t.Errorf("got %v, want access denied", err)
		}
	})
	t.Run("untrusted CA", func(t *testing.T) {
		cfg := m.TLS.TLSConfig(t, "")
		cfg.RootCAs = CertPool(t, m.TLS.OtherCA)
		_, err := ConnectMariaDB(ctx, user, cfg)
		if !isUnknownAuthority(err) {
			t.Errorf("got %v, want an unknown-authority error", err)
		}
	})
	t.Run("hostname mismatch", func(t *testing.T) {
		_, err := ConnectMariaDB(ctx, user, m.TLS.TLSConfig(t, WrongHostName))
		if !isHostnameMismatch(err) {
			t.Errorf("got %v, want a hostname error", err)
		}
	})
	t.Run("client certificate", func(t *testing.T) {
		certUser := MySQLDSN{User: CertUser, Password: SecurePassword, Addr: m.Addr}
		conn, err := ConnectMariaDB(ctx, certUser, m.TLS.MutualTLSConfig(t, ""))
		if err != nil {
			t.Fatalf("%s with its certificate: %v", CertUser, err)
		}
		conn.Close()
		if _, err := ConnectMariaDB(ctx, certUser, m.TLS.TLSConfig(t, "")); !isMySQLError(err, mysql.ER_ACCESS_DENIED_ERROR) {
			t.Errorf("%s without a certificate: got %v, want access denied", CertUser, err)
		}
	})
	t.Run("NewMariaDBTLS", func(t *testing.T) {
		d, err := ParseMySQLDSN(NewMariaDBTLS(t))
		if err != nil {
			t.Fatal(err)
		}
		conn, err := ConnectMariaDB(ctx, d, m.TLS.TLSConfig(t, ""))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Execute("CREATE TABLE t (id INT PRIMARY KEY)"); err != nil {
			t.Errorf("creating a table in %s: %v", d.DB, err)
		}
	})
}

func isUnknownAuthority(err error) bool {
	var ua x509.UnknownAuthorityError
	return errors.As(err, &ua)
}

func isHostnameMismatch(err error) bool {
	var he x509.HostnameError
	return errors.As(err, &he)
}

func readAll(t *testing.T, b kafka.Bytes) string {
	t.Helper()
	if b == nil {
		return ""
	}
	v, err := kafka.ReadAll(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(v)
}

func portOf(t *testing.T, addr string) int {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

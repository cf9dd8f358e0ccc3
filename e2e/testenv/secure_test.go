package testenv

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSecureAddressesFollowServicePortVariables(t *testing.T) {
	t.Setenv("CDCD_KAFKA_SASL_SSL_PORT", "6004")
	t.Setenv("CDCD_PG_TLS_PORT", "6005")
	t.Setenv("CDCD_MARIADB_TLS_PORT", "6006")
	if got := kafkaSASLSSLBrokers(); len(got) != 1 || got[0] != "127.0.0.1:6004" {
		t.Errorf("SASL_SSL brokers = %q, want [127.0.0.1:6004]", got)
	}
	if got := postgresTLSAddr(); got != "127.0.0.1:6005" {
		t.Errorf("postgres_tls addr = %q, want 127.0.0.1:6005", got)
	}
	if got := mariadbTLSAddr(); got != "127.0.0.1:6006" {
		t.Errorf("mariadb_tls addr = %q, want 127.0.0.1:6006", got)
	}
}

func TestSecureAddressesDefaultToConventionPorts(t *testing.T) {
	for _, v := range []string{"CDCD_KAFKA_SASL_SSL_PORT", "CDCD_PG_TLS_PORT", "CDCD_MARIADB_TLS_PORT", "CDCD_E2E_DIR"} {
		t.Setenv(v, "")
	}
	if got := kafkaSASLSSLBrokers()[0]; got != "127.0.0.1:59094" {
		t.Errorf("SASL_SSL broker = %q, want 127.0.0.1:59094", got)
	}
	if got := postgresTLSAddr(); got != "127.0.0.1:55433" {
		t.Errorf("postgres_tls addr = %q, want 127.0.0.1:55433", got)
	}
	if got := mariadbTLSAddr(); got != "127.0.0.1:53307" {
		t.Errorf("mariadb_tls addr = %q, want 127.0.0.1:53307", got)
	}
	if got := tlsFiles().CA; got != "/var/tmp/cdcd-e2e/certs/ca.pem" {
		t.Errorf("CA = %q, want /var/tmp/cdcd-e2e/certs/ca.pem", got)
	}
}

func TestTLSFilesFollowStateDir(t *testing.T) {
	t.Setenv("CDCD_E2E_DIR", "/tmp/elsewhere")
	f := tlsFiles()
	for name, path := range map[string]string{
		"CA": f.CA, "ClientKey": f.ClientKey, "TruststoreJKS": f.TruststoreJKS, "ClientKeystoreP12": f.ClientKeystoreP12, "OtherCA": f.OtherCA,
	} {
		if filepath.Dir(path) != "/tmp/elsewhere/certs" {
			t.Errorf("%s = %q, want it in /tmp/elsewhere/certs", name, path)
		}
	}
	if f.StorePassword != StorePassword {
		t.Errorf("StorePassword = %q", f.StorePassword)
	}
}

func TestPostgresTLSConnStrings(t *testing.T) {
	t.Setenv("CDCD_E2E_DIR", "/tmp/st")
	p := TLSPostgres{Addr: "127.0.0.1:6005", User: SecureUser, Password: SecurePassword, TLS: tlsFiles()}
	for name, tc := range map[string]struct {
		dsn        string
		user, pass string
		cert       bool
	}{
		"DSN":      {p.DSN("db1"), SecureUser, SecurePassword, false},
		"AdminDSN": {p.AdminDSN("db1"), PostgresTLSAdminUser, PostgresTLSAdminPassword, false},
		"CertDSN":  {p.CertDSN("db1"), CertUser, "", true},
	} {
		// pgx.ParseConfig would read the files the parameters name; the URL says it all.
		u, err := url.Parse(tc.dsn)
		if err != nil {
			t.Fatalf("%s %q: %v", name, tc.dsn, err)
		}
		pass, _ := u.User.Password()
		if u.Scheme != "postgres" || u.Host != "127.0.0.1:6005" || u.Path != "/db1" || u.User.Username() != tc.user || pass != tc.pass {
			t.Errorf("%s %q: want postgres://%s:%s@127.0.0.1:6005/db1", name, tc.dsn, tc.user, tc.pass)
		}
		q := u.Query()
		if q.Get("sslmode") != "verify-full" || q.Get("sslrootcert") != "/tmp/st/certs/ca.pem" {
			t.Errorf("%s %q: want sslmode=verify-full and the CA as sslrootcert", name, tc.dsn)
		}
		if got := q.Get("sslcert") != "" && q.Get("sslkey") != ""; got != tc.cert {
			t.Errorf("%s %q: client certificate given = %v, want %v", name, tc.dsn, got, tc.cert)
		}
	}
	if dsn := p.ConnString("u", "p", "d", url.Values{"sslmode": {"disable"}}); !strings.Contains(dsn, "sslmode=disable") || strings.Contains(dsn, "verify-full") {
		t.Errorf("ConnString with sslmode=disable = %q", dsn)
	}
}

func TestKafkaGoSASLMechanismNames(t *testing.T) {
	for _, name := range KafkaSASLMechanisms {
		m, err := KafkaGoSASL(name, "u", "p")
		if err != nil || m.Name() != name {
			t.Errorf("KafkaGoSASL(%q) = %v, %v", name, m, err)
		}
	}
	if _, err := KafkaGoSASL("GSSAPI", "u", "p"); err == nil {
		t.Error("KafkaGoSASL(GSSAPI) did not fail")
	}
}

// TestKafkaGoSCRAMClientFirstMessage checks that the adapter hands kafka-go franz-go's SCRAM
// client-first message (RFC 5802: gs2 header, user name, nonce).
func TestKafkaGoSCRAMClientFirstMessage(t *testing.T) {
	m, err := KafkaGoSASL("SCRAM-SHA-512", "cdcd", "secret")
	if err != nil {
		t.Fatal(err)
	}
	sm, first, err := m.Start(context.Background())
	if err != nil || sm == nil {
		t.Fatalf("Start: %v", err)
	}
	if !strings.HasPrefix(string(first), "n,,n=cdcd,r=") {
		t.Errorf("client-first message %q", first)
	}
	// A server-first message with another nonce must be refused, not answered.
	if _, _, err := sm.Next(context.Background(), []byte("r=other,s=c2FsdA==,i=4096")); err == nil {
		t.Error("the SCRAM session accepted a server nonce that does not extend the client's")
	}
}

// runRequireSecure runs requireSecureService on a recordingTB (see testenv_test.go).
func runRequireSecure(addr string, ping func(context.Context, TLSFiles) error) *recordingTB {
	rec := &recordingTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		requireSecureService(rec, "postgres_tls", addr, ping)
	}()
	<-done
	return rec
}

func TestRequireSecureServiceSkipsWithoutTestBed(t *testing.T) {
	mustNotPing := func(context.Context, TLSFiles) error { panic("pinged") }
	t.Run("CDCD_E2E unset", func(t *testing.T) {
		t.Setenv(EnableEnv, "")
		if rec := runRequireSecure("127.0.0.1:1", mustNotPing); !rec.skipped {
			t.Errorf("not skipped: %+v", rec)
		}
	})
	t.Run("certificates not made", func(t *testing.T) {
		t.Setenv(EnableEnv, "1")
		t.Setenv("CDCD_E2E_DIR", t.TempDir())
		if rec := runRequireSecure("127.0.0.1:1", mustNotPing); !rec.skipped || !strings.Contains(rec.message, "not made") {
			t.Errorf("want a skip saying the certificates are not made: %+v", rec)
		}
	})
	t.Run("nothing listening", func(t *testing.T) {
		t.Setenv(EnableEnv, "1")
		dir := t.TempDir()
		t.Setenv("CDCD_E2E_DIR", dir)
		if err := os.MkdirAll(filepath.Join(dir, "certs"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "certs", ".complete"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		// Port 1 (tcpmux) is not served here: the dial is refused.
		if rec := runRequireSecure("127.0.0.1:1", mustNotPing); !rec.skipped || !strings.Contains(rec.message, "nothing listens") {
			t.Errorf("want a skip saying nothing listens: %+v", rec)
		}
	})
}

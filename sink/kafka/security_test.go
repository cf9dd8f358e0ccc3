package kafka

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/cdcd/cdcd/sink"
	"github.com/cdcd/cdcd/source"
)

// testSecret is the password of every test account; no error or log line may carry it.
const testSecret = "cdcd-s3cret-pw"

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  string
}

func newTestCA(t *testing.T, cn string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}
}

// issue signs a certificate for the host names and IPs given (none: a client certificate) and returns it
// with its PEM chain and PKCS #8 key.
func (ca *testCA) issue(t *testing.T, cn string, dns []string, ips []net.IP) (tls.Certificate, string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: dns, IPAddresses: ips, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	chain := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}))
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, chain, keyPEM
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func jaas(module, user, password string) string {
	return module + ` required username="` + user + `" password="` + password + `";`
}

// secureFixture is a fake broker with TLS and/or SASL, and the logs of the clients under test.
type secureFixture struct {
	cluster *kfake.Cluster
	brokers []string
	logs    *bytes.Buffer
	log     *slog.Logger
}

func newSecureFixture(t *testing.T, opts ...kfake.Opt) *secureFixture {
	t.Helper()
	c := newFakeCluster(t, append(opts, kfake.SeedTopics(1, "t"))...)
	var logs bytes.Buffer
	return &secureFixture{cluster: c, brokers: c.ListenAddrs(), logs: &logs, log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
}

// produceOne sends one record with a Writer of producer settings and returns the error of Send or done.
func (f *secureFixture) produceOne(t *testing.T, producer map[string]string) error {
	t.Helper()
	w, err := NewWriter(Config{Brokers: f.brokers, ClientID: "test", Producer: producer}, f.log)
	if err != nil {
		return err
	}
	defer w.Close(context.Background())
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	if err := w.Send(ctx, []sink.Record{{Topic: "t", Key: []byte("k"), Value: []byte("v")}}, func(err error) { done <- err }); err != nil {
		return err
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// roundTripLog appends a record to a durable log through a transport of settings and reads it back.
func (f *secureFixture) roundTripLog(t *testing.T, settings map[string]string) error {
	t.Helper()
	transport, err := NewTransportFrom(settings, "history")
	if err != nil {
		return err
	}
	defer transport.CloseIdleConnections()
	o := NewLogOpener(LogOpenerConfig{Brokers: f.brokers, Transport: transport, Log: f.log})
	o.retryTimeout = 2 * time.Second
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	l, err := o.OpenLog(ctx, source.LogSpec{Name: "history", Settings: logHistorySettings})
	if err != nil {
		return err
	}
	defer l.Close(ctx)
	if err := l.Append(ctx, []byte("ddl")); err != nil {
		return err
	}
	recs, err := l.ReadAll(ctx)
	if err == nil && (len(recs) != 1 || string(recs[0]) != "ddl") {
		t.Errorf("read back %q, want [ddl]", recs)
	}
	return err
}

// noSecret fails the test when err or the logs carry the password.
func (f *secureFixture) noSecret(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), testSecret) {
		t.Errorf("the error shows the password: %v", err)
	}
	if strings.Contains(f.logs.String(), testSecret) {
		t.Errorf("the logs show the password:\n%s", f.logs.String())
	}
}

// SASL PLAIN and SCRAM against an in-process broker that requires them: the producer and a durable
// log authenticate; a wrong password fails at once with an error naming the mechanism and the user.
func TestSASLMechanisms(t *testing.T) {
	for _, mech := range []struct{ name, module string }{
		{"PLAIN", plainLoginModule},
		{"SCRAM-SHA-256", scramLoginModule},
		{"SCRAM-SHA-512", scramLoginModule},
	} {
		t.Run(mech.name, func(t *testing.T) {
			f := newSecureFixture(t, kfake.EnableSASL(), kfake.Superuser(mech.name, "cdcd", testSecret))
			settings := map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mech.name,
				"sasl.jaas.config": jaas(mech.module, "cdcd", testSecret)}
			if err := f.produceOne(t, settings); err != nil {
				t.Fatalf("producing: %v", err)
			}
			if err := f.roundTripLog(t, settings); err != nil {
				t.Fatalf("durable log: %v", err)
			}

			// kfake closes the connection on a wrong password; Kafka answers SASL_AUTHENTICATION_FAILED
			// first. This answers as Kafka does where kfake would refuse: PLAIN's one message when its
			// password is not the account's, SCRAM's final message (its proof) of any connection from now on.
			f.cluster.ControlKey(int16(kmsg.SASLAuthenticate), func(req kmsg.Request) (kmsg.Response, error, bool) {
				f.cluster.KeepControl()
				r := req.(*kmsg.SASLAuthenticateRequest)
				if mech.name == "PLAIN" && bytes.HasSuffix(r.SASLAuthBytes, []byte("\x00"+testSecret)) ||
					mech.name != "PLAIN" && !bytes.HasPrefix(r.SASLAuthBytes, []byte("c=")) {
					return nil, nil, false
				}
				resp := r.ResponseKind().(*kmsg.SASLAuthenticateResponse)
				resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
				resp.ErrorMessage = kmsg.StringPtr("Authentication failed during authentication due to invalid credentials with SASL mechanism " + mech.name)
				return resp, nil, true
			})
			settings["sasl.jaas.config"] = jaas(mech.module, "cdcd", testSecret+"-wrong")
			for what, err := range map[string]error{"producer": f.produceOne(t, settings), "durable log": f.roundTripLog(t, settings)} {
				if err == nil || !errors.Is(err, kafkago.SASLAuthenticationFailed) ||
					!strings.Contains(err.Error(), "SASL/"+mech.name+` as user "cdcd": authentication failed`) {
					t.Errorf("%s with a wrong password: got %v, want a SASL failure naming %s and the user", what, err, mech.name)
				}
				f.noSecret(t, err)
			}
		})
	}
}

// TLS with a CA made here: trusted (PEM file, inline PEM), with a client certificate from an inline
// keystore, SASL_SSL with SCRAM-SHA-512; refused for an untrusted CA and for a certificate of another
// host, which ssl.endpoint.identification.algorithm= accepts.
func TestTLS(t *testing.T) {
	ca := newTestCA(t, "cdcd test CA")
	server, _, _ := ca.issue(t, "broker", []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")})
	_, clientChain, clientKey := ca.issue(t, "client", nil, nil)
	wrongHost, _, _ := ca.issue(t, "elsewhere", []string{"wrong.example"}, nil)
	caFile := writeFile(t, "ca.pem", ca.pem)
	otherCAFile := writeFile(t, "other-ca.pem", newTestCA(t, "another CA").pem)

	serverTLS := func(cert tls.Certificate, clientCAs *x509.CertPool) *tls.Config {
		cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		if clientCAs != nil {
			cfg.ClientCAs, cfg.ClientAuth = clientCAs, tls.RequireAndVerifyClientCert
		}
		return cfg
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	trusted := map[string]string{"security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": caFile}

	t.Run("trusted", func(t *testing.T) {
		f := newSecureFixture(t, kfake.TLS(serverTLS(server, nil)))
		if err := f.produceOne(t, trusted); err != nil {
			t.Fatal(err)
		}
		if err := f.roundTripLog(t, map[string]string{"security.protocol": "ssl", "ssl.truststore.type": "PEM", "ssl.truststore.certificates": ca.pem}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("mutual TLS and SASL_SSL with SCRAM-SHA-512", func(t *testing.T) {
		f := newSecureFixture(t, kfake.TLS(serverTLS(server, pool)), kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "cdcd", testSecret))
		settings := map[string]string{"security.protocol": "SASL_SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": caFile,
			"ssl.keystore.type": "PEM", "ssl.keystore.key": clientKey, "ssl.keystore.certificate.chain": clientChain,
			"sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": jaas(scramLoginModule, "cdcd", testSecret)}
		if err := f.produceOne(t, settings); err != nil {
			t.Fatal(err)
		}
		delete(settings, "ssl.keystore.key")
		delete(settings, "ssl.keystore.certificate.chain")
		if err := f.produceOne(t, settings); err == nil || !errors.Is(err, ErrSecurity) || !strings.Contains(err.Error(), "refused the handshake") {
			t.Errorf("a client without its certificate: got %v, want the refused handshake explained, at once", err)
		}
		f.noSecret(t, nil)
	})
	t.Run("untrusted CA", func(t *testing.T) {
		f := newSecureFixture(t, kfake.TLS(serverTLS(server, nil)))
		untrusted := map[string]string{"security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": otherCAFile}
		for what, err := range map[string]error{"producer": f.produceOne(t, untrusted), "durable log": f.roundTripLog(t, untrusted)} {
			if err == nil || !strings.Contains(err.Error(), "not signed by a CA the client trusts") {
				t.Errorf("%s: got %v, want the untrusted CA explained", what, err)
			}
		}
	})
	t.Run("hostname mismatch", func(t *testing.T) {
		f := newSecureFixture(t, kfake.TLS(serverTLS(wrongHost, nil)))
		for _, algorithm := range []string{"", "https", "HTTPS"} {
			settings := map[string]string{"security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": caFile}
			if algorithm != "" {
				settings["ssl.endpoint.identification.algorithm"] = algorithm
			}
			if err := f.produceOne(t, settings); err == nil || !strings.Contains(err.Error(), "does not name the host dialled") {
				t.Errorf("algorithm %q: got %v, want the host name refused", algorithm, err)
			}
		}
		off := map[string]string{"security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": caFile, "ssl.endpoint.identification.algorithm": ""}
		if err := f.produceOne(t, off); err != nil {
			t.Errorf("ssl.endpoint.identification.algorithm= (no host name check): %v", err)
		}
		// Turning the host name check off still verifies the chain.
		off["ssl.truststore.location"] = otherCAFile
		if err := f.produceOne(t, off); err == nil {
			t.Error("without the host name check, a certificate of an untrusted CA got through")
		}
	})
	t.Run("TLS never falls back to plaintext", func(t *testing.T) {
		// The broker closes the connection on a ClientHello; the client retries (a closed connection may
		// be a restarting broker, as to Kafka's clients) but never sends a request in plaintext.
		f := newSecureFixture(t)
		if err := f.roundTripLog(t, trusted); err == nil {
			t.Fatal("an SSL client wrote to a PLAINTEXT broker")
		}
	})
}

func TestParseClientSecurityRefusesWhatItDoesNotHonour(t *testing.T) {
	plainJAAS := jaas(plainLoginModule, "u", testSecret)
	tests := []struct {
		settings map[string]string
		key      string
		want     string
	}{
		{map[string]string{"security.protocol": "TLS"}, "security.protocol", "not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"},
		{map[string]string{"ssl.provider": "SunJSSE"}, "ssl.provider", "cdcd does not implement it"},
		{map[string]string{"ssl.engine.factory.class": "com.example.Engine"}, "ssl.engine.factory.class", "Java class"},
		{map[string]string{"security.providers": "com.example.Provider"}, "security.providers", "cdcd does not implement it"},
		{map[string]string{"ssl.truststore.something": "x"}, "ssl.truststore.something", "not a Kafka client security setting cdcd implements"},
		{map[string]string{"sasl.kerberos.service.name": "kafka"}, "sasl.kerberos.service.name", "Kerberos"},
		{map[string]string{"ssl.client.auth": "required"}, "ssl.client.auth", "server setting"},
		{map[string]string{"ssl.keymanager.algorithm": "IbmX509"}, "ssl.keymanager.algorithm", "not supported"},
		{map[string]string{"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": "ldaps"}, "ssl.endpoint.identification.algorithm", "not supported"},
		{map[string]string{"security.protocol": "SSL", "ssl.enabled.protocols": "TLSv1.1,TLSv1.2"}, "ssl.enabled.protocols", `"TLSv1.1" is not supported`},
		{map[string]string{"security.protocol": "SSL", "ssl.cipher.suites": "TLS_RSA_WITH_NULL_SHA"}, "ssl.cipher.suites", "not a cipher suite"},
		{map[string]string{"security.protocol": "SSL", "ssl.truststore.location": "/nonexistent/trust.jks", "ssl.truststore.password": testSecret}, "ssl.truststore.location", "/nonexistent/trust.jks"},
		{map[string]string{"sasl.mechanism": "PLAIN", "sasl.jaas.config": plainJAAS}, "sasl.jaas.config", "security.protocol=PLAINTEXT does not authenticate with SASL"},
		{map[string]string{"security.protocol": "SASL_SSL", "sasl.jaas.config": plainJAAS}, "sasl.mechanism", "GSSAPI (Kerberos), is not implemented"},
		{map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "GSSAPI", "sasl.jaas.config": plainJAAS}, "sasl.mechanism", "GSSAPI (Kerberos) is not implemented"},
		{map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "AWS_MSK_IAM", "sasl.jaas.config": "software.amazon.msk.auth.iam.IAMLoginModule required awsDebugCreds=true;"}, "sasl.jaas.config", "option awsDebugCreds: cdcd does not log the caller identity"},
		{map[string]string{"sasl.client.callback.handler.class": "com.example.Handler"}, "sasl.client.callback.handler.class", "com.example.Handler is not supported: SASL callback handlers are Java classes"},
		{map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}, "sasl.jaas.config", "is not set"},
		{map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": plainJAAS}, "sasl.jaas.config", "needs org.apache.kafka.common.security.scram.ScramLoginModule"},
		{map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": plainLoginModule + ` required username="u" password="` + testSecret + `"`}, "sasl.jaas.config", "not terminated by semi-colon"},
		{map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": plainLoginModule + ` required username="u" password=` + "9" + testSecret + `;`}, "sasl.jaas.config", "value not specified for key 'password'"},
		{map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": plainLoginModule + ` required username="u" password="` + testSecret + `" serviceName="kafka";`}, "sasl.jaas.config", "option serviceName is not one"},
		{map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-256", "sasl.jaas.config": scramLoginModule + ` required username="u" password="` + testSecret + `" tokenauth=true;`}, "sasl.jaas.config", "delegation tokens"},
		{map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": plainJAAS, "sasl.login.callback.handler.class": "com.example.Handler"}, "sasl.login.callback.handler.class", "not supported"},
		{map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER", "sasl.jaas.config": oauthLoginModule + " required;"}, "sasl.login.callback.handler.class", "unsecured test login"},
	}
	for _, tt := range tests {
		_, err := ParseClientSecurity(tt.settings)
		var se *SettingError
		switch {
		case err == nil || !strings.Contains(err.Error(), tt.want):
			t.Errorf("%v: got %v, want an error with %q", tt.settings, err, tt.want)
		case !errors.As(err, &se) || !strings.Contains(err.Error(), tt.key+":") && !strings.Contains(err.Error(), tt.key+" "):
			t.Errorf("%v: got %v, want a *SettingError naming %s", tt.settings, err, tt.key)
		case strings.Contains(err.Error(), testSecret):
			t.Errorf("%v: the error shows the password: %v", tt.settings, err)
		}
	}
}

func TestParseClientSecurityAccepts(t *testing.T) {
	for _, settings := range []map[string]string{
		{},
		// Beside PLAINTEXT, ssl.* is unused as in Kafka (at the top of a worker file it may be the REST listener's).
		{"ssl.truststore.location": "/the/rest/listeners.jks", "ssl.keystore.password": testSecret},
		{"ssl.endpoint.identification.algorithm": "", "ssl.keymanager.algorithm": "SunX509", "ssl.trustmanager.algorithm": "PKIX",
			"ssl.provider": "", "security.protocol": "SSL", "ssl.protocol": "TLSv1.2", "ssl.enabled.protocols": "TLSv1.2",
			"ssl.cipher.suites": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"},
		{"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": jaas(scramLoginModule, "cdcd", testSecret),
			"sasl.login.refresh.buffer.seconds": "300"},
	} {
		sec, err := ParseClientSecurity(settings)
		if err != nil {
			t.Errorf("%v: %v", settings, err)
		}
		if strings.Contains(sec.String(), testSecret) {
			t.Errorf("String shows the password: %s", sec)
		}
	}
	sec, err := ParseClientSecurity(map[string]string{"security.protocol": "SSL", "ssl.protocol": "TLSv1.2", "ssl.endpoint.identification.algorithm": ""})
	if err != nil || sec.TLS == nil || sec.TLS.MaxVersion != tls.VersionTLS12 || !sec.TLS.InsecureSkipVerify || sec.TLS.VerifyConnection == nil {
		t.Errorf("ssl.protocol=TLSv1.2 without host name check: got %+v, %v", sec.TLS, err)
	}
}

// Kafka's JaasConfig reads StreamTokenizer tokens: quoted strings with escapes, unquoted words, comments.
func TestParseJAAS(t *testing.T) {
	tests := []struct {
		text string
		want map[string]string
	}{
		{`org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="a b;c=d";`,
			map[string]string{"username": "alice", "password": "a b;c=d"}},
		{"org.apache.kafka.common.security.scram.ScramLoginModule REQUIRED\n  username=alice_1$-x // a comment\n  password='it\\'s \\\"q\\\" \\\\ \\t' /* another */ ;",
			map[string]string{"username": "alice_1$-x", "password": "it's \"q\" \\ \t"}},
		{`org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule optional clientId=app.v2 scope="a b" extension_traceId="x";`,
			map[string]string{"clientId": "app.v2", "scope": "a b", "extension_traceId": "x"}},
	}
	for _, tt := range tests {
		e, err := parseJAAS(tt.text)
		if err != nil {
			t.Errorf("%s: %v", tt.text, err)
			continue
		}
		if len(e.options) != len(tt.want) {
			t.Errorf("%s: got %q, want %q", tt.text, e.options, tt.want)
		}
		for k, v := range tt.want {
			if e.options[k] != v {
				t.Errorf("%s: option %s = %q, want %q", tt.text, k, e.options[k], v)
			}
		}
	}
	for text, want := range map[string]string{
		"":                                    "login module not specified",
		"M":                                   "control flag not specified",
		"M sometimes;":                        "invalid login module control flag",
		`M required username="u"`:             "not terminated by semi-colon",
		`M required username=;`:               "value not specified for key 'username'",
		`M required password=123abc;`:         "value not specified for key 'password'",
		`M required u="x"; N required u="y";`: "2 login modules",
	} {
		if _, err := parseJAAS(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error with %q", text, err, want)
		}
	}
}

// The schema history's schema.history.internal.producer.* and .consumer.* security keys: each client that
// names any gets a transport of exactly those; one that names none uses the opener's transport.
func TestLogClientSecurity(t *testing.T) {
	f := newSecureFixture(t, kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "cdcd", testSecret))
	scram := map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
		"sasl.jaas.config": jaas(scramLoginModule, "cdcd", testSecret)}
	open := func(o *LogOpener, spec source.LogSpec) error {
		o.retryTimeout, o.openTimeout = time.Second, 3*time.Second
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		l, err := o.OpenLog(ctx, spec)
		if err != nil {
			return err
		}
		defer l.Close(ctx)
		if err := l.Append(ctx, []byte("ddl")); err != nil {
			return err
		}
		_, err = l.ReadAll(ctx)
		return err
	}
	plain := NewLogOpener(LogOpenerConfig{Brokers: f.brokers, Log: f.log})
	if err := open(plain, source.LogSpec{Name: "h1", ProducerSettings: scram, ConsumerSettings: scram}); err != nil {
		t.Fatalf("history clients with their own SCRAM settings: %v", err)
	}
	// Only the producer authenticates: the consumer has the opener's plaintext transport, which the broker
	// refuses, so the producer's settings did not leak into the consumer.
	if err := open(plain, source.LogSpec{Name: "h2", ProducerSettings: scram}); err == nil {
		t.Error("a consumer without security settings read from a SASL broker through a plaintext opener")
	}
	worker, err := NewTransportFrom(scram, "worker")
	if err != nil {
		t.Fatal(err)
	}
	defer worker.CloseIdleConnections()
	secured := NewLogOpener(LogOpenerConfig{Brokers: f.brokers, Transport: worker, Log: f.log})
	if err := open(secured, source.LogSpec{Name: "h3"}); err != nil {
		t.Errorf("a history without settings of its own, on the worker's transport: %v", err)
	}

	bad := source.LogSpec{Name: "h4", ProducerSettings: map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "GSSAPI"},
		ConsumerSettings: map[string]string{"ssl.engine.factory.class": "x", "fetch.min.bytes": "1"}}
	err = secured.CheckLogSpec(bad)
	for _, want := range []string{"producer.sasl.mechanism: GSSAPI", "consumer.ssl.engine.factory.class", "consumer.fetch.min.bytes: cdcd does not implement"} {
		if err == nil || !strings.Contains(err.Error(), want) || !source.IsFatal(err) {
			t.Errorf("CheckLogSpec: got %v, want a fatal error with %q", err, want)
		}
	}
	f.noSecret(t, err)
}

// Topic creation goes through the admin client, which has Connect's admin settings, not the producer's.
func TestTopicCreationUsesTheAdminSecurity(t *testing.T) {
	f := newSecureFixture(t, kfake.EnableSASL(), kfake.Superuser("PLAIN", "cdcd", testSecret))
	login := map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
		"sasl.jaas.config": jaas(plainLoginModule, "cdcd", testSecret)}
	creation, err := ParseTopicCreation(nil, map[string]string{"topic.creation.default.partitions": "1", "topic.creation.default.replication.factor": "-1"})
	if err != nil {
		t.Fatal(err)
	}
	create := func(admin map[string]string, topic string) error {
		w, err := NewWriter(Config{Brokers: f.brokers, Producer: login, Admin: admin, AdminClientID: "admin", TopicCreation: creation}, f.log)
		if err != nil {
			return err
		}
		defer w.Close(context.Background())
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		done := make(chan error, 1)
		if err := w.Send(ctx, []sink.Record{{Topic: topic, Value: []byte("v")}}, func(err error) { done <- err }); err != nil {
			return err
		}
		return <-done
	}
	if err := create(login, "created"); err != nil {
		t.Fatalf("admin with the SASL settings: %v", err)
	}
	if err := create(map[string]string{}, "not-created"); err == nil {
		t.Error("an admin client without the SASL settings created a topic: the producer's settings were used")
	}
}

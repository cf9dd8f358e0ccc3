package tlsconf

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// newCA returns a self-signed CA, or with parent an intermediate CA signed by it.
func newCA(t *testing.T, name string, parent *testCA) *testCA {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	cert, key := sign(t, tmpl, parent)
	return &testCA{cert: cert, key: key}
}

// leaf is a server certificate for dnsName signed by ca.
func (ca *testCA) leaf(t *testing.T, dnsName string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	return sign(t, &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: dnsName}, DNSNames: []string{dnsName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, ca)
}

func sign(t *testing.T, tmpl *x509.Certificate, parent *testCA) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	issuer, issuerKey := tmpl, key
	if parent != nil {
		issuer, issuerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, issuer, &key.PublicKey, issuerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func poolOf(certs ...*x509.Certificate) *x509.CertPool {
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool
}

// TestClientConfigDefaults: without keys, Kafka's defaults: the system's roots, no client certificate,
// TLS 1.2 to 1.3, the host name verified.
func TestClientConfigDefaults(t *testing.T) {
	cfg, err := ClientConfig(Map(nil), false)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RootCAs != nil || len(cfg.Certificates) != 0 || cfg.MinVersion != tls.VersionTLS12 || cfg.MaxVersion != tls.VersionTLS13 ||
		cfg.InsecureSkipVerify || cfg.VerifyConnection != nil {
		t.Errorf("defaults: %+v", cfg)
	}
}

// TestClientConfigStoresAndVersions: the stores become the roots and the client certificate, and
// ssl.protocol and ssl.enabled.protocols bound the versions.
func TestClientConfigStoresAndVersions(t *testing.T) {
	stores := map[string]string{
		TruststoreType: "PEM", TruststoreLocation: "testdata/server-cert.pem",
		KeystoreType: "PKCS12", KeystoreLocation: "testdata/server.p12", KeystorePassword: "keystorepw",
	}
	tests := []struct {
		protocol, enabled string
		lowest, highest   uint16
	}{
		{"", "", tls.VersionTLS12, tls.VersionTLS13},
		{"TLS", " TLSv1.2 , TLSv1.3 ", tls.VersionTLS12, tls.VersionTLS13},
		{"TLSv1.2", "", tls.VersionTLS12, tls.VersionTLS12},
		{" TLSv1.3 ", "TLSv1.3", tls.VersionTLS13, tls.VersionTLS13},
		{"TLSv1.3", "TLSv1.2", tls.VersionTLS12, tls.VersionTLS12},
	}
	for _, tt := range tests {
		settings := map[string]string{Protocol: tt.protocol, EnabledProtocols: tt.enabled}
		for k, v := range stores {
			settings[k] = v
		}
		cfg, err := ClientConfig(Map(settings), false)
		if err != nil {
			t.Errorf("%q, %q: %v", tt.protocol, tt.enabled, err)
			continue
		}
		if cfg.MinVersion != tt.lowest || cfg.MaxVersion != tt.highest {
			t.Errorf("%q, %q: versions %x..%x, want %x..%x", tt.protocol, tt.enabled, cfg.MinVersion, cfg.MaxVersion, tt.lowest, tt.highest)
		}
		if cfg.RootCAs == nil || len(cfg.Certificates) != 1 || cfg.Certificates[0].PrivateKey == nil {
			t.Errorf("%q, %q: the truststore is not the roots or the keystore not the client certificate", tt.protocol, tt.enabled)
		}
	}
}

// TestClientConfigRefusals: every key that cannot be honoured is reported, each a *KeyError on the key to
// change (a store's location, else its inline PEM), none with a password.
func TestClientConfigRefusals(t *testing.T) {
	const secret = "not-the-password"
	tests := []struct {
		settings map[string]string
		keys     []string
		want     string
	}{
		{map[string]string{Protocol: "SSLv3"}, []string{Protocol}, `ssl.protocol="SSLv3" is not supported`},
		{map[string]string{EnabledProtocols: "TLSv1.1,TLSv1.2,SSLv3"}, []string{EnabledProtocols, EnabledProtocols}, `ssl.enabled.protocols: "TLSv1.1" is not supported`},
		{map[string]string{Protocol: "TLSv1.2", EnabledProtocols: "TLSv1.3"}, []string{EnabledProtocols}, "ssl.enabled.protocols enables no version ssl.protocol=TLSv1.2 allows"},
		{map[string]string{EndpointIdentificationAlgorithm: "ldaps"}, []string{EndpointIdentificationAlgorithm}, `ssl.endpoint.identification.algorithm="ldaps" is not supported`},
		{map[string]string{TruststoreLocation: "testdata/trust.jks", TruststorePassword: secret}, []string{TruststoreLocation}, "ssl.truststore.location testdata/trust.jks"},
		{map[string]string{TruststoreType: "JKS", TruststoreCertificates: "x"}, []string{TruststoreCertificates}, "ssl.truststore.certificates is for ssl.truststore.type=PEM only"},
		{map[string]string{KeystoreLocation: "testdata/server.p12", KeystoreType: "PKCS12", KeystorePassword: secret}, []string{KeystoreLocation}, "ssl.keystore.location testdata/server.p12"},
		{map[string]string{KeystoreType: "PEM", KeystoreKey: "-----BEGIN PRIVATE KEY-----"}, []string{KeystoreKey}, "ssl.keystore.key is set, but ssl.keystore.certificate.chain is not"},
		{map[string]string{Protocol: "SSLv3", EndpointIdentificationAlgorithm: "ldaps", TruststoreLocation: "testdata/missing.pem", TruststoreType: "PEM"},
			[]string{TruststoreLocation, Protocol, EndpointIdentificationAlgorithm}, "no such file"},
	}
	for _, tt := range tests {
		set := tt.settings[EndpointIdentificationAlgorithm] != ""
		cfg, err := ClientConfig(Map(tt.settings), set)
		if cfg != nil || err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), secret) {
			t.Errorf("%v: got %v, want an error with %q and no password", tt.settings, err, tt.want)
			continue
		}
		var keys []string
		for _, ke := range KeyErrors(err) {
			keys = append(keys, ke.Key)
		}
		if !slices.Equal(keys, tt.keys) {
			t.Errorf("%v: refused keys %q, want %q", tt.settings, keys, tt.keys)
		}
		// Through Renamed, as callers with their own key names see it.
		if got := KeyErrors(Renamed(err, map[string]string{Protocol: "x.protocol"})); len(got) != len(tt.keys) {
			t.Errorf("%v: KeyErrors through Renamed found %d, want %d", tt.settings, len(got), len(tt.keys))
		}
	}
	if KeyErrors(nil) != nil || KeyErrors(errors.New("other")) != nil {
		t.Error("KeyErrors found key errors in an error that holds none")
	}
}

// TestVerifyChain: the chain is verified against the roots through the intermediates the server sends,
// whatever name the certificate holds; a failure is the *tls.CertificateVerificationError Go's own
// verification returns.
func TestVerifyChain(t *testing.T) {
	root := newCA(t, "root", nil)
	intermediate := newCA(t, "intermediate", root)
	leaf, _ := intermediate.leaf(t, "elsewhere.example")
	other := newCA(t, "other", nil)

	verify := VerifyChain(poolOf(root.cert))
	if err := verify(tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf, intermediate.cert}}); err != nil {
		t.Errorf("a chain through its intermediate: %v", err)
	}
	var unknown x509.UnknownAuthorityError
	var verr *tls.CertificateVerificationError
	err := verify(tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}})
	if !errors.As(err, &verr) || !errors.As(err, &unknown) {
		t.Errorf("without the intermediate: got %v, want a CertificateVerificationError of an unknown authority", err)
	}
	err = VerifyChain(poolOf(other.cert))(tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf, intermediate.cert}})
	if !errors.As(err, &verr) || !errors.As(err, &unknown) || len(verr.UnverifiedCertificates) != 2 {
		t.Errorf("another CA: got %v, want a CertificateVerificationError of an unknown authority", err)
	}
	if err := verify(tls.ConnectionState{}); err == nil || !strings.Contains(err.Error(), "no certificate") {
		t.Errorf("no certificate: got %v", err)
	}
}

// TestClientConfigHostNameVerification: handshakes with a server whose certificate names another host
// than the one dialled. Unset or https, the host name is verified; set empty, only the chain, which must
// still be signed by a CA of the truststore.
func TestClientConfigHostNameVerification(t *testing.T) {
	ca := newCA(t, "ca", nil)
	leaf, key := ca.leaf(t, "elsewhere.example")
	server := &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leaf.Raw}, PrivateKey: key}}}
	handshake := func(algorithm string, set bool, trusted *testCA) error {
		cfg, err := ClientConfig(Map(map[string]string{EndpointIdentificationAlgorithm: algorithm,
			TruststoreType: "PEM", TruststoreLocation: pemFile(t, trusted.cert)}), set)
		if err != nil {
			t.Fatal(err)
		}
		cfg.ServerName = "db.example"
		return tryHandshake(t, cfg, server)
	}
	other := newCA(t, "other", nil)
	tests := []struct {
		name      string
		algorithm string
		set       bool
		checkHost bool
	}{
		{"unset", "", false, true},
		{"https", "HTTPS", true, true},
		{"empty", " ", true, false},
	}
	for _, tt := range tests {
		var hostname x509.HostnameError
		var verr *tls.CertificateVerificationError
		err := handshake(tt.algorithm, tt.set, ca)
		switch {
		case tt.checkHost && !errors.As(err, &hostname):
			t.Errorf("%s: got %v, want a host name error", tt.name, err)
		case !tt.checkHost && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		}
		if err := handshake(tt.algorithm, tt.set, other); !errors.As(err, &verr) {
			t.Errorf("%s, another CA: got %v, want the chain refused", tt.name, err)
		}
	}
}

// pemFile writes cert to a PEM file in the test's directory.
func pemFile(t *testing.T, cert *x509.Certificate) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(name, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

// tryHandshake runs a TLS handshake between client and server over loopback TCP (a pipe would deadlock:
// a client that refuses the certificate writes its alert while the server still writes its flight) and
// returns the client's error.
func tryHandshake(t *testing.T, client, server *tls.Config) error {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", server)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		_ = conn.(*tls.Conn).Handshake() // its error is the client's refusal, which the client reports
	}()
	conn, err := tls.Dial("tcp", ln.Addr().String(), client)
	if err == nil {
		conn.Close()
	}
	<-done
	return err
}

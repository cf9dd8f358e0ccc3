package avro

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// registerAndFetch registers a schema under a fresh subject of the registry at settings' URL, then reads
// the subject's latest version back: the schema must come back with the id it was registered under.
func registerAndFetch(t *testing.T, settings map[string]string) error {
	t.Helper()
	cfg, err := FromConfig(false, settings)
	if err != nil {
		return err
	}
	r, err := newRegistryClient(cfg)
	if err != nil {
		return err
	}
	r.sleep = func(context.Context, time.Duration) error { return nil }
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	subject := fmt.Sprintf("%s-%d-value", strings.ReplaceAll(t.Name(), "/", "."), time.Now().UnixNano())
	text := `{"type":"record","name":"R","namespace":"cdcd.tls","fields":[{"name":"id","type":"int"}]}`
	id, err := r.register(ctx, subject, text)
	if err != nil {
		return err
	}
	latest, err := r.latest(ctx, subject, text)
	if err != nil {
		return err
	}
	if latest != id {
		t.Errorf("registered under id %d, the latest version has id %d", id, latest)
	}
	return nil
}

func tlsSettings(registryURL string, kv ...string) map[string]string {
	s := map[string]string{ConfigURL: registryURL, "max.retries": "0"}
	for i := 0; i < len(kv); i += 2 {
		s[kv[i]] = kv[i+1]
	}
	return s
}

// Against the real Apicurio registry over HTTPS: each truststore format registers and fetches a schema;
// an untrusted CA and a host the certificate does not name fail, fatally, naming the key that fixes them.
func TestRealRegistryOverTLS(t *testing.T) {
	reg := testenv.RegistryTLS(t)
	certs := reg.TLS
	caPEM, err := os.ReadFile(certs.CA)
	if err != nil {
		t.Fatal(err)
	}
	trusted := map[string][]string{
		"JKS":                  {"schema.registry.ssl.truststore.location", certs.TruststoreJKS, "schema.registry.ssl.truststore.password", certs.StorePassword},
		"JKS without password": {"schema.registry.ssl.truststore.location", certs.TruststoreJKS},
		"PKCS12": {"schema.registry.ssl.truststore.location", certs.TruststoreP12, "schema.registry.ssl.truststore.password", certs.StorePassword,
			"schema.registry.ssl.truststore.type", "PKCS12"},
		"PEM":        {"schema.registry.ssl.truststore.location", certs.CA, "schema.registry.ssl.truststore.type", "PEM"},
		"inline PEM": {"schema.registry.ssl.truststore.certificates", string(caPEM), "schema.registry.ssl.truststore.type", "PEM"},
		"TLSv1.3 only": {"schema.registry.ssl.truststore.location", certs.CA, "schema.registry.ssl.truststore.type", "PEM",
			"schema.registry.ssl.enabled.protocols", "TLSv1.3"},
	}
	for name, kv := range trusted {
		t.Run(name, func(t *testing.T) {
			if err := registerAndFetch(t, tlsSettings(reg.URL, kv...)); err != nil {
				t.Fatal(err)
			}
		})
	}

	untrusted := map[string]map[string]string{
		"another CA": tlsSettings(reg.URL, "schema.registry.ssl.truststore.location", certs.OtherTruststoreJKS,
			"schema.registry.ssl.truststore.password", certs.StorePassword),
		"the system's roots": tlsSettings(reg.URL),
	}
	for name, settings := range untrusted {
		err := registerAndFetch(t, settings)
		if !errors.Is(err, ErrRegistry) || !isFatal(err) || !strings.Contains(err.Error(), "certificate is not trusted") ||
			!strings.Contains(err.Error(), "schema.registry.ssl.truststore.location") {
			t.Errorf("%s: got %v, want a fatal registry error naming schema.registry.ssl.truststore.location", name, err)
		}
	}

	// The registry speaks TLS 1.3 only (Quarkus's default): TLS 1.2 alone is refused, naming the keys.
	err = registerAndFetch(t, tlsSettings(reg.URL, "schema.registry.ssl.truststore.location", certs.CA, "schema.registry.ssl.truststore.type", "PEM",
		"schema.registry.ssl.protocol", "TLSv1.2", "schema.registry.ssl.enabled.protocols", "TLSv1.2"))
	if err == nil || !strings.Contains(err.Error(), "protocol version not supported") || !strings.Contains(err.Error(), "schema.registry.ssl.enabled.protocols") {
		t.Errorf("TLS 1.2 only: got %v, want the registry's refusal naming schema.registry.ssl.enabled.protocols", err)
	}

	// 127.0.0.2 reaches the registry (a relay to it) but is not a name its certificate holds.
	wrongHost := strings.Replace(reg.URL, reg.Host, relay(t, reg.Host), 1)
	trust := []string{"schema.registry.ssl.truststore.location", certs.CA, "schema.registry.ssl.truststore.type", "PEM"}
	err = registerAndFetch(t, tlsSettings(wrongHost, trust...))
	if !errors.Is(err, ErrRegistry) || !isFatal(err) || !strings.Contains(err.Error(), "does not name the host") ||
		!strings.Contains(err.Error(), "schema.registry.ssl.endpoint.identification.algorithm") {
		t.Errorf("a host the certificate does not name: got %v, want a fatal error naming schema.registry.ssl.endpoint.identification.algorithm", err)
	}
	if err := registerAndFetch(t, tlsSettings(wrongHost, append(trust, "schema.registry.ssl.endpoint.identification.algorithm", "")...)); err != nil {
		t.Errorf("without endpoint identification the chain alone is checked: %v", err)
	}
	err = registerAndFetch(t, tlsSettings(wrongHost, "schema.registry.ssl.endpoint.identification.algorithm", "",
		"schema.registry.ssl.truststore.location", certs.OtherCA, "schema.registry.ssl.truststore.type", "PEM"))
	if !strings.Contains(err.Error(), "certificate is not trusted") {
		t.Errorf("without endpoint identification an untrusted chain still fails: %v", err)
	}
}

// relay listens on 127.0.0.2 and copies each connection to target; it returns its host:port.
func relay(t *testing.T, target string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer in.Close()
				out, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer out.Close()
				go io.Copy(out, in)
				io.Copy(in, out)
			}()
		}
	}()
	return ln.Addr().String()
}

// Mutual TLS with the test bed's certificates, against an in-process HTTPS registry that requires a
// client certificate of the test CA (Apicurio's build cannot ask for one): the JKS, PKCS12 and inline PEM
// keystores are presented and accepted; without one, or with one of another CA, the handshake is
// refused and the error names the keystore keys.
func TestMutualTLS(t *testing.T) {
	certs := testenv.Certs(t)
	fake := srfake.New()
	t.Cleanup(fake.Close)
	upstream, _ := url.Parse(fake.URL())
	server := httptest.NewUnstartedServer(httputil.NewSingleHostReverseProxy(upstream))
	pair, err := tls.LoadX509KeyPair(certs.ServerCert, certs.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	server.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientAuth: tls.RequireAndVerifyClientCert,
		ClientCAs: testenv.CertPool(t, certs.CA)}
	server.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes below
	server.StartTLS()
	t.Cleanup(server.Close)
	clientCert, _ := os.ReadFile(certs.ClientCert)
	clientKey, _ := os.ReadFile(certs.ClientKey)
	otherCert, _ := os.ReadFile(certs.OtherClientCert)
	otherKey, _ := os.ReadFile(certs.OtherClientKey)

	trust := []string{"schema.registry.ssl.truststore.location", certs.CA, "schema.registry.ssl.truststore.type", "PEM"}
	accepted := map[string][]string{
		"JKS": {"schema.registry.ssl.keystore.location", certs.ClientKeystoreJKS, "schema.registry.ssl.keystore.password", certs.StorePassword},
		"PKCS12": {"schema.registry.ssl.keystore.location", certs.ClientKeystoreP12, "schema.registry.ssl.keystore.password", certs.StorePassword,
			"schema.registry.ssl.keystore.type", "PKCS12", "schema.registry.ssl.key.password", certs.StorePassword},
		"inline PEM": {"schema.registry.ssl.keystore.type", "PEM", "schema.registry.ssl.keystore.certificate.chain", string(clientCert),
			"schema.registry.ssl.keystore.key", string(clientKey)},
	}
	for name, kv := range accepted {
		t.Run(name, func(t *testing.T) {
			if err := registerAndFetch(t, tlsSettings(server.URL, append(kv, trust...)...)); err != nil {
				t.Fatal(err)
			}
		})
	}
	refused := map[string][]string{
		"no keystore": trust,
		"another CA's certificate": append([]string{"schema.registry.ssl.keystore.type", "PEM",
			"schema.registry.ssl.keystore.certificate.chain", string(otherCert), "schema.registry.ssl.keystore.key", string(otherKey)}, trust...),
	}
	for name, kv := range refused {
		err := registerAndFetch(t, tlsSettings(server.URL, kv...))
		if !errors.Is(err, ErrRegistry) || !isFatal(err) || !strings.Contains(err.Error(), "refused the TLS handshake") ||
			!strings.Contains(err.Error(), "schema.registry.ssl.keystore.location") || strings.Contains(err.Error(), "PRIVATE KEY") {
			t.Errorf("%s: got %v, want a fatal error naming the keystore keys without the key", name, err)
		}
	}
}

package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// selfSignedPEM writes a PEM keystore (key and certificate for 127.0.0.1) and returns its path and a
// client that trusts it.
func selfSignedPEM(t *testing.T) (string, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cdcd test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "keystore.pem")
	data := append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return path, pool
}

// securedProps turns worker props into an https listener with basic authentication: the keystore
// also serves as the truststore, so workers trust each other when they forward requests.
func securedProps(props map[string]string, keystore, credentials string, port int) {
	props["listeners"] = fmt.Sprintf("https://127.0.0.1:%d", port)
	props["listeners.https.ssl.keystore.type"] = "PEM"
	props["listeners.https.ssl.keystore.location"] = keystore
	props["ssl.truststore.type"] = "PEM"
	props["ssl.truststore.location"] = keystore
	props["rest.basic.auth.credentials.file"] = credentials
}

// securedCall sends a request over TLS with optional basic credentials.
func securedCall(t *testing.T, client *http.Client, method, url, user, password, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return sendAs(t, client, req, user, password)
}

// sendAs sends req through client, with basic credentials when user is set, and returns the status and body.
func sendAs(t *testing.T, client *http.Client, req *http.Request, user, password string) (int, string) {
	t.Helper()
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestRESTSecurity runs two cdcd distributed workers with https listeners and basic authentication, and
// a standalone worker with the same: requests need credentials; a connector created through the
// follower is forwarded to the leader over TLS with the client's credentials; the follower's task
// configs reach the leader through the internal endpoint, signed with the group's session key; the task runs.
func TestRESTSecurity(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	ctx := t.Context()
	execPostgres(t, ctx, dsn, `CREATE TABLE items (id int PRIMARY KEY)`)
	keystore, pool := selfSignedPEM(t)
	credentials := filepath.Join(t.TempDir(), "credentials.properties")
	if err := os.WriteFile(credentials, []byte("admin: s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: time.Minute}
	topics := clusterTopicsOf(prefix)

	var urls []string
	for range 2 {
		port := freePort(t)
		props := distributedProps(brokers, prefix, topics, port)
		securedProps(props, keystore, credentials, port)
		path := filepath.Join(t.TempDir(), "worker.properties")
		writeProperties(t, path, props)
		p := startCdcdProcess(t, "distributed", path)
		url := props["listeners"]
		waitSecuredHealthy(t, client, url, p)
		urls = append(urls, url)
	}
	follower := urls[1]
	if code, body := securedCall(t, client, "GET", follower+"/connectors", "", "", ""); code != 401 {
		t.Errorf("without credentials: %d %s", code, body)
	}
	if code, body := securedCall(t, client, "GET", follower+"/connectors", "admin", "wrong", ""); code != 401 {
		t.Errorf("with a wrong password: %d %s", code, body)
	}
	cfg := pgConnector(t, dsn, "secure", prefix, "public.items")
	create := jsonBody(t, map[string]any{"name": "secure", "config": cfg})
	deadline := time.Now().Add(time.Minute)
	for {
		code, body := securedCall(t, client, "POST", follower+"/connectors", "admin", "s3cret", create)
		if code == 201 {
			break
		}
		if code != 409 || time.Now().After(deadline) {
			t.Fatalf("creating through the follower: %d %s", code, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for {
		_, body := securedCall(t, client, "GET", urls[0]+"/connectors/secure/status", "admin", "s3cret", "")
		if strings.Contains(body, `"tasks":[{"id":0,"state":"RUNNING"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task did not run: %s", body)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Standalone: the same settings.
	port := freePort(t)
	props := workerProps(brokers, filepath.Join(t.TempDir(), "offsets.dat"))
	securedProps(props, keystore, credentials, port)
	path := filepath.Join(t.TempDir(), "standalone.properties")
	writeProperties(t, path, props)
	p := startCdcdProcess(t, "standalone", path)
	waitSecuredHealthy(t, client, props["listeners"], p)
	if code, _ := securedCall(t, client, "GET", props["listeners"]+"/connectors", "", "", ""); code != 401 {
		t.Errorf("standalone without credentials: %d", code)
	}
	if code, body := securedCall(t, client, "GET", props["listeners"]+"/connectors", "admin", "s3cret", ""); code != 200 || body != "[]" {
		t.Errorf("standalone with credentials: %d %s", code, body)
	}
}

// waitSecuredHealthy waits until an https worker answers GET /health with credentials.
func waitSecuredHealthy(t *testing.T, client *http.Client, url string, p *cdcdProcess) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		req, _ := http.NewRequest("GET", url+"/health", nil)
		req.SetBasicAuth("admin", "s3cret")
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if p.exited() || time.Now().After(deadline) {
			t.Fatalf("cdcd at %s did not become healthy; log:\n%s", url, tail(p.log.String(), 3000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

package rest

import (
	"io"
	"log"
	"net/http"
	"strings"
	"testing"
)

// serveTLS serves "ok" on an https listener configured by props and returns its URL.
func serveTLS(t *testing.T, props map[string]string) string {
	t.Helper()
	ln, err := Listen([]string{"https://127.0.0.1:0"}, props)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler:  http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }),
		ErrorLog: log.New(io.Discard, "", 0), // the refused handshakes are the point
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "https://" + ln.Addr().String() + "/"
}

func get(t *testing.T, client *http.Client, url string) error {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "ok" {
		t.Errorf("body %q", body)
	}
	return nil
}

func TestHTTPSListenerWithKeystores(t *testing.T) {
	tests := []struct {
		name   string
		server map[string]string
		client map[string]string
	}{
		{"JKS keystore and truststore, listener keys",
			map[string]string{"listeners.https.ssl.keystore.location": "testdata/server.jks", "listeners.https.ssl.keystore.password": "keystorepw", "listeners.https.ssl.key.password": "keypassword"},
			map[string]string{"ssl.truststore.location": "testdata/trust.jks", "ssl.truststore.password": "trustpw"}},
		{"PKCS12 keystore and truststore as keytool writes them",
			map[string]string{"ssl.keystore.type": "PKCS12", "ssl.keystore.location": "testdata/server.p12", "ssl.keystore.password": "keystorepw"},
			map[string]string{"ssl.truststore.type": "PKCS12", "ssl.truststore.location": "testdata/trust.p12", "ssl.truststore.password": "trustpw"}},
		{"PKCS12 keystore as OpenSSL writes it",
			map[string]string{"ssl.keystore.type": "PKCS12", "ssl.keystore.location": "testdata/server-openssl.p12", "ssl.keystore.password": "opensslpw"},
			map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": "testdata/server-cert.pem"}},
		{"PEM keystore and truststore, ssl keys",
			map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": "testdata/server.pem"},
			map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": "testdata/server-cert.pem"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := serveTLS(t, tt.server)
			trusting, err := ForwardClient(tt.client)
			if err != nil {
				t.Fatal(err)
			}
			if err := get(t, trusting, url); err != nil {
				t.Errorf("a client trusting the certificate: %v", err)
			}
			if err := get(t, &http.Client{}, url); err == nil || !strings.Contains(err.Error(), "certificate") {
				t.Errorf("a client not trusting the certificate got through (err %v)", err)
			}
		})
	}
}

func TestHTTPSListenerRefusesBadKeystores(t *testing.T) {
	tests := []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{}, "needs ssl.keystore.location"},
		{map[string]string{"ssl.keystore.location": "testdata/server.jks", "ssl.keystore.password": "wrong"}, "keystore password was incorrect"},
		{map[string]string{"ssl.keystore.location": "testdata/server.jks", "ssl.keystore.password": "keystorepw", "ssl.key.password": "wrong"}, "ssl.key.password"},
		{map[string]string{"ssl.keystore.location": "testdata/server.pem"}, "not a JKS keystore"},
		{map[string]string{"ssl.keystore.type": "PKCS12", "ssl.keystore.location": "testdata/server.p12", "ssl.keystore.password": "wrong"}, "wrong password"},
		{map[string]string{"ssl.keystore.type": "BCFKS", "ssl.keystore.location": "x"}, "BCFKS is not supported"},
		{map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": "testdata/server.pem", "ssl.client.auth": "required"}, "needs ssl.truststore.location"},
	}
	for _, tt := range tests {
		_, err := Listen([]string{"https://127.0.0.1:0"}, tt.props)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: got %v, want an error with %q", tt.props, err, tt.want)
		}
	}
}

func TestClientCertificatesRequired(t *testing.T) {
	url := serveTLS(t, map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": "testdata/server.pem",
		"ssl.truststore.type": "PEM", "ssl.truststore.location": "testdata/server-cert.pem", "ssl.client.auth": "required"})
	anonymous, err := ForwardClient(map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": "testdata/server-cert.pem"})
	if err != nil {
		t.Fatal(err)
	}
	if err := get(t, anonymous, url); err == nil {
		t.Error("a client without a certificate got through")
	}
	// A worker of the cluster presents its keystore's certificate, which the truststore holds.
	worker, err := ForwardClient(map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": "testdata/server.pem",
		"ssl.truststore.type": "PEM", "ssl.truststore.location": "testdata/server-cert.pem"})
	if err != nil {
		t.Fatal(err)
	}
	if err := get(t, worker, url); err != nil {
		t.Errorf("a worker's client: %v", err)
	}
}

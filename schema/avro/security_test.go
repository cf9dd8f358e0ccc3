package avro

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/cdcd/cdcd/schema"
)

const (
	testToken        = "static-bearer-token-value"
	testClientSecret = "client-secret-value"
)

// Keys cdcd does not honour are refused by name, and no secret of the settings appears in the error.
func TestSecurityKeysRefusedByName(t *testing.T) {
	tests := []struct {
		settings map[string]string
		want     string
	}{
		{map[string]string{"schema.registry.ssl.truststore.bogus": "x"}, "schema.registry.ssl.truststore.bogus is not a TLS setting"},
		{map[string]string{"schema.registry.ssl.cipher.suites": "TLS_RSA_WITH_AES_128_CBC_SHA"}, "schema.registry.ssl.cipher.suites is not supported"},
		{map[string]string{"schema.registry.ssl.engine.factory.class": "com.example.Engine"}, "schema.registry.ssl.engine.factory.class is not supported"},
		{map[string]string{"schema.registry.ssl.protocol": "SSLv3"}, "schema.registry.ssl.protocol=\"SSLv3\" is not supported"},
		{map[string]string{"schema.registry.ssl.enabled.protocols": "TLSv1.1"}, "schema.registry.ssl.enabled.protocols"},
		{map[string]string{"schema.registry.ssl.endpoint.identification.algorithm": "ldap"}, "schema.registry.ssl.endpoint.identification.algorithm=\"ldap\""},
		{map[string]string{"schema.registry.ssl.truststore.type": "BKS", "schema.registry.ssl.truststore.location": "/x"}, "schema.registry.ssl.truststore.type BKS is not supported"},
		{map[string]string{"schema.registry.ssl.truststore.location": "/nonexistent/trust.jks", "schema.registry.ssl.truststore.password": testClientSecret}, "schema.registry.ssl.truststore.location"},
		{map[string]string{"schema.registry.ssl.keystore.key": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----", "schema.registry.ssl.keystore.type": "PEM"}, "schema.registry.ssl.keystore.certificate.chain"},
		{map[string]string{"bearer.auth.credentials.source": "KERBEROS"}, `bearer.auth.credentials.source="KERBEROS" (want STATIC_TOKEN or OAUTHBEARER)`},
		{map[string]string{"bearer.auth.credentials.source": "SASL_OAUTHBEARER_INHERIT"}, "bearer.auth.credentials.source=SASL_OAUTHBEARER_INHERIT is not supported by cdcd: it takes the token of the Kafka client"},
		{map[string]string{"bearer.auth.credentials.source": "CUSTOM", "bearer.auth.custom.provider.class": "com.example.P"}, "bearer.auth.credentials.source=CUSTOM is not supported by cdcd"},
		{map[string]string{"bearer.auth.credentials.source": "STATIC_TOKEN"}, "needs bearer.auth.token"},
		{map[string]string{"bearer.auth.credentials.source": "STATIC_TOKEN", "bearer.auth.token": testToken, "basic.auth.credentials.source": "USER_INFO", "basic.auth.user.info": "u:" + testClientSecret},
			"only one of basic.auth.credentials.source and bearer.auth.credentials.source may be set"},
		{map[string]string{"schema.registry.url": "https://u:" + testClientSecret + "@registry:8081", "bearer.auth.credentials.source": "STATIC_TOKEN", "bearer.auth.token": testToken},
			"schema.registry.url carries user info"},
		{map[string]string{"bearer.auth.credentials.source": "OAUTHBEARER", "bearer.auth.client.id": "id", "bearer.auth.client.secret": testClientSecret}, "needs bearer.auth.issuer.endpoint.url"},
		{map[string]string{"bearer.auth.credentials.source": "OAUTHBEARER", "bearer.auth.issuer.endpoint.url": "https://idp/token", "bearer.auth.client.secret": testClientSecret}, "needs bearer.auth.client.id"},
		{map[string]string{"bearer.auth.credentials.source": "OAUTHBEARER", "bearer.auth.issuer.endpoint.url": "https://idp/token", "bearer.auth.client.id": "id"}, "needs bearer.auth.client.secret"},
		{map[string]string{"bearer.auth.credentials.source": "OAUTHBEARER", "bearer.auth.issuer.endpoint.url": "ldap://idp", "bearer.auth.client.id": "id", "bearer.auth.client.secret": testClientSecret}, "bearer.auth.issuer.endpoint.url=\"ldap://idp\" is not an http(s) URL"},
		{map[string]string{"bearer.auth.credentials.source": "OAUTHBEARER", "bearer.auth.issuer.endpoint.url": "https://idp/token", "bearer.auth.client.id": "id", "bearer.auth.client.secret": testClientSecret,
			"bearer.auth.cache.expiry.buffer.seconds": "4000"}, "bearer.auth.cache.expiry.buffer.seconds"},
	}
	for _, tt := range tests {
		if _, ok := tt.settings[ConfigURL]; !ok {
			tt.settings[ConfigURL] = "https://registry:8081"
		}
		_, err := FromConfig(false, tt.settings)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v:\n got %v\nwant ErrConfig with %q", tt.settings, err, tt.want)
			continue
		}
		for _, secret := range []string{testToken, testClientSecret, "AAAA"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("%v: the error carries a secret: %v", tt.settings, err)
			}
		}
	}
	// Java's defaults left empty are accepted, as Kafka reads an empty value as unset; so are bearer.auth.*
	// keys without a source, which Confluent ignores too.
	if _, err := FromConfig(false, map[string]string{ConfigURL: "https://registry:8081", "schema.registry.ssl.provider": "",
		"schema.registry.ssl.protocol": "TLSv1.2", "schema.registry.ssl.enabled.protocols": "TLSv1.2,TLSv1.3", "bearer.auth.token": testToken}); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

// testJWT is an unsigned JWT with claims (the registry checks signatures; a client only reads claims).
func testJWT(claims map[string]any) string {
	payload, _ := json.Marshal(claims)
	return base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`)) + "." + base64.RawURLEncoding.EncodeToString(payload) + ".sig"
}

// bearerRegistry is an HTTPS registry (srfake behind a TLS reverse proxy) that takes only requests with
// "Authorization: Bearer <want>" and Confluent's two headers, and serves an OAuth token endpoint at
// /token for client "cdcd-app" with testClientSecret. trustPEM is a PEM file of its certificate.
type bearerRegistry struct {
	*httptest.Server
	trustPEM    string
	want        atomic.Pointer[string]
	tokenCalls  atomic.Int32
	refused     atomic.Int32
	issuedToken atomic.Pointer[string]
}

func newBearerRegistry(t *testing.T) *bearerRegistry {
	t.Helper()
	fake := srfake.New()
	t.Cleanup(fake.Close)
	upstream, _ := url.Parse(fake.URL())
	proxy := httputil.NewSingleHostReverseProxy(upstream)
	b := &bearerRegistry{}
	b.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			b.tokenCalls.Add(1)
			body, _ := io.ReadAll(r.Body)
			if id, secret, ok := r.BasicAuth(); !ok || id != "cdcd-app" || secret != testClientSecret || string(body) != "grant_type=client_credentials&scope=registry" {
				w.WriteHeader(http.StatusUnauthorized)
				io.WriteString(w, `{"error":"invalid_client","error_description":"bad client credentials"}`)
				return
			}
			fmt.Fprintf(w, `{"access_token":%q,"token_type":"bearer","expires_in":3600}`, *b.issuedToken.Load())
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+*b.want.Load() ||
			r.Header.Get("target-sr-cluster") != "lsrc-1" || r.Header.Get("Confluent-Identity-Pool-Id") != "pool-1" {
			b.refused.Add(1)
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error_code":40101,"message":"unauthorized"}`)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(b.Close)
	b.trustPEM = filepath.Join(t.TempDir(), "registry.pem")
	if err := os.WriteFile(b.trustPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: b.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *bearerRegistry) settings(source string) map[string]string {
	return map[string]string{
		ConfigURL: b.URL, "schema.registry.ssl.truststore.type": "PEM", "schema.registry.ssl.truststore.location": b.trustPEM,
		"bearer.auth.credentials.source": source, "bearer.auth.logical.cluster": "lsrc-1", "bearer.auth.identity.pool.id": "pool-1",
		"max.retries": "0",
	}
}

// A unit test over an in-process HTTPS registry (Apicurio's OIDC needs Keycloak): STATIC_TOKEN sends
// bearer.auth.token, and without the bearer settings the registry refuses.
func TestStaticTokenBearer(t *testing.T) {
	reg := newBearerRegistry(t)
	token := testToken
	reg.want.Store(&token)
	settings := reg.settings("STATIC_TOKEN")
	settings["bearer.auth.token"] = testToken
	c := newConverter(t, false, settings)
	if _, err := c.Encode("t", &schema.Schema{Type: schema.String}, "x"); err != nil || reg.refused.Load() != 0 {
		t.Fatalf("with the static token: %v, %d refusals", err, reg.refused.Load())
	}
	delete(settings, "bearer.auth.credentials.source")
	c = newConverter(t, false, settings)
	if _, err := c.Encode("t", &schema.Schema{Type: schema.String}, "x"); !errors.Is(err, ErrRegistry) || !strings.Contains(err.Error(), "HTTP 401") {
		t.Errorf("without bearer auth: got %v, want the registry's 401", err)
	}
}

// A unit test over an in-process HTTPS registry and token endpoint: OAUTHBEARER fetches the token with the
// client-credentials grant over TLS trusted by the unprefixed ssl.truststore.* (as Confluent's client
// does), caches it across requests until its refresh time, and a refused client names the key and the
// client id without the secret.
func TestOAuthBearer(t *testing.T) {
	reg := newBearerRegistry(t)
	first := testJWT(map[string]any{"sub": "cdcd-app", "exp": time.Now().Add(time.Hour).Unix(), "scope": "registry"})
	reg.issuedToken.Store(&first)
	reg.want.Store(&first)
	settings := reg.settings("OAUTHBEARER")
	for k, v := range map[string]string{"bearer.auth.issuer.endpoint.url": reg.URL + "/token", "bearer.auth.client.id": "cdcd-app",
		"bearer.auth.client.secret": testClientSecret, "bearer.auth.scope": "registry",
		"ssl.truststore.type": "PEM", "ssl.truststore.location": reg.trustPEM} {
		settings[k] = v
	}
	c := newConverter(t, false, settings)
	now := time.Now()
	c.registry.bearer.tokens.Now = func() time.Time { return now }
	for _, topic := range []string{"a", "b", "c"} {
		if _, err := c.Encode(topic, &schema.Schema{Type: schema.String}, "x"); err != nil {
			t.Fatalf("topic %s: %v", topic, err)
		}
	}
	if n := reg.tokenCalls.Load(); n != 1 || reg.refused.Load() != 0 {
		t.Errorf("3 registrations made %d token requests and %d refusals; want 1 (cached) and 0", n, reg.refused.Load())
	}
	// Past 80 % of the token's life (48 min): a new token, which the registry now requires.
	second := testJWT(map[string]any{"sub": "cdcd-app", "exp": time.Now().Add(2 * time.Hour).Unix()})
	reg.issuedToken.Store(&second)
	reg.want.Store(&second)
	now = now.Add(49 * time.Minute)
	if _, err := c.Encode("d", &schema.Schema{Type: schema.String}, "x"); err != nil || reg.tokenCalls.Load() != 2 {
		t.Errorf("after the refresh time: %v with %d token requests; want a second token", err, reg.tokenCalls.Load())
	}

	settings["bearer.auth.client.secret"] = testClientSecret + "-wrong"
	c = newConverter(t, false, settings)
	_, err := c.Encode("e", &schema.Schema{Type: schema.String}, "x")
	if !errors.Is(err, ErrRegistry) || !strings.Contains(err.Error(), `bearer.auth.credentials.source=OAUTHBEARER as client id "cdcd-app"`) ||
		!strings.Contains(err.Error(), "invalid_client") || strings.Contains(err.Error(), testClientSecret) || strings.Contains(err.Error(), second) {
		t.Errorf("a refused client: got %v, want the endpoint's refusal naming the key and client id, without secret or token", err)
	}
	if isFatal(err) {
		t.Errorf("a token endpoint's refusal is retried after a restart, not fatal: %v", err)
	}
}

// isFatal reports whether the connect runtime would fail the task on err.
func isFatal(err error) bool {
	var f interface{ Fatal() bool }
	return errors.As(err, &f) && f.Fatal()
}

package kafka

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// testJWT is an unsigned JWT with claims (the broker checks signatures; a client only reads claims).
func testJWT(claims map[string]any) string {
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`))
	payload, _ := json.Marshal(claims)
	return header + "." + base64.RawURLEncoding.EncodeToString(payload) + ".sig"
}

// tokenEndpoint is an OAuth 2 token endpoint that answers the client-credentials grant of one client.
type tokenEndpoint struct {
	*httptest.Server
	calls atomic.Int32
	token atomic.Pointer[string]
}

func (e *tokenEndpoint) setToken(token string) { e.token.Store(&token) }
func (e *tokenEndpoint) current() string       { return *e.token.Load() }

func newTokenEndpoint(t *testing.T, clientID, secret, scope string) *tokenEndpoint {
	t.Helper()
	e := &tokenEndpoint{}
	e.setToken(testJWT(map[string]any{"sub": "cdcd-app", "exp": time.Now().Add(time.Hour).Unix(), "scope": "kafka"}))
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.calls.Add(1)
		body, _ := io.ReadAll(r.Body)
		user, password, ok := r.BasicAuth()
		want := "grant_type=client_credentials"
		if scope != "" {
			want += "&scope=" + strings.ReplaceAll(scope, " ", "+")
		}
		switch {
		case r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || string(body) != want:
			t.Errorf("token request %s %s %q, want POST of %q", r.Method, r.Header.Get("Content-Type"), body, want)
			w.WriteHeader(http.StatusBadRequest)
		case !ok || user != clientID || password != secret:
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":"invalid_client","error_description":"bad client credentials"}`)
		default:
			fmt.Fprintf(w, `{"access_token":%q,"token_type":"bearer","expires_in":3600}`, e.current())
		}
	}))
	t.Cleanup(e.Close)
	return e
}

func oauthSettings(endpoint, clientID, secret string) map[string]string {
	return map[string]string{
		"security.protocol":                   "SASL_PLAINTEXT",
		"sasl.mechanism":                      "OAUTHBEARER",
		"sasl.login.callback.handler.class":   "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
		"sasl.oauthbearer.token.endpoint.url": endpoint,
		"sasl.jaas.config": oauthLoginModule + ` required clientId="` + clientID + `" clientSecret="` + secret +
			`" scope="kafka write" extension_traceId="t1";`,
	}
}

// OAUTHBEARER end to end against an in-process broker taught the mechanism (kfake has none): the token
// comes from the endpoint by the client-credentials grant, is cached across connections, and travels in
// RFC 7628's initial response with the extensions; a refused token fails naming the client id.
func TestOAuthBearer(t *testing.T) {
	endpoint := newTokenEndpoint(t, "cdcd-app", testSecret, "kafka write")
	f := newSecureFixture(t)
	good := endpoint.current() // the one token the broker takes
	var accepted atomic.Int32
	f.cluster.ControlKey(int16(kmsg.SASLHandshake), func(req kmsg.Request) (kmsg.Response, error, bool) {
		f.cluster.KeepControl()
		r := req.(*kmsg.SASLHandshakeRequest)
		resp := r.ResponseKind().(*kmsg.SASLHandshakeResponse)
		resp.SupportedMechanisms = []string{"OAUTHBEARER"}
		if r.Mechanism != "OAUTHBEARER" {
			resp.ErrorCode = 33 // UNSUPPORTED_SASL_MECHANISM
		}
		return resp, nil, true
	})
	f.cluster.ControlKey(int16(kmsg.SASLAuthenticate), func(req kmsg.Request) (kmsg.Response, error, bool) {
		f.cluster.KeepControl()
		r := req.(*kmsg.SASLAuthenticateRequest)
		resp := r.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		if string(r.SASLAuthBytes) == "n,,\x01auth=Bearer "+good+"\x01traceId=t1\x01\x01" {
			accepted.Add(1)
			return resp, nil, true
		}
		resp.SASLAuthBytes = []byte(`{"status":"invalid_token"}`)
		return resp, nil, true
	})

	settings := oauthSettings(endpoint.URL, "cdcd-app", testSecret)
	if err := f.produceOne(t, settings); err != nil {
		t.Fatal(err)
	}
	if err := f.roundTripLog(t, settings); err != nil {
		t.Fatal(err)
	}
	// Two clients, two token fetches (each transport has its login); every connection of one shares it.
	if accepted.Load() < 2 || endpoint.calls.Load() != 2 {
		t.Errorf("%d connections authenticated with %d token requests; want at least 2 with 2", accepted.Load(), endpoint.calls.Load())
	}

	endpoint.setToken(testJWT(map[string]any{"sub": "cdcd-app", "exp": time.Now().Add(time.Hour).Unix()})) // the broker does not know it
	if err := f.produceOne(t, settings); err == nil || !errors.Is(err, kafkago.SASLAuthenticationFailed) ||
		!strings.Contains(err.Error(), `SASL/OAUTHBEARER as client id "cdcd-app": authentication failed`) || !strings.Contains(err.Error(), "invalid_token") {
		t.Errorf("a refused token: got %v, want the broker's refusal naming the client id", err)
	}

	wrong := oauthSettings(endpoint.URL, "cdcd-app", testSecret+"-wrong")
	err := f.produceOne(t, wrong)
	if err == nil || !strings.Contains(err.Error(), `401 Unauthorized for client id "cdcd-app": invalid_client (bad client credentials)`) {
		t.Errorf("a wrong client secret: got %v, want the endpoint's refusal naming the client id", err)
	}
	f.noSecret(t, err)
	if strings.Contains(f.logs.String(), good) || err != nil && strings.Contains(err.Error(), good) {
		t.Error("a token appears in an error or the logs")
	}
}

func TestOAuthTokenChecksAndCache(t *testing.T) {
	endpoint := newTokenEndpoint(t, "id", "secret", "")
	settings := oauthSettings(endpoint.URL, "id", "secret")
	settings["sasl.jaas.config"] = oauthLoginModule + ` required clientId="id" clientSecret="secret";`
	settings["sasl.login.retry.backoff.max.ms"] = "200"
	sec, err := ParseClientSecurity(settings)
	if err != nil {
		t.Fatal(err)
	}
	m := sec.SASL.(*oauthBearer)
	now := time.Now()
	m.tokens.Now = func() time.Time { return now }

	for range 3 {
		if _, ir, err := m.Start(context.Background()); err != nil || !bytes.HasPrefix(ir, []byte("n,,\x01auth=Bearer ")) || !bytes.HasSuffix(ir, []byte("\x01\x01")) {
			t.Fatalf("Start: %q, %v", ir, err)
		}
	}
	if endpoint.calls.Load() != 1 {
		t.Errorf("%d token requests for 3 connections, want 1 (cached)", endpoint.calls.Load())
	}
	now = now.Add(59 * time.Minute) // past the refresh time: a new token
	if _, _, err := m.Start(context.Background()); err != nil || endpoint.calls.Load() != 2 {
		t.Errorf("after the refresh time: %d requests, %v; want a second request", endpoint.calls.Load(), err)
	}

	for token, want := range map[string]string{
		"opaque-token":                                                "not a JWT",
		testJWT(map[string]any{"sub": "x"}):                           "no numeric exp claim",
		testJWT(map[string]any{"exp": 1e10}):                          "no sub claim",
		testJWT(map[string]any{"exp": 1e10, "sub": "x", "scope": 12}): "scope claim is neither",
	} {
		endpoint.setToken(token)
		now = now.Add(2 * time.Hour) // past the cached token's expiry: it cannot stand in for the bad one
		if _, _, err := m.Start(context.Background()); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), token) {
			t.Errorf("token %q: got %v, want %q without the token", token, err, want)
		}
	}
}

func TestOAuthSettingsRefusals(t *testing.T) {
	base := func() map[string]string { return oauthSettings("https://idp.example/token", "id", testSecret) }
	tests := []struct {
		change func(map[string]string)
		want   string
	}{
		{func(s map[string]string) { delete(s, "sasl.oauthbearer.token.endpoint.url") }, "sasl.oauthbearer.token.endpoint.url: is not set"},
		{func(s map[string]string) { s["sasl.oauthbearer.token.endpoint.url"] = "ldap://idp" }, "not an http, https or file URL"},
		{func(s map[string]string) {
			s["sasl.jaas.config"] = oauthLoginModule + ` required clientSecret="` + testSecret + `";`
		}, "has no clientId option"},
		{func(s map[string]string) {
			s["sasl.jaas.config"] = oauthLoginModule + ` required clientId=id clientSecret="` + testSecret + `" unsecuredLoginStringClaim_sub="x";`
		}, "unsecured test login"},
		{func(s map[string]string) {
			s["sasl.jaas.config"] = oauthLoginModule + ` required clientId=id clientSecret="` + testSecret + `" extension_auth="x";`
		}, "not auth"},
		{func(s map[string]string) {
			s["sasl.oauthbearer.jwt.retriever.class"] = "org.apache.kafka.common.security.oauthbearer.JwtBearerJwtRetriever"
		}, "client-credentials grant"},
		{func(s map[string]string) { s["sasl.oauthbearer.assertion.file"] = "/a.jwt" }, "jwt-bearer grant is not implemented"},
		{func(s map[string]string) { s["sasl.oauthbearer.expected.audience"] = "kafka" }, "a broker setting"},
		{func(s map[string]string) { s["sasl.login.refresh.window.factor"] = "0.2" }, "must be a number from 0.5 to 1"},
	}
	for _, tt := range tests {
		s := base()
		tt.change(s)
		_, err := ParseClientSecurity(s)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), testSecret) {
			t.Errorf("got %v, want an error with %q and no secret", err, tt.want)
		}
	}
	// Kafka 4.1's settings for the client's credentials stand in for the JAAS options.
	s := base()
	s["sasl.jaas.config"] = oauthLoginModule + " required;"
	s["sasl.oauthbearer.client.credentials.client.id"] = "id"
	s["sasl.oauthbearer.client.credentials.client.secret"] = testSecret
	delete(s, "sasl.login.callback.handler.class")
	s["sasl.oauthbearer.jwt.retriever.class"] = "org.apache.kafka.common.security.oauthbearer.ClientCredentialsJwtRetriever"
	if _, err := ParseClientSecurity(s); err != nil {
		t.Errorf("Kafka 4.1's client credentials settings: %v", err)
	}
}

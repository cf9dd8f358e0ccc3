package kafka

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"

	"github.com/cdcd/cdcd/source/oauth"
)

// This file is SASL/OAUTHBEARER with Kafka's OIDC login (KIP-768, OAuthBearerLoginCallbackHandler): a
// token is fetched with the OAuth 2 client-credentials grant from sasl.oauthbearer.token.endpoint.url (or
// read from the file that URL names), checked as Kafka's client checks it (a JWT with exp and the subject
// claim) and cached until Kafka's refresh time, by source/oauth (which the schema registry client shares),
// and sent in RFC 7628's initial client response. kafka-go has no OAUTHBEARER mechanism; this is one.

// oauthKeys are the sasl.* keys the OIDC login reads.
var oauthKeys = map[string]bool{
	"sasl.oauthbearer.token.endpoint.url":               true,
	"sasl.oauthbearer.client.credentials.client.id":     true,
	"sasl.oauthbearer.client.credentials.client.secret": true,
	"sasl.oauthbearer.scope":                            true,
	"sasl.oauthbearer.scope.claim.name":                 true,
	"sasl.oauthbearer.sub.claim.name":                   true,
	"sasl.oauthbearer.header.urlencode":                 true,
	"sasl.oauthbearer.jwt.retriever.class":              true,
	"sasl.oauthbearer.jwt.validator.class":              true,
	"sasl.login.refresh.window.factor":                  true,
	"sasl.login.refresh.window.jitter":                  true,
	"sasl.login.refresh.min.period.seconds":             true,
	"sasl.login.refresh.buffer.seconds":                 true,
	"sasl.login.connect.timeout.ms":                     true,
	"sasl.login.read.timeout.ms":                        true,
	"sasl.login.retry.backoff.ms":                       true,
	"sasl.login.retry.backoff.max.ms":                   true,
}

// oauthBearer is the OAUTHBEARER sasl.Mechanism. It is safe for concurrent use: every connection of a
// transport shares its token cache.
type oauthBearer struct {
	tokens     *oauth.ClientCredentials
	extensions []string // "key=value", sorted
}

var _ sasl.Mechanism = (*oauthBearer)(nil)

// newOAuthBearer builds the mechanism from the client's settings and its JAAS options.
func newOAuthBearer(settings map[string]string, options map[string]string) (*oauthBearer, error) {
	get := func(key string) string { return strings.TrimSpace(settings[key]) }
	var errs []error
	fail := func(err error) { errs = append(errs, err) }

	handler, retriever := get("sasl.login.callback.handler.class"), get("sasl.oauthbearer.jwt.retriever.class")
	if handler == "" && retriever == "" {
		return nil, settingErr("sasl.login.callback.handler.class", "is not set: Kafka's OAUTHBEARER default is then its unsecured test login, which cdcd does not implement; "+
			"set sasl.login.callback.handler.class=%s and sasl.oauthbearer.token.endpoint.url", oidcLoginHandlers[0])
	}
	endpoint := get("sasl.oauthbearer.token.endpoint.url")
	if endpoint == "" {
		return nil, settingErr("sasl.oauthbearer.token.endpoint.url", "is not set; Kafka's OIDC login needs the token endpoint (or a file: URL of the token)")
	}
	u, err := validURL("sasl.oauthbearer.token.endpoint.url", endpoint)
	if err != nil {
		return nil, err
	}

	ts := &oauth.ClientCredentials{
		Endpoint: u,
		Policy: oauth.RefreshPolicy{Factor: 0.8, Jitter: 0.05, MinPeriod: 60 * time.Second, Buffer: 300 * time.Second,
			Backoff: 100 * time.Millisecond, BackoffMax: 10 * time.Second},
		Keys: oauth.Keys{Endpoint: "sasl.oauthbearer.token.endpoint.url", SubClaim: "sasl.oauthbearer.sub.claim.name",
			ScopeClaim: "sasl.oauthbearer.scope.claim.name"},
		SubClaim: get("sasl.oauthbearer.sub.claim.name"), ScopeClaim: get("sasl.oauthbearer.scope.claim.name"),
	}
	if v := get("sasl.oauthbearer.header.urlencode"); v != "" {
		switch strings.ToLower(v) {
		case "true":
			ts.URLEncode = true
		case "false":
		default:
			fail(settingErr("sasl.oauthbearer.header.urlencode", "%q must be true or false", v))
		}
	}
	bounded := func(key string, lo, hi float64, set func(float64)) {
		if v := get(key); v != "" {
			if f, err := parseBounded(key, v, lo, hi); err != nil {
				fail(err)
			} else {
				set(f)
			}
		}
	}
	bounded("sasl.login.refresh.window.factor", 0.5, 1.0, func(f float64) { ts.Policy.Factor = f })
	bounded("sasl.login.refresh.window.jitter", 0, 0.25, func(f float64) { ts.Policy.Jitter = f })
	bounded("sasl.login.refresh.min.period.seconds", 0, 900, func(f float64) { ts.Policy.MinPeriod = time.Duration(f) * time.Second })
	bounded("sasl.login.refresh.buffer.seconds", 0, 3600, func(f float64) { ts.Policy.Buffer = time.Duration(f) * time.Second })
	millis := func(key string, set func(time.Duration)) {
		if v := get(key); v != "" {
			if d, err := parseMillisSetting(key, v); err != nil {
				fail(err)
			} else {
				set(d)
			}
		}
	}
	var connectTimeout, readTimeout time.Duration
	millis("sasl.login.connect.timeout.ms", func(d time.Duration) { connectTimeout = d })
	millis("sasl.login.read.timeout.ms", func(d time.Duration) { readTimeout = d })
	millis("sasl.login.retry.backoff.ms", func(d time.Duration) { ts.Policy.Backoff = d })
	millis("sasl.login.retry.backoff.max.ms", func(d time.Duration) { ts.Policy.BackoffMax = d })

	// The JAAS options: the client's credentials and scope (Kafka 4.1 also takes them as settings, which
	// win), SASL extensions, and the ssl.* options of the token endpoint's HTTPS.
	m := &oauthBearer{tokens: ts}
	endpointTLS := map[string]string{}
	for _, o := range slices.Sorted(maps.Keys(options)) {
		v := options[o]
		switch {
		case o == "clientId":
			ts.ClientID = v
		case o == "clientSecret":
			ts.ClientSecret = v
		case o == "scope":
			ts.Scope = v
		case strings.HasPrefix(o, "extension_"):
			name := strings.TrimPrefix(o, "extension_")
			if !extensionName.MatchString(name) || name == "auth" {
				fail(settingErr(jaasConfigKey, "option %s: a SASL extension's name is letters only, and not auth", o))
			} else if !extensionValue.MatchString(v) {
				fail(settingErr(jaasConfigKey, "option %s: a SASL extension's value is printable ASCII, spaces and tabs", o))
			} else {
				m.extensions = append(m.extensions, name+"="+v)
			}
		case strings.HasPrefix(o, "ssl."):
			if err := checkSecurityKey(o, v); err != nil {
				fail(&SettingError{Key: jaasConfigKey, Err: fmt.Errorf("option %w", err)})
			}
			endpointTLS[o] = v
		case strings.HasPrefix(o, "unsecuredLogin"):
			fail(settingErr(jaasConfigKey, "option %s: Kafka's unsecured test login is not implemented in cdcd; use the OIDC login (sasl.oauthbearer.token.endpoint.url)", o))
		default:
			fail(settingErr(jaasConfigKey, "option %s is not one OAuthBearerLoginModule takes with the OIDC login (clientId, clientSecret, scope, extension_<name>, ssl.*)", o))
		}
	}
	if v := get("sasl.oauthbearer.client.credentials.client.id"); v != "" {
		ts.ClientID = v
	}
	if v := settings["sasl.oauthbearer.client.credentials.client.secret"]; v != "" {
		ts.ClientSecret = v
	}
	if v := get("sasl.oauthbearer.scope"); v != "" {
		ts.Scope = v
	}
	if u.Scheme != "file" {
		if ts.ClientID == "" {
			fail(settingErr(jaasConfigKey, "has no clientId option (or set sasl.oauthbearer.client.credentials.client.id): the client-credentials grant needs it"))
		}
		if ts.ClientSecret == "" {
			fail(settingErr(jaasConfigKey, "has no clientSecret option (or set sasl.oauthbearer.client.credentials.client.secret): the client-credentials grant needs it"))
		}
		transport := http.DefaultTransport.(*http.Transport).Clone()
		transport.DialContext = (&net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}).DialContext
		transport.ResponseHeaderTimeout = readTimeout
		if u.Scheme == "https" && len(endpointTLS) > 0 {
			cfg, err := clientTLS(endpointTLS)
			if err != nil {
				fail(&SettingError{Key: jaasConfigKey, Err: fmt.Errorf("the token endpoint's ssl.* options: %w", err)})
			}
			transport.TLSClientConfig = cfg
		} else if len(endpointTLS) > 0 {
			fail(settingErr(jaasConfigKey, "has ssl.* options, but the token endpoint is not https"))
		}
		ts.Client = &http.Client{Transport: transport}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.Sort(m.extensions)
	return m, nil
}

var (
	extensionName  = regexp.MustCompile(`^[A-Za-z]+$`)
	extensionValue = regexp.MustCompile(`^[\x21-\x7E \t\r\n]+$`)
)

func (m *oauthBearer) Name() string { return mechanismOAuth }

func (m *oauthBearer) who() string {
	if m.tokens.Endpoint.Scheme == "file" {
		return fmt.Sprintf("SASL/OAUTHBEARER with the token of %s", m.tokens.Endpoint.Path)
	}
	return fmt.Sprintf("SASL/OAUTHBEARER as client id %q", m.tokens.ClientID)
}

// Start sends RFC 7628's initial client response: the GS2 header without an authorization id, the
// bearer token and the SASL extensions, each pair ended by ^A, and a final ^A.
func (m *oauthBearer) Start(ctx context.Context) (sasl.StateMachine, []byte, error) {
	token, err := m.tokens.Token(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", m.who(), err)
	}
	return oauthSession{}, initialResponse(token, m.extensions), nil
}

func initialResponse(token string, extensions []string) []byte {
	var b strings.Builder
	b.WriteString("n,,\x01auth=Bearer ")
	b.WriteString(token)
	b.WriteByte(1)
	for _, e := range extensions {
		b.WriteString(e)
		b.WriteByte(1)
	}
	b.WriteByte(1)
	return []byte(b.String())
}

type oauthSession struct{}

// Next ends the exchange: an empty server message is success; any other is RFC 7628's error status
// (JSON, no secret in it), which fails the authentication with what the broker said.
func (oauthSession) Next(_ context.Context, challenge []byte) (bool, []byte, error) {
	if len(challenge) == 0 {
		return true, nil, nil
	}
	return false, nil, fmt.Errorf("%w: the broker refused the token: %s", kafkago.SASLAuthenticationFailed, strings.TrimSpace(string(challenge)))
}

package avro

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cdcd/cdcd/source/oauth"
	"github.com/cdcd/cdcd/source/tlsconf"
)

// This file is the registry client's security beyond basic auth, with the names of Confluent's
// SchemaRegistryClientConfig: TLS under schema.registry.ssl. (Kafka's ssl.* client keys behind that
// prefix, read by source/tlsconf) and bearer authentication (bearer.auth.*: a static token, or one
// fetched with the OAuth client-credentials grant by source/oauth). Every schema.registry.ssl.* key is
// either honoured or refused by name; a bearer source cdcd does not implement is refused with the
// reason. Errors never carry a password, a token, a client secret or an inline key.

// Converter settings of the registry client's TLS and bearer authentication.
const (
	// ConfigSSLPrefix prefixes Kafka's ssl.* client keys for the registry's https URLs.
	ConfigSSLPrefix            = "schema.registry.ssl."
	ConfigBearerSource         = "bearer.auth.credentials.source"
	ConfigBearerToken          = "bearer.auth.token"
	ConfigBearerIssuer         = "bearer.auth.issuer.endpoint.url"
	ConfigBearerClientID       = "bearer.auth.client.id"
	ConfigBearerClientSecret   = "bearer.auth.client.secret"
	ConfigBearerScope          = "bearer.auth.scope"
	ConfigBearerScopeClaim     = "bearer.auth.scope.claim.name"
	ConfigBearerSubClaim       = "bearer.auth.sub.claim.name"
	ConfigBearerLogicalCluster = "bearer.auth.logical.cluster"
	ConfigBearerIdentityPool   = "bearer.auth.identity.pool.id"
	ConfigBearerCacheBuffer    = "bearer.auth.cache.expiry.buffer.seconds"
	ConfigBearerCustomProvider = "bearer.auth.custom.provider.class"
)

// The values of bearer.auth.credentials.source (Confluent's BearerAuthCredentialProvider aliases).
const (
	bearerStaticToken = "STATIC_TOKEN"
	bearerOAuth       = "OAUTHBEARER"
	bearerSASLInherit = "SASL_OAUTHBEARER_INHERIT"
	bearerCustom      = "CUSTOM"
)

const (
	// The headers of bearer.auth.logical.cluster and bearer.auth.identity.pool.id, as Confluent's
	// RestService sends them.
	headerLogicalCluster = "target-sr-cluster"
	headerIdentityPool   = "Confluent-Identity-Pool-Id"
	// bearer.auth.cache.expiry.buffer.seconds: its default and its largest value.
	defaultCacheBufferSeconds = 300
	maxCacheBufferSeconds     = 3600
)

// unimplementedSSLKeys are Kafka ssl.* client keys that select Java machinery cdcd does not have. Unset
// or empty they are Java's defaults, which Go's TLS matches; any other value is refused with the reason.
var unimplementedSSLKeys = map[string]string{
	"ssl.cipher.suites":                "cdcd's registry client offers Go's secure cipher suites; remove it",
	"ssl.provider":                     "a Java security provider; cdcd's TLS is Go's",
	"ssl.keymanager.algorithm":         "a Java key manager; cdcd's TLS uses the X.509 key of the keystore",
	"ssl.trustmanager.algorithm":       "a Java trust manager; cdcd's TLS verifies the chain against the truststore (PKIX)",
	"ssl.secure.random.implementation": "a Java SecureRandom; cdcd's TLS uses Go's crypto/rand",
	"ssl.engine.factory.class":         "a Java class, which cdcd cannot load",
}

// Bearer is the registry's bearer authentication (bearer.auth.credentials.source): each request to a
// registry URL carries "Authorization: Bearer <token>", and the Confluent Cloud headers when set. It is
// safe for concurrent use.
type Bearer struct {
	// Source is STATIC_TOKEN or OAUTHBEARER.
	Source string
	// LogicalCluster and IdentityPoolID are bearer.auth.logical.cluster and bearer.auth.identity.pool.id,
	// sent as the target-sr-cluster and Confluent-Identity-Pool-Id headers when not empty.
	LogicalCluster, IdentityPoolID string

	static string                   // STATIC_TOKEN's bearer.auth.token
	tokens *oauth.ClientCredentials // OAUTHBEARER's cached client-credentials login
}

// token is the token to send: the static one, or the cached OAuth token (fetched when its refresh
// time has come, which blocks until the token endpoint answers or ctx ends).
func (b *Bearer) token(ctx context.Context) (string, error) {
	if b.tokens == nil {
		return b.static, nil
	}
	token, err := b.tokens.Token(ctx)
	if err != nil {
		return "", &tokenError{fmt.Errorf("%s=%s as client id %q: %w", ConfigBearerSource, bearerOAuth, b.tokens.ClientID, err)}
	}
	return token, nil
}

// tokenError is a failure to obtain the OAuth token: its TLS errors are the token endpoint's, not the
// registry's, so explainTLS leaves them alone.
type tokenError struct{ error }

func (e *tokenError) Unwrap() error { return e.error }

// parseSecurity reads schema.registry.ssl.* and bearer.auth.* into c.
func (c *Config) parseSecurity(settings map[string]string) error {
	tlsConfig, err := parseTLS(settings, ConfigSSLPrefix)
	if err != nil {
		return err
	}
	c.TLS = tlsConfig
	return c.parseBearer(settings)
}

// parseTLS builds the TLS config of the keys under prefix, Kafka's ssl.* names behind it; nil when none
// is set. A key tlsconf.ClientConfig does not read is refused by name, unless it is one of
// unimplementedSSLKeys left empty.
func parseTLS(settings map[string]string, prefix string) (*tls.Config, error) {
	kafka := map[string]string{}
	for _, key := range slices.Sorted(maps.Keys(settings)) {
		if !strings.HasPrefix(key, prefix) {
			continue
		}
		name, value := "ssl."+strings.TrimPrefix(key, prefix), settings[key]
		switch reason, known := unimplementedSSLKeys[name]; {
		case slices.Contains(tlsconf.ClientKeys, name):
			kafka[name] = strings.TrimSpace(value)
		case known && strings.TrimSpace(value) == "":
		case known:
			return nil, fmt.Errorf("%w: %s is not supported by cdcd: %s", ErrConfig, key, reason)
		default:
			return nil, fmt.Errorf("%w: %s is not a TLS setting of the schema registry client (Kafka's ssl.* client keys under %s) cdcd implements; remove it", ErrConfig, key, prefix)
		}
	}
	if len(kafka) == 0 {
		return nil, nil
	}
	_, identificationSet := kafka[tlsconf.EndpointIdentificationAlgorithm]
	cfg, err := tlsconf.ClientConfig(tlsconf.Map(kafka), identificationSet)
	if err != nil {
		names := map[string]string{}
		for _, k := range tlsconf.ClientKeys {
			names[k] = prefix + strings.TrimPrefix(k, "ssl.")
		}
		return nil, fmt.Errorf("%w: %w", ErrConfig, tlsconf.Renamed(err, names))
	}
	return cfg, nil
}

// parseBearer applies bearer.auth.credentials.source. Without it the other bearer.auth.* keys are
// ignored, as Confluent ignores them.
func (c *Config) parseBearer(settings map[string]string) error {
	source := strings.ToUpper(strings.TrimSpace(settings[ConfigBearerSource]))
	if source == "" {
		return nil
	}
	// Confluent's RestService refuses both sources set; a URL's user info is basic auth as well.
	if strings.TrimSpace(settings[ConfigCredentialsSource]) != "" {
		return fmt.Errorf("%w: only one of %s and %s may be set", ErrConfig, ConfigCredentialsSource, ConfigBearerSource)
	}
	if len(c.Credentials) > 0 {
		return fmt.Errorf("%w: %s=%s, but %s carries user info (basic auth): remove it from the URL", ErrConfig, ConfigBearerSource, source, ConfigURL)
	}
	b := &Bearer{Source: source,
		LogicalCluster: strings.TrimSpace(settings[ConfigBearerLogicalCluster]),
		IdentityPoolID: strings.TrimSpace(settings[ConfigBearerIdentityPool])}
	switch source {
	case bearerStaticToken:
		if b.static = strings.TrimSpace(settings[ConfigBearerToken]); b.static == "" {
			return fmt.Errorf("%w: %s=%s needs %s", ErrConfig, ConfigBearerSource, source, ConfigBearerToken)
		}
	case bearerOAuth:
		tokens, err := parseOAuth(settings)
		if err != nil {
			return err
		}
		b.tokens = tokens
	case bearerSASLInherit:
		return fmt.Errorf("%w: %s=%s is not supported by cdcd: it takes the token of the Kafka client's SASL/OAUTHBEARER login, which a converter does not share in cdcd; "+
			"set %s=%s with %s, %s and %s", ErrConfig, ConfigBearerSource, source, ConfigBearerSource, bearerOAuth,
			ConfigBearerIssuer, ConfigBearerClientID, ConfigBearerClientSecret)
	case bearerCustom:
		return fmt.Errorf("%w: %s=%s is not supported by cdcd: its token comes from a Java class (%s), which cdcd cannot load; use %s or %s",
			ErrConfig, ConfigBearerSource, source, ConfigBearerCustomProvider, bearerStaticToken, bearerOAuth)
	default:
		return fmt.Errorf("%w: %s=%q (want %s or %s)", ErrConfig, ConfigBearerSource, settings[ConfigBearerSource], bearerStaticToken, bearerOAuth)
	}
	c.Bearer = b
	return nil
}

// parseOAuth reads OAUTHBEARER's client-credentials login: Confluent's OauthCredentialProvider, with
// Kafka's default login retries and its token cache (80 % of the lifetime, not within
// bearer.auth.cache.expiry.buffer.seconds of the expiry). The token endpoint's https trusts the
// unprefixed ssl.truststore.* and ssl.endpoint.identification.algorithm, as Confluent's does.
func parseOAuth(settings map[string]string) (*oauth.ClientCredentials, error) {
	get := func(key string) string { return strings.TrimSpace(settings[key]) }
	raw := get(ConfigBearerIssuer)
	if raw == "" {
		return nil, fmt.Errorf("%w: %s=%s needs %s (the OAuth token endpoint)", ErrConfig, ConfigBearerSource, bearerOAuth, ConfigBearerIssuer)
	}
	endpoint, err := url.Parse(raw)
	if err != nil || endpoint.Host == "" || (endpoint.Scheme != "http" && endpoint.Scheme != "https") {
		return nil, fmt.Errorf("%w: %s=%q is not an http(s) URL", ErrConfig, ConfigBearerIssuer, hideUserInfo(raw))
	}
	for _, key := range []string{ConfigBearerClientID, ConfigBearerClientSecret} {
		if get(key) == "" {
			return nil, fmt.Errorf("%w: %s=%s needs %s", ErrConfig, ConfigBearerSource, bearerOAuth, key)
		}
	}
	buffer := defaultCacheBufferSeconds
	if v, ok := settings[ConfigBearerCacheBuffer]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 || n > maxCacheBufferSeconds {
			return nil, fmt.Errorf("%w: %s=%q (want seconds from 0 to %d)", ErrConfig, ConfigBearerCacheBuffer, v, maxCacheBufferSeconds)
		}
		buffer = n
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if endpoint.Scheme == "https" {
		endpointTLS := map[string]string{}
		for _, key := range []string{tlsconf.TruststoreLocation, tlsconf.TruststorePassword, tlsconf.TruststoreType, tlsconf.EndpointIdentificationAlgorithm} {
			if v, ok := settings[key]; ok {
				endpointTLS[key] = v
			}
		}
		if transport.TLSClientConfig, err = parseTLS(endpointTLS, "ssl."); err != nil {
			return nil, err
		}
	}
	return &oauth.ClientCredentials{
		Endpoint: endpoint, Client: &http.Client{Transport: transport},
		ClientID: get(ConfigBearerClientID), ClientSecret: settings[ConfigBearerClientSecret], Scope: get(ConfigBearerScope),
		SubClaim: get(ConfigBearerSubClaim), ScopeClaim: get(ConfigBearerScopeClaim),
		Policy: oauth.RefreshPolicy{Factor: 0.8, Buffer: time.Duration(buffer) * time.Second,
			Backoff: 100 * time.Millisecond, BackoffMax: 10 * time.Second},
		Keys: oauth.Keys{Endpoint: ConfigBearerIssuer, SubClaim: ConfigBearerSubClaim, ScopeClaim: ConfigBearerScopeClaim},
	}, nil
}

// explainTLS is a registry request's TLS failure said with the keys that fix it; nil when err is no
// TLS failure of the registry's own connection. Such a failure is fatal: the same certificate meets
// the same check after every restart until the registry or the converter's settings change.
func explainTLS(err error) error {
	var tokenErr *tokenError
	if errors.As(err, &tokenErr) {
		return nil
	}
	var host x509.HostnameError
	var unknown x509.UnknownAuthorityError
	var verify *tls.CertificateVerificationError
	var op *net.OpError
	switch {
	case errors.As(err, &host):
		return fmt.Errorf("the registry's certificate does not name the host of %s (%w): use a name it holds, or set %sendpoint.identification.algorithm= (empty) to verify its chain only",
			ConfigURL, err, ConfigSSLPrefix)
	case errors.As(err, &unknown), errors.As(err, &verify):
		return fmt.Errorf("the registry's certificate is not trusted (%w): set %struststore.location (or %struststore.certificates) to a store holding the CA that signed it",
			err, ConfigSSLPrefix, ConfigSSLPrefix)
	case errors.As(err, &op) && op.Op == "remote error":
		return fmt.Errorf("the registry refused the TLS handshake (%w): if it requires a client certificate, set %skeystore.location (or %skeystore.key and %skeystore.certificate.chain); "+
			"if it speaks no TLS version offered, check %senabled.protocols and %sprotocol", err, ConfigSSLPrefix, ConfigSSLPrefix, ConfigSSLPrefix, ConfigSSLPrefix, ConfigSSLPrefix)
	}
	return nil
}

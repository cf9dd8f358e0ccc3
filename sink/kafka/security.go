package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"

	"github.com/cdcd/cdcd/source/props"
	"github.com/cdcd/cdcd/source/tlsconf"
)

// This file is a Kafka client's security as Kafka's clients configure it: security.protocol, the ssl.*
// keys (the stores through source/tlsconf) and the sasl.* keys, sasl.jaas.config parsed as Kafka parses
// it. Every key of the family (security.*, ssl.*, sasl.*) is either honoured or refused by name; none is
// ignored. TLS never falls back to plaintext, and hostname verification is on unless
// ssl.endpoint.identification.algorithm is set empty, as in Kafka.

// Security protocols (Kafka's SecurityProtocol).
const (
	Plaintext     = "PLAINTEXT"
	SSL           = "SSL"
	SASLPlaintext = "SASL_PLAINTEXT"
	SASLSSL       = "SASL_SSL"
)

// ClientSecurity is one Kafka client's TLS and SASL. The zero value is PLAINTEXT.
type ClientSecurity struct {
	// Protocol is security.protocol: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL.
	Protocol string
	// TLS is the handshake's config for SSL and SASL_SSL, nil otherwise.
	TLS *tls.Config
	// SASL authenticates each connection for SASL_PLAINTEXT and SASL_SSL, nil otherwise.
	SASL sasl.Mechanism
	// who names the mechanism and the principal for errors ("SASL/SCRAM-SHA-512 as user \"cdcd\"").
	who string
}

// SettingError is a security setting that cannot be honoured. Its message names the key (and the value
// when it is no secret) and why.
type SettingError struct {
	Key string
	Err error
}

func (e *SettingError) Error() string { return e.Key + ": " + e.Err.Error() }
func (e *SettingError) Unwrap() error { return e.Err }

// ConfigKey is the key the error is about, for validation results.
func (e *SettingError) ConfigKey() string { return e.Key }

// WithKeyPrefix returns err with prefix put before the key of every *SettingError it is or joins
// (e.g. "producer." for the producer's), so that its keys are the ones a config file holds.
func WithKeyPrefix(err error, prefix string) error {
	var se *SettingError
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range joined.Unwrap() {
			out = append(out, WithKeyPrefix(e, prefix))
		}
		return errors.Join(out...)
	}
	if errors.As(err, &se) && err == error(se) {
		return &SettingError{Key: prefix + se.Key, Err: se.Err}
	}
	return err
}

func settingErr(key, format string, args ...any) error {
	return &SettingError{Key: key, Err: fmt.Errorf(format, args...)}
}

// Keys of the family with no value of their own that cdcd could honour, and why.
var refusedSecurityKeys = map[string]string{
	"security.providers":                                  "Java security providers are classes, which cdcd cannot run",
	"ssl.provider":                                        "Java security providers are classes, which cdcd cannot run; cdcd's TLS is Go's crypto/tls",
	"ssl.engine.factory.class":                            "an SSL engine factory is a Java class, which cdcd cannot run",
	"ssl.secure.random.implementation":                    "cdcd's TLS draws its randomness from Go's crypto/rand, which cannot be replaced",
	"sasl.login.class":                                    "SASL login classes are Java classes, which cdcd cannot run",
	"ssl.client.auth":                                     "a server setting (the broker's, or the REST listener's at the top of a worker file); a Kafka client does not use it",
	"ssl.principal.mapping.rules":                         "a broker setting; a Kafka client does not use it",
	"sasl.enabled.mechanisms":                             "a broker setting; a client names its one mechanism with sasl.mechanism",
	"sasl.oauthbearer.jwks.endpoint.url":                  "a broker setting (token validation); a client does not use it",
	"sasl.oauthbearer.jwks.endpoint.refresh.ms":           "a broker setting (token validation); a client does not use it",
	"sasl.oauthbearer.jwks.endpoint.retry.backoff.ms":     "a broker setting (token validation); a client does not use it",
	"sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms": "a broker setting (token validation); a client does not use it",
	"sasl.oauthbearer.expected.audience":                  "a broker setting (token validation); a client does not use it",
	"sasl.oauthbearer.expected.issuer":                    "a broker setting (token validation); a client does not use it",
	"sasl.oauthbearer.clock.skew.seconds":                 "a broker setting (token validation); a client does not use it",
}

// Login callback handlers, retrievers and validators of Kafka's OIDC client-credentials login, which cdcd
// implements (Kafka 3.1–3.3 named the handler under .secured).
var (
	oidcLoginHandlers = []string{
		"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
		"org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler",
	}
	oidcRetrievers = []string{
		"org.apache.kafka.common.security.oauthbearer.DefaultJwtRetriever",
		"org.apache.kafka.common.security.oauthbearer.ClientCredentialsJwtRetriever",
	}
	oidcValidators = []string{
		"org.apache.kafka.common.security.oauthbearer.DefaultJwtValidator",
		"org.apache.kafka.common.security.oauthbearer.ClientJwtValidator",
	}
)

// Java key and trust manager algorithms: each picks Java's implementation of the standard X.509 checks,
// which Go's crypto/tls performs.
var (
	keyManagerAlgorithms   = []string{"SunX509", "PKIX", "X509", "X.509", "NewSunX509"}
	trustManagerAlgorithms = []string{"PKIX", "SunX509", "SunPKIX", "X509", "X.509"}
)

// ParseClientSecurity reads the security keys of one Kafka client's settings (prefix removed, e.g. the
// producer.* keys without "producer."); keys outside the family are left to the caller. It reads files
// (keystores, truststores, and for AWS_MSK_IAM the AWS SDK's shared config) but does not contact anything. An error joins one *SettingError per key that
// cannot be honoured; no message carries a password, key or token.
//
// As in Kafka, the ssl.* keys are used only with SSL and SASL_SSL (beside a PLAINTEXT protocol they are
// accepted and unused: at the top of a worker file they may be the REST listener's). The sasl.* keys
// are refused beside a protocol without SASL: they have no other use, and a client meant to authenticate
// must not silently connect without.
func ParseClientSecurity(settings map[string]string) (ClientSecurity, error) {
	get := func(key string) string { return strings.TrimSpace(settings[key]) }
	var errs []error
	keys := make([]string, 0, len(settings))
	for k := range settings {
		if props.IsKafkaSecurityKey(k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := checkSecurityKey(k, get(k)); err != nil {
			errs = append(errs, err)
		}
	}

	sec := ClientSecurity{Protocol: Plaintext}
	if p := get("security.protocol"); p != "" {
		sec.Protocol = strings.ToUpper(p)
	}
	useTLS, useSASL := false, false
	switch sec.Protocol {
	case Plaintext:
	case SSL:
		useTLS = true
	case SASLPlaintext:
		useSASL = true
	case SASLSSL:
		useTLS, useSASL = true, true
	default:
		errs = append(errs, settingErr("security.protocol", "%q is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL", get("security.protocol")))
	}
	if len(errs) > 0 {
		return ClientSecurity{}, errors.Join(errs...)
	}
	if useTLS {
		cfg, err := clientTLS(settings)
		if err != nil {
			errs = append(errs, err)
		}
		sec.TLS = cfg
	}
	if useSASL {
		mech, who, err := clientSASL(settings)
		if err != nil {
			errs = append(errs, err)
		}
		sec.SASL, sec.who = mech, who
	} else {
		for _, k := range keys {
			if strings.HasPrefix(k, "sasl.") && get(k) != "" {
				errs = append(errs, settingErr(k, "is set, but security.protocol=%s does not authenticate with SASL; set security.protocol=SASL_SSL (or SASL_PLAINTEXT), or remove it", sec.Protocol))
			}
		}
	}
	if len(errs) > 0 {
		return ClientSecurity{}, errors.Join(errs...)
	}
	return sec, nil
}

// checkSecurityKey refuses a key of the family cdcd does not implement, or a value it cannot honour.
func checkSecurityKey(key, value string) error {
	if reason, ok := refusedSecurityKeys[key]; ok {
		if value == "" {
			return nil // unset, as in Kafka
		}
		return settingErr(key, "cdcd does not implement it: %s", reason)
	}
	switch {
	case key == "security.protocol", slices.Contains(tlsconf.Keys, key), key == "ssl.endpoint.identification.algorithm",
		key == "ssl.protocol", key == "ssl.enabled.protocols", key == "ssl.cipher.suites",
		key == "sasl.mechanism", key == "sasl.jaas.config":
		return nil // read where they are used
	case key == "ssl.keymanager.algorithm":
		if value != "" && !slices.Contains(keyManagerAlgorithms, value) {
			return settingErr(key, "%q is not supported; cdcd's TLS uses the standard X.509 key manager (SunX509)", value)
		}
		return nil
	case key == "ssl.trustmanager.algorithm":
		if value != "" && !slices.Contains(trustManagerAlgorithms, value) {
			return settingErr(key, "%q is not supported; cdcd's TLS uses the standard PKIX trust manager", value)
		}
		return nil
	case key == "sasl.client.callback.handler.class":
		// The one client callback handler whose job cdcd does: AWS_MSK_IAM's signing (clientSASL checks
		// the mechanism).
		if value != "" && value != iamCallbackHandler {
			return settingErr(key, "%s is not supported: SASL callback handlers are Java classes, which cdcd cannot run; cdcd implements %s (with sasl.mechanism=AWS_MSK_IAM)", value, iamCallbackHandler)
		}
		return nil
	case key == "sasl.login.callback.handler.class":
		if value != "" && !slices.Contains(oidcLoginHandlers, value) {
			return settingErr(key, "%s is not supported: login callback handlers are Java classes; cdcd implements Kafka's OIDC login (%s)", value, oidcLoginHandlers[0])
		}
		return nil
	case key == "sasl.oauthbearer.jwt.retriever.class":
		if value != "" && !slices.Contains(oidcRetrievers, value) {
			return settingErr(key, "%s is not supported; cdcd implements the client-credentials grant (%s)", value, oidcRetrievers[1])
		}
		return nil
	case key == "sasl.oauthbearer.jwt.validator.class":
		if value != "" && !slices.Contains(oidcValidators, value) {
			return settingErr(key, "%s is not supported; cdcd checks tokens as %s does", value, oidcValidators[1])
		}
		return nil
	case oauthKeys[key]:
		return nil // read by the OAUTHBEARER login
	case strings.HasPrefix(key, "sasl.kerberos."):
		if value == "" {
			return nil
		}
		return settingErr(key, "Kerberos (GSSAPI) is not implemented in cdcd; use SCRAM-SHA-512, PLAIN or OAUTHBEARER")
	case strings.HasPrefix(key, "sasl.oauthbearer.assertion."):
		if value == "" {
			return nil
		}
		return settingErr(key, "the OAuth jwt-bearer grant is not implemented in cdcd; use the client-credentials grant (sasl.oauthbearer.client.credentials.client.id and .client.secret)")
	}
	return settingErr(key, "not a Kafka client security setting cdcd implements; remove it (cdcd refuses security settings it would otherwise ignore)")
}

// clientTLS builds the TLS config of SSL and SASL_SSL from the ssl.* keys: tlsconf's client config (stores,
// versions, host name verification) and Kafka's ssl.cipher.suites. Each error is a *SettingError on its key.
func clientTLS(settings map[string]string) (*tls.Config, error) {
	var errs []error
	_, identificationSet := settings[tlsconf.EndpointIdentificationAlgorithm]
	cfg, err := tlsconf.ClientConfig(tlsconf.Map(settings), identificationSet)
	for _, ke := range tlsconf.KeyErrors(err) {
		errs = append(errs, &SettingError{Key: ke.Key, Err: ke.Err})
	}
	if suites := strings.TrimSpace(settings["ssl.cipher.suites"]); suites != "" {
		ids, err := cipherSuites(splitList(suites))
		if err != nil {
			errs = append(errs, err)
		}
		if cfg != nil {
			cfg.CipherSuites = ids
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return cfg, nil
}

// cipherSuites maps Java's (IANA) cipher suite names to Go's. TLS 1.3's three suites are always enabled
// in Go, so a list must name all of them or none.
func cipherSuites(names []string) ([]uint16, error) {
	known := map[string]uint16{}
	for _, s := range tls.CipherSuites() {
		known[s.Name] = s.ID
	}
	tls13 := map[string]bool{"TLS_AES_128_GCM_SHA256": true, "TLS_AES_256_GCM_SHA384": true, "TLS_CHACHA20_POLY1305_SHA256": true}
	var ids []uint16
	var errs []error
	named13 := 0
	for _, n := range names {
		if tls13[n] {
			named13++
			continue
		}
		id, ok := known[n]
		if !ok {
			errs = append(errs, settingErr("ssl.cipher.suites", "%s is not a cipher suite cdcd offers (Go's secure TLS 1.2 suites and the TLS 1.3 ones)", n))
			continue
		}
		ids = append(ids, id)
	}
	if named13 != 0 && named13 != len(tls13) {
		errs = append(errs, settingErr("ssl.cipher.suites", "names some TLS 1.3 suites but not all; Go always offers all three (TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384, TLS_CHACHA20_POLY1305_SHA256)"))
	}
	return ids, errors.Join(errs...)
}

// JAAS login modules of the mechanisms cdcd implements.
const (
	plainLoginModule  = "org.apache.kafka.common.security.plain.PlainLoginModule"
	scramLoginModule  = "org.apache.kafka.common.security.scram.ScramLoginModule"
	oauthLoginModule  = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
	jaasConfigKey     = "sasl.jaas.config"
	saslMechanismKey  = "sasl.mechanism"
	defaultMechanism  = "GSSAPI" // Kafka's default sasl.mechanism
	awsMSKIAM         = "AWS_MSK_IAM"
	mechanismOAuth    = "OAUTHBEARER"
	mechanismPlain    = "PLAIN"
	mechanismSCRAM256 = "SCRAM-SHA-256"
	mechanismSCRAM512 = "SCRAM-SHA-512"
)

// clientSASL builds the mechanism of sasl.mechanism with the credentials of sasl.jaas.config.
func clientSASL(settings map[string]string) (sasl.Mechanism, string, error) {
	mechanism := strings.TrimSpace(settings[saslMechanismKey])
	if mechanism == "" {
		return nil, "", settingErr(saslMechanismKey, "is not set, and Kafka's default, GSSAPI (Kerberos), is not implemented in cdcd; set PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER or AWS_MSK_IAM")
	}
	switch mechanism {
	case mechanismPlain, mechanismSCRAM256, mechanismSCRAM512, mechanismOAuth, awsMSKIAM:
	case defaultMechanism:
		return nil, "", settingErr(saslMechanismKey, "GSSAPI (Kerberos) is not implemented in cdcd; use SCRAM-SHA-512, PLAIN, OAUTHBEARER or AWS_MSK_IAM")
	default:
		return nil, "", settingErr(saslMechanismKey, "%q is not one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, AWS_MSK_IAM", mechanism)
	}
	// IAMClientCallbackHandler refuses any other mechanism (it is configured with it), as does this.
	if h := strings.TrimSpace(settings["sasl.client.callback.handler.class"]); h != "" && mechanism != awsMSKIAM {
		return nil, "", settingErr("sasl.client.callback.handler.class", "%s signs for sasl.mechanism=AWS_MSK_IAM only, not %s; remove it", h, mechanism)
	}
	jaas := strings.TrimSpace(settings[jaasConfigKey])
	if jaas == "" && mechanism == awsMSKIAM {
		return nil, "", settingErr(jaasConfigKey, "is not set; SASL/AWS_MSK_IAM needs it as Kafka does: %s required; (Kafka's client-side JAAS files are not read by cdcd)", iamLoginModule)
	}
	if jaas == "" {
		return nil, "", settingErr(jaasConfigKey, "is not set; SASL/%s needs the login module and its credentials in it (Kafka's client-side JAAS files are not read by cdcd)", mechanism)
	}
	entry, err := parseJAAS(jaas)
	if err != nil {
		return nil, "", &SettingError{Key: jaasConfigKey, Err: err}
	}
	wantModule := map[string]string{mechanismPlain: plainLoginModule, mechanismSCRAM256: scramLoginModule, mechanismSCRAM512: scramLoginModule, mechanismOAuth: oauthLoginModule, awsMSKIAM: iamLoginModule}[mechanism]
	if entry.module != wantModule {
		return nil, "", settingErr(jaasConfigKey, "names the login module %s, but sasl.mechanism=%s needs %s", entry.module, mechanism, wantModule)
	}
	switch mechanism {
	case mechanismOAuth:
		m, err := newOAuthBearer(settings, entry.options)
		if err != nil {
			return nil, "", err
		}
		return m, m.who(), nil
	case awsMSKIAM:
		m, err := newMSKIAM(settings, entry.options)
		if err != nil {
			return nil, "", err
		}
		return m, m.who(), nil
	}

	user, password := entry.options["username"], entry.options["password"]
	var errs []error
	for _, o := range slices.Sorted(maps.Keys(entry.options)) {
		switch {
		case o == "username" || o == "password":
		case o == "tokenauth" && mechanism != mechanismPlain:
			if !strings.EqualFold(entry.options[o], "false") {
				errs = append(errs, settingErr(jaasConfigKey, "option tokenauth: delegation tokens are not implemented in cdcd; log in with a SCRAM user"))
			}
		default:
			errs = append(errs, settingErr(jaasConfigKey, "option %s is not one %s takes (username, password)", o, entry.module))
		}
	}
	if user == "" {
		errs = append(errs, settingErr(jaasConfigKey, "has no username option"))
	}
	if password == "" {
		errs = append(errs, settingErr(jaasConfigKey, "has no password option"))
	}
	if len(errs) > 0 {
		return nil, "", errors.Join(errs...)
	}
	who := fmt.Sprintf("SASL/%s as user %q", mechanism, user)
	if mechanism == mechanismPlain {
		return plain.Mechanism{Username: user, Password: password}, who, nil
	}
	algo := scram.SHA256
	if mechanism == mechanismSCRAM512 {
		algo = scram.SHA512
	}
	m, err := scram.Mechanism(algo, user, password)
	if err != nil {
		// SASLprep refused the name or password; xdg-go's message quotes neither.
		return nil, "", settingErr(jaasConfigKey, "the username or password is not valid for SCRAM (SASLprep): %v", err)
	}
	return m, who, nil
}

// Apply sets t's TLS and SASL to s's.
func (s ClientSecurity) Apply(t *kafkago.Transport) {
	t.TLS, t.SASL = s.TLS, s.SASL
}

// String names the protocol and, with SASL, the mechanism and principal; never a secret.
func (s ClientSecurity) String() string {
	p := s.Protocol
	if p == "" {
		p = Plaintext
	}
	if s.who != "" {
		return p + " (" + s.who + ")"
	}
	return p
}

// Transport is a kafka-go Transport with one client's security. Its RoundTrip errors say what failed in
// terms of the settings: the TLS handshake (untrusted certificate, host name, a listener that does not
// speak TLS) or SASL (the mechanism and the principal, never the password). It is safe for concurrent use
// and meant to be shared by every client of the same settings.
type Transport struct {
	*kafkago.Transport
	security ClientSecurity
}

var _ kafkago.RoundTripper = (*Transport)(nil)

// NewTransport returns a Transport with kafka-go's defaults, clientID and sec.
func NewTransport(sec ClientSecurity, clientID string) *Transport {
	t := &kafkago.Transport{ClientID: clientID}
	sec.Apply(t)
	return &Transport{Transport: t, security: sec}
}

// NewTransportFrom parses the security keys of settings and returns a Transport with them.
func NewTransportFrom(settings map[string]string, clientID string) (*Transport, error) {
	sec, err := ParseClientSecurity(settings)
	if err != nil {
		return nil, err
	}
	return NewTransport(sec, clientID), nil
}

// Security returns the transport's parsed security.
func (t *Transport) Security() ClientSecurity { return t.security }

// RoundTrip is kafka-go's, with errors explained.
func (t *Transport) RoundTrip(ctx context.Context, addr net.Addr, req kafkago.Request) (kafkago.Response, error) {
	resp, err := t.Transport.RoundTrip(ctx, addr, req)
	if err != nil {
		return resp, t.security.explain(err)
	}
	return resp, nil
}

// ErrSecurity marks a failed TLS handshake or SASL authentication: a setting (or the broker's) must
// change, so no client retries it, as Kafka's clients treat SslAuthenticationException and
// SaslAuthenticationException as fatal.
var ErrSecurity = errors.New("kafka: TLS or SASL failed")

// securityError is an explained security failure. errors.Is sees ErrSecurity and the cause, except a
// cause that would make it look like a network error worth retrying (a TLS alert from the broker).
type securityError struct {
	msg   string
	err   error
	cause error // nil when err is only shown
}

func (e *securityError) Error() string { return e.msg + ": " + e.err.Error() }
func (e *securityError) Unwrap() []error {
	if e.cause == nil {
		return []error{ErrSecurity}
	}
	return []error{ErrSecurity, e.cause}
}

func explained(msg string, err error) error { return &securityError{msg: msg, err: err, cause: err} }

// explain adds to err what the settings have to do with it. Errors already explained pass unchanged.
func (s ClientSecurity) explain(err error) error {
	var done *securityError
	if errors.As(err, &done) {
		return err
	}
	var (
		unknownCA x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		record    tls.RecordHeaderError
		verify    *tls.CertificateVerificationError
		opErr     *net.OpError
	)
	switch {
	case errors.As(err, &hostname):
		return explained("TLS: the broker's certificate does not name the host dialled (fix the certificate or bootstrap.servers/advertised.listeners; ssl.endpoint.identification.algorithm= turns the check off)", err)
	case errors.As(err, &unknownCA):
		return explained("TLS: the broker's certificate is not signed by a CA the client trusts (check ssl.truststore.*)", err)
	case errors.As(err, &invalid):
		return explained("TLS: the broker's certificate is not valid", err)
	case errors.As(err, &verify):
		return explained("TLS: the broker's certificate was refused (check ssl.truststore.*)", err)
	case errors.As(err, &opErr) && opErr.Op == "remote error":
		// The broker sent a TLS alert: it refused the handshake (no or an untrusted client certificate,
		// no common version or cipher suite).
		return &securityError{msg: "TLS: the broker refused the handshake (does it require a client certificate? check ssl.keystore.*, ssl.enabled.protocols, ssl.cipher.suites)", err: err}
	case errors.As(err, &record):
		return explained(fmt.Sprintf("security.protocol=%s: the broker did not answer in TLS; is this a PLAINTEXT or SASL_PLAINTEXT listener?", s.Protocol), err)
	case errors.Is(err, kafkago.SASLAuthenticationFailed) && s.SASL != nil && s.SASL.Name() == awsMSKIAM:
		return explained(fmt.Sprintf("%s: authentication failed (the broker refused the signed request: the IAM identity needs kafka-cluster:Connect on the cluster, and cdcd's clock must be right)", s.whoOrProtocol()), err)
	case errors.Is(err, kafkago.SASLAuthenticationFailed):
		return explained(fmt.Sprintf("%s: authentication failed (check the username and password of sasl.jaas.config, or the token)", s.whoOrProtocol()), err)
	case errors.Is(err, kafkago.UnsupportedSASLMechanism):
		return explained(fmt.Sprintf("%s: the broker's listener does not enable this mechanism (sasl.mechanism)", s.whoOrProtocol()), err)
	case errors.Is(err, kafkago.IllegalSASLState):
		return explained(fmt.Sprintf("%s: the broker's listener does not take SASL; is it a PLAINTEXT or SSL listener?", s.whoOrProtocol()), err)
	}
	return err
}

func (s ClientSecurity) whoOrProtocol() string {
	if s.who != "" {
		return s.who
	}
	return "security.protocol=" + s.Protocol
}

// parseBounded reads a number within [lo, hi] (Kafka's DOUBLE, SHORT and LONG keys with a range).
func parseBounded(key, value string, lo, hi float64) (float64, error) {
	f, err := strconv.ParseFloat(value, 64)
	if err != nil || f < lo || f > hi {
		return 0, settingErr(key, "%q must be a number from %g to %g", value, lo, hi)
	}
	return f, nil
}

func parseMillisSetting(key, value string) (time.Duration, error) {
	d, err := parseMillis(value)
	if err != nil {
		return 0, settingErr(key, "%q: %v", value, err)
	}
	return d, nil
}

// validURL checks a token endpoint: http(s) with a host, or a file.
func validURL(key, value string) (*url.URL, error) {
	u, err := url.Parse(value)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http" && u.Scheme != "file") || (u.Scheme != "file" && u.Host == "") {
		return nil, settingErr(key, "%q is not an http, https or file URL", hideURLUser(value))
	}
	return u, nil
}

// hideURLUser drops the user info of a URL for messages.
func hideURLUser(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		u.User = url.User("[hidden]")
		return u.String()
	}
	return s
}

package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
)

// This file is a TLS client's whole configuration by Kafka's client keys (SslConfigs, as Confluent's
// schema registry client takes them under schema.registry.ssl.): the stores, the protocol versions and
// hostname verification. Cipher suites, providers and the key and trust manager algorithms are the
// caller's to refuse or honour.

// Kafka's names of the client keys besides the stores'.
const (
	Protocol                        = "ssl.protocol"
	EnabledProtocols                = "ssl.enabled.protocols"
	EndpointIdentificationAlgorithm = "ssl.endpoint.identification.algorithm"
)

// ClientKeys are the keys ClientConfig reads: Keys and the three above.
var ClientKeys = append(append([]string(nil), Keys...), Protocol, EnabledProtocols, EndpointIdentificationAlgorithm)

// ClientConfig builds a client's TLS config from Kafka's ssl.* keys: the truststore (nil: the system's
// roots), the keystore when one is configured (the client certificate a server may ask for), the
// versions of ssl.protocol and ssl.enabled.protocols, and hostname verification. A Lookup cannot tell an
// unset key from an empty one, and Kafka turns hostname verification off only for an empty
// ssl.endpoint.identification.algorithm (the default is https), so the caller says whether the key is
// set. Errors name Kafka's keys (the caller may rename them with Renamed), never a password or a key;
// every one found is returned, joined, each a *KeyError (KeyErrors lists them).
func ClientConfig(get Lookup, endpointIdentificationSet bool) (*tls.Config, error) {
	var errs []error
	cfg := &tls.Config{}
	pool, err := TrustPool(get)
	if err != nil {
		errs = append(errs, &KeyError{Key: storeKey(get, TruststoreLocation, TruststoreCertificates), Err: err})
	}
	cfg.RootCAs = pool
	if HasKeystore(get) {
		cert, err := KeyPair(get)
		if err != nil {
			errs = append(errs, &KeyError{Key: storeKey(get, KeystoreLocation, KeystoreKey), Err: err})
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	var versionErrs []error
	cfg.MinVersion, cfg.MaxVersion, versionErrs = versions(strings.TrimSpace(get(Protocol)), get(EnabledProtocols))
	errs = append(errs, versionErrs...)
	// Kafka's default is https: the server's certificate must name the host dialled. An empty value
	// turns the hostname check off; the certificate chain is still verified.
	switch algorithm := strings.TrimSpace(get(EndpointIdentificationAlgorithm)); {
	case !endpointIdentificationSet || strings.EqualFold(algorithm, "https"):
	case algorithm == "":
		cfg.InsecureSkipVerify = true // replaced by the chain check below, which skips only the host name
		cfg.VerifyConnection = VerifyChain(pool)
	default:
		errs = append(errs, keyErr(EndpointIdentificationAlgorithm, "%s=%q is not supported; use https (verify the server's host name, the default) or an empty value (do not)", EndpointIdentificationAlgorithm, algorithm))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return cfg, nil
}

// VerifyChain checks the peer's certificate chain against roots (the system's when nil) whatever names
// the certificate holds: with InsecureSkipVerify it is the verification without the host name. Its
// error is the one Go's own verification returns, a *tls.CertificateVerificationError.
func VerifyChain(roots *x509.CertPool) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("tls: the server sent no certificate")
		}
		opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool()}
		for _, c := range cs.PeerCertificates[1:] {
			opts.Intermediates.AddCert(c)
		}
		if _, err := cs.PeerCertificates[0].Verify(opts); err != nil {
			return &tls.CertificateVerificationError{UnverifiedCertificates: cs.PeerCertificates, Err: err}
		}
		return nil
	}
}

// versions are the lowest and highest TLS version of ssl.protocol (the SSLContext's protocol: its
// highest version; TLSv1.3 by default) and ssl.enabled.protocols (Kafka's default TLSv1.2,TLSv1.3). Go
// speaks TLS 1.2 and 1.3 only.
func versions(protocol, enabled string) (lowest, highest uint16, errs []error) {
	known := map[string]uint16{"TLSv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13}
	highest = tls.VersionTLS13
	switch protocol {
	case "", "TLS", "TLSv1.3":
	case "TLSv1.2":
		highest = tls.VersionTLS12
	default:
		errs = append(errs, keyErr(Protocol, "%s=%q is not supported; use TLSv1.3 (the default) or TLSv1.2", Protocol, protocol))
	}
	lowest = tls.VersionTLS12
	var lo, hi uint16
	for _, p := range strings.Split(enabled, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		v, ok := known[p]
		if !ok {
			errs = append(errs, keyErr(EnabledProtocols, "%s: %q is not supported; cdcd speaks TLSv1.2 and TLSv1.3", EnabledProtocols, p))
			continue
		}
		if lo == 0 || v < lo {
			lo = v
		}
		hi = max(hi, v)
	}
	if lo != 0 {
		lowest, highest = lo, min(highest, hi)
	}
	if lowest > highest {
		errs = append(errs, keyErr(EnabledProtocols, "%s enables no version %s=%s allows", EnabledProtocols, Protocol, protocol))
	}
	return lowest, highest, errs
}

// KeyError is ClientConfig's refusal of one key. Key is the Kafka name of the key to change (for a store,
// the key that names it: its location, else its inline PEM); the message already names it, so a caller
// that shows its own key first (or renames the keys with Renamed) need not add it.
type KeyError struct {
	Key string
	Err error
}

func (e *KeyError) Error() string { return e.Err.Error() }
func (e *KeyError) Unwrap() error { return e.Err }

func keyErr(key, format string, args ...any) *KeyError {
	return &KeyError{Key: key, Err: fmt.Errorf(format, args...)}
}

// KeyErrors lists the *KeyErrors of an error of ClientConfig, in the order they were found, looking
// through Renamed and errors.Join; nil for an error that holds none.
func KeyErrors(err error) []*KeyError {
	switch e := err.(type) {
	case interface{ Unwrap() []error }:
		var out []*KeyError
		for _, inner := range e.Unwrap() {
			out = append(out, KeyErrors(inner)...)
		}
		return out
	case *KeyError:
		return []*KeyError{e}
	case interface{ Unwrap() error }:
		return KeyErrors(e.Unwrap())
	}
	return nil
}

// storeKey is the key a store's error goes on: its location when set, else its inline PEM.
func storeKey(get Lookup, location, inline string) string {
	if strings.TrimSpace(get(location)) != "" {
		return location
	}
	return inline
}

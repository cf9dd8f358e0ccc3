package rest

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/cdcd/cdcd/source/tlsconf"
)

// This file is the REST API's TLS, configured with Connect's keys: listeners.https.ssl.* and, for a
// key not given there, ssl.*. The keystores and truststores are read by source/tlsconf: JKS (Connect's
// default type), PKCS12 or PEM (a file, or the key and chain inline in ssl.keystore.key and
// ssl.keystore.certificate.chain).

// sslSettings reads the ssl.* keys of the https listener.
type sslSettings map[string]string

func (s sslSettings) get(key string) string {
	if v, ok := s["listeners.https."+key]; ok {
		return v
	}
	return s[key]
}

// HTTPS reports whether the worker's REST listener (the first of listeners) is https.
func HTTPS(listeners []string) bool {
	return len(listeners) > 0 && strings.HasPrefix(strings.ToLower(strings.TrimSpace(listeners[0])), "https:")
}

// ServerTLS is the https listener's TLS: the keystore's key and chain, and with ssl.client.auth=required
// (or requested) client certificates checked against the truststore.
func ServerTLS(props map[string]string) (*tls.Config, error) {
	s := sslSettings(props)
	cert, err := s.keyPair()
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	switch auth := strings.ToLower(s.get("ssl.client.auth")); auth {
	case "", "none":
		return cfg, nil
	case "required", "requested":
		pool, err := s.trustPool()
		if err != nil {
			return nil, err
		}
		if pool == nil {
			return nil, errors.New("ssl.client.auth=" + auth + " needs ssl.truststore.location")
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.VerifyClientCertIfGiven
		if auth == "required" {
			cfg.ClientAuth = tls.RequireAndVerifyClientCert
		}
		return cfg, nil
	default:
		return nil, fmt.Errorf("ssl.client.auth: %q is not one of none, requested, required", auth)
	}
}

// ForwardClient is the HTTP client a worker reaches other workers with: it trusts the truststore (the
// system's roots when none is set) and presents the keystore's certificate when one is set, as Connect's
// RestClient does.
func ForwardClient(props map[string]string) (*http.Client, error) {
	s := sslSettings(props)
	pool, err := s.trustPool()
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if tlsconf.HasKeystore(s.get) {
		cert, err := s.keyPair()
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = cfg
	return &http.Client{Transport: transport, Timeout: forwardTimeout}, nil
}

// keyPair loads the listener's keystore (see tlsconf.KeyPair).
func (s sslSettings) keyPair() (tls.Certificate, error) {
	if !tlsconf.HasKeystore(s.get) {
		return tls.Certificate{}, errors.New("an https listener needs ssl.keystore.location, or ssl.keystore.key and ssl.keystore.certificate.chain")
	}
	return tlsconf.KeyPair(s.get)
}

// trustPool loads the truststore's certificates; nil when no truststore is set.
func (s sslSettings) trustPool() (*x509.CertPool, error) { return tlsconf.TrustPool(s.get) }

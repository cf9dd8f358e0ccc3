package rest

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
)

// This file is the REST API's TLS, configured with Connect's keys: listeners.https.ssl.* and, for a
// key not given there, ssl.*. Keystores and truststores may be JKS (Connect's default type) or PEM
// (Kafka's PEM type: a file of the private key and its certificate chain, or the key and chain inline
// in ssl.keystore.key and ssl.keystore.certificate.chain) or PKCS12 (AES-encrypted, as current keytool
// and OpenSSL write them).

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
	if s.get("ssl.keystore.location") != "" || s.get("ssl.keystore.key") != "" {
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

func (s sslSettings) storeType(key string) string {
	t := strings.ToUpper(s.get(key))
	if t == "" {
		return "JKS"
	}
	return t
}

// keyPair loads the keystore's private key and certificate chain.
func (s sslSettings) keyPair() (tls.Certificate, error) {
	location := s.get("ssl.keystore.location")
	switch typ := s.storeType("ssl.keystore.type"); typ {
	case "PEM":
		if location == "" {
			key, chain := s.get("ssl.keystore.key"), s.get("ssl.keystore.certificate.chain")
			if key == "" || chain == "" {
				return tls.Certificate{}, errors.New("an https listener needs ssl.keystore.location, or ssl.keystore.key and ssl.keystore.certificate.chain")
			}
			return pemKeyPair([]byte(chain + "\n" + key))
		}
		data, err := os.ReadFile(location)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("ssl.keystore.location: %w", err)
		}
		return pemKeyPair(data)
	case "JKS", "PKCS12":
		if location == "" {
			return tls.Certificate{}, errors.New("an https listener needs ssl.keystore.location")
		}
		storePassword := s.get("ssl.keystore.password")
		keyPassword := s.get("ssl.key.password")
		if keyPassword == "" {
			keyPassword = storePassword
		}
		entries, err := readStore(typ, location, storePassword, keyPassword)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("ssl.keystore.location %s: %w", location, err)
		}
		for _, e := range entries {
			if e.key == nil {
				continue
			}
			key, err := x509.ParsePKCS8PrivateKey(e.key)
			if err != nil {
				return tls.Certificate{}, fmt.Errorf("ssl.keystore.location %s: key %q: %w", location, e.alias, err)
			}
			return tls.Certificate{Certificate: leafFirst(key, e.certs), PrivateKey: key}, nil
		}
		return tls.Certificate{}, fmt.Errorf("ssl.keystore.location %s holds no private key", location)
	default:
		return tls.Certificate{}, fmt.Errorf("ssl.keystore.type %s is not supported; use JKS, PKCS12 or PEM", typ)
	}
}

// leafFirst puts the certificate of key first: a PKCS12 store lists its certificates in no set order.
func leafFirst(key any, certs [][]byte) [][]byte {
	signer, ok := key.(crypto.Signer)
	if !ok {
		return certs
	}
	for i, der := range certs {
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			continue
		}
		if pub, ok := cert.PublicKey.(interface{ Equal(crypto.PublicKey) bool }); ok && pub.Equal(signer.Public()) {
			out := append([][]byte{der}, certs[:i]...)
			return append(out, certs[i+1:]...)
		}
	}
	return certs
}

// readStore reads a JKS or PKCS12 store file.
func readStore(typ, location, storePassword, keyPassword string) ([]storeEntry, error) {
	data, err := os.ReadFile(location)
	if err != nil {
		return nil, err
	}
	if typ == "PKCS12" {
		return readPKCS12(data, storePassword)
	}
	return readJKS(data, storePassword, keyPassword)
}

// pemKeyPair reads an unencrypted PEM private key and its certificate chain, in any order.
func pemKeyPair(data []byte) (tls.Certificate, error) {
	var certs, keys []byte
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type == "CERTIFICATE" {
			certs = append(certs, pem.EncodeToMemory(block)...)
		} else if strings.Contains(block.Type, "PRIVATE KEY") {
			if strings.Contains(block.Type, "ENCRYPTED") {
				return tls.Certificate{}, errors.New("the PEM private key is encrypted; cdcd reads unencrypted PEM keys only")
			}
			keys = append(keys, pem.EncodeToMemory(block)...)
		}
	}
	cert, err := tls.X509KeyPair(certs, keys)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("PEM keystore: %w", err)
	}
	return cert, nil
}

// trustPool loads the truststore's certificates; nil when no truststore is set.
func (s sslSettings) trustPool() (*x509.CertPool, error) {
	location := s.get("ssl.truststore.location")
	inline := s.get("ssl.truststore.certificates")
	if location == "" && inline == "" {
		return nil, nil
	}
	var data []byte
	if location != "" {
		var err error
		if data, err = os.ReadFile(location); err != nil {
			return nil, fmt.Errorf("ssl.truststore.location: %w", err)
		}
	}
	pool := x509.NewCertPool()
	switch typ := s.storeType("ssl.truststore.type"); {
	case typ == "PEM" || location == "":
		if !pool.AppendCertsFromPEM(append(data, inline...)) {
			return nil, errors.New("the PEM truststore holds no certificate")
		}
	case typ == "JKS" || typ == "PKCS12":
		entries, err := readStore(typ, location, s.get("ssl.truststore.password"), "")
		if err != nil {
			return nil, fmt.Errorf("ssl.truststore.location %s: %w", location, err)
		}
		for _, e := range entries {
			if e.key != nil || len(e.certs) == 0 {
				continue
			}
			cert, err := x509.ParseCertificate(e.certs[0])
			if err != nil {
				return nil, fmt.Errorf("ssl.truststore.location %s: certificate %q: %w", location, e.alias, err)
			}
			pool.AddCert(cert)
		}
	default:
		return nil, fmt.Errorf("ssl.truststore.type %s is not supported; use JKS, PKCS12 or PEM", typ)
	}
	return pool, nil
}

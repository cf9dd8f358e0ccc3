// Package tlsconf is TLS material in Java's keystore formats for every client and server of cdcd: JKS,
// PKCS12, PEM files and inline PEM, named by Kafka's ssl.* keys (ssl.keystore.*, ssl.truststore.*,
// ssl.key.password) and read by Kafka's rules (DefaultSslEngineFactory): the store types default to JKS,
// inline PEM is for the PEM type only and never beside a location, and a JKS truststore without a
// password is read without its integrity check.
//
// Errors name the key and the file, never a password or an inline key.
package tlsconf

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"github.com/cdcd/cdcd/source/regularfile"
)

// Kafka's names of the keys this package reads.
const (
	KeystoreType             = "ssl.keystore.type"
	KeystoreLocation         = "ssl.keystore.location"
	KeystorePassword         = "ssl.keystore.password"
	KeystoreKey              = "ssl.keystore.key"
	KeystoreCertificateChain = "ssl.keystore.certificate.chain"
	KeyPassword              = "ssl.key.password"
	TruststoreType           = "ssl.truststore.type"
	TruststoreLocation       = "ssl.truststore.location"
	TruststorePassword       = "ssl.truststore.password"
	TruststoreCertificates   = "ssl.truststore.certificates"
)

// Keys are the keys this package reads, for callers that check which keys of a family they honour.
var Keys = []string{
	KeystoreType, KeystoreLocation, KeystorePassword, KeystoreKey, KeystoreCertificateChain, KeyPassword,
	TruststoreType, TruststoreLocation, TruststorePassword, TruststoreCertificates,
}

// Lookup returns the value of one key by its Kafka name (ssl.keystore.location); "" when unset. A caller
// with prefixed keys (Connect's listeners.https.ssl.*) resolves its precedence in the Lookup.
type Lookup func(key string) string

// Map is the Lookup of settings keyed by Kafka's names.
func Map(settings map[string]string) Lookup {
	return func(key string) string { return settings[key] }
}

// ErrNoKeystore is KeyPair's error when no keystore is configured.
var ErrNoKeystore = errors.New("no keystore is configured: set ssl.keystore.location, or ssl.keystore.key and ssl.keystore.certificate.chain (ssl.keystore.type=PEM)")

// HasKeystore reports whether a keystore is configured: a location, or an inline PEM key or chain.
func HasKeystore(get Lookup) bool {
	return get(KeystoreLocation) != "" || get(KeystoreKey) != "" || get(KeystoreCertificateChain) != ""
}

func storeType(get Lookup, key string) string {
	if t := strings.ToUpper(strings.TrimSpace(get(key))); t != "" {
		return t
	}
	return "JKS" // Kafka's default for both stores
}

// KeyPair loads the keystore's private key and certificate chain: from the JKS or PKCS12 store at
// ssl.keystore.location (the key decrypted with ssl.key.password, else the store's password), from the
// PEM file there, or from the inline ssl.keystore.key and ssl.keystore.certificate.chain. A PEM key may
// be encrypted (PKCS #8 with PBES2), with ssl.key.password as its password.
func KeyPair(get Lookup) (tls.Certificate, error) {
	if !HasKeystore(get) {
		return tls.Certificate{}, ErrNoKeystore
	}
	typ := storeType(get, KeystoreType)
	location := get(KeystoreLocation)
	key, chain := get(KeystoreKey), get(KeystoreCertificateChain)
	if key != "" || chain != "" {
		switch {
		case typ != "PEM":
			return tls.Certificate{}, fmt.Errorf("%s and %s are for %s=PEM only, not %s", KeystoreKey, KeystoreCertificateChain, KeystoreType, typ)
		case location != "":
			return tls.Certificate{}, fmt.Errorf("both %s and the inline %s are set; set one", KeystoreLocation, KeystoreKey)
		case key == "":
			return tls.Certificate{}, fmt.Errorf("%s is set, but %s is not", KeystoreCertificateChain, KeystoreKey)
		case chain == "":
			return tls.Certificate{}, fmt.Errorf("%s is set, but %s is not", KeystoreKey, KeystoreCertificateChain)
		}
		cert, err := pemKeyPair([]byte(chain+"\n"+key), get(KeyPassword))
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("%s: %w", KeystoreKey, err)
		}
		return cert, nil
	}
	switch typ {
	case "PEM":
		data, err := readStoreFile(location)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("%s: %w", KeystoreLocation, err)
		}
		cert, err := pemKeyPair(data, get(KeyPassword))
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("%s %s: %w", KeystoreLocation, location, err)
		}
		return cert, nil
	case "JKS", "PKCS12":
		storePassword := get(KeystorePassword)
		keyPassword := get(KeyPassword)
		if keyPassword == "" {
			keyPassword = storePassword
		}
		entries, err := readStore(typ, location, storePassword, keyPassword)
		if err != nil {
			if storePassword == "" {
				err = fmt.Errorf("%w (%s is not set)", err, KeystorePassword)
			}
			return tls.Certificate{}, fmt.Errorf("%s %s: %w", KeystoreLocation, location, err)
		}
		for _, e := range entries {
			if e.key == nil {
				continue
			}
			key, err := x509.ParsePKCS8PrivateKey(e.key)
			if err != nil {
				return tls.Certificate{}, fmt.Errorf("%s %s: key %q: %w", KeystoreLocation, location, e.alias, err)
			}
			return tls.Certificate{Certificate: leafFirst(key, e.certs), PrivateKey: key}, nil
		}
		return tls.Certificate{}, fmt.Errorf("%s %s holds no private key", KeystoreLocation, location)
	default:
		return tls.Certificate{}, fmt.Errorf("%s %s is not supported; use JKS, PKCS12 or PEM", KeystoreType, typ)
	}
}

// TrustPool loads the truststore's certificates: the JKS or PKCS12 store or PEM file at
// ssl.truststore.location, or the inline PEM ssl.truststore.certificates. It returns nil when no
// truststore is configured: the caller then trusts the system's roots, as Java trusts its own.
func TrustPool(get Lookup) (*x509.CertPool, error) {
	location := get(TruststoreLocation)
	inline := get(TruststoreCertificates)
	if location == "" && inline == "" {
		return nil, nil
	}
	typ := storeType(get, TruststoreType)
	pool := x509.NewCertPool()
	if inline != "" {
		switch {
		case typ != "PEM":
			return nil, fmt.Errorf("%s is for %s=PEM only, not %s", TruststoreCertificates, TruststoreType, typ)
		case location != "":
			return nil, fmt.Errorf("both %s and %s are set; set one", TruststoreLocation, TruststoreCertificates)
		case !pool.AppendCertsFromPEM([]byte(inline)):
			return nil, fmt.Errorf("%s holds no PEM certificate", TruststoreCertificates)
		}
		return pool, nil
	}
	switch typ {
	case "PEM":
		data, err := readStoreFile(location)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", TruststoreLocation, err)
		}
		if !pool.AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("%s %s holds no PEM certificate", TruststoreLocation, location)
		}
	case "JKS", "PKCS12":
		entries, err := readStore(typ, location, get(TruststorePassword), "")
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", TruststoreLocation, location, err)
		}
		trusted := 0
		for _, e := range entries {
			if e.key != nil || len(e.certs) == 0 {
				continue
			}
			cert, err := x509.ParseCertificate(e.certs[0])
			if err != nil {
				return nil, fmt.Errorf("%s %s: certificate %q: %w", TruststoreLocation, location, e.alias, err)
			}
			pool.AddCert(cert)
			trusted++
		}
		if trusted == 0 {
			return nil, fmt.Errorf("%s %s holds no trusted certificate", TruststoreLocation, location)
		}
	default:
		return nil, fmt.Errorf("%s %s is not supported; use JKS, PKCS12 or PEM", TruststoreType, typ)
	}
	return pool, nil
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

// readStoreFile reads the regular file of a store or PEM location, of at most regularfile.MaxStoreSize
// bytes: a location a REST client names (producer.override.ssl.keystore.location=/dev/zero) must not grow the
// process or block a validation.
func readStoreFile(location string) ([]byte, error) {
	return regularfile.Read(location, regularfile.MaxStoreSize)
}

// readStore reads a JKS or PKCS12 store file. A JKS store read without a password (a truststore) is not
// checked for integrity, as Java reads it.
func readStore(typ, location, storePassword, keyPassword string) ([]storeEntry, error) {
	data, err := readStoreFile(location)
	if err != nil {
		return nil, err
	}
	if typ == "PKCS12" {
		return readPKCS12(data, storePassword, keyPassword)
	}
	return readJKS(data, storePassword, keyPassword)
}

// pemKeyPair reads a PEM private key and its certificate chain, in any order. An encrypted key
// (ENCRYPTED PRIVATE KEY, PKCS #8 with PBES2) is decrypted with password.
func pemKeyPair(data []byte, password string) (tls.Certificate, error) {
	var certs, keys []byte
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		switch {
		case block.Type == "CERTIFICATE":
			certs = append(certs, pem.EncodeToMemory(block)...)
		case block.Type == "ENCRYPTED PRIVATE KEY":
			der, err := decryptPKCS8(block.Bytes, password)
			if err != nil {
				return tls.Certificate{}, err
			}
			keys = append(keys, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})...)
		case strings.Contains(block.Type, "PRIVATE KEY"):
			if block.Headers["Proc-Type"] != "" {
				return tls.Certificate{}, errors.New("the PEM private key is encrypted the legacy OpenSSL way; convert it to PKCS #8 (openssl pkcs8 -topk8 -v2 aes-256-cbc)")
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

// decryptPKCS8 decrypts an EncryptedPrivateKeyInfo (RFC 5958) with password (ssl.key.password).
func decryptPKCS8(der []byte, password string) ([]byte, error) {
	if password == "" {
		return nil, fmt.Errorf("the PEM private key is encrypted and %s is not set", KeyPassword)
	}
	var info encryptedPrivateKeyInfo
	if _, err := asn1.Unmarshal(der, &info); err != nil {
		return nil, fmt.Errorf("encrypted PEM private key: %w", err)
	}
	key, err := pbes2Decrypt(info.Algorithm, info.Data, password)
	if errors.Is(err, errPKCS12BadPassword) {
		return nil, fmt.Errorf("the PEM private key does not decrypt: %s is wrong", KeyPassword)
	}
	if errors.Is(err, errLegacyPKCS12) {
		return nil, errors.New("the PEM private key uses a legacy encryption (3DES or RC2); re-encrypt it with PBES2 (openssl pkcs8 -topk8 -v2 aes-256-cbc)")
	}
	return key, err
}

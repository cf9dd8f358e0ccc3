package tlsconf

import (
	"bytes"
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"os"
	"strings"
	"testing"
)

// The stores in testdata hold one key and certificate (CN=localhost), written by keytool (JKS, PKCS12) and
// OpenSSL (PKCS12, PEM); server-key-encrypted.pem is its key as PKCS #8 with PBES2 (AES-256-CBC).
func serverCert(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/server-cert.pem")
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	return block.Bytes
}

func read(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestKeyPairFromEveryStoreType(t *testing.T) {
	chain := read(t, "testdata/server-cert.pem")
	tests := []struct {
		name     string
		settings map[string]string
	}{
		{"JKS with a key password of its own", map[string]string{KeystoreLocation: "testdata/server.jks", KeystorePassword: "keystorepw", KeyPassword: "keypassword"}},
		{"PKCS12 by keytool", map[string]string{KeystoreType: "PKCS12", KeystoreLocation: "testdata/server.p12", KeystorePassword: "keystorepw"}},
		{"PKCS12 by OpenSSL", map[string]string{KeystoreType: "pkcs12", KeystoreLocation: "testdata/server-openssl.p12", KeystorePassword: "opensslpw"}},
		{"PEM file", map[string]string{KeystoreType: "PEM", KeystoreLocation: "testdata/server.pem"}},
		{"inline PEM, encrypted key", map[string]string{KeystoreType: "PEM", KeystoreKey: read(t, "testdata/server-key-encrypted.pem"), KeystoreCertificateChain: chain, KeyPassword: "pemkeypw"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cert, err := KeyPair(Map(tt.settings))
			if err != nil {
				t.Fatal(err)
			}
			if len(cert.Certificate) == 0 || !bytes.Equal(cert.Certificate[0], serverCert(t)) || cert.PrivateKey == nil {
				t.Errorf("got %d certificates, the leaf is not the server's, or no key", len(cert.Certificate))
			}
		})
	}
}

func TestTrustPoolFromEveryStoreType(t *testing.T) {
	leaf, err := x509.ParseCertificate(serverCert(t))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		settings map[string]string
	}{
		{"JKS", map[string]string{TruststoreLocation: "testdata/trust.jks", TruststorePassword: "trustpw"}},
		// Java reads a JKS truststore without a password, skipping the integrity check.
		{"JKS without a password", map[string]string{TruststoreLocation: "testdata/trust.jks"}},
		{"PKCS12", map[string]string{TruststoreType: "PKCS12", TruststoreLocation: "testdata/trust.p12", TruststorePassword: "trustpw"}},
		{"PEM file", map[string]string{TruststoreType: "PEM", TruststoreLocation: "testdata/server-cert.pem"}},
		{"inline PEM", map[string]string{TruststoreType: "PEM", TruststoreCertificates: read(t, "testdata/server-cert.pem")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pool, err := TrustPool(Map(tt.settings))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "localhost"}); err != nil {
				t.Errorf("the pool does not trust the server's certificate: %v", err)
			}
		})
	}
	if pool, err := TrustPool(Map(nil)); pool != nil || err != nil {
		t.Errorf("no truststore: got %v, %v; want nil, nil (the system's roots)", pool, err)
	}
}

// Kafka's refusals, and wrong passwords: every error names the key and never a password or a key.
func TestRefusals(t *testing.T) {
	key := read(t, "testdata/server-key-encrypted.pem")
	chain := read(t, "testdata/server-cert.pem")
	keystore := []struct {
		settings map[string]string
		want     string
	}{
		{map[string]string{}, "no keystore is configured"},
		{map[string]string{KeystoreKey: key, KeystoreCertificateChain: chain, KeyPassword: "pemkeypw"}, "for ssl.keystore.type=PEM only, not JKS"},
		{map[string]string{KeystoreType: "PEM", KeystoreLocation: "testdata/server.pem", KeystoreKey: key, KeystoreCertificateChain: chain}, "both ssl.keystore.location and the inline ssl.keystore.key"},
		{map[string]string{KeystoreType: "PEM", KeystoreCertificateChain: chain}, "ssl.keystore.certificate.chain is set, but ssl.keystore.key is not"},
		{map[string]string{KeystoreType: "PEM", KeystoreKey: key, KeystoreCertificateChain: chain}, "encrypted and ssl.key.password is not set"},
		{map[string]string{KeystoreType: "PEM", KeystoreKey: key, KeystoreCertificateChain: chain, KeyPassword: "s3cret-wrong"}, "ssl.key.password is wrong"},
		{map[string]string{KeystoreLocation: "testdata/server.jks", KeystorePassword: "s3cret-wrong"}, "keystore password was incorrect"},
		{map[string]string{KeystoreLocation: "testdata/server.jks", KeystorePassword: "keystorepw", KeyPassword: "s3cret-wrong"}, "ssl.key.password"},
		{map[string]string{KeystoreLocation: "testdata/server.jks"}, "ssl.keystore.password is not set"},
		{map[string]string{KeystoreType: "PKCS12", KeystoreLocation: "testdata/server.p12", KeystorePassword: "s3cret-wrong"}, "wrong password"},
		{map[string]string{KeystoreLocation: "testdata/server.pem", KeystorePassword: "s3cret-wrong"}, "not a JKS keystore"},
		{map[string]string{KeystoreType: "BCFKS", KeystoreLocation: "x"}, "ssl.keystore.type BCFKS is not supported"},
	}
	for _, tt := range keystore {
		_, err := KeyPair(Map(tt.settings))
		checkRefusal(t, err, tt.want)
	}
	truststore := []struct {
		settings map[string]string
		want     string
	}{
		{map[string]string{TruststoreCertificates: chain}, "ssl.truststore.certificates is for ssl.truststore.type=PEM only, not JKS"},
		{map[string]string{TruststoreType: "PEM", TruststoreCertificates: chain, TruststoreLocation: "testdata/server-cert.pem"}, "both ssl.truststore.location and ssl.truststore.certificates"},
		{map[string]string{TruststoreType: "PEM", TruststoreCertificates: "s3cret-wrong"}, "holds no PEM certificate"},
		{map[string]string{TruststoreLocation: "testdata/trust.jks", TruststorePassword: "s3cret-wrong"}, "keystore password was incorrect"},
		{map[string]string{TruststoreLocation: "testdata/missing.jks"}, "ssl.truststore.location testdata/missing.jks"},
		{map[string]string{TruststoreType: "PKCS11", TruststoreLocation: "x"}, "ssl.truststore.type PKCS11 is not supported"},
	}
	for _, tt := range truststore {
		_, err := TrustPool(Map(tt.settings))
		checkRefusal(t, err, tt.want)
	}
}

func checkRefusal(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case err == nil || !strings.Contains(err.Error(), want):
		t.Errorf("got %v, want an error with %q", err, want)
	case strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "BEGIN"):
		t.Errorf("the error %q shows a secret", err)
	}
}

func TestErrNoKeystore(t *testing.T) {
	if _, err := KeyPair(Map(map[string]string{KeystorePassword: "x"})); !errors.Is(err, ErrNoKeystore) {
		t.Errorf("got %v, want ErrNoKeystore", err)
	}
}

// A key or store whose PBKDF2 iteration count is above the JDK's bound is refused before any hashing,
// naming the key that holds it: a crafted count of hundreds of millions cost minutes of CPU per validation.
func TestPBKDF2IterationCountIsBounded(t *testing.T) {
	block, _ := pem.Decode([]byte(read(t, "testdata/server-key-encrypted.pem")))
	chain := read(t, "testdata/server-cert.pem")
	for _, iterations := range []int{655_000_000, maxPBKDF2Iterations + 1, 0} {
		der := withIterations(t, block.Bytes, iterations)
		key := string(pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: der}))
		_, err := KeyPair(Map(map[string]string{KeystoreType: "PEM", KeystoreKey: key, KeystoreCertificateChain: chain, KeyPassword: "pemkeypw"}))
		checkRefusal(t, err, "ssl.keystore.key: PBKDF2 iteration count")
	}
}

// withIterations returns an EncryptedPrivateKeyInfo with its PBKDF2 iteration count set to n.
func withIterations(t *testing.T, der []byte, n int) []byte {
	t.Helper()
	var info encryptedPrivateKeyInfo
	if _, err := asn1.Unmarshal(der, &info); err != nil {
		t.Fatal(err)
	}
	var params pbes2Params
	if _, err := asn1.Unmarshal(info.Algorithm.Parameters.FullBytes, &params); err != nil {
		t.Fatal(err)
	}
	var kdf pbkdf2Params
	if _, err := asn1.Unmarshal(params.KDF.Parameters.FullBytes, &kdf); err != nil {
		t.Fatal(err)
	}
	kdf.Iterations = n
	var err error
	if params.KDF.Parameters.FullBytes, err = asn1.Marshal(kdf); err != nil {
		t.Fatal(err)
	}
	if info.Algorithm.Parameters.FullBytes, err = asn1.Marshal(params); err != nil {
		t.Fatal(err)
	}
	out, err := asn1.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A store location a REST client names may be a device or a FIFO: refused at once, naming the key.
func TestStoreLocationMustBeARegularFile(t *testing.T) {
	for _, typ := range []string{"JKS", "PKCS12", "PEM"} {
		_, err := TrustPool(Map(map[string]string{TruststoreType: typ, TruststoreLocation: "/dev/zero"}))
		checkRefusal(t, err, "ssl.truststore.location")
		checkRefusal(t, err, "not a regular file")
		_, err = KeyPair(Map(map[string]string{KeystoreType: typ, KeystoreLocation: "/dev/zero", KeystorePassword: "x"}))
		checkRefusal(t, err, "ssl.keystore.location")
		checkRefusal(t, err, "not a regular file")
	}
	if typ := StoreType("/dev/zero"); typ != "" {
		t.Errorf("StoreType(/dev/zero) = %q, want \"\" (unreadable)", typ)
	}
}

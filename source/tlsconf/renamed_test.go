package tlsconf

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStoreTypeFromContent: a store is typed by what it holds, not by its name, as Java opens it.
func TestStoreTypeFromContent(t *testing.T) {
	garbage := filepath.Join(t.TempDir(), "store.jks")
	if err := os.WriteFile(garbage, []byte("not a store"), 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"testdata/server.jks":           "JKS",
		"testdata/trust.jks":            "JKS",
		"testdata/server.p12":           "PKCS12",
		"testdata/server-openssl.p12":   "PKCS12",
		"testdata/server.pem":           "PEM",
		"testdata/server-cert.pem":      "PEM",
		garbage:                         "PKCS12",
		filepath.Join(t.TempDir(), "x"): "",
	} {
		if got := StoreType(path); got != want {
			t.Errorf("StoreType(%s) = %q, want %q", path, got, want)
		}
	}
}

// TestRenamedNamesTheCallersKeys: every Kafka name in the error becomes the caller's, the chain is kept,
// and the password is in no message.
func TestRenamedNamesTheCallersKeys(t *testing.T) {
	names := map[string]string{KeystoreLocation: "database.ssl.keystore", KeystorePassword: "database.ssl.keystore.password",
		KeyPassword: "database.ssl.keystore.password"}
	_, err := KeyPair(Map(map[string]string{KeystoreLocation: "testdata/server.jks", KeystorePassword: "wrong-secret"}))
	renamed := Renamed(err, names)
	msg := renamed.Error()
	if !strings.Contains(msg, "database.ssl.keystore testdata/server.jks") || strings.Contains(msg, "ssl.keystore.location") ||
		strings.Contains(msg, "wrong-secret") {
		t.Errorf("renamed error %q", msg)
	}
	if !errors.Is(renamed, err) {
		t.Error("the renamed error does not wrap the original")
	}
	if _, err := KeyPair(Map(nil)); !errors.Is(Renamed(err, names), ErrNoKeystore) {
		t.Error("ErrNoKeystore is lost")
	}
	if Renamed(nil, names) != nil {
		t.Error("a nil error is renamed into an error")
	}
}

package mysql

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/source/mysql/types"
)

// tlsBase is a config ParseConfig accepts, to which a test adds database.ssl.*.
func tlsBase(extra map[string]string) map[string]string {
	cfg := map[string]string{"database.hostname": "db.example", "database.user": "u", "database.server.id": "1",
		"topic.prefix": "p", "schema.history.internal.kafka.topic": "h", "schema.history.internal.kafka.bootstrap.servers": "k:9092"}
	maps.Copy(cfg, extra)
	return cfg
}

// TestSSLModeNames: each flavor reads its own Debezium names (trimmed, any case) into the same behaviours,
// with Debezium's defaults, and refuses the other flavor's names with its own name for the mode.
func TestSSLModeNames(t *testing.T) {
	cases := []struct {
		flavor types.Flavor
		value  string
		want   SSLMode
	}{
		{types.MySQL, "", SSLPreferred},
		{types.MySQL, "disabled", SSLDisabled},
		{types.MySQL, " PREFERRED ", SSLPreferred},
		{types.MySQL, "required", SSLRequired},
		{types.MySQL, "verify_ca", SSLVerifyCA},
		{types.MySQL, "Verify_Identity", SSLVerifyIdentity},
		{types.MariaDB, "", SSLDisabled},
		{types.MariaDB, "disable", SSLDisabled},
		{types.MariaDB, "TRUST", SSLRequired},
		{types.MariaDB, "verify-ca", SSLVerifyCA},
		{types.MariaDB, " verify-full", SSLVerifyIdentity},
	}
	for _, c := range cases {
		cfg, err := ParseConfig("c", c.flavor, tlsBase(map[string]string{"database.ssl.mode": c.value}), nil)
		if err != nil {
			t.Errorf("%s %q: %v", connectorName(c.flavor), c.value, err)
			continue
		}
		if cfg.SSLMode != c.want {
			t.Errorf("%s %q: mode %d, want %d", connectorName(c.flavor), c.value, cfg.SSLMode, c.want)
		}
	}
	refused := []struct {
		flavor      types.Flavor
		value, want string
	}{
		{types.MariaDB, "verify_identity", "the MariaDB connector calls that mode verify-full"},
		{types.MariaDB, "required", "the MariaDB connector calls that mode trust"},
		{types.MariaDB, "preferred", "the MariaDB connector has no preferred mode (TLS when the server offers it); use one of disable, trust, verify-ca, verify-full"},
		{types.MySQL, "verify-full", "the MySQL connector calls that mode verify_identity"},
		{types.MySQL, "trust", "the MySQL connector calls that mode required"},
		{types.MySQL, "on", "use one of disabled, preferred, required, verify_ca, verify_identity"},
	}
	for _, c := range refused {
		_, err := ParseConfig("c", c.flavor, tlsBase(map[string]string{"database.ssl.mode": c.value}), nil)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Key != "database.ssl.mode" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: %v, want a refusal of database.ssl.mode saying %q", connectorName(c.flavor), c.value, err, c.want)
		}
	}
}

// TestSSLModeTLSConfig: each mode's TLS config for both connections: none when disabled, encryption without
// verification up to required, the chain alone for verify_ca, chain and database.hostname for
// verify_identity.
func TestSSLModeTLSConfig(t *testing.T) {
	for _, c := range []struct {
		mode                string
		nilTLS, skip, chain bool
		serverName          string
	}{
		{mode: "disabled", nilTLS: true},
		{mode: "preferred", skip: true},
		{mode: "required", skip: true},
		{mode: "verify_ca", skip: true, chain: true},
		{mode: "verify_identity", serverName: "db.example"},
	} {
		cfg, err := ParseConfig("c", types.MySQL, tlsBase(map[string]string{"database.ssl.mode": c.mode}), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.mode, err)
		}
		if c.nilTLS {
			if cfg.TLS != nil {
				t.Errorf("%s: a TLS config", c.mode)
			}
			continue
		}
		if cfg.TLS == nil || cfg.TLS.InsecureSkipVerify != c.skip || (cfg.TLS.VerifyConnection != nil) != c.chain ||
			cfg.TLS.ServerName != c.serverName || len(cfg.TLS.Certificates) != 0 {
			t.Errorf("%s: TLS config %+v", c.mode, cfg.TLS)
		}
	}
}

// TestSSLStoresRefusedByKey: a store that does not open is refused at parse time naming Debezium's key,
// never its password; with TLS off the stores are not read, as Debezium does not read them. The stores are
// tlsconf's test stores.
func TestSSLStoresRefusedByKey(t *testing.T) {
	const secret = "not-the-password"
	cases := []struct {
		set     map[string]string
		key     string
		mention string
	}{
		{map[string]string{"database.ssl.mode": "verify-ca", "database.ssl.truststore": "../tlsconf/testdata/trust.jks", "database.ssl.truststore.password": secret},
			"database.ssl.truststore", "database.ssl.truststore ../tlsconf/testdata/trust.jks: keystore password was incorrect"},
		{map[string]string{"database.ssl.mode": "verify-full", "database.ssl.truststore": "../tlsconf/testdata/missing.p12"},
			"database.ssl.truststore", "no such file"},
		{map[string]string{"database.ssl.mode": "trust", "database.ssl.keystore": "../tlsconf/testdata/server.p12", "database.ssl.keystore.password": secret},
			"database.ssl.keystore", "database.ssl.keystore ../tlsconf/testdata/server.p12: the PKCS12 store does not decrypt"},
		{map[string]string{"database.ssl.mode": "trust", "database.ssl.keystore": "../tlsconf/testdata/server.jks"},
			"database.ssl.keystore", "(database.ssl.keystore.password is not set)"},
	}
	for _, c := range cases {
		_, err := ParseConfig("c", types.MariaDB, tlsBase(c.set), nil)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Key != c.key || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%v: %v, want a refusal of %s mentioning %q", c.set, err, c.key, c.mention)
		}
		if err != nil && (strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "ssl.keystore.location") ||
			strings.Contains(err.Error(), "ssl.truststore.location")) {
			t.Errorf("%v: the refusal names a password or Kafka's keys: %v", c.set, err)
		}
	}
	off := tlsBase(map[string]string{"database.ssl.truststore": "../tlsconf/testdata/missing.p12", "database.ssl.keystore": "/nowhere"})
	if cfg, err := ParseConfig("c", types.MariaDB, off, nil); err != nil || cfg.TLS != nil {
		t.Errorf("database.ssl.mode=disable read the stores: %v", err)
	}
	ok := tlsBase(map[string]string{"database.ssl.mode": "verify-ca", "database.ssl.truststore": "../tlsconf/testdata/trust.p12", "database.ssl.truststore.password": "trustpw",
		"database.ssl.keystore": "../tlsconf/testdata/server.jks", "database.ssl.keystore.password": "keystorepw"})
	// server.jks's key has a password of its own, which Debezium's binlog connectors cannot set either.
	if _, err := ParseConfig("c", types.MariaDB, ok, nil); err == nil || !strings.Contains(err.Error(), "the key password (database.ssl.keystore.password) is incorrect") {
		t.Errorf("a JKS key with a password of its own: %v", err)
	}
	ok["database.ssl.keystore"] = "../tlsconf/testdata/server.p12"
	cfg, err := ParseConfig("c", types.MariaDB, ok, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.TLS.Certificates) != 1 || cfg.TLS.VerifyConnection == nil {
		t.Errorf("the keystore is not the client certificate, or the chain is not verified: %+v", cfg.TLS)
	}
}

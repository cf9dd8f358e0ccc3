package mysql

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cdcd/cdcd/source/mysql/types"
	"github.com/cdcd/cdcd/source/props"
	"github.com/cdcd/cdcd/source/tlsconf"
)

// SSLMode is database.ssl.mode: whether and how the query connections and the binlog connection use TLS.
// Both connections always use the same mode and stores, so the binlog is never read less securely than the
// snapshot.
type SSLMode int

const (
	// SSLDisabled connects unencrypted.
	SSLDisabled SSLMode = iota
	// SSLPreferred uses TLS when the server offers it, unencrypted otherwise; the server is not verified.
	// The MySQL connector's default; the MariaDB connector has no such mode.
	SSLPreferred
	// SSLRequired uses TLS or does not connect; the server's certificate is not verified (Connector/J's
	// REQUIRED and MariaDB Connector/J's trust), so database.ssl.truststore is not read.
	SSLRequired
	// SSLVerifyCA is SSLRequired and the server's certificate chain verified against
	// database.ssl.truststore (the system's roots without one); the host name is not checked.
	SSLVerifyCA
	// SSLVerifyIdentity is SSLVerifyCA and the certificate naming database.hostname (a DNS name or IP
	// address of its subject alternative names).
	SSLVerifyIdentity
)

// sslModeNames are each flavor's names of the modes, indexed by SSLMode, as Debezium 3.6.1 spells them:
// MySqlSecureConnectionMode, and MariaDbSecureConnectionMode, whose names are MariaDB Connector/J's
// sslMode values (the MariaDB connector's documentation says verify_ca and verify_identity, which it
// does not accept). "" is a mode the flavor does not have.
var sslModeNames = map[types.Flavor][]string{
	types.MySQL:   {"disabled", "preferred", "required", "verify_ca", "verify_identity"},
	types.MariaDB: {"disable", "", "trust", "verify-ca", "verify-full"},
}

// defaultSSLMode is each flavor's default: Debezium's MySQL connector prefers TLS, its MariaDB connector
// connects unencrypted unless told otherwise.
var defaultSSLMode = map[types.Flavor]SSLMode{types.MySQL: SSLPreferred, types.MariaDB: SSLDisabled}

// sslModeName is mode's name in the flavor's config.
func sslModeName(flavor types.Flavor, mode SSLMode) string { return sslModeNames[flavor][mode] }

// parseSSLMode reads database.ssl.mode for flavor as Debezium does: trimmed, ignoring case. A MySQL name
// given to the MariaDB connector (or the reverse) is refused with the flavor's name for it.
func parseSSLMode(p *props.Parser, flavor types.Flavor) SSLMode {
	value, _ := p.Raw("database.ssl.mode")
	v := strings.TrimSpace(value)
	if v == "" {
		return defaultSSLMode[flavor]
	}
	names := sslModeNames[flavor]
	if i := slices.IndexFunc(names, func(n string) bool { return n != "" && strings.EqualFold(n, v) }); i >= 0 {
		return SSLMode(i)
	}
	valid := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == "" })
	reason := "use one of " + strings.Join(valid, ", ")
	for other, otherNames := range sslModeNames {
		i := slices.IndexFunc(otherNames, func(n string) bool { return n != "" && strings.EqualFold(n, v) })
		if other == flavor || i < 0 {
			continue
		}
		if own := names[i]; own != "" {
			reason = fmt.Sprintf("%s is the %s connector's name; the %s connector calls that mode %s", v, connectorName(other), connectorName(flavor), own)
		} else {
			reason = fmt.Sprintf("the %s connector has no %s mode (TLS when the server offers it); %s", connectorName(flavor), v, reason)
		}
	}
	p.Fail("database.ssl.mode", value, reason)
	return defaultSSLMode[flavor]
}

func connectorName(flavor types.Flavor) string {
	if flavor == types.MariaDB {
		return "MariaDB"
	}
	return "MySQL"
}

// storeKeys are Debezium's names of the stores' keys, by the Kafka names tlsconf reads them with. The
// key password is the keystore's, as Debezium unlocks the key with the keystore's password.
var storeKeys = map[string]string{
	tlsconf.KeystoreLocation:   "database.ssl.keystore",
	tlsconf.KeystorePassword:   "database.ssl.keystore.password",
	tlsconf.KeyPassword:        "database.ssl.keystore.password",
	tlsconf.TruststoreLocation: "database.ssl.truststore",
	tlsconf.TruststorePassword: "database.ssl.truststore.password",
}

// parseTLS reads database.ssl.* and, unless the mode is disabled, loads the stores into the TLS config
// of both connections; a store that cannot be read is refused naming its key. With TLS off the stores
// are not read, as Debezium reads them only with TLS on. The config is tlsconf's, as Kafka's clients
// build it: required and weaker read no truststore and verify nothing, verify_ca is Kafka's empty
// ssl.endpoint.identification.algorithm (the chain without the host name), verify_identity its https.
func parseTLS(p *props.Parser, c *Config) {
	c.SSLMode = parseSSLMode(p, c.Flavor)
	settings := map[string]string{}
	for _, key := range storeKeys {
		settings[key] = p.Str(key, "") // as given: a password may hold spaces, as database.password may
	}
	for _, key := range []string{"database.ssl.keystore", "database.ssl.truststore"} {
		settings[key] = strings.TrimSpace(settings[key])
	}
	if c.SSLMode == SSLDisabled {
		return
	}
	verify := c.SSLMode >= SSLVerifyCA
	get := func(key string) string {
		switch key {
		case tlsconf.KeystoreType:
			return tlsconf.StoreType(settings[storeKeys[tlsconf.KeystoreLocation]])
		case tlsconf.TruststoreType:
			return tlsconf.StoreType(settings[storeKeys[tlsconf.TruststoreLocation]])
		case tlsconf.TruststoreLocation, tlsconf.TruststorePassword:
			if !verify {
				return "" // nothing is verified, so the truststore is not read
			}
		}
		return settings[storeKeys[key]] // "" for the keys Debezium has no name for: Kafka's defaults
	}
	cfg, err := tlsconf.ClientConfig(get, c.SSLMode == SSLVerifyCA)
	for _, ke := range tlsconf.KeyErrors(err) {
		// Only the stores' keys are set, so each refusal is a store's, by its location.
		key := storeKeys[ke.Key]
		p.Add(&ConfigError{Key: key, Value: settings[key], Reason: tlsconf.Renamed(ke, storeKeys).Error()})
	}
	if err != nil {
		return
	}
	switch c.SSLMode {
	case SSLPreferred, SSLRequired:
		// Encryption only: Go verifies nothing with InsecureSkipVerify, as the drivers do in these modes.
		cfg.InsecureSkipVerify = true
	case SSLVerifyIdentity:
		cfg.ServerName = c.Host
	}
	c.TLS = cfg
}

// errServerWithoutTLS is the connect error of a server that does not offer TLS to a client that asks
// for it. go-mysql (client/auth.go, readInitialHandshake) refuses such a server when a TLS config is set
// rather than going on unencrypted, but says so only in text.
func errServerWithoutTLS(err error) bool {
	return err != nil && strings.Contains(err.Error(), "does not support TLS required by the client")
}

// tlsError explains a failed connection to addr, over a query or the binlog connection, that TLS failed;
// nil when err is not about TLS. Each is fatal: restarting cannot help, the server or the config must change.
func (c *Config) tlsError(addr string, err error) error {
	mode := sslModeName(c.Flavor, c.SSLMode)
	var verify *tls.CertificateVerificationError
	var hostname x509.HostnameError
	switch {
	case errServerWithoutTLS(err):
		return fatal(fmt.Errorf("database.ssl.mode=%s needs TLS, but the %s server at %s does not offer it, and cdcd never falls back to an unencrypted connection in this mode: enable TLS on the server, or set database.ssl.mode=%s to connect unencrypted",
			mode, connectorName(c.Flavor), addr, sslModeName(c.Flavor, SSLDisabled)))
	case errors.As(err, &hostname):
		return fatal(fmt.Errorf("database.ssl.mode=%s: the %s server's certificate at %s does not name database.hostname %s: %w; connect by a name the certificate holds, or set database.ssl.mode=%s to verify the CA only",
			mode, connectorName(c.Flavor), addr, c.Host, err, sslModeName(c.Flavor, SSLVerifyCA)))
	case errors.As(err, &verify):
		return fatal(fmt.Errorf("database.ssl.mode=%s: the %s server's certificate at %s is not trusted: %w; set database.ssl.truststore to a store holding the CA that signed it",
			mode, connectorName(c.Flavor), addr, err))
	}
	return nil
}

package postgres

import (
	"strings"
	"time"

	"github.com/cdcd/cdcd/source/props"
)

// noEffectOptions are pgjdbc options (database.<option>) that change nothing cdcd does: each is accepted
// with one INFO line saying why (props.NoEffectOptions).
var noEffectOptions = props.NoEffectOptions{
	"stringtype":                    "it types the parameters of statements that write, and cdcd only reads",
	"prepareThreshold":              "it tunes server-side prepared statements, which change no value read",
	"preparedStatementCacheQueries": "it tunes pgjdbc's statement cache, which cdcd has no equivalent of",
	"preparedStatementCacheSizeMiB": "it tunes pgjdbc's statement cache, which cdcd has no equivalent of",
	"reWriteBatchedInserts":         "it batches inserts, and cdcd only reads",
	"binaryTransfer":                "it picks pgjdbc's wire format; pgx picks its own, and the values read are the same",
	"defaultRowFetchSize":           "cdcd's snapshot fetches by snapshot.fetch.size, as Debezium's does (Debezium sets the fetch size on its statements too)",
	"assumeMinServerVersion":        "cdcd reads the server's version at connection",
	"logUnclosedConnections":        "it is a pgjdbc leak diagnostic",
	"readOnly":                      "cdcd's snapshot and catalog queries only read; the slot and publication it manages are not covered by it in pgjdbc either",
	"targetServerType":              "cdcd connects to the one database.hostname, which must be the primary or, for failover slots, a standby as the README's failover section says",
	"loadBalanceHosts":              "cdcd connects to the one database.hostname",
	"tcpNoDelay":                    "Go's connections send without delay (TCP_NODELAY) always",
	"gssEncMode":                    "cdcd negotiates no GSS encryption (pgjdbc's default, allow, falls back to none too); TLS is database.sslmode",
	"charSet":                       "PostgreSQL sends UTF-8 to cdcd, which asks for it, and Kafka carries the same Unicode text",
	// MySQL connector keys copied into PostgreSQL configs: Debezium hands them to pgjdbc, which ignores them.
	"server.id":               "it is a MySQL connector key; Debezium's PostgreSQL connector hands it to pgjdbc, which ignores it",
	"allowPublicKeyRetrieval": "it is a MySQL driver option; Debezium's PostgreSQL connector hands it to pgjdbc, which ignores it",
}

// The pgjdbc socket factories (database.sslfactory), by what they verify.
const (
	libpqFactory         = "org.postgresql.ssl.LibPQFactory"         // pgjdbc's default: sslmode decides, as in cdcd
	nonValidatingFactory = "org.postgresql.ssl.NonValidatingFactory" // encrypts, trusts any certificate
)

// parseDriverOptions reads the pgjdbc options that have a pgx equivalent, and returns a note on each that
// has no effect in cdcd.
func parseDriverOptions(p *props.Parser, c *Config) []string {
	c.TCPKeepAlive = p.Boolean("database.tcpKeepAlive", true)
	// loginTimeout bounds pgjdbc's whole connection attempt, connectTimeout its socket connect; pgx's
	// connect_timeout is the first, so either sets it, connectTimeout first.
	login := p.Integer("database.loginTimeout", 0, 0, 1<<31-1)
	c.ConnectTimeout = time.Duration(p.Integer("database.connectTimeout", login, 0, 1<<31-1)) * time.Second
	c.SocketTimeout = time.Duration(p.Integer("database.socketTimeout", 0, 0, 1<<31-1)) * time.Second
	// pgjdbc's name is ApplicationName; configs write applicationName too.
	c.ApplicationName = p.Str("database.ApplicationName", p.Str("database.applicationName", ""))
	// options is the startup packet's command-line options (-c search_path=… and the like), which pgx
	// sends as libpq does.
	c.Options = p.Str("database.options", "")
	sslFactory(p, c.SSLMode)
	return noEffectOptions.Notes(p)
}

// sslFactory checks database.sslfactory against database.sslmode: cdcd verifies what sslmode says, as
// pgjdbc's default factory does, and loads no Java class.
func sslFactory(p *props.Parser, sslMode string) {
	factory, _ := p.Raw("database.sslfactory")
	switch strings.TrimSpace(factory) {
	case "", libpqFactory:
	case nonValidatingFactory:
		if sslMode == "verify-ca" || sslMode == "verify-full" {
			p.Fail("database.sslfactory", factory, "NonValidatingFactory trusts any server certificate, and database.sslmode="+sslMode+" asks to verify it: remove database.sslfactory to verify, or write database.sslmode=require to encrypt without verifying")
		}
	default:
		p.Fail("database.sslfactory", factory, "cdcd does not load JDBC socket factories; remove it and choose the verification with database.sslmode (require encrypts without verifying; verify-full verifies against database.sslrootcert)")
	}
}

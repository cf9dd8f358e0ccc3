package mysql

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // database.connectionTimeZone names IANA zones; the image has no zoneinfo

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/cdcd/cdcd/source/mysql/types"
	"github.com/cdcd/cdcd/source/props"
)

// noEffectOptions are Connector/J's and MariaDB Connector/J's options (database.<option>) that change
// nothing cdcd does: each is accepted with one INFO line saying why (props.NoEffectOptions).
var noEffectOptions = props.NoEffectOptions{
	"allowPublicKeyRetrieval":       "go-mysql fetches the server's RSA key when caching_sha2_password or sha256_password asks for it on a connection without TLS, as true allows; to never send the password that way, use database.ssl.mode=required or stronger",
	"characterEncoding":             "cdcd asks the server for utf8mb4 and decodes each column by its own character set, and Kafka carries the same Unicode text whatever the wire encoding",
	"characterSetResults":           "cdcd asks the server for utf8mb4 and decodes each column by its own character set, and Kafka carries the same Unicode text whatever the wire encoding",
	"connectionCharset":             "cdcd asks the server for utf8mb4, and Kafka carries the same Unicode text whatever the wire encoding (it is not a Connector/J option either)",
	"connectionCollation":           "cdcd reads, and compares no text on the server",
	"useUnicode":                    "cdcd always reads Unicode",
	"useInformationSchema":          "Debezium sets it itself; cdcd reads table structure from the schema history and SHOW CREATE TABLE",
	"nullCatalogMeansCurrent":       "Debezium sets it itself; cdcd names every database explicitly",
	"autoReconnect":                 "cdcd reconnects by restarting the task from its offset (errors.max.retries), never mid-transaction",
	"maxReconnects":                 "cdcd reconnects by restarting the task from its offset (errors.max.retries)",
	"useCursorFetch":                "cdcd streams the snapshot's rows as the server sends them, which is what a cursor fetch bounds memory for",
	"defaultFetchSize":              "cdcd streams the snapshot's rows as the server sends them; snapshot.fetch.size is Debezium's fetch setting",
	"cachePrepStmts":                "it tunes Connector/J's statement cache, which changes no value read",
	"prepStmtCacheSize":             "it tunes Connector/J's statement cache, which changes no value read",
	"prepStmtCacheSqlLimit":         "it tunes Connector/J's statement cache, which changes no value read",
	"useServerPrepStmts":            "it picks Connector/J's protocol; the values read are the same",
	"rewriteBatchedStatements":      "it batches writes, and cdcd only reads",
	"useLocalSessionState":          "it saves Connector/J round trips, which changes no value read",
	"elideSetAutoCommits":           "it saves Connector/J round trips, which changes no value read",
	"cacheServerConfiguration":      "it saves Connector/J round trips, which changes no value read",
	"cacheResultSetMetadata":        "it saves Connector/J round trips, which changes no value read",
	"maintainTimeStats":             "it is a Connector/J diagnostic",
	"useSSL":                        "database.ssl.mode decides TLS, as Debezium sets the driver's sslMode from it, which overrides useSSL (useSSL=true without database.ssl.mode is read as database.ssl.mode=required)",
	"requireSSL":                    "database.ssl.mode decides TLS, as Debezium sets the driver's sslMode from it, which overrides requireSSL",
	"verifyServerCertificate":       "database.ssl.mode decides TLS, as Debezium sets the driver's sslMode from it, which overrides verifyServerCertificate",
	"sslMode":                       "database.ssl.mode decides TLS, as Debezium sets the driver's sslMode from it (a driver sslMode without database.ssl.mode is read as that database.ssl.mode)",
	"useLegacyDatetimeCode":         "Connector/J 8, which Debezium uses, no longer reads it",
	"useJDBCCompliantTimezoneShift": "Connector/J 8, which Debezium uses, no longer reads it",
	"useTimezone":                   "Connector/J 8, which Debezium uses, no longer reads it; the time zone option is connectionTimeZone",
	"tinyInt1isBit":                 "Debezium's converters read TINYINT(1) as a number either way, as cdcd does",
	"allowMultiQueries":             "cdcd runs one statement at a time",
	"allowLoadLocalInfile":          "Debezium forces it off, and cdcd never loads files",
	"allowUrlInLocalInfile":         "Debezium forces it off, and cdcd never loads files",
	"autoDeserialize":               "Debezium forces it off, and cdcd deserializes no Java objects",
	// The Go MySQL driver's DSN parameters, which configs copy: Connector/J, to which Debezium hands them,
	// does not know them and ignores them.
	"charset":    "it is not a Connector/J option (the Go MySQL driver's DSN parameter), so Debezium's driver ignores it; cdcd asks the server for utf8mb4",
	"parse_time": "it is not a Connector/J option (the Go MySQL driver's DSN parameter), so Debezium's driver ignores it; cdcd reads temporal values as Debezium does",
	"parseTime":  "it is not a Connector/J option (the Go MySQL driver's DSN parameter), so Debezium's driver ignores it; cdcd reads temporal values as Debezium does",
}

// tlsDriverOptions are the drivers' own TLS switches. Debezium sets the driver's sslMode from
// database.ssl.mode, which overrides them; a config that sets one without database.ssl.mode meant TLS, so
// cdcd reads it as the database.ssl.mode that never connects unencrypted (mapTLSDriverOptions).
var tlsDriverOptions = []string{"useSSL", "requireSSL", "verifyServerCertificate", "sslMode"}

// mapTLSDriverOptions reads the drivers' TLS switches of a config (see tlsDriverOptions) as
// database.ssl.mode when that is not set, and refuses them when it turns TLS off; otherwise they stay, for
// noEffectOptions' note (database.ssl.mode decides). It is a legacy-name rule (MapLegacyKeys): the first
// switch met speaks for all of them.
func mapTLSDriverOptions(flavor types.Flavor, m *props.LegacyMapper, key string) bool {
	if !isTLSDriverOption(key) {
		return false
	}
	set := map[string]string{} // option name, lower case → value
	var first string
	for _, k := range m.Keys() {
		if isTLSDriverOption(k) {
			v, _ := m.Given(k)
			set[strings.ToLower(strings.TrimPrefix(k, props.DriverOptionPrefix))] = strings.TrimSpace(v)
			if first == "" {
				first = k
			}
		}
	}
	want, asked := wantedSSLMode(flavor, set)
	current, _ := m.Given("database.ssl.mode")
	current = strings.TrimSpace(current)
	name := sslModeName(flavor, want)
	switch {
	case !asked:
		return false // only switches that ask for no TLS (useSSL=false): database.ssl.mode decides, as in Debezium
	case current == "":
		m.Drop(key)
		if key == first {
			m.Set("database.ssl.mode", name)
			m.Warn("%s asks the JDBC driver for TLS, and Debezium sets the driver's TLS from database.ssl.mode instead: cdcd reads it as database.ssl.mode=%s, so the connection is never unencrypted; write database.ssl.mode=%s instead", key, name, name)
		}
		return true
	case strings.EqualFold(current, sslModeName(flavor, SSLDisabled)):
		if key == first {
			v, _ := m.Given(key)
			m.Refuse(key, v, fmt.Sprintf("it asks for TLS, and database.ssl.mode=%s turns TLS off: remove %s, or set database.ssl.mode=%s", current, key, name))
		} else {
			m.Drop(key)
		}
		return true
	}
	return false
}

func isTLSDriverOption(key string) bool {
	name, ok := strings.CutPrefix(key, props.DriverOptionPrefix)
	return ok && slices.ContainsFunc(tlsDriverOptions, func(o string) bool { return strings.EqualFold(o, name) })
}

// wantedSSLMode is the database.ssl.mode the drivers' switches ask for (by lower-case option name), and
// whether they ask for TLS at all. Connector/J's sslMode and MariaDB Connector/J's name a mode; useSSL and
// requireSSL ask for an encrypted connection (required, MariaDB's trust), verifyServerCertificate for a
// verified one (verify_ca, verify-ca).
func wantedSSLMode(flavor types.Flavor, set map[string]string) (SSLMode, bool) {
	if v := set["sslmode"]; v != "" {
		normal := strings.ReplaceAll(strings.ToLower(v), "-", "_")
		for _, names := range sslModeNames {
			for i, n := range names {
				if n != "" && strings.ReplaceAll(n, "-", "_") == normal && SSLMode(i) > SSLPreferred {
					return SSLMode(i), true
				}
			}
		}
		return 0, false
	}
	if !strings.EqualFold(set["usessl"], "true") && !strings.EqualFold(set["requiressl"], "true") {
		return 0, false
	}
	if strings.EqualFold(set["verifyservercertificate"], "true") {
		return SSLVerifyCA, true
	}
	return SSLRequired, true
}

// timeZoneOptions are each driver's time zone option: the zone Debezium's JDBC connection reads TIMESTAMP
// values in (Connector/J's connectionTimeZone, and serverTimezone its older name; MariaDB Connector/J's
// timezone). Debezium's default is the server's zone.
var timeZoneOptions = map[types.Flavor][]string{
	types.MySQL:   {"database.connectionTimeZone", "database.serverTimezone"},
	types.MariaDB: {"database.timezone"},
}

// DriverTimeZone is the zone a time zone option names.
type DriverTimeZone struct {
	Key, Value string
	// Location is the zone; nil for the server's own (SERVER, auto), which is what cdcd reads in.
	Location *time.Location
}

// parseDriverTimeZone reads the flavor's time zone option. Debezium's snapshot reads TIMESTAMP columns
// as instants in that zone: only the server's zone gives the instants the table holds, which is what cdcd
// reads (and what Debezium's binlog events carry). A zone is therefore checked against the server's at
// connection (checkDriverTimeZone), and refused where it differs.
func parseDriverTimeZone(p *props.Parser, flavor types.Flavor) *DriverTimeZone {
	for _, key := range timeZoneOptions[flavor] {
		value, _ := p.Raw(key)
		v := strings.TrimSpace(value)
		if v == "" {
			continue
		}
		tz := &DriverTimeZone{Key: key, Value: v}
		switch upper := strings.ToUpper(v); {
		case upper == "SERVER" || upper == "AUTO":
			return tz
		case upper == "LOCAL" || upper == "DISABLE":
			tz.Location = time.Local
		default:
			loc, err := zone(v)
			if err != nil {
				p.Fail(key, value, "not a time zone cdcd knows (an IANA name such as Europe/Berlin, UTC, or an offset such as +02:00); write the server's zone, or remove the key to read in the server's zone as Debezium does by default")
				return nil
			}
			tz.Location = loc
		}
		return tz
	}
	return nil
}

// zone reads an IANA zone name or a fixed offset (+02:00, -0500, GMT+2).
func zone(v string) (*time.Location, error) {
	if loc, err := time.LoadLocation(v); err == nil {
		return loc, nil
	}
	offset := strings.TrimPrefix(strings.TrimPrefix(strings.ToUpper(v), "GMT"), "UTC")
	if offset == "" || (offset[0] != '+' && offset[0] != '-') {
		return nil, fmt.Errorf("unknown zone %q", v)
	}
	sign, digits := offset[0], strings.ReplaceAll(offset[1:], ":", "")
	var hours, minutes int
	var err error
	switch len(digits) {
	case 1, 2:
		hours, err = strconv.Atoi(digits)
	case 4:
		if hours, err = strconv.Atoi(digits[:2]); err == nil {
			minutes, err = strconv.Atoi(digits[2:])
		}
	default:
		return nil, fmt.Errorf("unknown zone %q", v)
	}
	if err != nil || hours > 14 || minutes > 59 {
		return nil, fmt.Errorf("unknown zone %q", v)
	}
	seconds := hours*3600 + minutes*60
	if sign == '-' {
		seconds = -seconds
	}
	return time.FixedZone(v, seconds), nil
}

// checkDriverTimeZone refuses a time zone option naming a zone other than the server's: Debezium would
// shift the snapshot's TIMESTAMP values by the difference (and not the binlog's), which cdcd does not
// reproduce.
func (c *Config) checkDriverTimeZone(conn *client.Conn) error {
	tz := c.DriverTimeZone
	if tz == nil || tz.Location == nil {
		return nil
	}
	text, err := queryString(conn, "SELECT TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), NOW())")
	if err != nil {
		return err
	}
	server, err := strconv.Atoi(strings.TrimSpace(text))
	if err != nil {
		return fmt.Errorf("reading the server's time zone offset: %q: %w", text, err)
	}
	_, configured := time.Now().In(tz.Location).Zone()
	// The server's offset is measured in whole seconds between two reads of its clock; round to minutes.
	if (server+30)/60 == (configured+30)/60 {
		return nil
	}
	return &ConfigError{Key: tz.Key, Value: tz.Value, Reason: fmt.Sprintf(
		"the server's sessions are at UTC%s and %s is at UTC%s now: Debezium would read the snapshot's TIMESTAMP values as if in %s, shifting them from the instants the table holds (and from its own binlog events), and cdcd reads the instants. Remove the key (Debezium's default reads in the server's zone) or set it to the server's zone",
		utcOffset(server), tz.Value, utcOffset(configured), tz.Value)}
}

// utcOffset writes an offset in seconds as +hh:mm.
func utcOffset(seconds int) string {
	sign := "+"
	if seconds < 0 {
		sign, seconds = "-", -seconds
	}
	minutes := (seconds + 30) / 60
	return fmt.Sprintf("%s%02d:%02d", sign, minutes/60, minutes%60)
}

// parseDriverOptions reads the Connector/J and MariaDB Connector/J options cdcd maps, and returns a note on
// each that has no effect in cdcd.
func parseDriverOptions(p *props.Parser, c *Config) []string {
	c.QueryConnectTimeout = p.Millis("database.connectTimeout", int(c.ConnectTimeout/time.Millisecond))
	c.SocketTimeout = p.Millis("database.socketTimeout", 0)
	c.TCPKeepAlive = p.Boolean("database.tcpKeepAlive", true)
	c.DriverTimeZone = parseDriverTimeZone(p, c.Flavor)
	// Debezium's connection URL sets zeroDateTimeBehavior=CONVERT_TO_NULL, which cdcd's snapshot does too.
	if v, _ := p.Raw("database.zeroDateTimeBehavior"); v != "" && !strings.EqualFold(strings.ReplaceAll(v, "_", ""), "converttonull") {
		p.Fail("database.zeroDateTimeBehavior", v, "cdcd reads zero dates as Debezium's connection does, with CONVERT_TO_NULL; remove the key")
	}
	return noEffectOptions.Notes(p)
}

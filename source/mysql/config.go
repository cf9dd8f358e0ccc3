// Package mysql is cdcd's MySQL and MariaDB connector: Debezium's MySqlConnector and MariaDbConnector on
// the binlog, read with go-mysql. A consistent snapshot of the captured tables, then the binlog from
// exactly the snapshot's position; table structure kept through DDL in a schema history topic; offsets
// in Debezium's binlog offset format.
package mysql

import (
	"crypto/tls"
	"log/slog"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/configdef"
	"github.com/cdcd/cdcd/snapshot"
	"github.com/cdcd/cdcd/source/columns"
	"github.com/cdcd/cdcd/source/mysql/types"
	"github.com/cdcd/cdcd/source/notify"
	"github.com/cdcd/cdcd/source/props"
	"github.com/cdcd/cdcd/source/signal"
	"github.com/cdcd/cdcd/source/signal/sqlfilter"
)

// The connector classes, and the names each writes into source.connector.
const (
	MySQLConnectorClass   = "io.debezium.connector.mysql.MySqlConnector"
	MariaDBConnectorClass = "io.debezium.connector.mariadb.MariaDbConnector"
)

// Config is a MySQL or MariaDB connector's configuration, read with Debezium's key names and defaults.
type Config struct {
	Name   string // the Connect connector name: the offset key's namespace
	Flavor types.Flavor

	Host           string
	Port           int
	User           string
	Password       configdef.Password // prints as [hidden]: a Config printed or logged whole shows none
	ServerID       uint32
	ConnectTimeout time.Duration // connect.timeout.ms: the binlog connection's
	// The JDBC options cdcd maps to the query connections (snapshot, checks, schema reads):
	// database.connectTimeout (ms; unset: connect.timeout.ms, as Debezium passes it to the driver),
	// database.socketTimeout (ms; 0: none) and database.tcpKeepAlive (true).
	QueryConnectTimeout, SocketTimeout time.Duration
	TCPKeepAlive                       bool
	// DriverTimeZone is the driver's time zone option (database.connectionTimeZone…), checked against the
	// server's at connection; nil when unset.
	DriverTimeZone *DriverTimeZone
	// SSLMode and TLS are database.ssl.*, for the query and the binlog connections alike: TLS is nil when
	// SSLMode is SSLDisabled, and holds the keystore's certificate and the verification of the mode
	// otherwise.
	SSLMode SSLMode
	TLS     *tls.Config

	TopicPrefix string
	Topics      schema.TopicNaming
	Filter      props.Filter // Schema* are the database lists

	IncludeQuery         bool
	IncludeSchemaChanges bool
	SnapshotMode         snapshot.Mode
	LockingMode          string // minimal, extended, none
	SnapshotFetchSize    int
	// SnapshotThreads is snapshot.max.threads: how many connections read tables at once, each in a
	// consistent-snapshot transaction opened under the snapshot's global read lock.
	SnapshotThreads int
	Modes           types.Modes
	GTIDIncludes    []*regexp.Regexp
	GTIDExcludes    []*regexp.Regexp
	GTIDFilterDML   bool // gtid.source.filter.dml.events

	HeartbeatInterval time.Duration
	HeartbeatQuery    string // heartbeat.action.query: run at every heartbeat
	// ProvideTxMetadata writes BEGIN and END records to the transaction topic and a transaction block into
	// every data event (provide.transaction.metadata).
	ProvideTxMetadata  bool
	TombstonesOnDelete bool
	SkippedOps         map[byte]bool
	MessageKeyColumns  map[string][]string // message.key.columns: "database.table" → the columns of its key
	// SnapshotTables narrows the snapshot's rows to these captured tables (snapshot.include.collection.list,
	// regular expressions on "database.table"); nil: all captured. The others' schemas are still read.
	SnapshotTables []*regexp.Regexp
	// SnapshotSelects are the user's SELECTs for the initial snapshot (snapshot.select.statement.overrides),
	// by table as listed there (db.table).
	SnapshotSelects map[string]string
	// EventFailureMode is event.processing.failure.handling.mode (props.EventFailure*).
	EventFailureMode string
	// BooleanConverters are the TinyIntOneToBooleanConverters converters names.
	BooleanConverters []booleanConverter

	HistoryTopic       string
	HistoryBrokers     []string
	SkipUnparseableDDL bool
	// StoreOnlyCapturedDatabases and StoreOnlyCapturedTables (schema.history.internal.store.only.captured.
	// databases.ddl / .tables.ddl, both false by default) limit the schema history to the captured
	// databases or tables; by default it holds every database's structure, as Debezium's does.
	StoreOnlyCapturedDatabases, StoreOnlyCapturedTables bool

	SchemaNames, FieldNames *schema.NameAdjuster
	Columns                 *columns.Mappers // column.mask.*, column.truncate.*, *.propagate.source.type

	Signals signal.Config // signal.*, incremental.snapshot.* (signal.data.collection as database.table)
	Notify  notify.Config // notification.*
}

// ConfigError is a refused configuration value; it names the key, the value and what to write instead.
type ConfigError = props.ConfigError

// Connector is the name the flavor writes into source.connector and its schema names.
func (c *Config) Connector() string {
	if c.Flavor == types.MariaDB {
		return "mariadb"
	}
	return "mysql"
}

// gtidSourceFilter is Debezium's GTID source filter (getGtidSourceFilter): whether a GTID source (a MySQL
// server UUID, a MariaDB "domain-server" pair) passes gtid.source.includes/excludes; nil when neither is
// set. Unlike includesGTIDSource it holds whatever gtid.source.filter.dml.events says: it also decides which
// sources the restart GTID set keeps (restartGTIDs).
func (c *Config) gtidSourceFilter() func(src string) bool {
	switch {
	case len(c.GTIDIncludes) > 0:
		return func(src string) bool { return props.AnyMatch(c.GTIDIncludes, src) }
	case len(c.GTIDExcludes) > 0:
		return func(src string) bool { return !props.AnyMatch(c.GTIDExcludes, src) }
	}
	return nil
}

// includesGTIDSource reports whether row changes of transactions from a GTID source (a MySQL server UUID,
// a MariaDB "domain-server" pair) are emitted, by gtid.source.includes/excludes.
func (c *Config) includesGTIDSource(src string) bool {
	switch {
	case !c.GTIDFilterDML:
		return true
	case len(c.GTIDIncludes) > 0:
		return props.AnyMatch(c.GTIDIncludes, src)
	}
	return !props.AnyMatch(c.GTIDExcludes, src)
}

// recordsDatabase reports whether the schema history keeps the structure of database db.
func (c *Config) recordsDatabase(db string) bool {
	if c.StoreOnlyCapturedDatabases || c.StoreOnlyCapturedTables {
		return c.Filter.IncludeSchema(db)
	}
	return !slices.Contains(systemDatabases, db)
}

// systemDatabases are never captured, as in Debezium's BinlogConnectorConfig.
var systemDatabases = []string{"mysql", "sys", "information_schema", "performance_schema"}

// ParseConfig reads a connector config for class (MySQLConnectorClass or MariaDBConnectorClass). Every
// refused value is reported (errors.Join of *ConfigError and props.NotImplementedError).
func ParseConfig(name string, flavor types.Flavor, settings map[string]string, log *slog.Logger) (*Config, error) {
	c, _, err := parseConfig(name, flavor, settings, log)
	return c, err
}

// parseConfig is ParseConfig, with the parser that read the keys (nil when legacy keys were refused).
func parseConfig(name string, flavor types.Flavor, given map[string]string, log *slog.Logger) (*Config, *props.Parser, error) {
	settings, legacyWarnings, err := MapLegacyKeys(flavor, given)
	if err != nil {
		return nil, nil, err
	}
	props.LogOnce(name, slog.LevelWarn, legacyWarnings, log)
	p := props.NewParser(settings)
	p.Add(keysFor(flavor, settings).Refusals(settings)...)
	// errors.max.retries, connection.validation.timeout.ms, max.batch.size…: the runtime honours them
	props.LogOnce(name, slog.LevelInfo, props.ReadRuntimeKeys(p), log)
	c := &Config{Name: name, Flavor: flavor}
	c.Host = p.Str("database.hostname", "")
	c.Port = p.Integer("database.port", 3306, 1, 65535)
	c.User = p.Str("database.user", "")
	c.Password = configdef.Password(p.Str("database.password", ""))
	c.ServerID = uint32(p.Integer("database.server.id", 0, 1, 1<<32-1))
	c.ConnectTimeout = p.Millis("connect.timeout.ms", 30000)
	props.LogOnce(name, slog.LevelInfo, parseDriverOptions(p, c), log)
	parseTLS(p, c)
	c.TopicPrefix = p.Str("topic.prefix", "")
	c.HistoryTopic = p.Str("schema.history.internal.kafka.topic", "")
	for _, k := range []string{"database.hostname", "database.user", "database.server.id", "topic.prefix",
		"schema.history.internal.kafka.topic", "schema.history.internal.kafka.bootstrap.servers"} {
		if strings.TrimSpace(settings[k]) == "" {
			p.Fail(k, settings[k], props.ReasonRequired)
		}
	}
	for _, b := range strings.Split(p.Str("schema.history.internal.kafka.bootstrap.servers", ""), ",") {
		if b = strings.TrimSpace(b); b != "" {
			c.HistoryBrokers = append(c.HistoryBrokers, b)
		}
	}
	p.Integer("schema.history.internal.kafka.recovery.poll.interval.ms", 100, 0, math.MaxInt32)
	p.Integer("schema.history.internal.kafka.recovery.attempts", 100, 1, math.MaxInt32)
	props.LogOnce(name, slog.LevelInfo, historyNotes.Notes(p), log)
	c.SkipUnparseableDDL = p.Boolean("schema.history.internal.skip.unparseable.ddl", false)
	c.StoreOnlyCapturedDatabases = p.Boolean("schema.history.internal.store.only.captured.databases.ddl", false)
	c.StoreOnlyCapturedTables = p.Boolean("schema.history.internal.store.only.captured.tables.ddl", false)
	c.Topics = schema.NewTopicNaming(c.TopicPrefix)
	c.Topics.Delimiter = p.Str("topic.delimiter", c.Topics.Delimiter)
	// heartbeat.topics.prefix is the deprecated name Debezium still reads when topic.heartbeat.prefix is unset.
	c.Topics.HeartbeatPrefix = p.Str("topic.heartbeat.prefix", p.Str("heartbeat.topics.prefix", c.Topics.HeartbeatPrefix))
	c.Topics.Transaction = p.Str("topic.transaction", c.Topics.Transaction)
	c.ProvideTxMetadata = p.Boolean("provide.transaction.metadata", false)

	c.Filter = props.Filter{
		SchemaInclude: p.RegexList("database.include.list"),
		SchemaExclude: p.RegexList("database.exclude.list"),
		TableInclude:  p.RegexList("table.include.list"),
		TableExclude:  p.RegexList("table.exclude.list"),
		ColumnInclude: p.RegexList("column.include.list"),
		ColumnExclude: p.RegexList("column.exclude.list"),
		System:        systemDatabases,
	}
	p.Exclusive("database.include.list", "database.exclude.list")
	p.Exclusive("table.include.list", "table.exclude.list")
	p.Exclusive("column.include.list", "column.exclude.list")

	c.IncludeQuery = p.Boolean("include.query", false)
	c.IncludeSchemaChanges = p.Boolean("include.schema.changes", true)
	modeText, _ := p.Raw("snapshot.mode")
	c.SnapshotMode = parseSnapshotMode(p, modeText)
	c.LockingMode = p.OneOf("snapshot.locking.mode", "minimal", "minimal", "extended", "none")
	c.SnapshotFetchSize = p.Integer("snapshot.fetch.size", 10240, 1, 1<<24)
	c.SnapshotThreads = p.Integer("snapshot.max.threads", 1, 1, 64)
	if c.SnapshotThreads > 1 && c.LockingMode == "none" {
		// The connections' consistent-snapshot transactions are lined up with each other and with the
		// binlog position by opening them all under FLUSH TABLES WITH READ LOCK; without the lock each
		// would see another moment, and a table read on one would miss or double changes around the
		// position streaming starts from.
		v, _ := p.Raw("snapshot.max.threads")
		p.Fail("snapshot.max.threads", v, "with snapshot.locking.mode=none there is no global read lock to open the snapshot's connections at one consistent point; use snapshot.locking.mode=minimal (the default) or extended, or snapshot.max.threads=1")
	}

	c.Modes = types.Modes{
		Flavor:         flavor,
		Decimal:        p.OneOf("decimal.handling.mode", "precise", "precise", "double", "string"),
		BigintUnsigned: p.OneOf("bigint.unsigned.handling.mode", "long", "long", "precise"),
		Time:           p.OneOf("time.precision.mode", "adaptive_time_microseconds", "adaptive_time_microseconds", "connect", "adaptive"),
		Binary:         p.OneOf("binary.handling.mode", "bytes", "bytes", "base64", "base64-url-safe", "hex"),
		NoTimeAdjuster: !p.Boolean("enable.time.adjuster", true),
	}
	if c.Modes.Time == "adaptive" {
		// BinlogConnectorConfig refuses it: MySQL's TIME can exceed a day, which adaptive's time types cannot hold.
		v, _ := p.Raw("time.precision.mode")
		p.Fail("time.precision.mode", v, "the MySQL and MariaDB connectors do not support adaptive; use adaptive_time_microseconds (the default) or connect")
	}
	c.GTIDIncludes = p.RegexList("gtid.source.includes")
	c.GTIDExcludes = p.RegexList("gtid.source.excludes")
	p.Exclusive("gtid.source.includes", "gtid.source.excludes")
	c.GTIDFilterDML = p.Boolean("gtid.source.filter.dml.events", true)

	c.HeartbeatInterval, c.HeartbeatQuery = props.Heartbeat(p)
	c.TombstonesOnDelete = p.Boolean("tombstones.on.delete", true)
	c.SkippedOps = p.SkippedOperations("skipped.operations", "t")
	c.MessageKeyColumns = p.KeyColumns("message.key.columns")
	c.SnapshotTables = p.RegexList("snapshot.include.collection.list")
	c.SnapshotSelects = props.SelectOverrides(p)
	c.EventFailureMode = props.EventFailureMode(p)
	c.BooleanConverters = parseConverters(p, settings)
	c.SchemaNames = p.NameAdjuster("schema.name.adjustment.mode", schema.NewSchemaNameAdjuster)
	c.FieldNames = p.NameAdjuster("field.name.adjustment.mode", schema.NewFieldNameAdjuster)
	c.Columns = columns.Parse(p, settings)
	c.Signals = signal.ReadConfig(p, c.TopicPrefix)
	c.Signals.Dialect = sqlfilter.MySQL
	c.Signals.ReadOnly = p.Boolean("read.only", false)
	c.Notify = notify.ReadConfig(p)
	if c.Signals.Table != "" {
		// Debezium captures the signal table whatever the filters say: its watermarks must stream.
		c.Filter.Always = []string{c.Signals.Table}
	}
	if err := p.Err(); err != nil {
		return nil, p, err
	}
	return c, p, nil
}

// parseSnapshotMode reads snapshot.mode: the shared modes, and the binlog connectors' recovery, which
// rebuilds a lost schema history from the tables as they are now, then streams from the stored offset.
func parseSnapshotMode(p *props.Parser, value string) snapshot.Mode {
	switch strings.ToLower(strings.TrimSpace(value)) {
	case "recovery", "schema_only_recovery":
		return snapshot.Recovery
	}
	mode, err := snapshot.ParseMode(value)
	if err != nil {
		p.Fail("snapshot.mode", value, "use initial, initial_only, no_data, always, when_needed or recovery")
	}
	return mode
}

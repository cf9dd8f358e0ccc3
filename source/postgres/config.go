package postgres

import (
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/cdcd/cdcd/source/props"
	"github.com/cdcd/cdcd/source/regularfile"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/configdef"
	"github.com/cdcd/cdcd/snapshot"
	"github.com/cdcd/cdcd/source/columns"
	"github.com/cdcd/cdcd/source/notify"
	"github.com/cdcd/cdcd/source/postgres/catalog"
	"github.com/cdcd/cdcd/source/signal"
	"github.com/cdcd/cdcd/source/signal/sqlfilter"
)

// ConnectorClass is the connector.class a PostgreSQL connector config names.
const ConnectorClass = "io.debezium.connector.postgresql.PostgresConnector"

// Config is the PostgreSQL connector's configuration, read from Debezium's property names with Debezium's
// defaults (spec §6).
type Config struct {
	Name string // the Connect connector name: the offset key's namespace

	Host, User, DBName, SSLMode string
	Port                        int
	// Password prints as [hidden] (configdef.Password): a Config printed or logged whole shows none.
	Password configdef.Password
	// TLS files and the client key's password (database.sslrootcert, sslcert, sslkey, sslpassword), handed to
	// the driver as libpq reads them, on the query and the replication connection alike.
	SSLRootCert, SSLCert, SSLKey string
	SSLPassword                  configdef.Password
	// The pgjdbc options cdcd maps (see conn.go, driveroptions.go): database.tcpKeepAlive,
	// database.connectTimeout (or loginTimeout) and database.socketTimeout (seconds, as pgjdbc reads them;
	// 0: none), database.ApplicationName ("" keeps cdcd-<name>), database.options (the startup packet's).
	TCPKeepAlive                  bool
	ConnectTimeout, SocketTimeout time.Duration
	ApplicationName, Options      string

	TopicPrefix     string
	SlotName        string
	PublicationName string
	PublicationMode string // all_tables, filtered, disabled, no_tables
	SlotDropOnStop  bool
	SlotFailover    bool // slot.failover: the connector's slot is made with FAILOVER (17+; failover.go)
	// StreamParams are slot.stream.params, pgoutput options passed on (slotopts.go); ManualFlush
	// (lsn.flush.mode=manual) never confirms a position to the slot; XminFetchInterval shows the slot's
	// catalog_xmin in source.xmin and the offset (0: not).
	StreamParams      []StreamParam
	ManualFlush       bool
	XminFetchInterval time.Duration
	PublishViaRoot    bool // publish.via.partition.root: partitions' changes come as their root's (partition.go)
	// ReplicaIdentities are replica.identity.autoset.values: the replica identity each captured table is
	// given at start (replicaidentity.go).
	ReplicaIdentities []replicaIdentityRule
	StatusInterval    time.Duration
	HeartbeatInterval time.Duration
	HeartbeatQuery    string
	// ProvideTxMetadata writes BEGIN and END records to the transaction topic and a transaction block into
	// every data event (provide.transaction.metadata).
	ProvideTxMetadata bool
	// MessagePrefixes selects the logical decoding messages emitted (message.prefix.include.list and
	// .exclude.list, whole-prefix regular expressions, case-insensitive); both empty: all.
	MessagePrefixInclude, MessagePrefixExclude []*regexp.Regexp
	Topics                                     schema.TopicNaming
	SlotMaxRetries                             int
	SlotRetryDelay                             time.Duration
	// OffsetMismatch says what to do when the stored offset and the slot disagree: "fail" (cdcd's default:
	// refuse and explain), "trust_offset", "trust_slot" or "trust_greater_lsn" (Debezium's names), or
	// "no_validation".
	OffsetMismatch string

	SnapshotMode      snapshot.Mode
	SnapshotFetchSize int
	SnapshotThreads   int // snapshot.max.threads: tables read in parallel
	// SnapshotTables narrows the snapshot to these tables (snapshot.include.collection.list); nil: all captured.
	SnapshotTables []*regexp.Regexp
	// SnapshotSelects are the user's SELECTs for the initial snapshot (snapshot.select.statement.overrides),
	// by table as listed there: schema.table or database.schema.table.
	SnapshotSelects map[string]string
	// EventFailureMode is event.processing.failure.handling.mode (props.EventFailure*).
	EventFailureMode string

	Filter             Filter
	Signals            signal.Config // signal.*, incremental.snapshot.*
	Notify             notify.Config // notification.*
	SkippedOps         map[byte]bool
	TombstonesOnDelete bool
	MessageKeyColumns  map[string][]string // "schema.table" → columns
	Columns            *columns.Mappers    // column.mask.*, column.truncate.*, *.propagate.source.type
	Modes              catalog.Modes
	// SchemaNames adjusts the key, row and envelope schema names (schema.name.adjustment.mode); FieldNames
	// adjusts the column field names (field.name.adjustment.mode). Both keep names as they are by default.
	SchemaNames, FieldNames *schema.NameAdjuster
}

// Filter selects schemas, tables and columns (props.Filter).
type Filter = props.Filter

// ConfigError is a refused configuration value; it names the key, the value and what to write instead.
type ConfigError = props.ConfigError

// ParseConfig reads a connector config. Every refused value is reported (errors.Join of *ConfigError and
// props.NotImplementedError); advice that does not stop the connector (defaults cdcd chose) is logged on
// log.
func ParseConfig(name string, given map[string]string, log *slog.Logger) (*Config, error) {
	c, _, err := parseConfig(name, given, log)
	return c, err
}

// parseConfig is ParseConfig, with the parser that read the keys (nil when the legacy keys were refused).
func parseConfig(name string, given map[string]string, log *slog.Logger) (*Config, *props.Parser, error) {
	settings, legacyWarnings, err := MapLegacyKeys(given)
	if err != nil {
		return nil, nil, err
	}
	props.LogOnce(name, slog.LevelWarn, legacyWarnings, log)
	p := props.NewParser(settings)
	// MapLegacyKeys translated the deprecated flush.lsn.source into lsn.flush.mode, which is read below.
	p.Honour("flush.lsn.source")
	p.Add(Keys().Refusals(settings)...)
	// errors.max.retries, connection.validation.timeout.ms, max.batch.size…: the runtime honours them
	props.LogOnce(name, slog.LevelInfo, props.ReadRuntimeKeys(p), log)
	c := &Config{Name: name}
	c.Host = p.Str("database.hostname", "")
	c.Port = p.Integer("database.port", 5432, 1, 65535)
	c.User = p.Str("database.user", "")
	c.Password = configdef.Password(p.Str("database.password", ""))
	c.DBName = p.Str("database.dbname", "")
	c.SSLMode = p.OneOf("database.sslmode", "prefer", "disable", "allow", "prefer", "require", "verify-ca", "verify-full")
	c.SSLRootCert = p.Str("database.sslrootcert", "")
	c.SSLCert = p.Str("database.sslcert", "")
	c.SSLKey = p.Str("database.sslkey", "")
	c.SSLPassword = configdef.Password(p.Str("database.sslpassword", ""))
	// The driver reads these files when it connects, without a bound: a device or a FIFO named here (by a
	// REST client, say) would hang the connection check of a validation, or grow the process.
	for _, f := range []struct{ key, path string }{{"database.sslrootcert", c.SSLRootCert}, {"database.sslcert", c.SSLCert}, {"database.sslkey", c.SSLKey}} {
		if f.path == "" {
			continue
		}
		if err := regularfile.Check(f.path, regularfile.MaxStoreSize); err != nil {
			p.Fail(f.key, f.path, err.Error()+": name a PEM file")
		}
	}
	if (c.SSLCert == "") != (c.SSLKey == "") {
		p.Fail("database.sslcert", c.SSLCert, "a client certificate needs its key: set database.sslcert and database.sslkey together")
	}
	props.LogOnce(name, slog.LevelInfo, parseDriverOptions(p, c), log)
	c.TopicPrefix = p.Str("topic.prefix", "")
	for _, k := range []string{"database.hostname", "database.user", "database.dbname", "topic.prefix"} {
		if strings.TrimSpace(settings[k]) == "" {
			p.Fail(k, settings[k], props.ReasonRequired)
		}
	}

	switch plugin, set := p.Raw("plugin.name"); {
	case !set:
		log.Info("plugin.name is not set: cdcd uses pgoutput (Debezium's default, decoderbufs, needs a server extension); write plugin.name=pgoutput to silence this")
	case strings.EqualFold(plugin, "pgoutput"):
	default:
		p.Fail("plugin.name", plugin, "cdcd decodes with pgoutput (decoderbufs and wal2json are read as pgoutput); write plugin.name=pgoutput")
	}
	c.SlotName = p.Str("slot.name", "debezium")
	if !regexp.MustCompile(`^[a-z0-9_]{1,63}$`).MatchString(c.SlotName) {
		p.Fail("slot.name", c.SlotName, "a slot name may contain only lower-case letters, digits and underscores (at most 63)")
	}
	c.PublicationName = p.Str("publication.name", "dbz_publication")
	c.PublicationMode = p.OneOf("publication.autocreate.mode", "all_tables", "all_tables", "filtered", "disabled", "no_tables")
	c.PublishViaRoot = p.Boolean("publish.via.partition.root", false)
	c.ReplicaIdentities = parseReplicaIdentities(p)
	c.SlotDropOnStop = p.Boolean("slot.drop.on.stop", false)
	c.SlotFailover = p.Boolean("slot.failover", false)
	c.StatusInterval = p.Millis("status.update.interval.ms", 10000)
	c.HeartbeatInterval, c.HeartbeatQuery = props.Heartbeat(p)
	c.MessagePrefixInclude = p.RegexList("message.prefix.include.list")
	c.MessagePrefixExclude = p.RegexList("message.prefix.exclude.list")
	p.Exclusive("message.prefix.include.list", "message.prefix.exclude.list")
	// connector: cdcd confirms the slot up to the durable offset, keepalive positions included when nothing is
	// pending (idle.go), which is what Debezium's connector_and_driver is for, recorded in the offset besides.
	// manual: nothing is ever confirmed; whoever set it advances the slot.
	c.ManualFlush = p.OneOf("lsn.flush.mode", "connector", "connector", "manual", "connector_and_driver") == "manual"
	if text := p.Str("slot.stream.params", ""); text != "" {
		var reason string
		if c.StreamParams, reason = parseStreamParams(text); reason != "" {
			p.Fail("slot.stream.params", text, reason)
		}
	}
	c.XminFetchInterval = time.Duration(p.Integer("xmin.fetch.interval.ms", 0, 0, 1<<62)) * time.Millisecond
	c.Topics = schema.NewTopicNaming(c.TopicPrefix)
	c.Topics.Delimiter = p.Str("topic.delimiter", c.Topics.Delimiter)
	// heartbeat.topics.prefix is the deprecated name Debezium still reads when topic.heartbeat.prefix is unset.
	c.Topics.HeartbeatPrefix = p.Str("topic.heartbeat.prefix", p.Str("heartbeat.topics.prefix", c.Topics.HeartbeatPrefix))
	c.Topics.HeartbeatName = p.Str("topic.heartbeat.name", "")
	c.Topics.Transaction = p.Str("topic.transaction", c.Topics.Transaction)
	c.ProvideTxMetadata = p.Boolean("provide.transaction.metadata", false)
	c.SlotMaxRetries = p.Integer("slot.max.retries", 6, 0, 1<<30)
	c.SlotRetryDelay = p.Millis("slot.retry.delay.ms", 10000)
	c.OffsetMismatch = p.OneOf("offset.mismatch.strategy", "fail", "fail", "no_validation", "trust_offset", "trust_slot", "trust_greater_lsn")

	modeText, _ := p.Raw("snapshot.mode")
	mode, err := snapshot.ParseMode(modeText)
	if err != nil {
		p.Fail("snapshot.mode", modeText, "use initial, initial_only, no_data, always or when_needed")
	}
	c.SnapshotMode = mode
	c.SnapshotFetchSize = p.Integer("snapshot.fetch.size", 10240, 1, 1<<24)
	c.SnapshotThreads = p.Integer("snapshot.max.threads", 1, 1, 64)
	c.SnapshotTables = p.RegexList("snapshot.include.collection.list")
	c.SnapshotSelects = props.SelectOverrides(p)
	c.EventFailureMode = props.EventFailureMode(p)
	// Every snapshot of cdcd's reads a slot's exported snapshot (see snapshot.go), which PostgreSQL imports
	// into REPEATABLE READ only ("a serializable transaction cannot import a snapshot from a
	// non-serializable transaction"): Debezium's own reading whenever it has just created the slot. The
	// default, serializable, and repeatable_read both mean that; the weaker levels would read each
	// statement at another moment than the slot's consistent point, so the snapshot would not line up
	// with the stream.
	switch iso := p.OneOf("snapshot.isolation.mode", "serializable", "serializable", "repeatable_read", "read_committed", "read_uncommitted"); iso {
	case "read_committed", "read_uncommitted":
		p.Fail("snapshot.isolation.mode", iso, "cdcd reads every snapshot in the slot's exported snapshot, which lines it up with the stream and needs REPEATABLE READ; "+
			iso+" would read each table at another moment. Use serializable (the default) or repeatable_read: both read the exported snapshot in REPEATABLE READ")
	}

	c.Filter = Filter{
		System:        []string{"pg_catalog", "information_schema"},
		SchemaInclude: p.RegexList("schema.include.list"),
		SchemaExclude: p.RegexList("schema.exclude.list"),
		TableInclude:  p.RegexList("table.include.list"),
		TableExclude:  p.RegexList("table.exclude.list"),
		ColumnInclude: p.RegexList("column.include.list"),
		ColumnExclude: p.RegexList("column.exclude.list"),
	}
	p.Exclusive("schema.include.list", "schema.exclude.list")
	p.Exclusive("table.include.list", "table.exclude.list")
	p.Exclusive("column.include.list", "column.exclude.list")
	c.Signals = signal.ReadConfig(p, c.TopicPrefix)
	c.Signals.Dialect = sqlfilter.PostgreSQL
	c.Signals.ReadOnly = p.Boolean("read.only", false)
	c.Notify = notify.ReadConfig(p)
	if c.Signals.Table != "" {
		c.Filter.Always = []string{c.Signals.Table}
	}

	c.SkippedOps = p.SkippedOperations("skipped.operations", "t")
	c.TombstonesOnDelete = p.Boolean("tombstones.on.delete", true)
	c.MessageKeyColumns = p.KeyColumns("message.key.columns")
	c.Columns = columns.Parse(p, settings)

	c.Modes = catalog.Modes{
		Decimal:                catalog.DecimalMode(p.OneOf("decimal.handling.mode", "precise", "precise", "double", "string")),
		TimePrecision:          catalog.TimePrecisionMode(p.OneOf("time.precision.mode", "adaptive", "adaptive", "adaptive_time_microseconds", "connect", "microseconds", "nanoseconds", "isostring")),
		Binary:                 catalog.BinaryMode(p.OneOf("binary.handling.mode", "bytes", "bytes", "base64", "base64-url-safe", "hex")),
		HStore:                 catalog.HStoreMode(p.OneOf("hstore.handling.mode", "json", "json", "map")),
		Interval:               catalog.IntervalMode(p.OneOf("interval.handling.mode", "numeric", "numeric", "string")),
		MoneyFractionDigits:    p.Integer("money.fraction.digits", 2, 0, 100),
		UnavailablePlaceholder: p.Str("unavailable.value.placeholder", "__debezium_unavailable_value"),
	}
	c.SchemaNames = p.NameAdjuster("schema.name.adjustment.mode", schema.NewSchemaNameAdjuster)
	c.FieldNames = p.NameAdjuster("field.name.adjustment.mode", schema.NewFieldNameAdjuster)
	if err := p.Err(); err != nil {
		return nil, p, err
	}
	return c, p, nil
}

// includesMessage reports whether a logical decoding message with this prefix is emitted.
func (c *Config) includesMessage(prefix string) bool {
	if len(c.MessagePrefixInclude) > 0 {
		return props.AnyMatch(c.MessagePrefixInclude, prefix)
	}
	return !props.AnyMatch(c.MessagePrefixExclude, prefix)
}

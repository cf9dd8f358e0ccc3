package postgres

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/snapshot"
	"github.com/cdcd/cdcd/source/postgres/catalog"
)

// ConnectorClass is the connector.class a PostgreSQL connector config names.
const ConnectorClass = "io.debezium.connector.postgresql.PostgresConnector"

// Config is the PostgreSQL connector's configuration, read from Debezium's property names with Debezium's
// defaults (spec §6).
type Config struct {
	Name string // the Connect connector name: the offset key's namespace

	Host, User, Password, DBName, SSLMode string
	Port                                  int

	TopicPrefix       string
	SlotName          string
	PublicationName   string
	PublicationMode   string // all_tables, filtered, disabled, no_tables
	SlotDropOnStop    bool
	StatusInterval    time.Duration
	HeartbeatInterval time.Duration
	HeartbeatQuery    string
	Topics            schema.TopicNaming
	SlotMaxRetries    int
	SlotRetryDelay    time.Duration
	// OffsetMismatch says what to do when the stored offset and the slot disagree: "fail" (cdcd's default:
	// refuse and explain), "trust_offset", "trust_slot" or "trust_greater_lsn" (Debezium's names), or
	// "no_validation".
	OffsetMismatch string

	SnapshotMode      snapshot.Mode
	SnapshotFetchSize int
	SnapshotThreads   int // snapshot.max.threads: tables read in parallel
	// SnapshotTables narrows the snapshot to these tables (snapshot.include.collection.list); nil: all captured.
	SnapshotTables []*regexp.Regexp

	Filter             Filter
	SkippedOps         map[byte]bool
	TombstonesOnDelete bool
	MessageKeyColumns  map[string][]string // "schema.table" → columns
	Modes              catalog.Modes
	// SchemaNames adjusts the key, row and envelope schema names (schema.name.adjustment.mode); FieldNames
	// adjusts the column field names (field.name.adjustment.mode). Both keep names as they are by default.
	SchemaNames, FieldNames *schema.NameAdjuster
}

// Filter selects schemas, tables and columns as Debezium's include/exclude lists do: comma-separated
// regular expressions matched against the whole identifier, case-insensitively.
type Filter struct {
	SchemaInclude, SchemaExclude []*regexp.Regexp
	TableInclude, TableExclude   []*regexp.Regexp // against "schema.table"
	ColumnInclude, ColumnExclude []*regexp.Regexp // against "schema.table.column"
}

// IncludeTable reports whether changes of schema.table are captured.
func (f Filter) IncludeTable(schemaName, table string) bool {
	if len(f.SchemaInclude) > 0 && !anyMatch(f.SchemaInclude, schemaName) {
		return false
	}
	if anyMatch(f.SchemaExclude, schemaName) {
		return false
	}
	id := schemaName + "." + table
	if len(f.TableInclude) > 0 {
		return anyMatch(f.TableInclude, id)
	}
	if anyMatch(f.TableExclude, id) {
		return false
	}
	// Debezium never captures the system schemas.
	return schemaName != "pg_catalog" && schemaName != "information_schema"
}

// IncludeColumn reports whether the column is part of the events.
func (f Filter) IncludeColumn(schemaName, table, column string) bool {
	id := schemaName + "." + table + "." + column
	if len(f.ColumnInclude) > 0 {
		return anyMatch(f.ColumnInclude, id)
	}
	return !anyMatch(f.ColumnExclude, id)
}

func anyMatch(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// ConfigError is a refused configuration value; it names the key, the value and what to write instead.
type ConfigError struct {
	Key, Value, Reason string
}

func (e *ConfigError) Error() string {
	if e.Reason == reasonRequired {
		return fmt.Sprintf("Missing required configuration %q which has no default value.", e.Key)
	}
	return fmt.Sprintf("Invalid value %s for configuration %s: %s", e.Value, e.Key, e.Reason)
}

// ConfigKey names the key the error concerns.
func (e *ConfigError) ConfigKey() string { return e.Key }

// Fatal tells the worker that restarting the task cannot help: the config must change.
func (e *ConfigError) Fatal() bool { return true }

const reasonRequired = "the key is required"

// ParseConfig reads a connector config. Every refused value is reported (errors.Join of *ConfigError);
// advice that does not stop the connector (defaults cdcd chose) is logged on log.
func ParseConfig(name string, props map[string]string, log *slog.Logger) (*Config, error) {
	props, legacyWarnings, err := MapLegacyKeys(props)
	if err != nil {
		return nil, err
	}
	logLegacyWarnings(name, legacyWarnings, log)
	p := parser{props: props}
	c := &Config{Name: name}
	c.Host = p.str("database.hostname", "")
	c.Port = p.integer("database.port", 5432, 1, 65535)
	c.User = p.str("database.user", "")
	c.Password = p.str("database.password", "")
	c.DBName = p.str("database.dbname", "")
	c.SSLMode = p.oneOf("database.sslmode", "prefer", "disable", "allow", "prefer", "require", "verify-ca", "verify-full")
	c.TopicPrefix = p.str("topic.prefix", "")
	for _, k := range []string{"database.hostname", "database.user", "database.dbname", "topic.prefix"} {
		if strings.TrimSpace(props[k]) == "" {
			p.fail(k, props[k], reasonRequired)
		}
	}

	switch plugin, set := props["plugin.name"]; {
	case !set:
		log.Info("plugin.name is not set: cdcd uses pgoutput (Debezium's default, decoderbufs, needs a server extension); write plugin.name=pgoutput to silence this")
	case strings.EqualFold(plugin, "pgoutput"):
	case strings.EqualFold(plugin, "decoderbufs"):
		p.fail("plugin.name", plugin, "cdcd reads the built-in pgoutput plugin only; decoderbufs needs a server extension. Write plugin.name=pgoutput (the events are the same)")
	default:
		p.fail("plugin.name", plugin, "the supported value is pgoutput")
	}
	c.SlotName = p.str("slot.name", "debezium")
	if !regexp.MustCompile(`^[a-z0-9_]{1,63}$`).MatchString(c.SlotName) {
		p.fail("slot.name", c.SlotName, "a slot name may contain only lower-case letters, digits and underscores (at most 63)")
	}
	c.PublicationName = p.str("publication.name", "dbz_publication")
	c.PublicationMode = p.oneOf("publication.autocreate.mode", "all_tables", "all_tables", "filtered", "disabled", "no_tables")
	c.SlotDropOnStop = p.boolean("slot.drop.on.stop", false)
	c.StatusInterval = p.millis("status.update.interval.ms", 10000)
	c.HeartbeatInterval = p.millis("heartbeat.interval.ms", 0)
	c.HeartbeatQuery = p.str("heartbeat.action.query", "")
	c.Topics = schema.NewTopicNaming(c.TopicPrefix)
	c.Topics.Delimiter = p.str("topic.delimiter", c.Topics.Delimiter)
	c.Topics.HeartbeatPrefix = p.str("topic.heartbeat.prefix", c.Topics.HeartbeatPrefix)
	c.Topics.HeartbeatName = p.str("topic.heartbeat.name", "")
	c.Topics.Transaction = p.str("topic.transaction", c.Topics.Transaction)
	c.SlotMaxRetries = p.integer("slot.max.retries", 6, 0, 1<<30)
	c.SlotRetryDelay = p.millis("slot.retry.delay.ms", 10000)
	c.OffsetMismatch = p.oneOf("offset.mismatch.strategy", "fail", "fail", "no_validation", "trust_offset", "trust_slot", "trust_greater_lsn")

	mode, err := snapshot.ParseMode(props["snapshot.mode"])
	if err != nil {
		p.fail("snapshot.mode", props["snapshot.mode"], "use initial, initial_only, no_data, always or when_needed")
	}
	c.SnapshotMode = mode
	c.SnapshotFetchSize = p.integer("snapshot.fetch.size", 10240, 1, 1<<24)
	c.SnapshotThreads = p.integer("snapshot.max.threads", 1, 1, 64)
	c.SnapshotTables = p.regexList("snapshot.include.collection.list")

	c.Filter = Filter{
		SchemaInclude: p.regexList("schema.include.list"),
		SchemaExclude: p.regexList("schema.exclude.list"),
		TableInclude:  p.regexList("table.include.list"),
		TableExclude:  p.regexList("table.exclude.list"),
		ColumnInclude: p.regexList("column.include.list"),
		ColumnExclude: p.regexList("column.exclude.list"),
	}
	p.exclusive("schema.include.list", "schema.exclude.list")
	p.exclusive("table.include.list", "table.exclude.list")
	p.exclusive("column.include.list", "column.exclude.list")

	c.SkippedOps = map[byte]bool{}
	ops := p.str("skipped.operations", "t")
	if !strings.EqualFold(strings.TrimSpace(ops), "none") {
		for _, op := range strings.Split(ops, ",") {
			op = strings.TrimSpace(op)
			switch op {
			case "c", "u", "d", "t":
				c.SkippedOps[op[0]] = true
			case "":
			default:
				p.fail("skipped.operations", ops, "the operations are a comma-separated list of c, u, d and t, or none")
			}
		}
	}
	c.TombstonesOnDelete = p.boolean("tombstones.on.delete", true)
	c.MessageKeyColumns = p.keyColumns("message.key.columns")

	c.Modes = catalog.Modes{
		Decimal:                catalog.DecimalMode(p.oneOf("decimal.handling.mode", "precise", "precise", "double", "string")),
		TimePrecision:          catalog.TimePrecisionMode(p.oneOf("time.precision.mode", "adaptive", "adaptive", "adaptive_time_microseconds", "connect", "microseconds", "nanoseconds", "isostring")),
		Binary:                 catalog.BinaryMode(p.oneOf("binary.handling.mode", "bytes", "bytes", "base64", "base64-url-safe", "hex")),
		HStore:                 catalog.HStoreMode(p.oneOf("hstore.handling.mode", "json", "json", "map")),
		Interval:               catalog.IntervalMode(p.oneOf("interval.handling.mode", "numeric", "numeric", "string")),
		MoneyFractionDigits:    p.integer("money.fraction.digits", 2, 0, 100),
		UnavailablePlaceholder: p.str("unavailable.value.placeholder", "__debezium_unavailable_value"),
	}
	c.SchemaNames = p.nameAdjuster("schema.name.adjustment.mode", schema.NewSchemaNameAdjuster)
	c.FieldNames = p.nameAdjuster("field.name.adjustment.mode", schema.NewFieldNameAdjuster)
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return c, nil
}

// parser reads typed values and collects every refusal, so a user sees all mistakes at once.
type parser struct {
	props map[string]string
	errs  []error
}

func (p *parser) fail(key, value, reason string) {
	p.errs = append(p.errs, &ConfigError{Key: key, Value: value, Reason: reason})
}

func (p *parser) str(key, def string) string {
	if v, ok := p.props[key]; ok {
		return v
	}
	return def
}

func (p *parser) oneOf(key, def string, allowed ...string) string {
	v, ok := p.props[key]
	if !ok || strings.TrimSpace(v) == "" {
		return def
	}
	for _, a := range allowed {
		if strings.EqualFold(strings.TrimSpace(v), a) {
			return a
		}
	}
	p.fail(key, v, "the value must be one of "+strings.Join(allowed, ", "))
	return def
}

// nameAdjuster builds the adjuster of an adjustment-mode key: none (the default), avro or avro_unicode.
func (p *parser) nameAdjuster(key string, build func(mode string) (*schema.NameAdjuster, error)) *schema.NameAdjuster {
	a, err := build(p.oneOf(key, "none", "none", "avro", "avro_unicode"))
	if err != nil { // unreachable: oneOf only returns the modes build knows
		p.fail(key, p.props[key], err.Error())
	}
	return a
}

func (p *parser) integer(key string, def, min, max int) int {
	v, ok := p.props[key]
	if !ok || strings.TrimSpace(v) == "" {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		p.fail(key, v, "not a number")
		return def
	}
	if n < min || n > max {
		p.fail(key, v, fmt.Sprintf("the value must be between %d and %d", min, max))
		return def
	}
	return n
}

func (p *parser) millis(key string, def int) time.Duration {
	return time.Duration(p.integer(key, def, 0, 1<<31-1)) * time.Millisecond
}

func (p *parser) boolean(key string, def bool) bool {
	v, ok := p.props[key]
	if !ok || strings.TrimSpace(v) == "" {
		return def
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true
	case "false":
		return false
	}
	p.fail(key, v, "Expected value to be either true or false")
	return def
}

func (p *parser) regexList(key string) []*regexp.Regexp {
	v := strings.TrimSpace(p.props[key])
	if v == "" {
		return nil
	}
	var res []*regexp.Regexp
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		re, err := regexp.Compile("(?i)^(?:" + part + ")$")
		if err != nil {
			p.fail(key, v, fmt.Sprintf("%q is not a valid regular expression: %v", part, err))
			continue
		}
		res = append(res, re)
	}
	return res
}

func (p *parser) exclusive(a, b string) {
	if strings.TrimSpace(p.props[a]) != "" && strings.TrimSpace(p.props[b]) != "" {
		p.fail(b, p.props[b], fmt.Sprintf("%s and %s cannot both be set; keep one of them", a, b))
	}
}

// keyColumns parses message.key.columns: "schema.table:col1,col2;schema.table2:col" (Debezium's form).
func (p *parser) keyColumns(key string) map[string][]string {
	v := strings.TrimSpace(p.props[key])
	if v == "" {
		return nil
	}
	out := map[string][]string{}
	for _, entry := range strings.Split(v, ";") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		table, cols, ok := strings.Cut(entry, ":")
		if !ok || strings.TrimSpace(table) == "" || strings.TrimSpace(cols) == "" {
			p.fail(key, v, fmt.Sprintf("entry %q must look like schema.table:column1,column2", entry))
			continue
		}
		for _, c := range strings.Split(cols, ",") {
			if c = strings.TrimSpace(c); c != "" {
				out[strings.TrimSpace(table)] = append(out[strings.TrimSpace(table)], c)
			}
		}
	}
	return out
}

// Package props reads a connector's properties as Debezium's connectors read theirs: typed values with
// defaults, include/exclude filters, and refusals that name the key, the value and what to write instead,
// collected so that a user sees every mistake at once.
package props

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cdcd/cdcd/schema"
)

// Filter selects schemas (PostgreSQL) or databases (MySQL), tables and columns as Debezium's
// include/exclude lists do: comma-separated regular expressions matched against the whole identifier,
// case-insensitively.
type Filter struct {
	SchemaInclude, SchemaExclude []*regexp.Regexp
	TableInclude, TableExclude   []*regexp.Regexp // against "schema.table"
	ColumnInclude, ColumnExclude []*regexp.Regexp // against "schema.table.column"
	// System lists the schemas Debezium never captures (pg_catalog; mysql, sys…).
	System []string
	// Always are tables ("schema.table") captured whatever the lists say: the signal table, which
	// Debezium adds to the table filter so that its signals and watermarks reach the connector.
	Always []string
}

// IncludeSchema reports whether a schema (a MySQL database) is captured at all.
func (f Filter) IncludeSchema(name string) bool {
	if len(f.SchemaInclude) > 0 {
		return AnyMatch(f.SchemaInclude, name)
	}
	return !AnyMatch(f.SchemaExclude, name) && !slices.Contains(f.System, name)
}

// IncludeTable reports whether changes of schema.table are captured.
func (f Filter) IncludeTable(schemaName, table string) bool {
	if slices.Contains(f.Always, schemaName+"."+table) {
		return true
	}
	if len(f.SchemaInclude) > 0 && !AnyMatch(f.SchemaInclude, schemaName) {
		return false
	}
	if AnyMatch(f.SchemaExclude, schemaName) {
		return false
	}
	id := schemaName + "." + table
	if len(f.TableInclude) > 0 {
		return AnyMatch(f.TableInclude, id)
	}
	if AnyMatch(f.TableExclude, id) {
		return false
	}
	return !slices.Contains(f.System, schemaName)
}

// IncludeColumn reports whether the column is part of the events.
func (f Filter) IncludeColumn(schemaName, table, column string) bool {
	id := schemaName + "." + table + "." + column
	if len(f.ColumnInclude) > 0 {
		return AnyMatch(f.ColumnInclude, id)
	}
	return !AnyMatch(f.ColumnExclude, id)
}

// AnyMatch reports whether one of res matches s.
func AnyMatch(res []*regexp.Regexp, s string) bool {
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
	if e.Reason == ReasonRequired {
		return fmt.Sprintf("Missing required configuration %q which has no default value.", e.Key)
	}
	return fmt.Sprintf("Invalid value %s for configuration %s: %s", e.Value, e.Key, e.Reason)
}

// ConfigKey names the key the error concerns.
func (e *ConfigError) ConfigKey() string { return e.Key }

// Fatal tells the worker that restarting the task cannot help: the config must change.
func (e *ConfigError) Fatal() bool { return true }

// ReasonRequired is the Reason of a missing required key.
const ReasonRequired = "the key is required"

// Parser reads typed values and collects every refusal, so a user sees all mistakes at once. It records
// every key it is asked for, set or not: what a connector's parse reads is what it honours, and a test
// holds that list against the connector's declared keys (see Read).
type Parser struct {
	props map[string]string
	errs  []error
	read  map[string]bool
}

// NewParser reads props.
func NewParser(props map[string]string) *Parser {
	return &Parser{props: props, read: map[string]bool{}}
}

// Read reports whether the parse asked for key (through an accessor, Raw or Honour).
func (p *Parser) Read(key string) bool { return p.read[key] }

// Honour records that the parse acts on key without an accessor of its own (a key another step translated
// into the one the parse reads, such as a deprecated alias).
func (p *Parser) Honour(keys ...string) {
	for _, k := range keys {
		p.read[k] = true
	}
}

// Raw is key's text as given and whether it is set.
func (p *Parser) Raw(key string) (string, bool) {
	p.read[key] = true
	v, ok := p.props[key]
	return v, ok
}

// WithPrefix returns the set keys under prefix, prefix removed (nil when there are none), and records
// each as read: the caller honours or refuses every one of them.
func (p *Parser) WithPrefix(prefix string) map[string]string {
	var out map[string]string
	for k, v := range p.props {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			if out == nil {
				out = map[string]string{}
			}
			out[rest] = v
			p.read[k] = true
		}
	}
	return out
}

// Add records refusals made elsewhere (see Refusals).
func (p *Parser) Add(errs ...error) { p.errs = append(p.errs, errs...) }

// Err is every refusal so far, joined, or nil.
func (p *Parser) Err() error { return errors.Join(p.errs...) }

// Fail records a refusal of key's value.
func (p *Parser) Fail(key, value, reason string) {
	p.errs = append(p.errs, &ConfigError{Key: key, Value: value, Reason: reason})
}

func (p *Parser) Str(key, def string) string {
	p.read[key] = true
	if v, ok := p.props[key]; ok {
		return v
	}
	return def
}

func (p *Parser) OneOf(key, def string, allowed ...string) string {
	p.read[key] = true
	v, ok := p.props[key]
	if !ok || strings.TrimSpace(v) == "" {
		return def
	}
	for _, a := range allowed {
		if strings.EqualFold(strings.TrimSpace(v), a) {
			return a
		}
	}
	p.Fail(key, v, "the value must be one of "+strings.Join(allowed, ", "))
	return def
}

// nameAdjuster builds the adjuster of an adjustment-mode key: none (the default), avro or avro_unicode.
func (p *Parser) NameAdjuster(key string, build func(mode string) (*schema.NameAdjuster, error)) *schema.NameAdjuster {
	a, err := build(p.OneOf(key, "none", "none", "avro", "avro_unicode"))
	if err != nil { // unreachable: oneOf only returns the modes build knows
		p.Fail(key, p.props[key], err.Error())
	}
	return a
}

func (p *Parser) Integer(key string, def, min, max int) int {
	p.read[key] = true
	v, ok := p.props[key]
	if !ok || strings.TrimSpace(v) == "" {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		p.Fail(key, v, "not a number")
		return def
	}
	if n < min || n > max {
		p.Fail(key, v, fmt.Sprintf("the value must be between %d and %d", min, max))
		return def
	}
	return n
}

func (p *Parser) Millis(key string, def int) time.Duration {
	return time.Duration(p.Integer(key, def, 0, 1<<31-1)) * time.Millisecond
}

func (p *Parser) Boolean(key string, def bool) bool {
	p.read[key] = true
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
	p.Fail(key, v, "Expected value to be either true or false")
	return def
}

func (p *Parser) RegexList(key string) []*regexp.Regexp {
	p.read[key] = true
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
			p.Fail(key, v, fmt.Sprintf("%q is not a valid regular expression: %v", part, err))
			continue
		}
		res = append(res, re)
	}
	return res
}

func (p *Parser) Exclusive(a, b string) {
	if strings.TrimSpace(p.props[a]) != "" && strings.TrimSpace(p.props[b]) != "" {
		p.Fail(b, p.props[b], fmt.Sprintf("%s and %s cannot both be set; keep one of them", a, b))
	}
}

// keyColumns parses message.key.columns: "schema.table:col1,col2;schema.table2:col" (Debezium's form).
func (p *Parser) KeyColumns(key string) map[string][]string {
	p.read[key] = true
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
			p.Fail(key, v, fmt.Sprintf("entry %q must look like schema.table:column1,column2", entry))
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

// SkippedOperations reads skipped.operations: a comma-separated list of c, u, d and t, or none.
func (p *Parser) SkippedOperations(key, def string) map[byte]bool {
	skipped := map[byte]bool{}
	ops := p.Str(key, def)
	if !strings.EqualFold(strings.TrimSpace(ops), "none") {
		for _, op := range strings.Split(ops, ",") {
			op = strings.TrimSpace(op)
			switch op {
			case "c", "u", "d", "t":
				skipped[op[0]] = true
			case "":
			default:
				p.Fail(key, ops, "the operations are a comma-separated list of c, u, d and t, or none")
			}
		}
	}
	return skipped
}

// IsKafkaSecurityKey reports whether key (without a client prefix) belongs to Kafka's client security
// family, which every cdcd Kafka client honours or refuses by name: security.*, ssl.* and sasl.*.
func IsKafkaSecurityKey(key string) bool {
	return strings.HasPrefix(key, "security.") || strings.HasPrefix(key, "ssl.") || strings.HasPrefix(key, "sasl.")
}

// KafkaSecuritySettings keeps the settings of Kafka's client security family (IsKafkaSecurityKey).
func KafkaSecuritySettings(settings map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range settings {
		if IsKafkaSecurityKey(k) {
			out[k] = v
		}
	}
	return out
}

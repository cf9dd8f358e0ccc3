package schema

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cdcd/cdcd/schema/javacompat"
)

// Debezium's topic and schema naming (AbstractTopicNamingStrategy, SchemaTopicNamingStrategy,
// DefaultTopicNamingStrategy, SchemaNameAdjuster). Java works on UTF-16 chars, so a character outside the
// Basic Multilingual Plane counts, and is replaced, as two.

// maxTopicNameLength is Kafka's limit that Debezium cuts data-change topic names to.
const maxTopicNameLength = 249

// TopicNaming holds the topic.* settings of one connector. Build it with NewTopicNaming and adjust the
// fields that the connector's configuration sets.
type TopicNaming struct {
	Prefix          string // topic.prefix (required)
	Delimiter       string // topic.delimiter, default "."
	HeartbeatPrefix string // topic.heartbeat.prefix, default "__debezium-heartbeat"
	HeartbeatName   string // topic.heartbeat.name: when set, the whole heartbeat topic name
	Transaction     string // topic.transaction, default "transaction"
}

// NewTopicNaming returns Debezium's default naming under prefix.
func NewTopicNaming(prefix string) TopicNaming {
	return TopicNaming{Prefix: prefix, Delimiter: ".", HeartbeatPrefix: "__debezium-heartbeat", Transaction: "transaction"}
}

// SchemaTableTopic is a PostgreSQL data-change topic, <prefix>.<schema>.<table> (SchemaTopicNamingStrategy,
// PostgreSQL's default): blank parts are skipped and the result is sanitised. Callers compute it once per
// table, as Debezium caches it; a sanitised name is logged at warn level.
func (n TopicNaming) SchemaTableTopic(schemaName, table string) string {
	return SanitizeTopicName(n.join(schemaName, table))
}

// DatabaseTableTopic is a MySQL/MariaDB data-change topic, <prefix>.<database>.<table>
// (DefaultTopicNamingStrategy, the binlog connectors' default), with the same rules as SchemaTableTopic.
func (n TopicNaming) DatabaseTableTopic(database, table string) string {
	return SanitizeTopicName(n.join(database, table))
}

// join joins the prefix and parts with the delimiter, skipping null or blank parts as Debezium's mkString
// does (blank in Java's String.trim sense: only characters up to U+0020).
func (n TopicNaming) join(parts ...string) string {
	var sb strings.Builder
	for _, p := range append([]string{n.Prefix}, parts...) {
		if javacompat.TrimIsEmpty(p) {
			continue
		}
		if sb.Len() > 0 {
			sb.WriteString(n.Delimiter)
		}
		sb.WriteString(p)
	}
	return sb.String()
}

// HeartbeatTopic is topic.heartbeat.name when set, else <heartbeat prefix><delimiter><prefix>. Debezium
// does not sanitise it (its settings are validated as topic names instead).
func (n TopicNaming) HeartbeatTopic() string {
	if n.HeartbeatName != "" {
		return n.HeartbeatName
	}
	return n.HeartbeatPrefix + n.Delimiter + n.Prefix
}

// TransactionTopic is <prefix><delimiter><topic.transaction>, not sanitised.
func (n TopicNaming) TransactionTopic() string {
	return n.Prefix + n.Delimiter + n.Transaction
}

// MessageTopic is PostgreSQL's logical decoding message topic, <prefix>.message: always a '.', whatever
// topic.delimiter says, and not sanitised (LogicalDecodingMessageMonitor).
func (n TopicNaming) MessageTopic() string {
	return n.Prefix + ".message"
}

// SchemaChangeTopic is the binlog connectors' schema change topic: the prefix itself.
func (n TopicNaming) SchemaChangeTopic() string {
	return n.Prefix
}

// SanitizeTopicName applies Debezium's sanitizedTopicName: every UTF-16 char outside [a-zA-Z0-9._-]
// becomes '_', a name longer than 249 chars is cut, and a name that is exactly "." or ".." becomes "_" or
// "__". Like Debezium it logs a warning when it changes the name.
func SanitizeTopicName(name string) string {
	var sb strings.Builder
	changed := false
	for _, r := range name {
		if r < utf8.RuneSelf && isTopicChar(byte(r)) {
			sb.WriteByte(byte(r))
			continue
		}
		if !changed {
			sb.Grow(len(name))
			changed = true
		}
		sb.WriteString(strings.Repeat("_", utf16Len(r)))
	}
	out := name
	if changed {
		out = sb.String()
	}
	switch {
	case len(out) > maxTopicNameLength: // out is ASCII here: only valid or replaced chars
		out, changed = out[:maxTopicNameLength], true
	case out == ".":
		out, changed = "_", true
	case out == "..":
		out, changed = "__", true
	}
	if changed {
		slog.Warn("topic name isn't a valid topic name, replacing it", "topic", name, "replacement", out)
	}
	return out
}

func isTopicChar(c byte) bool {
	return c == '.' || c == '_' || c == '-' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

// utf16Len is how many Java chars r takes; an invalid UTF-8 byte (RuneError) stands for one U+FFFD.
func utf16Len(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// Record schema names of a data-change topic: Debezium names the key, the row and the envelope after the
// topic (TopicNamingStrategy.recordSchemaPrefix defaults to the data-change topic).
func KeySchemaName(topic string) string      { return topic + ".Key" }
func ValueSchemaName(topic string) string    { return topic + ".Value" }
func EnvelopeSchemaName(topic string) string { return topic + ".Envelope" }

// ErrNameConflict is two different names that an Avro adjuster maps to the same replacement; Debezium
// fails the connector in that case.
var ErrNameConflict = errors.New("schema: adjusted name conflicts with another name")

// ErrAdjustmentMode is an unknown schema.name.adjustment.mode or field.name.adjustment.mode.
var ErrAdjustmentMode = errors.New("schema: unknown name adjustment mode")

// replacement is Debezium's ReplacementFunction: which chars are valid first and later, and what an
// invalid one becomes.
type replacement struct {
	validFirst    func(c uint16) bool
	validNonFirst func(c uint16) bool
	replace       func(sb *strings.Builder, c uint16)
	// keepDigitFirst appends a leading digit after its '_' (the avro adjusters' backward compatibility,
	// so names differing only in their first digit stay apart).
	keepDigitFirst bool
}

func isASCIILetter(c uint16) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }
func isASCIIDigit(c uint16) bool  { return '0' <= c && c <= '9' }

func underscore(sb *strings.Builder, _ uint16) { sb.WriteByte('_') }

// unicodeEscape is UnicodeReplacementFunction: "_u" and the char's lower-case hex, padded with "00" only
// when it has at most two digits (so U+0100 becomes "_u100", as in Debezium).
func unicodeEscape(sb *strings.Builder, c uint16) {
	hex := fmt.Sprintf("%x", c)
	if len(hex) <= 2 {
		hex = "00" + hex
	}
	sb.WriteString("_u")
	sb.WriteString(hex)
}

var (
	avroSchemaNames = replacement{
		validFirst:     func(c uint16) bool { return isASCIILetter(c) || c == '_' },
		validNonFirst:  func(c uint16) bool { return isASCIILetter(c) || c == '_' || c == '.' || isASCIIDigit(c) },
		replace:        underscore,
		keepDigitFirst: true,
	}
	// The unicode variants escape '_' too, so that an escape sequence is never ambiguous.
	avroUnicodeSchemaNames = replacement{
		validFirst:    isASCIILetter,
		validNonFirst: func(c uint16) bool { return isASCIILetter(c) || c == '.' || isASCIIDigit(c) },
		replace:       unicodeEscape,
	}
	avroFieldNames = replacement{
		validFirst:     func(c uint16) bool { return isASCIILetter(c) || c == '_' },
		validNonFirst:  func(c uint16) bool { return isASCIILetter(c) || c == '_' || isASCIIDigit(c) },
		replace:        underscore,
		keepDigitFirst: true,
	}
	avroUnicodeFieldNames = replacement{
		validFirst:    isASCIILetter,
		validNonFirst: func(c uint16) bool { return isASCIILetter(c) || isASCIIDigit(c) },
		replace:       unicodeEscape,
	}
)

// NameAdjuster is Debezium's SchemaNameAdjuster for one adjustment mode. It remembers the names it
// replaced, to report a conflict the first time two different names map to the same replacement, and to
// log each replacement once. Safe for concurrent use.
type NameAdjuster struct {
	rules *replacement // nil: mode none

	mu                    sync.Mutex
	seen                  map[string]bool
	originalByReplacement map[string]string
}

// NewSchemaNameAdjuster returns the adjuster of schema.name.adjustment.mode: none (Debezium 3's
// default), avro or avro_unicode, matched case-insensitively after trimming.
func NewSchemaNameAdjuster(mode string) (*NameAdjuster, error) {
	return newNameAdjuster(mode, &avroSchemaNames, &avroUnicodeSchemaNames)
}

// NewFieldNameAdjuster returns the adjuster of field.name.adjustment.mode; unlike schema names, field
// names may not contain '.'.
func NewFieldNameAdjuster(mode string) (*NameAdjuster, error) {
	return newNameAdjuster(mode, &avroFieldNames, &avroUnicodeFieldNames)
}

func newNameAdjuster(mode string, avro, avroUnicode *replacement) (*NameAdjuster, error) {
	a := &NameAdjuster{seen: map[string]bool{}, originalByReplacement: map[string]string{}}
	switch strings.ToLower(strings.TrimSpace(mode)) {
	case "none":
	case "avro":
		a.rules = avro
	case "avro_unicode":
		a.rules = avroUnicode
	default:
		return nil, fmt.Errorf("%w: %q", ErrAdjustmentMode, mode)
	}
	return a, nil
}

// Adjust returns name made valid under the adjuster's rules (name itself when it already is). The error is
// ErrNameConflict when a different name was already adjusted to the same result.
func (a *NameAdjuster) Adjust(name string) (string, error) {
	if a.rules == nil || name == "" {
		return name, nil
	}
	adjusted, changed := a.rules.apply(name)
	if !changed {
		return name, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.seen[name] {
		return adjusted, nil
	}
	a.seen[name] = true
	if earlier, ok := a.originalByReplacement[adjusted]; ok && earlier != name {
		return adjusted, fmt.Errorf("%w: %q and %q both become %q", ErrNameConflict, name, earlier, adjusted)
	}
	a.originalByReplacement[adjusted] = name
	slog.Warn("schema name is not a valid Avro name, replacing it", "name", name, "replacement", adjusted)
	return adjusted, nil
}

// apply is SchemaNameAdjuster.validFullname over the UTF-16 chars of name.
func (r *replacement) apply(name string) (string, bool) {
	chars := utf16.Encode([]rune(name))
	var sb strings.Builder
	changed := false
	for i, c := range chars {
		valid := r.validNonFirst
		if i == 0 {
			valid = r.validFirst
		}
		if valid(c) {
			sb.WriteByte(byte(c)) // every valid char is ASCII
			continue
		}
		changed = true
		r.replace(&sb, c)
		if i == 0 && r.keepDigitFirst && !utf16.IsSurrogate(rune(c)) && unicode.IsDigit(rune(c)) {
			sb.WriteRune(rune(c))
		}
	}
	return sb.String(), changed
}

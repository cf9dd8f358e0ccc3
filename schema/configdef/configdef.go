package configdef

import (
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cdcd/cdcd/schema/javacompat"
)

// Type is a ConfigDef.Type; its String() is the name Connect shows in
// ConfigKeyInfo.type.
type Type int

const (
	Boolean Type = iota
	String
	Int
	Short
	Long
	Double
	List
	Class
	PasswordType
)

var typeNames = [...]string{"BOOLEAN", "STRING", "INT", "SHORT", "LONG", "DOUBLE", "LIST", "CLASS", "PASSWORD"}

func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "UNKNOWN"
}

// Importance is ConfigDef.Importance.
type Importance int

const (
	High Importance = iota
	Medium
	Low
)

func (i Importance) String() string {
	return [...]string{"HIGH", "MEDIUM", "LOW"}[i%3]
}

// Width is ConfigDef.Width; the zero value is NONE, Kafka's default.
type Width int

const (
	WidthNone Width = iota
	WidthShort
	WidthMedium
	WidthLong
)

func (w Width) String() string {
	return [...]string{"NONE", "SHORT", "MEDIUM", "LONG"}[w%4]
}

// Password is a parsed PASSWORD value, or any secret a reader keeps (a
// database password). It prints as "[hidden]" wherever it is formatted —
// every fmt verb (%v, %+v, %#v, %s, %q, %x), JSON, text encodings and slog —
// like Kafka's Password, so a struct holding one can be printed or logged
// whole without leaking it. Reveal is the only way to its text.
type Password string

// Hidden is what Connect prints in place of a password-typed or secret value.
const Hidden = "[hidden]"

func (Password) String() string { return Hidden }

// Format prints Hidden for every verb, so no verb (%x, %q, %#v) reaches the text.
func (Password) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(Hidden)) }

// MarshalJSON, MarshalText and LogValue print Hidden too.
func (Password) MarshalJSON() ([]byte, error) { return []byte(`"` + Hidden + `"`), nil }
func (Password) MarshalText() ([]byte, error) { return []byte(Hidden), nil }
func (Password) LogValue() slog.Value         { return slog.StringValue(Hidden) }

// Reveal returns the secret itself, for the one place that needs it.
func (p Password) Reveal() string { return string(p) }

// Key defines one setting, as ConfigDef.ConfigKey does.
//
// Parsed values have these Go types: BOOLEAN bool, STRING and CLASS string,
// INT int32, SHORT int16, LONG int64, DOUBLE float64, LIST []string,
// PASSWORD Password; a null value is nil.
type Key struct {
	Name string
	Type Type
	// Required keys have no default ("Missing required configuration").
	Required bool
	// Default is the default's text, parsed by Type like any value; nil on a
	// key that is not Required is Kafka's null default.
	Default      *string
	Importance   Importance
	Doc          string
	Group        string // "" is Kafka's null group
	OrderInGroup int    // Kafka uses -1 for keys outside any group
	Width        Width
	DisplayName  string
	Dependents   []string
	Validator    Validator
	// Recommended values are reported as recommended_values in ConfigInfos.
	Recommended []string
}

// Ptr returns a pointer to s, for Key.Default.
func Ptr(s string) *string { return &s }

// Validator checks a parsed value (nil when unset with a null default or
// when parsing failed, as in Kafka) and returns the message to report.
type Validator func(name string, value any) error

// ParseValue converts raw text to the Go value of t with Kafka's
// ConfigDef.parseType rules and messages: the text is trimmed first,
// booleans are case-insensitive, numbers follow Java's parsers, LIST splits
// on commas with surrounding whitespace and keeps empty trailing items.
func ParseValue(name, raw string, t Type) (any, error) {
	s := javacompat.Trim(raw)
	switch t {
	case Boolean:
		switch {
		case strings.EqualFold(s, "true"):
			return true, nil
		case strings.EqualFold(s, "false"):
			return false, nil
		}
		return nil, &ConfigError{Name: name, Value: raw, Message: "Expected value to be either true or false"}
	case PasswordType:
		return Password(s), nil
	case String:
		return s, nil
	case Int, Short, Long:
		bits := map[Type]int{Int: 32, Short: 16, Long: 64}[t]
		n, err := javacompat.ParseInteger(s, bits)
		if err != nil {
			return nil, notANumber(name, raw, t)
		}
		switch t {
		case Int:
			return int32(n), nil
		case Short:
			return int16(n), nil
		}
		return n, nil
	case Double:
		f, err := javacompat.ParseDouble(s, 64)
		if err != nil {
			return nil, notANumber(name, raw, t)
		}
		return f, nil
	case List:
		if s == "" {
			return []string{}, nil
		}
		return listSeparator.Split(s, -1), nil
	case Class:
		if s == "" {
			return nil, &ConfigError{Name: name, Value: raw, Message: "Class " + raw + " could not be found."}
		}
		return s, nil
	}
	return nil, fmt.Errorf("configuration %s: unknown type %d", name, t)
}

func notANumber(name, raw string, t Type) error {
	return &ConfigError{Name: name, Value: raw, Message: "Not a number of type " + t.String()}
}

// listSeparator is Kafka's COMMA_WITH_WHITESPACE; \s in Java is ASCII only.
var listSeparator = regexp.MustCompile(`[ \t\n\x0B\f\r]*,[ \t\n\x0B\f\r]*`)

// FormatValue renders a parsed value as ConfigDef.convertToString does for
// ConfigInfos: LIST joined by ",", PASSWORD as "[hidden]", nil as null (false).
func FormatValue(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", false
	case []string:
		return strings.Join(x, ","), true
	}
	return javaString(v), true
}

// AtLeast is Kafka's Range.atLeast for integer settings.
func AtLeast(min int64) Validator { return rangeValidator(&min, nil) }

// Between is Kafka's Range.between (inclusive) for integer settings.
func Between(min, max int64) Validator { return rangeValidator(&min, &max) }

func rangeValidator(min, max *int64) Validator {
	return func(name string, value any) error {
		n, ok := asInt64(value)
		if !ok {
			return &ConfigError{Name: name, Message: "Value must be non-null"}
		}
		if min != nil && n < *min {
			return &ConfigError{Name: name, Value: value, Message: "Value must be at least " + strconv.FormatInt(*min, 10)}
		}
		if max != nil && n > *max {
			return &ConfigError{Name: name, Value: value, Message: "Value must be no more than " + strconv.FormatInt(*max, 10)}
		}
		return nil
	}
}

func asInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}

// ValidString is Kafka's ConfigDef.ValidString: an exact, case-sensitive match.
func ValidString(allowed ...string) Validator {
	return func(name string, value any) error {
		if s, ok := value.(string); ok && contains(allowed, s) {
			return nil
		}
		return &ConfigError{Name: name, Value: value, Message: "String must be one of: " + strings.Join(allowed, ", ")}
	}
}

// CaseInsensitiveValidString is Kafka's ConfigDef.CaseInsensitiveValidString.
func CaseInsensitiveValidString(allowed ...string) Validator {
	return func(name string, value any) error {
		if s, ok := value.(string); ok && slices.ContainsFunc(allowed, func(a string) bool { return strings.EqualFold(a, s) }) {
			return nil
		}
		return &ConfigError{Name: name, Value: value, Message: "String must be one of (case insensitive): " + strings.Join(allowed, ", ")}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

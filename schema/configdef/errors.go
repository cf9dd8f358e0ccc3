package configdef

import "strings"

// ConfigError is Kafka's ConfigException for one setting; Error() reproduces
// its text: "Invalid value <value> for configuration <name>: <message>".
type ConfigError struct {
	Name    string
	Value   any // rendered as Java's toString would; nil prints "null"
	Message string
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("Invalid value ")
	b.WriteString(javaString(e.Value))
	b.WriteString(" for configuration ")
	b.WriteString(e.Name)
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

package config

import (
	"errors"
	"strings"
)

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

// ErrConnectorFile marks a connector file that connect-standalone would refuse.
var ErrConnectorFile = errors.New("invalid connector configuration file")

// ErrProvider marks a failure of a config provider while resolving
// ${provider:path:key} placeholders.
var ErrProvider = errors.New("config provider")

// ErrWorkerConfig marks an invalid worker configuration.
var ErrWorkerConfig = errors.New("invalid worker configuration")

package config

import (
	"errors"
)

// ErrConnectorFile marks a connector file that connect-standalone would refuse.
var ErrConnectorFile = errors.New("invalid connector configuration file")

// ErrProvider marks a failure of a config provider while resolving
// ${provider:path:key} placeholders.
var ErrProvider = errors.New("config provider")

// ErrWorkerConfig marks an invalid worker configuration.
var ErrWorkerConfig = errors.New("invalid worker configuration")

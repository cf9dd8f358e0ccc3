package props

import "math"

// RuntimeKeys are the keys of Debezium's shared configuration that cdcd's runtime (connect/) honours for
// every connector, whatever its database:
//
//   - errors.max.retries: how many consecutive retries after retriable errors (a lost connection) the
//     task makes before it is FAILED; -1, the default, retries forever, 0 fails at the first error.
//   - connection.validation.timeout.ms: how long validation's connection check (Debezium's
//     validateConnection, run on create, config change and validate) waits for the database.
//
// A connector's parse reads them with ReadRuntimeKeys, so that a wrong value is refused on its key.
var RuntimeKeys = []string{"errors.max.retries", "connection.validation.timeout.ms"}

// ReadRuntimeKeys checks the RuntimeKeys' values in p; the runtime reads them from the config itself.
func ReadRuntimeKeys(p *Parser) {
	p.Integer("errors.max.retries", -1, -1, math.MaxInt32)
	p.Integer("connection.validation.timeout.ms", 60000, 1, math.MaxInt32)
}

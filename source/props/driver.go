package props

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Debezium hands each database.<option> it does not declare to its JDBC driver (pgjdbc, Connector/J,
// MariaDB Connector/J). cdcd talks to the databases with Go drivers: it maps the options that have an
// equivalent (each connector's ParseConfig reads those), accepts with a note those that change nothing a
// user can observe in cdcd, and refuses the others by name (Keys.Refusals).

// DriverOptionPrefix is the prefix of the JDBC driver's options.
const DriverOptionPrefix = "database."

// NoEffectOptions are JDBC driver options cdcd accepts without acting on them: option name (as the driver
// spells it; matched ignoring case, as users spell them both ways) → why it changes nothing in cdcd.
type NoEffectOptions map[string]string

// Claims reports whether key is database.<one of o>.
func (o NoEffectOptions) Claims(key string) bool {
	_, ok := o.why(key)
	return ok
}

func (o NoEffectOptions) why(key string) (string, bool) {
	name, ok := strings.CutPrefix(key, DriverOptionPrefix)
	if !ok {
		return "", false
	}
	for option, why := range o {
		if strings.EqualFold(option, name) {
			return why, true
		}
	}
	return "", false
}

// Notes reads the set options of o and returns one line for each, saying it has no effect in cdcd and
// why, in key order.
func (o NoEffectOptions) Notes(p *Parser) []string {
	var notes []string
	for _, key := range slices.Sorted(maps.Keys(p.props)) {
		why, ok := o.why(key)
		if !ok {
			continue
		}
		value, _ := p.Raw(key)
		notes = append(notes, fmt.Sprintf("%s=%s is a JDBC driver option with no effect in cdcd: %s", key, value, why))
	}
	return notes
}

package config

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/cdcd/cdcd/schema/configdef"
)

// AllowedOrigins are the origins of access.control.allow.origin, read as Connect 4.4's REST server reads them
// (Jetty's CrossOriginHandler): comma-separated, each trimmed, "*" for any origin, any other a regular
// expression that must match a whole Origin value, case-insensitively. An empty value allows none.
type AllowedOrigins struct {
	Any      bool
	Patterns []*regexp.Regexp
}

// ParseAllowedOrigins reads access.control.allow.origin. A pattern Go's regular expressions cannot compile
// (Java's lookarounds and backreferences) is an error naming it.
func ParseAllowedOrigins(value string) (AllowedOrigins, error) {
	var out AllowedOrigins
	for _, p := range strings.Split(value, ",") {
		switch p = strings.TrimSpace(p); p {
		case "":
		case "*":
			out.Any = true
		default:
			re, err := regexp.Compile(`^(?i:` + p + `)$`)
			if err != nil {
				return AllowedOrigins{}, fmt.Errorf("origin pattern %q is not a regular expression cdcd can match (no lookarounds or backreferences): %w", p, err)
			}
			out.Patterns = append(out.Patterns, re)
		}
	}
	return out, nil
}

// Allows reports whether an Origin header's value (origins separated by spaces) matches.
func (a AllowedOrigins) Allows(origin string) bool {
	for _, o := range strings.Fields(origin) {
		if a.Any {
			return true
		}
		for _, re := range a.Patterns {
			if re.MatchString(o) {
				return true
			}
		}
	}
	return false
}

// Empty reports whether no origin is allowed (CORS is off).
func (a AllowedOrigins) Empty() bool { return !a.Any && len(a.Patterns) == 0 }

func allowedOriginsValidator(name string, value any) error {
	s, _ := value.(string)
	if _, err := ParseAllowedOrigins(s); err != nil {
		return &configdef.ConfigError{Name: name, Value: value, Message: err.Error()}
	}
	return nil
}

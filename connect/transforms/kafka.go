package transforms

import (
	"fmt"
	"log/slog"
	"regexp"
	"strings"

	"github.com/cdcd/cdcd/source"
)

// filter is Kafka's Filter: it drops every record it applies to, so it is configured with a predicate.
type filter struct{}

func newFilter(settings, *slog.Logger) (transformation, error) { return filter{}, nil }

func (filter) apply(*source.Event) (bool, error) { return false, nil }

// regexRouter is Kafka's RegexRouter: when the whole topic matches "regex", the topic becomes
// "replacement" with Java's group references ($1, ${name}) expanded.
type regexRouter struct {
	regex       *regexp.Regexp
	replacement string
}

func newRegexRouter(s settings, _ *slog.Logger) (transformation, error) {
	re, err := wholeMatchSetting(s, "regex")
	if err != nil {
		return nil, err
	}
	replacement, err := s.required("replacement")
	if err != nil {
		return nil, err
	}
	// Expand once against a match of nothing to reject a malformed replacement before the connector starts.
	if _, err := expandJavaReplacement(re, replacement, make([]string, re.NumSubexp()+1)); err != nil {
		return nil, &ConfigError{Key: s.key("replacement"), Value: replacement, Problem: err.Error()}
	}
	return regexRouter{regex: re, replacement: replacement}, nil
}

func (r regexRouter) apply(ev *source.Event) (bool, error) {
	groups := r.regex.FindStringSubmatch(ev.Topic)
	if groups == nil {
		return true, nil
	}
	topic, err := expandJavaReplacement(r.regex, r.replacement, groups)
	if err != nil {
		return false, err
	}
	ev.Topic = topic
	return true, nil
}

// expandJavaReplacement expands a java.util.regex replacement string: a backslash quotes the next
// character, ${name} is a named group, and $ followed by digits is a numbered group, taking as many digits as
// still name an existing group (Matcher.appendReplacement's rules). An unmatched group expands to nothing.
func expandJavaReplacement(re *regexp.Regexp, replacement string, groups []string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(replacement); i++ {
		c := replacement[i]
		switch {
		case c == '\\':
			i++
			if i == len(replacement) {
				return "", fmt.Errorf("character to be escaped is missing at the end of the replacement")
			}
			b.WriteByte(replacement[i])
		case c != '$':
			b.WriteByte(c)
		case i+1 == len(replacement):
			return "", fmt.Errorf("illegal group reference: group index is missing")
		case replacement[i+1] == '{':
			end := strings.IndexByte(replacement[i+2:], '}')
			if end < 0 {
				return "", fmt.Errorf("named capturing group is missing trailing '}'")
			}
			name := replacement[i+2 : i+2+end]
			idx := re.SubexpIndex(name)
			if idx < 0 {
				return "", fmt.Errorf("no group with name {%s}", name)
			}
			b.WriteString(groups[idx])
			i += 2 + end
		case replacement[i+1] >= '0' && replacement[i+1] <= '9':
			i++
			ref := int(replacement[i] - '0')
			if ref > re.NumSubexp() {
				return "", fmt.Errorf("no group %d", ref)
			}
			for i+1 < len(replacement) && replacement[i+1] >= '0' && replacement[i+1] <= '9' {
				next := ref*10 + int(replacement[i+1]-'0')
				if next > re.NumSubexp() {
					break
				}
				ref = next
				i++
			}
			b.WriteString(groups[ref])
		default:
			return "", fmt.Errorf("illegal group reference in the replacement")
		}
	}
	return b.String(), nil
}

package transforms

import (
	"regexp"

	"github.com/cdcd/cdcd/source"
)

// topicNameMatches is Kafka's TopicNameMatches: true when the whole topic name matches "pattern".
type topicNameMatches struct{ pattern *regexp.Regexp }

func newTopicNameMatches(s settings) (predicate, error) {
	re, err := wholeMatchSetting(s, "pattern")
	if err != nil {
		return nil, err
	}
	return topicNameMatches{pattern: re}, nil
}

func (p topicNameMatches) test(ev *source.Event) bool { return p.pattern.MatchString(ev.Topic) }

// hasHeaderKey is Kafka's HasHeaderKey: true when the record has at least one header named "name".
type hasHeaderKey struct{ name string }

func newHasHeaderKey(s settings) (predicate, error) {
	name, err := s.required("name")
	if err != nil {
		return nil, err
	}
	if name == "" {
		return nil, &ConfigError{Key: s.key("name"), Problem: "must not be empty"}
	}
	return hasHeaderKey{name: name}, nil
}

func (p hasHeaderKey) test(ev *source.Event) bool {
	for _, h := range ev.Headers {
		if h.Key == p.name {
			return true
		}
	}
	return false
}

// recordIsTombstone is Kafka's RecordIsTombstone: true when the value is null, whatever its schema.
type recordIsTombstone struct{}

func newRecordIsTombstone(settings) (predicate, error) { return recordIsTombstone{}, nil }

func (recordIsTombstone) test(ev *source.Event) bool { return ev.Value == nil }

// wholeMatchSetting compiles a required, non-empty Java regex setting for Matcher.matches() semantics: the
// pattern must match the whole input. Go's RE2 syntax covers the Java syntax such configs use; constructs
// RE2 lacks (backreferences, lookaround, possessive quantifiers) are rejected with the key named.
func wholeMatchSetting(s settings, name string) (*regexp.Regexp, error) {
	pattern, err := s.required(name)
	if err != nil {
		return nil, err
	}
	if pattern == "" {
		return nil, &ConfigError{Key: s.key(name), Problem: "must not be empty"}
	}
	re, err := regexp.Compile(`^(?:` + pattern + `)$`)
	if err != nil {
		return nil, &ConfigError{Key: s.key(name), Value: pattern,
			Problem: "not a regular expression cdcd can run (Java features without an RE2 equivalent are unsupported): " + err.Error()}
	}
	return re, nil
}

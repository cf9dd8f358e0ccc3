package transforms

import "github.com/cdcd/cdcd/source"

// topicNameMatches is Kafka's TopicNameMatches: true when the whole topic name matches "pattern".
type topicNameMatches struct{ pattern javaPattern }

func newTopicNameMatches(s settings) (predicate, error) {
	re, err := requiredPattern(s, "pattern")
	if err != nil {
		return nil, err
	}
	return topicNameMatches{pattern: re}, nil
}

func (p topicNameMatches) test(ev *source.Event) bool { return p.pattern.matches(ev.Topic) }

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

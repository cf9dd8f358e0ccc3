package transforms

import (
	"log/slog"

	"github.com/cdcd/cdcd/source"
)

// filter is Kafka's Filter: it drops every record it applies to, so it is configured with a predicate.
type filter struct{}

func newFilter(settings, *slog.Logger) (transformation, error) { return filter{}, nil }

func (filter) apply(*source.Event) (bool, error) { return false, nil }

// regexRouter is Kafka's RegexRouter: when the whole topic matches "regex", the topic becomes
// "replacement" with Java's group references ($1, ${name}) expanded.
type regexRouter struct {
	regex       javaPattern
	replacement string
}

func newRegexRouter(s settings, _ *slog.Logger) (transformation, error) {
	re, err := requiredPattern(s, "regex")
	if err != nil {
		return nil, err
	}
	replacement, err := replacementSetting(s, "replacement", re)
	if err != nil {
		return nil, err
	}
	return regexRouter{regex: re, replacement: replacement}, nil
}

func (r regexRouter) apply(ev *source.Event) (bool, error) {
	topic, ok, err := r.regex.replaceIfMatches(ev.Topic, r.replacement)
	if ok {
		ev.Topic = topic
	}
	return true, err
}

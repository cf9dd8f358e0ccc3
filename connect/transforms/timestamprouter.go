package transforms

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/cdcd/cdcd/source"
)

// timestampRouter is Kafka's TimestampRouter: the topic becomes "topic.format" with ${topic} replaced by
// the topic and ${timestamp} by the record timestamp formatted with "timestamp.format" (a SimpleDateFormat
// pattern, in UTC).
//
// Debezium's records carry no timestamp when the transforms run (see recordTimestamp), so on a Debezium
// connector Kafka's TimestampRouter fails every record with "Timestamp missing on record", and so does
// cdcd's: with errors.tolerance=all the records are skipped.
type timestampRouter struct {
	topicFormat string
	format      *javaDateFormat
}

func newTimestampRouter(s settings, _ *slog.Logger) (transformation, error) {
	t := &timestampRouter{topicFormat: s.str("topic.format", "${topic}-${timestamp}")}
	pattern := s.str("timestamp.format", "yyyyMMdd")
	var err error
	if t.format, err = compileJavaDateFormat(pattern); err != nil {
		return nil, &ConfigError{Key: s.key("timestamp.format"), Value: pattern, Problem: err.Error()}
	}
	return t, nil
}

func (t *timestampRouter) apply(ev *source.Event) (bool, error) {
	ts, ok := recordTimestamp(ev)
	if !ok {
		return false, fmt.Errorf("timestamp missing on record for topic %s", ev.Topic)
	}
	ev.Topic = t.route(ev.Topic, ts)
	return true, nil
}

// route replaces ${topic} first, then ${timestamp}, as Kafka does (so a topic containing "${timestamp}"
// gets the timestamp too).
func (t *timestampRouter) route(topic string, ts time.Time) string {
	out := strings.ReplaceAll(t.topicFormat, "${topic}", topic)
	return strings.ReplaceAll(out, "${timestamp}", t.format.format(ts))
}

// recordTimestamp is ConnectRecord.timestamp() as a source task's transforms see it. Debezium builds its
// SourceRecords without a timestamp (the producer stamps them when sending), so there is none unless an
// earlier transform set one, as the outbox EventRouter does.
func recordTimestamp(ev *source.Event) (time.Time, bool) { return ev.Timestamp, !ev.Timestamp.IsZero() }

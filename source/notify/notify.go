// Package notify is Debezium's notifications as cdcd's readers send them: records on
// notification.sink.topic.name (the sink channel) and log lines (the log channel) that tell operators
// how snapshots go. A reader decides when to notify; this package makes the records, byte for byte as
// Debezium's SinkNotificationChannel writes them.
package notify

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/javacompat"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/props"
)

// Aggregate types and the statuses Debezium's snapshot notification services send.
const (
	InitialSnapshot     = "Initial Snapshot"
	IncrementalSnapshot = "Incremental Snapshot"

	Started            = "STARTED"
	InProgress         = "IN_PROGRESS"
	TableScanCompleted = "TABLE_SCAN_COMPLETED"
	Completed          = "COMPLETED"
	Paused             = "PAUSED"
	Resumed            = "RESUMED"
	Aborted            = "ABORTED"
	Skipped            = "SKIPPED"
)

// Config is notification.enabled.channels and notification.sink.topic.name.
type Config struct {
	Sink  bool
	Topic string // the sink channel's topic
	Log   bool
}

// ReadConfig reads the notification keys; the jmx channel is refused with what to use instead.
func ReadConfig(p *props.Parser) Config {
	var c Config
	channels := p.Str("notification.enabled.channels", "")
	for _, ch := range strings.Split(channels, ",") {
		switch ch = strings.TrimSpace(ch); ch {
		case "":
		case "sink":
			c.Sink = true
		case "log":
			c.Log = true
		case "jmx":
			p.Fail("notification.enabled.channels", channels, "cdcd has no JMX; use sink (a Kafka topic), log, or cdcd's metrics and status page")
		default:
			p.Fail("notification.enabled.channels", channels, fmt.Sprintf("unknown notification channel %q; the channels are sink and log", ch))
		}
	}
	c.Topic = p.Str("notification.sink.topic.name", "")
	if c.Sink && strings.TrimSpace(c.Topic) == "" {
		p.Fail("notification.sink.topic.name", c.Topic, "the sink notification channel writes to this topic: name it")
	}
	return c
}

// Enabled reports whether any channel is on.
func (c Config) Enabled() bool { return c.Sink || c.Log }

// Notification is one of Debezium's notifications. Data is its additional data, to which Send adds
// connector_name.
type Notification struct {
	ID            string // "" for a new random id
	AggregateType string
	Type          string
	Data          map[string]string
}

var (
	keySchema = &schema.Schema{Type: schema.StructT, Name: "io.debezium.connector.common.NotificationKey", Version: 1,
		Fields: []schema.Field{{Name: "id", Schema: &schema.Schema{Type: schema.String}}}}
	valueSchema = &schema.Schema{Type: schema.StructT, Name: "io.debezium.connector.common.Notification", Version: 1,
		Fields: []schema.Field{
			{Name: "id", Schema: &schema.Schema{Type: schema.String}},
			{Name: "type", Schema: &schema.Schema{Type: schema.String}},
			{Name: "aggregate_type", Schema: &schema.Schema{Type: schema.String}},
			{Name: "additional_data", Schema: &schema.Schema{Type: schema.Map, Optional: true,
				Keys: &schema.Schema{Type: schema.String}, Values: &schema.Schema{Type: schema.String}}},
			{Name: "timestamp", Schema: &schema.Schema{Type: schema.Int64}},
		}}
)

// Send puts n on the enabled channels: it logs it, and returns the sink channel's record (ok false when the
// sink channel is off). logicalName is topic.prefix, Debezium's connector_name.
func (c Config) Send(n Notification, logicalName string, now time.Time, log *slog.Logger) (ev source.Event, ok bool) {
	if n.ID == "" {
		n.ID = uuid.NewString()
	}
	data := make(map[string]string, len(n.Data)+1)
	for k, v := range n.Data {
		data[k] = v
	}
	data["connector_name"] = logicalName
	// Debezium's additional data is new HashMap<>(a Map.of) plus connector_name: JsonConverter writes it in
	// that map's iteration order.
	// Keys sharing a bucket keep their insertion order, which Debezium's Map.of leaves undefined: sorted
	// first, they are at least stable.
	keys := slices.Sorted(maps.Keys(data))
	copied := len(n.Data)
	entries := make([]schema.MapEntry, 0, len(data))
	for _, k := range javacompat.HashMapOrderWithCapacity(keys, func(int) int { return javacompat.HashMapCopyCapacity(copied, 1) }) {
		entries = append(entries, schema.MapEntry{Key: k, Value: data[k]})
	}
	if c.Log {
		args := []any{"id", n.ID, "aggregate_type", n.AggregateType, "type", n.Type}
		for _, e := range entries {
			args = append(args, e.Key, e.Value)
		}
		log.Info("notification", args...)
	}
	if !c.Sink {
		return source.Event{}, false
	}
	value := schema.NewStruct(valueSchema).Set("id", n.ID).Set("type", n.Type).Set("aggregate_type", n.AggregateType).
		Set("additional_data", entries).Set("timestamp", now.UnixMilli())
	return source.Event{Topic: c.Topic, KeySchema: keySchema, Key: schema.NewStruct(keySchema).Set("id", n.ID),
		ValueSchema: valueSchema, Value: value}, true
}

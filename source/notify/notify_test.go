package notify

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source/props"
)

func TestReadConfig(t *testing.T) {
	p := props.NewParser(map[string]string{"notification.enabled.channels": "sink, log", "notification.sink.topic.name": "ops.notes"})
	if c := ReadConfig(p); p.Err() != nil || c != (Config{Sink: true, Log: true, Topic: "ops.notes"}) {
		t.Fatalf("config %+v, %v", c, p.Err())
	}
	for settings, want := range map[string]string{
		"jmx":  "cdcd has no JMX",
		"mail": `unknown notification channel "mail"`,
		"sink": "notification.sink.topic.name",
	} {
		p := props.NewParser(map[string]string{"notification.enabled.channels": settings})
		ReadConfig(p)
		if err := p.Err(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("notification.enabled.channels=%s: %v", settings, err)
		}
	}
	if c := ReadConfig(props.NewParser(nil)); c.Enabled() {
		t.Fatal("notifications are off by default")
	}
}

// TestSendMatchesDebezium checks a notification's record against what Debezium 3.6.1 wrote in the
// incremental-notifications golden: schemas, the id as key, connector_name added, the additional data in
// the copied HashMap's order.
func TestSendMatchesDebezium(t *testing.T) {
	var logged bytes.Buffer
	c := Config{Sink: true, Topic: "pg1.notifications", Log: true}
	now := time.UnixMilli(1796179602499)
	ev, ok := c.Send(Notification{ID: "golden-signal-1", AggregateType: IncrementalSnapshot, Type: InProgress, Data: map[string]string{
		"data_collections": "public.inc_items", "current_collection_in_progress": "public.inc_items", "maximum_key": "25", "last_processed_key": "10",
	}}, "pg1", now, slog.New(slog.NewTextHandler(&logged, nil)))
	if !ok || ev.Topic != "pg1.notifications" {
		t.Fatalf("record %+v", ev)
	}
	value := ev.Value.(*schema.Struct)
	var keys []string
	for _, e := range value.Get("additional_data").([]schema.MapEntry) {
		keys = append(keys, e.Key.(string))
	}
	// current_collection_in_progress, connector_name and maximum_key as Debezium's record has them;
	// data_collections and last_processed_key share a bucket, which Debezium fills in either order.
	if got := strings.Join(keys[:3], ","); got != "current_collection_in_progress,connector_name,maximum_key" {
		t.Fatalf("additional_data order %v", keys)
	}
	if value.Get("timestamp") != now.UnixMilli() || ev.Key.(*schema.Struct).Get("id") != "golden-signal-1" ||
		ev.ValueSchema.Name != "io.debezium.connector.common.Notification" || ev.KeySchema.Name != "io.debezium.connector.common.NotificationKey" {
		t.Fatalf("record %+v", ev)
	}
	if !strings.Contains(logged.String(), "type=IN_PROGRESS") || !strings.Contains(logged.String(), "connector_name=pg1") {
		t.Fatalf("log channel wrote %q", logged.String())
	}
	if _, ok := (Config{Log: true}).Send(Notification{AggregateType: InitialSnapshot, Type: Skipped}, "pg1", now, slog.New(slog.DiscardHandler)); ok {
		t.Fatal("a record without the sink channel")
	}
}

package transforms

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/schema"
)

// Debezium 1.x's UnwrapFromEnvelope is today's ExtractNewRecordState: a config naming it runs that
// transform, and the log says what to write.
func TestUnwrapFromEnvelopeIsExtractNewRecordState(t *testing.T) {
	props := map[string]string{"transforms": "unwrap", "transforms.unwrap.type": "io.debezium.transforms.UnwrapFromEnvelope"}
	if err := Validate(props); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	var logs bytes.Buffer
	c, err := New(props, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "write transforms.unwrap.type=io.debezium.transforms.ExtractNewRecordState instead") {
		t.Errorf("no warning saying what to write:\n%s", logs.String())
	}
	ev, keep := run(t, c, change(schema.OpCreate, nil, row(1, "ann", nil)))
	if !keep || !strings.Contains(strings.Join(fieldNames(ev.ValueSchema), ","), "name:string?") || ev.Value.(*schema.Struct).Get("name") != "ann" {
		t.Errorf("the record was not unwrapped: kept %v, schema %v, value %v", keep, fieldNames(ev.ValueSchema), ev.Value)
	}
}

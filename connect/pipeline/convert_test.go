package pipeline

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/avro"
	"github.com/cdcd/cdcd/source"
)

func avroWorkerConfig(t *testing.T, extra map[string]string) *config.Worker {
	t.Helper()
	props := map[string]string{
		"bootstrap.servers":            "127.0.0.1:1",
		"key.converter":                config.AvroConverter,
		"value.converter":              config.AvroConverter,
		"offset.storage.file.filename": filepath.Join(t.TempDir(), "offsets.dat"),
	}
	for k, v := range extra {
		props[k] = v
	}
	cfg, _, err := config.ParseWorker(props, config.Standalone)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// The worker's encoder, built from AvroConverter settings, writes a Debezium change event and its
// tombstone to a Confluent-compatible registry: key under <topic>-key, value under <topic>-value, both in
// Confluent's framing, the value schema registered with the text AvroData would produce.
func TestAvroConverterEncodesDebeziumEnvelope(t *testing.T) {
	reg := srfake.New()
	t.Cleanup(reg.Close)
	enc, err := NewRecordEncoder(avroWorkerConfig(t, map[string]string{
		"key.converter.schema.registry.url":   reg.URL(),
		"value.converter.schema.registry.url": reg.URL(),
	}))
	if err != nil {
		t.Fatal(err)
	}
	const topic = "pg1.public.customers"
	idSchema := &schema.Schema{Type: schema.Int32, Default: int32(0), HasDefault: true}
	keySchema := &schema.Schema{Type: schema.StructT, Name: topic + ".Key", Fields: []schema.Field{{Name: "id", Schema: idSchema}}}
	row := &schema.Schema{Type: schema.StructT, Optional: true, Name: topic + ".Value", Fields: []schema.Field{
		{Name: "id", Schema: idSchema}, {Name: "email", Schema: &schema.Schema{Type: schema.String}},
	}}
	env := schema.EnvelopeSchema(topic+".Envelope", row, schema.PostgresSourceSchema())
	src := schema.NewStruct(schema.PostgresSourceSchema()).
		Set("version", schema.DebeziumVersion).Set("connector", "postgresql").Set("name", "pg1").
		Set("ts_ms", int64(1)).Set("db", "app").Set("schema", "public").Set("table", "customers")
	value := schema.NewStruct(env).Set("before", schema.NewStruct(row).Set("id", int32(1)).Set("email", "a@b.c")).
		Set("source", src).Set("op", schema.OpDelete)
	key := schema.NewStruct(keySchema).Set("id", int32(1))

	rec, err := enc.Encode(&source.Event{Topic: topic, KeySchema: keySchema, Key: key, ValueSchema: env, Value: value,
		Headers: []source.Header{{Key: "__debezium.oldkey", Schema: keySchema, Value: key}}})
	if err != nil {
		t.Fatal(err)
	}
	keyID, _, err := reg.RegisterSchema(topic+"-key", mustSchemaSR(t, keySchema))
	if err != nil {
		t.Fatal(err)
	}
	valueID, _, err := reg.RegisterSchema(topic+"-value", mustSchemaSR(t, env))
	if err != nil {
		t.Fatal(err)
	}
	// Re-registering the texts returned the converter's ids: the same subjects hold the same texts.
	if want := framed(keyID, 0x02); !bytes.Equal(rec.Key, want) { // id 1 zig-zag
		t.Errorf("key % x, want % x", rec.Key, want)
	}
	if len(rec.Value) < 5 || rec.Value[0] != 0 || int(binary.BigEndian.Uint32(rec.Value[1:5])) != valueID {
		t.Errorf("value framing % x, want id %d", rec.Value[:min(5, len(rec.Value))], valueID)
	}
	if len(rec.Headers) != 1 || string(rec.Headers[0].Value) != `{"id":1}` {
		t.Errorf("headers still go through the header converter: %+v", rec.Headers)
	}

	tomb, err := enc.Encode(&source.Event{Topic: topic, KeySchema: keySchema, Key: key})
	if err != nil || tomb.Value != nil || !bytes.Equal(tomb.Key, rec.Key) {
		t.Errorf("tombstone: %+v, %v", tomb, err)
	}
}

func mustSchemaSR(t *testing.T, s *schema.Schema) sr.Schema {
	t.Helper()
	text, err := avro.SchemaText(s)
	if err != nil {
		t.Fatal(err)
	}
	return sr.Schema{Schema: text}
}

func framed(id int, body ...byte) []byte {
	return append(binary.BigEndian.AppendUint32([]byte{0}, uint32(id)), body...)
}

func TestAvroConverterSettingsAreChecked(t *testing.T) {
	_, err := NewRecordEncoder(avroWorkerConfig(t, map[string]string{
		"key.converter.schema.registry.url":           "http://127.0.0.1:1",
		"value.converter.schema.registry.url":         "http://127.0.0.1:1",
		"value.converter.value.subject.name.strategy": "TopicNameStrategy",
	}))
	if err == nil || !strings.Contains(err.Error(), "value.converter") || !strings.Contains(err.Error(), "value.subject.name.strategy") {
		t.Errorf("got %v, want an error naming value.converter and the setting", err)
	}
	_, err = NewRecordEncoder(avroWorkerConfig(t, map[string]string{"value.converter.schema.registry.url": "http://127.0.0.1:1"}))
	if err == nil || !strings.Contains(err.Error(), "key.converter") || !strings.Contains(err.Error(), "schema.registry.url") {
		t.Errorf("got %v, want an error naming key.converter's missing schema.registry.url", err)
	}
}

// A timestamp a transform set (the outbox EventRouter's) becomes the Kafka record's; none stays none, so
// the producer stamps the record.
func TestEncoderCarriesEventTimestamp(t *testing.T) {
	cfg := avroWorkerConfig(t, map[string]string{"key.converter": config.JSONConverter, "value.converter": config.JSONConverter})
	enc, err := NewRecordEncoder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	str := &schema.Schema{Type: schema.String}
	at := time.UnixMilli(1700000000123)
	rec, err := enc.Encode(&source.Event{Topic: "t", ValueSchema: str, Value: "v", Timestamp: at})
	if err != nil || !rec.Time.Equal(at) {
		t.Errorf("record time %v (%v), want %v", rec.Time, err, at)
	}
	if rec, err := enc.Encode(&source.Event{Topic: "t", ValueSchema: str, Value: "v"}); err != nil || !rec.Time.IsZero() {
		t.Errorf("record time %v (%v), want none", rec.Time, err)
	}
}

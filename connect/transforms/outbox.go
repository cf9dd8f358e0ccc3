package transforms

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/javacompat"
	"github.com/cdcd/cdcd/source"
)

// Values of table.op.invalid.behavior (Debezium's InvalidOperationBehavior).
const (
	invalidOpWarn  = "warn"
	invalidOpError = "error"
	invalidOpFatal = "fatal"
)

// Placements of table.fields.additional.placement entries (Debezium's AdditionalFieldPlacement).
const (
	placementHeader    = "header"
	placementEnvelope  = "envelope"
	placementPartition = "partition"
)

// outboxPayloadField is the field of the routed value's envelope that carries the payload.
const outboxPayloadField = "payload"

// eventRouter is Debezium 3.6.1's io.debezium.transforms.outbox.EventRouter, the outbox pattern: each row
// inserted into an outbox table becomes one record on a topic named after a column (the aggregate type),
// keyed by the aggregate id, whose value is the row's payload (a JSON text expanded into a struct with
// table.expand.json.payload), whose "id" header is the event id and whose timestamp is a column's
// (table.field.event.timestamp) or the change's ts_ms.
// Updates and deletes of outbox rows are skipped (or fail, per table.op.invalid.behavior), tombstones are
// dropped, and records that are not change events pass through unchanged.
type eventRouter struct {
	idField, keyField, payloadField, routeByField string
	schemaVersionField                            string // "": the value schema carries no version
	topicRegex                                    javaPattern
	topicReplacement                              string
	tombstoneOnEmptyPayload                       bool
	invalidOp                                     string
	additional                                    []outboxField
	ignoreMissingAdditional                       bool
	// timestampField is table.field.event.timestamp, the column holding the record timestamp.
	timestampField    string
	hasTimestampField bool
	// expandJSON is table.expand.json.payload: nil leaves the payload as it is.
	expandJSON *jsonSchemaData
	// payloadOnly: no additional field goes to the envelope, so the value is the bare payload.
	payloadOnly bool
	log         *slog.Logger

	// As in Debezium, value schemas are cached by payload schema (or by version when versioned) alone: the
	// first record's route-by value names the schema every later record with that payload schema carries.
	valueSchemas     schemaCache[*schema.Schema]
	versionedSchemas schemaCache[int32]
}

// outboxField is one table.fields.additional.placement entry: "column:placement[:alias]".
type outboxField struct {
	column, placement, alias string
}

func newEventRouter(s settings, log *slog.Logger) (transformation, error) {
	expand, err := s.boolean("table.expand.json.payload", false)
	if err != nil {
		return nil, err
	}
	nullBehavior, err := s.enum("table.json.payload.null.behavior", "ignore", "ignore", "optional_bytes")
	if err != nil {
		return nil, err
	}
	t := &eventRouter{
		idField:            s.str("table.field.event.id", "id"),
		keyField:           s.str("table.field.event.key", "aggregateid"),
		payloadField:       s.str("table.field.event.payload", "payload"),
		routeByField:       s.str("route.by.field", "aggregatetype"),
		schemaVersionField: s.str("table.field.event.schema.version", ""),
		log:                log,
	}
	// Debezium reads the column name as set, even blank; unset means the envelope's ts_ms.
	t.timestampField, t.hasTimestampField = s.lookup("table.field.event.timestamp")
	if expand {
		// Debezium reads field.name.adjustment.mode from the transform's own settings.
		mode := s.str("field.name.adjustment.mode", "none")
		names, err := schema.NewFieldNameAdjuster(mode)
		if err != nil {
			return nil, &ConfigError{Key: s.key("field.name.adjustment.mode"), Value: mode, Problem: "supported values are none, avro, avro_unicode"}
		}
		t.expandJSON = &jsonSchemaData{nullAsBytes: nullBehavior == "optional_bytes", fieldNames: names}
	}
	if t.topicRegex, err = compilePattern(s, "route.topic.regex", s.str("route.topic.regex", "(?<routedByValue>.*)")); err != nil {
		return nil, err
	}
	t.topicReplacement = s.str("route.topic.replacement", "outbox.event.${routedByValue}")
	if _, err := expandJavaReplacement(t.topicRegex.first, t.topicReplacement, make([]string, t.topicRegex.first.NumSubexp()+1)); err != nil {
		return nil, &ConfigError{Key: s.key("route.topic.replacement"), Value: t.topicReplacement, Problem: err.Error()}
	}
	if t.tombstoneOnEmptyPayload, err = s.boolean("route.tombstone.on.empty.payload", false); err != nil {
		return nil, err
	}
	if t.invalidOp, err = s.enum("table.op.invalid.behavior", invalidOpWarn, invalidOpWarn, invalidOpError, invalidOpFatal); err != nil {
		return nil, err
	}
	missing, err := s.enum("table.field.additional.missing", "error", "error", "ignore")
	if err != nil {
		return nil, err
	}
	t.ignoreMissingAdditional = missing == "ignore"
	if t.additional, err = parseOutboxFields(s, "table.fields.additional.placement"); err != nil {
		return nil, err
	}
	t.payloadOnly = true
	for _, f := range t.additional {
		if f.placement == placementEnvelope {
			t.payloadOnly = false
		}
	}
	return t, nil
}

func parseOutboxFields(s settings, key string) ([]outboxField, error) {
	var fields []outboxField
	for _, spec := range s.list(key) {
		// Java's String.split drops trailing empty parts.
		parts := strings.Split(strings.TrimRight(spec, ":"), ":")
		if len(parts) != 2 && len(parts) != 3 {
			return nil, &ConfigError{Key: s.key(key), Value: s.str(key, ""),
				Problem: "a comma-separated list of valid String pairs or trios is expected"}
		}
		f := outboxField{column: strings.TrimSpace(parts[0]), placement: strings.ToLower(strings.TrimSpace(parts[1]))}
		f.alias = f.column
		if len(parts) == 3 {
			f.alias = strings.TrimSpace(parts[2])
		}
		switch f.placement {
		case placementHeader, placementEnvelope:
		case placementPartition:
			return nil, &ConfigError{Key: s.key(key), Value: spec, Problem: "the partition placement is not supported by cdcd yet"}
		default:
			return nil, &ConfigError{Key: s.key(key), Value: spec, Problem: "placement must be header, envelope or partition"}
		}
		fields = append(fields, f)
	}
	return fields, nil
}

func (t *eventRouter) apply(ev *source.Event) (bool, error) {
	if ev.Value == nil {
		return false, nil
	}
	if !isEnvelope(ev.ValueSchema) {
		return true, nil
	}
	envelope, err := requireStruct(ev.Value, "Detect Debezium Operation")
	if err != nil {
		return false, err
	}
	op, err := stringField(envelope, schema.EnvelopeOp)
	if err != nil {
		return false, err
	}
	switch op {
	case schema.OpDelete:
		return false, nil
	case schema.OpUpdate:
		return false, t.unexpectedUpdate(ev)
	}
	_, after, err := fieldValue(envelope, schema.EnvelopeAfter)
	if err != nil {
		return false, err
	}
	row, err := requireStruct(after, "Read Outbox Event")
	if err != nil {
		return false, err
	}
	return true, t.route(ev, envelope, row)
}

// route rewrites ev, a change event whose envelope has row as after, into the outbox event row describes.
func (t *eventRouter) route(ev *source.Event, envelope, row *schema.Struct) error {
	payloadSchema, payload, err := fieldValue(row, t.payloadField)
	if err != nil {
		return fmt.Errorf("unable to find payload field %s in event: %w", t.payloadField, err)
	}
	timestamp, err := t.eventTimestamp(envelope, row)
	if err != nil {
		return err
	}
	idSchema, id, err := fieldValue(row, t.idField)
	if err != nil {
		return fmt.Errorf("unable to find event-id field %s in event: %w", t.idField, err)
	}
	if t.expandJSON != nil {
		if payloadSchema, payload, err = t.expandPayload(ev, payloadSchema, payload); err != nil {
			return err
		}
	}
	routedBy, err := stringField(row, t.routeByField)
	if err != nil {
		return err
	}
	if row.Get(t.routeByField) == nil {
		return fmt.Errorf("route.by.field %s is null in the outbox event", t.routeByField)
	}
	topic, ok, err := t.topicRegex.replaceIfMatches(routedBy, t.topicReplacement)
	if err != nil {
		return err
	}
	if !ok {
		topic = routedBy
	}
	keySchema, key := requiredStringSchema, any(nil)
	if t.keyField != "" {
		if keySchema, key, err = fieldValue(row, t.keyField); err != nil {
			return err
		}
	}

	headers := append(ev.Headers[:len(ev.Headers):len(ev.Headers)], source.Header{Key: "id", Schema: idSchema, Value: id})
	for _, f := range t.additional {
		if f.placement != placementHeader {
			continue
		}
		fs, v, err := fieldValue(row, f.column)
		if err != nil {
			if t.ignoreMissingAdditional {
				continue
			}
			return err
		}
		headers = append(headers, source.Header{Key: f.alias, Schema: fs, Value: v})
	}

	valueSchema, value := payloadSchema, payload
	if !t.payloadOnly {
		if valueSchema, err = t.valueSchema(payloadSchema, row, routedBy); err != nil {
			return err
		}
		value = t.envelopeValue(valueSchema, payload, row)
	}
	if t.tombstoneOnEmptyPayload && isEmptyPayload(payload) {
		valueSchema, value = nil, nil
	}
	ev.Topic, ev.KeySchema, ev.Key, ev.ValueSchema, ev.Value, ev.Headers = topic, keySchema, key, valueSchema, value, headers
	ev.Timestamp = timestamp
	return nil
}

// eventTimestamp is the routed record's timestamp: the timestamp column's (a Timestamp, MicroTimestamp
// or NanoTimestamp, truncated to milliseconds), or when none is configured or it is null, the envelope's
// ts_ms. Zero when that is null too.
func (t *eventRouter) eventTimestamp(envelope, row *schema.Struct) (time.Time, error) {
	if t.hasTimestampField {
		i := row.Schema.FieldIndex(t.timestampField)
		if i < 0 {
			return time.Time{}, fmt.Errorf("unable to find timestamp field %s in event", t.timestampField)
		}
		fs := row.Schema.Fields[i].Schema
		if fs.Type != schema.Int64 {
			return time.Time{}, fmt.Errorf("field %q is not of type INT64", t.timestampField)
		}
		if v, ok := getWithDefault(row, i).(int64); ok {
			switch fs.Name {
			case schema.DebeziumTimestampName:
				return time.UnixMilli(v), nil
			case schema.MicroTimestampName:
				return time.UnixMilli(v / 1_000), nil
			case schema.NanoTimestampName:
				return time.UnixMilli(v / 1_000_000), nil
			case "":
				return time.Time{}, fmt.Errorf("unsupported field type INT64 (without logical schema name) for event timestamp")
			}
			return time.Time{}, fmt.Errorf("unsupported field type %s for event timestamp", fs.Name)
		}
	}
	i := envelope.Schema.FieldIndex(schema.EnvelopeTsMs)
	if i < 0 || envelope.Schema.Fields[i].Schema.Type != schema.Int64 {
		return time.Time{}, fmt.Errorf("field %q is not of type INT64", schema.EnvelopeTsMs)
	}
	if ms, ok := getWithDefault(envelope, i).(int64); ok {
		return time.UnixMilli(ms), nil
	}
	return time.Time{}, nil
}

// expandPayload is table.expand.json.payload: a string payload holding a JSON object becomes a struct of
// the schema inferred from it. A payload that is not JSON, or whose schema cannot be inferred, stays as it
// is with a warning, as in Debezium.
func (t *eventRouter) expandPayload(ev *source.Event, payloadSchema *schema.Schema, payload any) (*schema.Schema, any, error) {
	text, ok := payload.(string)
	if !ok {
		if payload != nil {
			t.log.Warn("expand JSON payload is turned on but payload is not a string", "topic", ev.Topic)
		}
		return payloadSchema, payload, nil
	}
	s, v, err := t.expandJSON.expand(t.payloadField, text)
	var unexpanded schemaErr
	switch {
	case errors.As(err, &unexpanded):
		t.log.Warn("JSON expansion failed", "topic", ev.Topic, "error", err)
		return payloadSchema, payload, nil
	case err != nil:
		return nil, nil, fmt.Errorf("expanding the JSON payload: %w", err)
	case s == nil && !t.payloadOnly:
		return nil, nil, errors.New("expanding the JSON payload: an empty array has no schema to place in the value envelope")
	}
	return s, v, nil
}

// valueSchema is the struct the payload and the envelope placements make up, named after the row schema
// with the route-by value inserted before its last segment ("pg1.public.outbox.order.Value").
func (t *eventRouter) valueSchema(payloadSchema *schema.Schema, row *schema.Struct, routedBy string) (*schema.Schema, error) {
	build := func(version int) func() (*schema.Schema, error) {
		return func() (*schema.Schema, error) {
			s := &schema.Schema{Type: schema.StructT, Name: outboxSchemaName(row.Schema.Name, routedBy), Version: version,
				Fields: []schema.Field{{Name: outboxPayloadField, Schema: payloadSchema}}}
			for _, f := range t.additional {
				if f.placement != placementEnvelope {
					continue
				}
				fs := row.Schema.Field(f.column)
				if fs == nil {
					if t.ignoreMissingAdditional {
						continue
					}
					return nil, fmt.Errorf("unable to find field %s in event", f.column)
				}
				if err := withField(s, f.alias, fs); err != nil {
					return nil, err
				}
			}
			return s, nil
		}
	}
	if t.schemaVersionField == "" {
		return t.valueSchemas.get(payloadSchema, build(0))
	}
	fs, v, err := fieldValue(row, t.schemaVersionField)
	if err != nil {
		return nil, err
	}
	if fs.Type != schema.Int32 {
		return nil, fmt.Errorf("field %q is not of type INT32", t.schemaVersionField)
	}
	version, _ := v.(int32) // a null version is an unversioned schema
	return t.versionedSchemas.get(version, build(int(version)))
}

// envelopeValue fills the value struct: the payload, then the envelope placements the schema has.
func (t *eventRouter) envelopeValue(s *schema.Schema, payload any, row *schema.Struct) *schema.Struct {
	values := make([]any, len(s.Fields))
	values[0] = payload
	for _, f := range t.additional {
		if i := s.FieldIndex(f.alias); f.placement == placementEnvelope && i > 0 {
			if j := row.Schema.FieldIndex(f.column); j >= 0 {
				values[i] = getWithDefault(row, j)
			}
		}
	}
	return &schema.Struct{Schema: s, Values: values}
}

func outboxSchemaName(rowSchemaName, routedBy string) string {
	if rowSchemaName == "" {
		return routedBy
	}
	if i := strings.LastIndexByte(rowSchemaName, '.'); i >= 0 {
		return rowSchemaName[:i+1] + routedBy + "." + rowSchemaName[i+1:]
	}
	return routedBy + "." + rowSchemaName
}

// isEmptyPayload is Debezium's `payload == null || payload.toString().trim().isEmpty()`: Java's trim strips
// every character up to U+0020, and only a string can print as empty.
func isEmptyPayload(payload any) bool {
	if payload == nil {
		return true
	}
	s, ok := payload.(string)
	return ok && javacompat.TrimIsEmpty(s)
}

// unexpectedUpdate handles an update of an outbox row, which the pattern never does: the record is skipped
// with a warning or an error log, or the chain fails.
func (t *eventRouter) unexpectedUpdate(ev *source.Event) error {
	switch t.invalidOp {
	case invalidOpFatal:
		return fmt.Errorf("unexpected update message received on %s, fail", ev.Topic)
	case invalidOpError:
		t.log.Error("unexpected update message received and ignored", "topic", ev.Topic)
	default:
		t.log.Warn("unexpected update message received and ignored", "topic", ev.Topic)
	}
	return nil
}

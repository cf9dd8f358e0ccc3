package transforms

import (
	"fmt"
	"strings"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
)

// insertField is Kafka's InsertField$Key or InsertField$Value: it appends fields holding the record's topic,
// partition, offset and timestamp, and a static string, to a struct (or schemaless map) key or value.
//
// The record metadata is what a Connect source task's transforms see on Debezium's records: the timestamp
// is null (Debezium creates its SourceRecords without one; the producer stamps the time of sending), so a
// timestamp field is null; the partition is null, except on heartbeats, which Debezium addresses to
// partition 0; and offset.field fails on every record, because only sink records have a Kafka offset.
type insertField struct {
	part
	topic, partition, offset, timestamp, static *insertion
	staticValue                                 string
	replaceNullWithDefault                      bool
	schemas                                     schemaCache[*schema.Schema]
}

// insertion is one field to insert: a trailing "!" makes it required, "?" (the default) optional.
type insertion struct {
	name     string
	optional bool
}

func parseInsertion(s settings, name string) *insertion {
	spec, ok := s.lookup(name)
	if !ok {
		return nil
	}
	if n, found := strings.CutSuffix(spec, "!"); found {
		return &insertion{name: n}
	}
	n, _ := strings.CutSuffix(spec, "?")
	return &insertion{name: n, optional: true}
}

const insertFieldPurpose = "field insertion"

func newInsertField(s settings, p part) (transformation, error) {
	t := &insertField{part: p,
		topic: parseInsertion(s, "topic.field"), partition: parseInsertion(s, "partition.field"),
		offset: parseInsertion(s, "offset.field"), timestamp: parseInsertion(s, "timestamp.field"),
		static: parseInsertion(s, "static.field")}
	if t.topic == nil && t.partition == nil && t.offset == nil && t.timestamp == nil && t.static == nil {
		return nil, &ConfigError{Key: s.key(typeKey), Value: s.str(typeKey, ""), Problem: "No field insertion configured"}
	}
	value, ok := s.lookup("static.value")
	if t.static != nil && !ok {
		return nil, &ConfigError{Key: s.key("static.value"), Problem: "No value specified for static field: " + t.static.name}
	}
	t.staticValue = value
	var err error
	if t.replaceNullWithDefault, err = replaceNullWithDefaultSetting(s); err != nil {
		return nil, err
	}
	return t, nil
}

var (
	timestampSchema         = &schema.Schema{Type: schema.Int64, Name: schema.TimestampName, Version: 1}
	optionalTimestampSchema = timestampSchema.WithOptional(true)
)

func (t *insertField) apply(ev *source.Event) (bool, error) {
	sch, val := t.get(ev)
	if val == nil {
		return true, nil
	}
	if t.offset != nil {
		return false, fmt.Errorf("only SinkRecord supported for [%s], found: org.apache.kafka.connect.source.SourceRecord", insertFieldPurpose)
	}
	partition, hasPartition := kafkaPartition(ev)
	if sch == nil {
		m, err := requireMap(val, insertFieldPurpose)
		if err != nil {
			return false, err
		}
		out := newHashMap(m)
		if t.topic != nil {
			out.put(t.topic.name, ev.Topic)
		}
		if t.partition != nil && hasPartition {
			out.put(t.partition.name, partition)
		}
		if ts, ok := recordTimestamp(ev); ok && t.timestamp != nil {
			out.put(t.timestamp.name, ts.UnixMilli())
		}
		if t.static != nil {
			out.put(t.static.name, t.staticValue)
		}
		t.set(ev, nil, out.entries())
		return true, nil
	}
	st, err := requireStruct(val, insertFieldPurpose)
	if err != nil {
		return false, err
	}
	updated, err := t.schemas.get(st.Schema, func() (*schema.Schema, error) { return t.updatedSchema(st.Schema) })
	if err != nil {
		return false, err
	}
	values := make([]any, len(updated.Fields))
	for i := range st.Values {
		values[i] = structValue(st, i, t.replaceNullWithDefault)
	}
	put := func(ins *insertion, v any) {
		if ins != nil {
			values[updated.FieldIndex(ins.name)] = v
		}
	}
	put(t.topic, ev.Topic)
	if hasPartition {
		put(t.partition, partition)
	}
	if ts, ok := recordTimestamp(ev); ok {
		put(t.timestamp, ts.UnixMilli())
	}
	put(t.static, t.staticValue)
	t.set(ev, updated, &schema.Struct{Schema: updated, Values: values})
	return true, nil
}

// updatedSchema is InsertField's makeUpdatedSchema: the struct's fields, then the inserted ones in the
// order topic, partition, offset, timestamp, static.
func (t *insertField) updatedSchema(s *schema.Schema) (*schema.Schema, error) {
	out := copyBasics(s)
	out.Fields = append([]schema.Field(nil), s.Fields...)
	for _, f := range []struct {
		ins                *insertion
		required, optional *schema.Schema
	}{
		{t.topic, requiredStringSchema, optionalStringSchema},
		{t.partition, int32Schema, int32Schema.WithOptional(true)},
		{t.timestamp, timestampSchema, optionalTimestampSchema},
		{t.static, requiredStringSchema, optionalStringSchema},
	} {
		if f.ins == nil {
			continue
		}
		fs := f.required
		if f.ins.optional {
			fs = f.optional
		}
		if err := withField(out, f.ins.name, fs); err != nil {
			return nil, err
		}
	}
	return out, nil
}

var int32Schema = &schema.Schema{Type: schema.Int32}

// kafkaPartition is the partition a Debezium source record carries before it is produced: Debezium sets
// partition 0 on its heartbeat records and leaves every other record's to the producer.
func kafkaPartition(ev *source.Event) (int32, bool) {
	if ev.ValueSchema != nil && ev.ValueSchema.Name == schema.HeartbeatValueName {
		return 0, true
	}
	return 0, false
}

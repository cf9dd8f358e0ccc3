package transforms

import (
	"fmt"
	"log/slog"
	"slices"
	"strconv"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
)

// byLogicalTableRouter is Debezium 3.6.1's io.debezium.transforms.ByLogicalTableRouter: it sends the records
// of several physical tables (shards) to one topic. When the whole topic matches topic.regex, the topic
// becomes topic.replacement; the key and envelope schemas are renamed after the new topic, and the key gains
// a field naming the physical table, since primary keys need not be unique across tables.
type byLogicalTableRouter struct {
	topicRegex       javaPattern
	topicReplacement string
	enforceUnique    bool
	keyFieldName     string
	keyFieldRegex    *javaPattern // nil: the identifier is the original topic
	keyReplacement   string
	names            *schema.NameAdjuster
	log              *slog.Logger

	// Like Debezium's caches, these are keyed by the original schema alone: the first topic a schema is
	// routed to names its rewrite.
	keySchemas      schemaCache[*schema.Schema]
	envelopeSchemas schemaCache[*schema.Schema]
}

func newByLogicalTableRouter(s settings, log *slog.Logger) (transformation, error) {
	t := &byLogicalTableRouter{log: log, keyFieldName: s.str("key.field.name", "__dbz__physicalTableIdentifier")}
	var err error
	if t.topicRegex, err = requiredPattern(s, "topic.regex"); err != nil {
		return nil, err
	}
	if t.topicReplacement, err = replacementSetting(s, "topic.replacement", t.topicRegex); err != nil {
		return nil, err
	}
	if t.enforceUnique, err = s.boolean("key.enforce.uniqueness", true); err != nil {
		return nil, err
	}
	if pattern := s.str("key.field.regex", ""); pattern != "" {
		re, err := compilePattern(s, "key.field.regex", pattern)
		if err != nil {
			return nil, err
		}
		if s.str("key.field.replacement", "") == "" {
			return nil, &ConfigError{Key: s.key("key.field.replacement"),
				Problem: "must be non-empty if key.field.regex is set"}
		}
		if t.keyReplacement, err = replacementSetting(s, "key.field.replacement", re); err != nil {
			return nil, err
		}
		t.keyFieldRegex = &re
	}
	mode, err := s.enum("schema.name.adjustment.mode", "none", "none", "avro", "avro_unicode")
	if err != nil {
		return nil, err
	}
	if t.names, err = schema.NewSchemaNameAdjuster(mode); err != nil {
		return nil, &ConfigError{Key: s.key("schema.name.adjustment.mode"), Value: mode, Problem: err.Error()}
	}
	// The cache size only bounds memory; cdcd's caches have their own bound, but a bad value is still an error.
	if v, ok := s.lookup("logical.table.cache.size"); ok {
		if _, err := strconv.ParseInt(v, 10, 32); err != nil {
			return nil, &ConfigError{Key: s.key("logical.table.cache.size"), Value: v, Problem: "expected an integer"}
		}
	}
	return t, nil
}

func (t *byLogicalTableRouter) apply(ev *source.Event) (bool, error) {
	oldTopic := ev.Topic
	newTopic, ok, err := t.topicRegex.replaceIfMatches(oldTopic, t.topicReplacement)
	if err != nil || !ok {
		return true, err
	}
	if newTopic == "" {
		t.log.Warn("routing regex returned an empty topic name, propagating the original record", "topic", oldTopic)
		return true, nil
	}
	// A null key (a table without a primary key) stays null, and so does its schema.
	var keySchema *schema.Schema
	var key any
	if ev.Key != nil {
		oldKey, err := requireStruct(ev.Key, "Updating schema")
		if err != nil {
			return false, err
		}
		if keySchema, err = t.keySchemas.get(oldKey.Schema, func() (*schema.Schema, error) {
			return t.routedKeySchema(oldKey.Schema, newTopic)
		}); err != nil {
			return false, err
		}
		if key, err = t.routedKey(keySchema, oldKey, oldTopic); err != nil {
			return false, err
		}
	}
	ev.Topic, ev.KeySchema, ev.Key = newTopic, keySchema, key
	// Tombstones, heartbeats and other records without an envelope keep their value.
	if ev.Value == nil || !isEnvelope(ev.ValueSchema) {
		return true, nil
	}
	envelope, err := requireStruct(ev.Value, "Updating schema")
	if err != nil {
		return false, err
	}
	envelopeSchema, err := t.envelopeSchemas.get(envelope.Schema, func() (*schema.Schema, error) {
		return t.routedEnvelopeSchema(envelope.Schema, newTopic)
	})
	if err != nil {
		return false, err
	}
	values, err := routedEnvelopeValues(envelopeSchema, envelope)
	if err != nil {
		return false, err
	}
	ev.ValueSchema, ev.Value = envelopeSchema, &schema.Struct{Schema: envelopeSchema, Values: values}
	return true, nil
}

// routedKeySchema is the key schema renamed "<newTopic>.Key", with the identifier field when uniqueness is
// enforced.
func (t *byLogicalTableRouter) routedKeySchema(old *schema.Schema, newTopic string) (*schema.Schema, error) {
	s, err := t.renamed(old, newTopic+".Key")
	if err != nil {
		return nil, err
	}
	s.Fields = slices.Clone(old.Fields)
	if t.enforceUnique {
		if err := withField(s, t.keyFieldName, requiredStringSchema); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// routedKey copies the key's values (nulls stay null: Debezium reads them without defaults) and appends the
// physical table identifier: the original topic, or what key.field.regex makes of it when it matches.
func (t *byLogicalTableRouter) routedKey(keySchema *schema.Schema, old *schema.Struct, oldTopic string) (*schema.Struct, error) {
	values := append(make([]any, 0, len(keySchema.Fields)), old.Values...)
	if t.enforceUnique {
		id := oldTopic
		if t.keyFieldRegex != nil {
			replaced, ok, err := t.keyFieldRegex.replaceIfMatches(oldTopic, t.keyReplacement)
			if err != nil {
				return nil, err
			}
			if ok {
				id = replaced
			}
		}
		values = append(values, id)
	}
	return &schema.Struct{Schema: keySchema, Values: values}, nil
}

// routedEnvelopeSchema is the envelope renamed "<newTopic>.Envelope" whose before and after are both the
// before row schema renamed "<newTopic>.Value"; its other fields keep their schemas.
func (t *byLogicalTableRouter) routedEnvelopeSchema(old *schema.Schema, newTopic string) (*schema.Schema, error) {
	before := old.Field(schema.EnvelopeBefore)
	if before == nil {
		return nil, fmt.Errorf("envelope %q has no field %q", old.Name, schema.EnvelopeBefore)
	}
	row, err := t.renamed(before, newTopic+".Value")
	if err != nil {
		return nil, err
	}
	row.Fields = slices.Clone(before.Fields)
	envelope, err := t.renamed(old, newTopic+".Envelope")
	if err != nil {
		return nil, err
	}
	for _, f := range old.Fields {
		if f.Name == schema.EnvelopeBefore || f.Name == schema.EnvelopeAfter {
			f.Schema = row
		}
		envelope.Fields = append(envelope.Fields, f)
	}
	return envelope, nil
}

// routedEnvelopeValues moves the envelope's values to the routed schema, before and after into its row schema.
func routedEnvelopeValues(envelopeSchema *schema.Schema, old *schema.Struct) ([]any, error) {
	row := envelopeSchema.Field(schema.EnvelopeBefore)
	values := slices.Clone(old.Values)
	for i, f := range old.Schema.Fields {
		if (f.Name != schema.EnvelopeBefore && f.Name != schema.EnvelopeAfter) || values[i] == nil {
			continue
		}
		st, err := requireStruct(values[i], "Updating schema")
		if err != nil {
			return nil, err
		}
		if len(st.Values) != len(row.Fields) {
			return nil, fmt.Errorf("the %s row of %q has %d fields, its routed schema %d", f.Name, old.Schema.Name, len(st.Values), len(row.Fields))
		}
		values[i] = &schema.Struct{Schema: row, Values: slices.Clone(st.Values)}
	}
	return values, nil
}

// renamed is Debezium's copySchemaExcludingName without the fields: a struct schema keeping version, doc,
// parameters and optionality (but no default), named name as schema.name.adjustment.mode adjusts it.
func (t *byLogicalTableRouter) renamed(old *schema.Schema, name string) (*schema.Schema, error) {
	adjusted, err := t.names.Adjust(name)
	if err != nil {
		return nil, err
	}
	return &schema.Schema{Type: schema.StructT, Name: adjusted, Version: old.Version, Doc: old.Doc,
		Parameters: old.Parameters, Optional: old.Optional}, nil
}

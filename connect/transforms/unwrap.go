package transforms

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
)

// Values of delete.tombstone.handling.mode (Debezium's DeleteTombstoneHandling).
const (
	deleteDrop              = "drop"
	deleteTombstone         = "tombstone"
	deleteRewrite           = "rewrite"
	deleteRewriteTombstone  = "rewrite-with-tombstone"
	deleteDeleteToTombstone = "delete-to-tombstone"
)

// deletedField is the field the rewrite modes add: "true" on deletes, "false" otherwise.
const deletedField = "__deleted"

// extractNewRecordState is Debezium 3.6.1's io.debezium.transforms.ExtractNewRecordState: it replaces a
// change event's envelope with its row state ("after", or "before" for a rewritten delete), optionally adding
// envelope fields as value fields or headers and routing by a column's value. Records whose value schema is
// not an envelope (heartbeats, messages, transaction metadata) pass through unchanged; truncates are dropped.
type extractNewRecordState struct {
	mode                   string
	replaceNullWithDefault bool
	routeByField           string
	fields, headers        []fieldRef

	addedSchemas   schemaCache[addedFieldsKey]
	deletedSchemas schemaCache[*schema.Schema]
	refSchemas     schemaCache[refSchemaKey]
}

type addedFieldsKey struct{ row, envelope *schema.Schema }

type refSchemaKey struct {
	envelope *schema.Schema
	ref      fieldRef
}

// refSchema is ref.schemaIn(envelope), cached so that every record of a table carries the same schemas.
func (t *extractNewRecordState) refSchema(ref fieldRef, envelope *schema.Schema) (*schema.Schema, error) {
	return t.refSchemas.get(refSchemaKey{envelope, ref}, func() (*schema.Schema, error) { return ref.schemaIn(envelope) })
}

func newExtractNewRecordState(s settings, log *slog.Logger) (transformation, error) {
	const name = "ExtractNewRecordState"
	if err := s.unsupported(name, "drop.fields.header.name"); err != nil {
		return nil, err
	}
	// Debezium 3 removed these 1.x/2.x settings and ignores them; say so rather than surprise.
	for _, old := range []string{"drop.tombstones", "delete.handling.mode"} {
		if v, ok := s.lookup(old); ok {
			log.Warn("setting ignored, as Debezium 3 ignores it; use delete.tombstone.handling.mode",
				"key", s.key(old), "value", v)
		}
	}
	t := &extractNewRecordState{routeByField: s.str("route.by.field", "")}
	var err error
	if t.mode, err = s.enum("delete.tombstone.handling.mode", deleteTombstone,
		deleteDrop, deleteTombstone, deleteRewrite, deleteRewriteTombstone, deleteDeleteToTombstone); err != nil {
		return nil, err
	}
	if t.replaceNullWithDefault, err = s.boolean("replace.null.with.default", true); err != nil {
		return nil, err
	}
	if t.fields, err = parseFieldRefs(s, "add.fields", s.str("add.fields.prefix", "__")); err != nil {
		return nil, err
	}
	if t.headers, err = parseFieldRefs(s, "add.headers", s.str("add.headers.prefix", "__")); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *extractNewRecordState) apply(ev *source.Event) (bool, error) {
	isTombstone := ev.Value == nil
	isEnvelope := isEnvelope(ev.ValueSchema)
	var envelope *schema.Struct
	if isEnvelope && !isTombstone {
		var err error
		if envelope, err = requireStruct(ev.Value, "envelope"); err != nil {
			return false, err
		}
	}
	if (isEnvelope || isTombstone) && len(t.headers) > 0 {
		if err := t.addHeaders(ev, envelope); err != nil {
			return false, err
		}
	}
	if isTombstone {
		return t.mode == deleteRewriteTombstone, nil
	}
	if !isEnvelope {
		return true, nil
	}
	afterSchema, after, err := fieldValue(envelope, schema.EnvelopeAfter)
	if err != nil {
		return false, err
	}
	beforeSchema, before, err := fieldValue(envelope, schema.EnvelopeBefore)
	if err != nil {
		return false, err
	}
	if after == nil && before == nil { // a truncate
		return false, nil
	}
	if after != nil {
		ev.ValueSchema, ev.Value = afterSchema, after
		if t.rewrites() {
			if err := t.markDeleted(ev, "false"); err != nil {
				return false, err
			}
		}
		if t.routeByField != "" {
			if err := route(ev, ev.Value, t.routeByField); err != nil {
				return false, err
			}
		}
		return true, t.addFields(ev, envelope)
	}

	switch t.mode {
	case deleteDrop:
		return false, nil
	case deleteTombstone: // a null value that keeps the row schema, as ExtractField yields it
		ev.ValueSchema, ev.Value = afterSchema, nil
	case deleteDeleteToTombstone:
		ev.ValueSchema, ev.Value = nil, nil
	default: // the rewrite modes
		ev.ValueSchema, ev.Value = beforeSchema, before
		if err := t.markDeleted(ev, "true"); err != nil {
			return false, err
		}
	}
	if t.routeByField != "" {
		if err := route(ev, before, t.routeByField); err != nil {
			return false, err
		}
	}
	if ev.Value == nil {
		return true, nil
	}
	return true, t.addFields(ev, envelope)
}

func (t *extractNewRecordState) rewrites() bool {
	return t.mode == deleteRewrite || t.mode == deleteRewriteTombstone
}

// markDeleted is the InsertField delegate of the rewrite modes: it adds __deleted (an optional string) to the
// row, reading null fields as their defaults when replace.null.with.default is on.
func (t *extractNewRecordState) markDeleted(ev *source.Event, deleted string) error {
	row, err := requireStruct(ev.Value, "field insertion")
	if err != nil {
		return err
	}
	out, err := t.deletedSchemas.get(row.Schema, func() (*schema.Schema, error) {
		s := copyBasics(row.Schema)
		s.Fields = append(s.Fields[:0:0], row.Schema.Fields...)
		return s, withField(s, deletedField, optionalStringSchema)
	})
	if err != nil {
		return err
	}
	values := make([]any, len(out.Fields))
	for i := range row.Values {
		values[i] = row.Values[i]
		if t.replaceNullWithDefault {
			values[i] = getWithDefault(row, i)
		}
	}
	values[len(values)-1] = deleted
	ev.ValueSchema, ev.Value = out, &schema.Struct{Schema: out, Values: values}
	return nil
}

// addFields copies the row into a schema that adds the add.fields references found in the envelope. Debezium
// runs it even without add.fields, so the unwrapped value schema is always a required copy of the row schema.
func (t *extractNewRecordState) addFields(ev *source.Event, envelope *schema.Struct) error {
	row, err := requireStruct(ev.Value, "source field insertion")
	if err != nil {
		return err
	}
	type added struct {
		ref    fieldRef
		schema *schema.Schema
	}
	var present []added
	for _, ref := range t.fields {
		fs, err := t.refSchema(ref, envelope.Schema)
		if err != nil {
			return err
		}
		if fs != nil {
			present = append(present, added{ref, fs})
		}
	}
	out, err := t.addedSchemas.get(addedFieldsKey{row.Schema, envelope.Schema}, func() (*schema.Schema, error) {
		s := copyBasics(row.Schema)
		s.Fields = append(s.Fields[:0:0], row.Schema.Fields...)
		for _, a := range present {
			if err := withField(s, a.ref.newField, a.schema); err != nil {
				return nil, err
			}
		}
		return s, nil
	})
	if err != nil {
		return err
	}
	values := append(make([]any, 0, len(out.Fields)), row.Values...)
	for _, a := range present {
		values = append(values, a.ref.valueIn(envelope))
	}
	ev.ValueSchema, ev.Value = out, &schema.Struct{Schema: out, Values: values}
	return nil
}

// addHeaders adds the add.headers references as headers. A tombstone has no envelope: only "op" references
// become headers there, carrying "d".
func (t *extractNewRecordState) addHeaders(ev *source.Event, envelope *schema.Struct) error {
	headers := ev.Headers[:len(ev.Headers):len(ev.Headers)] // appending must not write into a shared array
	for _, ref := range t.headers {
		if envelope == nil {
			if ref.field == schema.EnvelopeOp {
				headers = append(headers, source.Header{Key: ref.newField, Schema: requiredStringSchema, Value: schema.OpDelete})
			}
			continue
		}
		fs, err := t.refSchema(ref, envelope.Schema)
		if err != nil {
			return err
		}
		if fs != nil {
			headers = append(headers, source.Header{Key: ref.newField, Schema: fs, Value: ref.valueIn(envelope)})
		}
	}
	ev.Headers = headers
	return nil
}

var requiredStringSchema = &schema.Schema{Type: schema.String}

// route is route.by.field: the topic becomes the row's value of that string column, unless it is null or
// blank.
func route(ev *source.Event, row any, field string) error {
	st, err := requireStruct(row, "topic routing by "+field)
	if err != nil {
		return err
	}
	topic, err := stringField(st, field)
	if err != nil {
		return err
	}
	if strings.TrimSpace(topic) != "" {
		ev.Topic = topic
	}
	return nil
}

// fieldRef is one add.fields or add.headers entry: "field", "struct.field", optionally ":newName".
type fieldRef struct {
	parent   string // the envelope field holding the field ("source", "transaction"), or "" for op and ts_*
	field    string
	newField string
}

func parseFieldRefs(s settings, key, prefix string) ([]fieldRef, error) {
	var refs []fieldRef
	for _, spec := range s.list(key) {
		// Java's String.split drops trailing empty parts: "op:" is "op".
		parts := strings.Split(strings.TrimRight(spec, ":"), ":")
		if len(parts) > 2 {
			return nil, &ConfigError{Key: s.key(key), Value: s.str(key, ""), Problem: fmt.Sprintf("unexpected field name %q", spec)}
		}
		path := strings.Split(parts[0], ".")
		ref := fieldRef{field: path[0], parent: parentOf(path[0])}
		if len(path) > 1 {
			ref.parent, ref.field = path[0], path[1]
		}
		switch {
		case len(parts) == 2:
			ref.newField = prefix + parts[1]
		case len(path) == 1:
			ref.newField = prefix + ref.field
		default:
			ref.newField = prefix + ref.parent + "_" + ref.field
		}
		refs = append(refs, ref)
	}
	return refs, nil
}

// parentOf is where Debezium looks for an unqualified field.
func parentOf(field string) string {
	switch field {
	case schema.TransactionID, schema.TransactionDataCollectionOrder, schema.TransactionTotalOrder:
		return schema.EnvelopeTransaction
	case schema.EnvelopeOp, schema.EnvelopeTsMs, schema.EnvelopeTsUs, schema.EnvelopeTsNs:
		return ""
	case "updateDescription": // MongoDB's
		return "updateDescription"
	}
	return schema.EnvelopeSource
}

// schemaIn returns the schema of the added field or header (an optional copy of the referenced field's
// schema basics), or nil when the envelope has no such field. A field missing from its parent struct is
// looked up at the envelope's top level, where another transform may have put it.
func (r fieldRef) schemaIn(envelope *schema.Schema) (*schema.Schema, error) {
	parent := envelope
	if r.parent != "" {
		if parent = envelope.Field(r.parent); parent == nil {
			return nil, fmt.Errorf("envelope %q has no field %q for %q", envelope.Name, r.parent, r.newField)
		}
		if parent.Type != schema.StructT {
			return nil, fmt.Errorf("cannot look up field %q in %q: not a struct", r.field, r.parent)
		}
	}
	fs := parent.Field(r.field)
	if fs == nil {
		if fs = envelope.Field(r.field); fs == nil {
			return nil, nil
		}
	}
	c := copyBasics(fs)
	c.Optional = true
	return c, nil
}

// valueIn returns the referenced value (null when its parent struct, such as transaction, is null).
func (r fieldRef) valueIn(envelope *schema.Struct) any {
	parent := envelope
	if r.parent != "" {
		st, ok := envelope.Get(r.parent).(*schema.Struct)
		if !ok || st == nil {
			return nil
		}
		parent = st
	}
	if parent.Schema.FieldIndex(r.field) >= 0 {
		return parent.Get(r.field)
	}
	return envelope.Get(r.field)
}

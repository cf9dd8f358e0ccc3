package transforms

import (
	"fmt"
	"strconv"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
)

// hoistField is Kafka's HoistField$Key or HoistField$Value: the key or value becomes the single field
// "field" of an unnamed struct (a one-entry map when schemaless; a schemaless null becomes {field: null}).
type hoistField struct {
	part
	field   string
	schemas schemaCache[*schema.Schema]
}

func newHoistField(s settings, p part) (transformation, error) {
	field, err := s.required("field")
	if err != nil {
		return nil, err
	}
	return &hoistField{part: p, field: field}, nil
}

func (t *hoistField) apply(ev *source.Event) (bool, error) {
	sch, val := t.get(ev)
	if sch == nil {
		t.set(ev, nil, []schema.MapEntry{{Key: t.field, Value: val}})
		return true, nil
	}
	if val == nil && !sch.Optional && !sch.HasDefault {
		return false, fmt.Errorf("invalid value: null used for required field: %q, schema type: %s", t.field, castTypeNames[sch.Type])
	}
	updated, _ := t.schemas.get(sch, func() (*schema.Schema, error) {
		return &schema.Schema{Type: schema.StructT, Fields: []schema.Field{{Name: t.field, Schema: sch}}}, nil
	})
	t.set(ev, updated, &schema.Struct{Schema: updated, Values: []any{val}})
	return true, nil
}

// setSchemaMetadata is Kafka's SetSchemaMetadata$Key or $Value: it sets the key or value schema's name
// and/or version, keeping everything else; a struct value is rebuilt on the renamed schema.
type setSchemaMetadata struct {
	part
	name                   string
	version                int // 0: keep
	replaceNullWithDefault bool
	schemas                schemaCache[*schema.Schema]
}

func newSetSchemaMetadata(s settings, p part) (transformation, error) {
	t := &setSchemaMetadata{part: p, name: s.str("schema.name", "")}
	if v, ok := s.lookup("schema.version"); ok {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return nil, &ConfigError{Key: s.key("schema.version"), Value: v, Problem: "Not a number of type INT"}
		}
		if n <= 0 {
			// cdcd's schemas use 0 for "no version"; Connect would write a zero or negative one.
			return nil, &ConfigError{Key: s.key("schema.version"), Value: v, Problem: "cdcd supports only positive schema versions"}
		}
		t.version = int(n)
	}
	if t.name == "" && t.version == 0 {
		return nil, &ConfigError{Key: s.key("schema.name"), Problem: "Neither schema name nor version configured"}
	}
	var err error
	if t.replaceNullWithDefault, err = replaceNullWithDefaultSetting(s); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *setSchemaMetadata) apply(ev *source.Event) (bool, error) {
	sch, val := t.get(ev)
	if sch == nil {
		if val == nil {
			return true, nil
		}
		return false, fmt.Errorf("schema required for [updating schema metadata]")
	}
	updated, _ := t.schemas.get(sch, func() (*schema.Schema, error) {
		c := *sch
		if t.name != "" {
			c.Name = t.name
		}
		if t.version != 0 {
			c.Version = t.version
		}
		return &c, nil
	})
	if st, ok := val.(*schema.Struct); ok && st != nil {
		values := make([]any, len(st.Values))
		for i := range values {
			values[i] = structValue(st, i, t.replaceNullWithDefault)
		}
		val = &schema.Struct{Schema: updated, Values: values}
	}
	t.set(ev, updated, val)
	return true, nil
}

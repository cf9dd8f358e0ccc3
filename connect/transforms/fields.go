package transforms

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
)

// valueToKey is Kafka's ValueToKey: the key becomes a struct of the listed value fields. Like Kafka's, it
// fails on a record without a struct value, a tombstone included; configs pair it with a predicate.
type valueToKey struct {
	fields                 []string
	replaceNullWithDefault bool
	keySchemas             schemaCache[*schema.Schema]
}

func newValueToKey(s settings, _ *slog.Logger) (transformation, error) {
	if _, err := s.required("fields"); err != nil {
		return nil, err
	}
	t := &valueToKey{fields: s.list("fields")}
	if len(t.fields) == 0 {
		return nil, &ConfigError{Key: s.key("fields"), Value: s.str("fields", ""), Problem: "empty list is not allowed"}
	}
	var err error
	if t.replaceNullWithDefault, err = s.boolean("replace.null.with.default", true); err != nil {
		return nil, err
	}
	return t, nil
}

const valueToKeyPurpose = "copying fields from value to key"

func (t *valueToKey) apply(ev *source.Event) (bool, error) {
	if ev.ValueSchema == nil {
		return false, fmt.Errorf("only Map objects supported in absence of schema for [%s], found: %T", valueToKeyPurpose, ev.Value)
	}
	value, err := requireStruct(ev.Value, valueToKeyPurpose)
	if err != nil {
		return false, err
	}
	// An unnamed, required struct whose fields carry the value fields' own schemas.
	keySchema, err := t.keySchemas.get(value.Schema, func() (*schema.Schema, error) {
		s := &schema.Schema{Type: schema.StructT}
		for _, name := range t.fields {
			fs := value.Schema.Field(name)
			if fs == nil {
				return nil, fmt.Errorf("field does not exist: %s", name)
			}
			if err := withField(s, name, fs); err != nil {
				return nil, err
			}
		}
		return s, nil
	})
	if err != nil {
		return false, err
	}
	values := make([]any, len(t.fields))
	for i, name := range t.fields {
		idx := value.Schema.FieldIndex(name)
		values[i] = value.Values[idx]
		if t.replaceNullWithDefault {
			values[i] = getWithDefault(value, idx)
		}
	}
	ev.KeySchema, ev.Key = keySchema, &schema.Struct{Schema: keySchema, Values: values}
	return true, nil
}

// extractField is Kafka's ExtractField$Key or ExtractField$Value: the key or value becomes one of its
// struct's fields (a nested one with field.syntax.version=V2). A null key or value stays null, taking the
// field's schema.
type extractField struct {
	ofKey                  bool // ExtractField$Key; otherwise $Value
	path                   []string
	originalPath           string
	replaceNullWithDefault bool
}

func newExtractFieldKey(s settings, _ *slog.Logger) (transformation, error) {
	return newExtractField(s, true)
}

func newExtractFieldValue(s settings, _ *slog.Logger) (transformation, error) {
	return newExtractField(s, false)
}

func newExtractField(s settings, ofKey bool) (transformation, error) {
	t := &extractField{ofKey: ofKey}
	var err error
	if t.originalPath, err = s.required("field"); err != nil {
		return nil, err
	}
	if t.replaceNullWithDefault, err = s.boolean("replace.null.with.default", true); err != nil {
		return nil, err
	}
	version, err := s.enum("field.syntax.version", "V1", "V1", "V2")
	if err != nil {
		return nil, err
	}
	t.path = []string{t.originalPath}
	if version == "V2" {
		if t.path, err = fieldPathV2(t.originalPath); err != nil {
			return nil, &ConfigError{Key: s.key("field"), Value: t.originalPath, Problem: err.Error()}
		}
	}
	return t, nil
}

const extractFieldPurpose = "field extraction"

func (t *extractField) apply(ev *source.Event) (bool, error) {
	sch, val := &ev.ValueSchema, &ev.Value
	if t.ofKey {
		sch, val = &ev.KeySchema, &ev.Key
	}
	if *sch == nil {
		if *val != nil {
			return false, fmt.Errorf("only Map objects supported in absence of schema for [%s], found: %T", extractFieldPurpose, *val)
		}
		return true, nil
	}
	var st *schema.Struct
	if *val != nil {
		var err error
		if st, err = requireStruct(*val, extractFieldPurpose); err != nil {
			return false, err
		}
	}
	fs := t.fieldSchema(*sch)
	if fs == nil {
		return false, fmt.Errorf("unknown field: %s", t.originalPath)
	}
	*sch, *val = fs, t.fieldValue(st)
	return true, nil
}

// fieldSchema is SingleFieldPath.fieldFrom: nil when a step is missing.
func (t *extractField) fieldSchema(s *schema.Schema) *schema.Schema {
	for _, step := range t.path {
		if s = s.Field(step); s == nil {
			return nil
		}
	}
	return s
}

// fieldValue is SingleFieldPath.valueFrom: null when the struct, an intermediate struct or the field is.
func (t *extractField) fieldValue(st *schema.Struct) any {
	for i, step := range t.path {
		if st == nil {
			return nil
		}
		idx := st.Schema.FieldIndex(step)
		if idx < 0 {
			return nil
		}
		v := st.Values[idx]
		if t.replaceNullWithDefault {
			v = getWithDefault(st, idx)
		}
		if i == len(t.path)-1 {
			return v
		}
		st, _ = v.(*schema.Struct)
	}
	return nil
}

// fieldPathV2 splits a field.syntax.version=V2 path into its steps: fields separated by dots, where a
// field in backticks may hold dots, and a backslash before a backtick that a dot follows keeps that
// backtick in the name (Kafka's SingleFieldPath rules). A trailing dot adds an empty last step.
func fieldPathV2(path string) ([]string, error) {
	if path == "" {
		return nil, fmt.Errorf("the path is empty")
	}
	var steps []string
	i := 0
	for i < len(path) {
		if path[i] != '`' {
			dot := strings.IndexByte(path[i:], '.')
			if dot < 0 {
				steps = append(steps, path[i:])
				break
			}
			steps = append(steps, path[i:i+dot])
			i += dot + 1
			continue
		}
		opening := i
		i++
		start := i
		var field strings.Builder
		for {
			tick := strings.IndexByte(path[i:], '`')
			if tick < 0 {
				return nil, incompleteBacktickPair(path, opening)
			}
			i += tick
			escaped := path[i-1] == '\\'
			if i >= len(path)-1 { // the closing backtick ends the path
				if escaped {
					return nil, incompleteBacktickPair(path, opening)
				}
				field.WriteString(path[start:i])
				i++
				break
			}
			if path[i+1] != '.' { // a backtick inside the name
				i++
				continue
			}
			if escaped { // \`. is a backtick in the name followed by a dot
				field.WriteString(path[start : i-1])
				field.WriteByte('`')
				i++
				start = i
				continue
			}
			field.WriteString(path[start:i])
			i += 2
			break
		}
		steps = append(steps, field.String())
	}
	if strings.HasSuffix(path, ".") {
		steps = append(steps, "")
	}
	return steps, nil
}

func incompleteBacktickPair(path string, at int) error {
	return fmt.Errorf("incomplete backtick pair in path: [%s], consider adding a backslash before backtick at position %d to escape it", path, at)
}

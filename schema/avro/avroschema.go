package avro

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/cdcd/cdcd/schema"
)

// The Connect → Avro schema mapping of Confluent's AvroData.fromConnectSchema (released 7.0 to 8.3, with
// connect.meta.data=true and every other AvroData option at its default). Confluent builds an
// org.apache.avro.Schema and registers its toString(); the registry deduplicates on that text, so the
// tree below keeps what decides the text: property insertion order, union branch order, and records
// shared by reference so that a record is spelled out once and named afterwards.

// avroType is an Avro schema type; the primitive ones are named as Avro spells them.
type avroType uint8

const (
	typeNull avroType = iota
	typeBoolean
	typeInt
	typeLong
	typeFloat
	typeDouble
	typeBytes
	typeString
	typeRecord
	typeArray
	typeMap
	typeUnion
)

var typeNames = [...]string{"null", "boolean", "int", "long", "float", "double", "bytes", "string",
	"record", "array", "map", "union"}

// avroSchema is one node of an Avro schema. Record nodes are shared wherever Java shares the
// org.apache.avro.Schema object; the renderer spells a record out where its name first appears.
type avroSchema struct {
	typ avroType
	// props are the JSON properties in insertion order (Avro's JsonProperties keeps that order), each
	// value already rendered as JSON. Unions have none.
	props []prop

	// Records: name and namespace ("" is Avro's null namespace), doc, fields.
	name, namespace, doc string
	fields               []avroField

	items    *avroSchema   // array elements, map values
	branches []*avroSchema // union
}

type prop struct {
	key   string
	value []byte // JSON
}

type avroField struct {
	name string
	typ  *avroSchema
	doc  string
	def  []byte // JSON; nil means the field has no default
}

// fullName is the record's name qualified by its namespace.
func (a *avroSchema) fullName() string {
	if a.namespace == "" {
		return a.name
	}
	return a.namespace + "." + a.name
}

// addProp is JsonProperties.addProp: the first value of a key wins, and setting another value for it is
// an error (Avro's "Can't overwrite property").
func (a *avroSchema) addProp(key string, value []byte) error {
	for _, p := range a.props {
		if p.key == key {
			if string(p.value) == string(value) {
				return nil
			}
			return fmt.Errorf("%w: property %q set to %s and %s", ErrSchema, key, p.value, value)
		}
	}
	a.props = append(a.props, prop{key, value})
	return nil
}

// nullIndex returns the union branch that holds null and the one that holds values.
func (a *avroSchema) nullIndex() (nullBranch, valueBranch int) {
	if a.branches[0].typ == typeNull {
		return 0, 1
	}
	return 1, 0
}

// Names and properties AvroData uses.
const (
	connectNamespace   = "io.confluent.connect.avro"
	defaultRecordName  = "ConnectDefault"
	mapEntryName       = "MapEntry"
	recordDocParam     = connectNamespace + ".record.doc"
	fieldDocParam      = connectNamespace + ".field.doc."
	fieldDefaultParam  = connectNamespace + ".field.default"
	defaultPrecision   = 64
	propConnectDoc     = "connect.doc"
	propConnectVersion = "connect.version"
	propConnectParams  = "connect.parameters"
	propConnectDefault = "connect.default"
	propConnectName    = "connect.name"
	propConnectType    = "connect.type"
	propInternalType   = "connect.internal.type"
	propLogicalType    = "logicalType"
)

// schemaBuilder converts one top-level Connect schema, as one FromConnectContext does in Java.
type schemaBuilder struct {
	connectMetaData bool
	// records holds the records built so far by Connect name: Java's cycleReferences, which makes a
	// later optional use of the same struct, an array of it or a map of it refer to the first record.
	records map[string]*avroSchema
	// converted holds the Avro form of required schemas already converted (Java's schemaMap).
	converted map[*schema.Schema]*avroSchema
	// unnamed counts the ConnectDefault names handed out.
	unnamed int
}

// toAvroSchema converts a top-level Connect schema.
func toAvroSchema(s *schema.Schema, connectMetaData bool) (*avroSchema, error) {
	b := &schemaBuilder{
		connectMetaData: connectMetaData,
		records:         map[string]*avroSchema{},
		converted:       map[*schema.Schema]*avroSchema{},
	}
	return b.convert(s)
}

// convert is fromConnectSchema: the Avro form of s, an optional s wrapped in its union with null.
func (b *schemaBuilder) convert(s *schema.Schema) (*avroSchema, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: missing schema (schemaless data is not supported)", ErrSchema)
	}
	if !s.Optional {
		if a, ok := b.converted[s]; ok {
			return a, nil
		}
	}
	base := &avroSchema{}
	connectType := ""
	switch s.Type {
	case schema.Int8, schema.Int16:
		base.typ, connectType = typeInt, string(s.Type)
	case schema.Int32:
		base.typ = typeInt
	case schema.Int64:
		base.typ = typeLong
	case schema.Float32:
		base.typ = typeFloat
	case schema.Float64:
		base.typ = typeDouble
	case schema.Boolean:
		base.typ = typeBoolean
	case schema.String:
		base.typ = typeString
	case schema.Bytes:
		base.typ = typeBytes
		if isDecimal(s) {
			// AvroData writes scale and precision as properties first; the decimal logical type added
			// later finds them already set, so they stay ahead of the connect.* properties.
			scale, precision, err := decimalScalePrecision(s)
			if err != nil {
				return nil, err
			}
			base.props = []prop{{"scale", itoa(scale)}, {"precision", itoa(precision)}}
		}
	case schema.Array:
		items, err := b.convertShared(s.Items)
		if err != nil {
			return nil, fmt.Errorf("array items: %w", err)
		}
		base.typ, base.items = typeArray, items
	case schema.Map:
		if err := b.convertMap(base, s); err != nil {
			return nil, err
		}
	case schema.StructT:
		if s.Optional {
			// An optional struct is always ["null", record], even with a default.
			inner, err := b.convertShared(s.WithOptional(false))
			if err != nil {
				return nil, err
			}
			return &avroSchema{typ: typeUnion, branches: []*avroSchema{{typ: typeNull}, inner}}, nil
		}
		if err := b.convertStruct(base, s); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%w: unknown Connect type %q", ErrSchema, s.Type)
	}
	if err := b.annotate(base, s, connectType); err != nil {
		return nil, err
	}
	final := optionalOf(s, base)
	if !s.Optional {
		b.converted[s] = final
	}
	return final, nil
}

// convertShared is fromConnectSchemaWithCycle: a struct whose name was already built is referred to, not
// built again.
func (b *schemaBuilder) convertShared(s *schema.Schema) (*avroSchema, error) {
	if s != nil && s.Name != "" {
		if rec, ok := b.records[s.Name]; ok {
			return optionalOf(s, rec), nil
		}
	}
	return b.convert(s)
}

// optionalOf is maybeMakeOptional: an optional schema becomes ["null", T], or [T, "null"] when it has a
// default, because an Avro union's default must match its first branch.
func optionalOf(s *schema.Schema, base *avroSchema) *avroSchema {
	if !s.Optional {
		return base
	}
	null := &avroSchema{typ: typeNull}
	if hasDefault(s) {
		return &avroSchema{typ: typeUnion, branches: []*avroSchema{base, null}}
	}
	return &avroSchema{typ: typeUnion, branches: []*avroSchema{null, base}}
}

// hasDefault is Java's defaultValue() != null: a null default is no default.
func hasDefault(s *schema.Schema) bool { return s.HasDefault && s.Default != nil }

// convertMap writes an Avro map for a map with required string keys and, as Avro maps allow no other
// keys, an array of {key, value} records otherwise.
func (b *schemaBuilder) convertMap(base *avroSchema, s *schema.Schema) error {
	if s.Keys == nil || s.Values == nil {
		return fmt.Errorf("%w: map without key or value schema", ErrSchema)
	}
	if s.Keys.Type == schema.String && !s.Keys.Optional {
		values, err := b.convertShared(s.Values)
		if err != nil {
			return fmt.Errorf("map values: %w", err)
		}
		base.typ, base.items = typeMap, values
		return nil
	}
	entry := &avroSchema{typ: typeRecord, namespace: connectNamespace, name: mapEntryName}
	if s.Name != "" {
		entry.namespace, entry.name = splitName(s.Name)
		entry.props = []prop{{propInternalType, jsonString(nil, mapEntryName)}}
	}
	for _, f := range []schema.Field{{Name: "key", Schema: s.Keys}, {Name: "value", Schema: s.Values}} {
		field, err := b.field(f, "")
		if err != nil {
			return err
		}
		entry.fields = append(entry.fields, field)
	}
	base.typ, base.items = typeArray, entry
	return nil
}

// convertStruct builds the record of a required struct.
func (b *schemaBuilder) convertStruct(rec *avroSchema, s *schema.Schema) error {
	rec.typ = typeRecord
	if s.Name != "" {
		rec.namespace, rec.name = splitName(s.Name)
		b.records[s.Name] = rec
	} else {
		b.unnamed++
		rec.namespace, rec.name = connectNamespace, defaultRecordName
		if b.unnamed > 1 {
			rec.name += strconv.Itoa(b.unnamed)
		}
	}
	if err := validateFullName(rec.fullName()); err != nil {
		return err
	}
	rec.doc, _ = s.Param(recordDocParam)
	for _, f := range s.Fields {
		doc, _ := s.Param(fieldDocParam + f.Name)
		field, err := b.field(f, doc)
		if err != nil {
			return fmt.Errorf("field %q: %w", f.Name, err)
		}
		rec.fields = append(rec.fields, field)
	}
	return nil
}

// field is addAvroRecordField: an optional field without a default gets the default null.
func (b *schemaBuilder) field(f schema.Field, doc string) (avroField, error) {
	if f.Schema == nil {
		return avroField{}, fmt.Errorf("%w: field %q has no schema", ErrSchema, f.Name)
	}
	if err := validateName(f.Name); err != nil {
		return avroField{}, err
	}
	field := avroField{name: f.Name, doc: doc}
	switch {
	case hasDefault(f.Schema):
		def, err := defaultJSON(nil, f.Schema, f.Schema.Default)
		if err != nil {
			return avroField{}, err
		}
		field.def = def
	case f.Schema.Optional:
		field.def = []byte("null")
	}
	typ, err := b.convert(f.Schema)
	if err != nil {
		return avroField{}, err
	}
	field.typ = typ
	return field, nil
}

// annotate adds the connect.* properties and the logical type to a non-union schema, in AvroData's order.
func (b *schemaBuilder) annotate(a *avroSchema, s *schema.Schema, connectType string) error {
	add := func(key string, value []byte) error { return a.addProp(key, value) }
	if b.connectMetaData {
		if s.Doc != "" {
			if err := add(propConnectDoc, jsonString(nil, s.Doc)); err != nil {
				return err
			}
		}
		if s.Version != 0 {
			if err := add(propConnectVersion, itoa(s.Version)); err != nil {
				return err
			}
		}
		if params := parametersJSON(s.Parameters); params != nil {
			if err := add(propConnectParams, params); err != nil {
				return err
			}
		}
		if _, flagged := s.Param(fieldDefaultParam); hasDefault(s) && !flagged {
			def, err := defaultJSON(nil, s, s.Default)
			if err != nil {
				return err
			}
			if err := add(propConnectDefault, def); err != nil {
				return err
			}
		}
		if s.Name != "" {
			if err := add(propConnectName, jsonString(nil, s.Name)); err != nil {
				return err
			}
		}
		if connectType != "" {
			if err := add(propConnectType, jsonString(nil, connectType)); err != nil {
				return err
			}
		}
	}
	if logical := logicalTypeOf(s); logical != "" {
		if err := add(propLogicalType, jsonString(nil, logical)); err != nil {
			return err
		}
	}
	// Parameters whose key starts with "avro" are copied as plain string properties.
	for _, p := range s.Parameters {
		if strings.HasPrefix(p.Key, "avro") {
			if err := add(p.Key, jsonString(nil, p.Value)); err != nil {
				return err
			}
		}
	}
	return nil
}

// logicalTypeOf is the Avro logical type AvroData gives Connect's own logical types. A Decimal whose scale
// does not fit its precision gets the legacy form: the same logicalType property, which Avro itself would
// have refused to add, so the outcome is the same text.
func logicalTypeOf(s *schema.Schema) string {
	switch {
	case isDecimal(s):
		return "decimal"
	case strings.EqualFold(s.Name, schema.TimeName):
		return "time-millis"
	case strings.EqualFold(s.Name, schema.TimestampName):
		return "timestamp-millis"
	case strings.EqualFold(s.Name, schema.DateName):
		return "date"
	}
	return ""
}

// isDecimal matches the name case-insensitively, as AvroData does.
func isDecimal(s *schema.Schema) bool { return strings.EqualFold(s.Name, schema.DecimalName) }

// decimalScalePrecision reads a Decimal's scale (required) and connect.decimal.precision (default 64).
func decimalScalePrecision(s *schema.Schema) (scale, precision int, err error) {
	v, ok := s.Param(schema.DecimalScaleParam)
	if scale, err = strconv.Atoi(v); !ok || err != nil {
		return 0, 0, fmt.Errorf("%w: Decimal schema with scale parameter %q", ErrSchema, v)
	}
	precision = defaultPrecision
	if v, ok := s.Param(schema.DecimalPrecisionParam); ok {
		if precision, err = strconv.Atoi(v); err != nil {
			return 0, 0, fmt.Errorf("%w: Decimal schema with %s %q", ErrSchema, schema.DecimalPrecisionParam, v)
		}
	}
	return scale, precision, nil
}

// parametersJSON renders connect.parameters in the parameters' order, or nil when there is none to write.
func parametersJSON(params []schema.Param) []byte {
	var out []byte
	for _, p := range params {
		if p.Key == fieldDefaultParam {
			continue
		}
		if out == nil {
			out = append(out, '{')
		} else {
			out = append(out, ',')
		}
		out = jsonString(out, p.Key)
		out = append(out, ':')
		out = jsonString(out, p.Value)
	}
	if out == nil {
		return nil
	}
	return append(out, '}')
}

// splitName splits a Connect name at its last dot into an Avro namespace and name.
func splitName(full string) (namespace, name string) {
	if i := strings.LastIndexByte(full, '.'); i >= 0 {
		return full[:i], full[i+1:]
	}
	return "", full
}

// validateFullName checks every dot-separated part of a record's full name as Avro's Name does.
func validateFullName(full string) error {
	for part := range strings.SplitSeq(full, ".") {
		if err := validateName(part); err != nil {
			return fmt.Errorf("%w (in %q; schema.name.adjustment.mode=avro makes names valid)", err, full)
		}
	}
	return nil
}

// validateName is Avro's name rule: a letter or '_', then letters, digits or '_' (Java's isLetter and
// isLetterOrDigit, so non-ASCII letters pass).
func validateName(name string) error {
	for i, r := range name {
		if r == '_' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r)) {
			continue
		}
		return fmt.Errorf("%w: %q is not a valid Avro name", ErrSchema, name)
	}
	if name == "" {
		return fmt.Errorf("%w: empty Avro name", ErrSchema)
	}
	return nil
}

func itoa(n int) []byte { return strconv.AppendInt(nil, int64(n), 10) }

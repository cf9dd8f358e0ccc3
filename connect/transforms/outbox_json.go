package transforms

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/javacompat"
)

// This file is table.expand.json.payload: Debezium's JsonSchemaData, which infers a Connect schema from a
// JSON document as Jackson parses it and converts the document to a value of that schema.

// jsonKind is a Jackson JsonNode type, with NUMBER split the way Jackson's tree stores numbers: integers
// as IntNode, LongNode or BigIntegerNode by range, anything with a fraction or exponent as DoubleNode.
type jsonKind int

const (
	jsonNull jsonKind = iota
	jsonBool
	jsonString
	jsonInt
	jsonLong
	jsonBigInt
	jsonDouble
	jsonArray
	jsonObject
)

func (k jsonKind) isNumber() bool { return k >= jsonInt && k <= jsonDouble }

// jsonNode is one node of a parsed document.
type jsonNode struct {
	kind    jsonKind
	boolean bool
	str     string // a string, or a number's text
	integer int64  // an int or a long
	double  float64
	items   []*jsonNode
	members []jsonMember // in document order; a repeated name keeps its first place and its last value
}

type jsonMember struct {
	name  string
	value *jsonNode
}

// member is ObjectNode.get: the named member, or nil.
func (n *jsonNode) member(name string) *jsonNode {
	for _, m := range n.members {
		if m.name == name {
			return m.value
		}
	}
	return nil
}

// parseJSONPayload is Debezium's parseJsonPayload: only a payload starting with '{' or '[' is parsed, and
// as Jackson's readTree does, only its first document; what follows it is ignored.
func parseJSONPayload(payload string) (*jsonNode, error) {
	if payload == "" {
		return nil, errors.New("unable to parse an empty payload")
	}
	if payload[0] != '{' && payload[0] != '[' {
		return nil, fmt.Errorf("unable to parse payload starting with %q", payload[0])
	}
	d := json.NewDecoder(strings.NewReader(payload))
	d.UseNumber()
	return readJSONNode(d)
}

func readJSONNode(d *json.Decoder) (*jsonNode, error) {
	tok, err := d.Token()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch v := tok.(type) {
	case nil:
		return &jsonNode{kind: jsonNull}, nil
	case bool:
		return &jsonNode{kind: jsonBool, boolean: v}, nil
	case string:
		return &jsonNode{kind: jsonString, str: v}, nil
	case json.Number:
		return numberNode(string(v)), nil
	case json.Delim:
		if v == '[' {
			n := &jsonNode{kind: jsonArray}
			for d.More() {
				item, err := readJSONNode(d)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, item)
			}
			_, err := d.Token()
			return n, err
		}
		n := &jsonNode{kind: jsonObject}
		for d.More() {
			nameTok, err := d.Token()
			if err != nil {
				return nil, err
			}
			name, _ := nameTok.(string) // the decoder only yields string object keys
			value, err := readJSONNode(d)
			if err != nil {
				return nil, err
			}
			n.setMember(name, value)
		}
		_, err := d.Token()
		return n, err
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// setMember is ObjectNode.set: a repeated name replaces the value in the first one's place.
func (n *jsonNode) setMember(name string, value *jsonNode) {
	for i := range n.members {
		if n.members[i].name == name {
			n.members[i].value = value
			return
		}
	}
	n.members = append(n.members, jsonMember{name: name, value: value})
}

// numberNode classifies a JSON number as Jackson's tree does.
func numberNode(text string) *jsonNode {
	if strings.ContainsAny(text, ".eE") {
		// Like Double.parseDouble, an out-of-range number becomes an infinity or zero.
		f, _ := strconv.ParseFloat(text, 64)
		return &jsonNode{kind: jsonDouble, double: f, str: text}
	}
	if i, err := strconv.ParseInt(text, 10, 32); err == nil {
		return &jsonNode{kind: jsonInt, integer: i, str: text}
	}
	if i, err := strconv.ParseInt(text, 10, 64); err == nil {
		return &jsonNode{kind: jsonLong, integer: i, str: text}
	}
	return &jsonNode{kind: jsonBigInt, str: text}
}

// The schemas inferred for JSON scalars: shared, as Connect's Schema.OPTIONAL_*_SCHEMA constants are.
var (
	jsonStringSchema  = optionalStringSchema
	jsonBooleanSchema = &schema.Schema{Type: schema.Boolean, Optional: true}
	jsonInt32Schema   = &schema.Schema{Type: schema.Int32, Optional: true}
	jsonInt64Schema   = &schema.Schema{Type: schema.Int64, Optional: true}
	jsonFloat64Schema = &schema.Schema{Type: schema.Float64, Optional: true}
	jsonBytesSchema   = &schema.Schema{Type: schema.Bytes, Optional: true}
)

// jsonSchemaData is Debezium's JsonSchemaData configured as the outbox router configures it.
type jsonSchemaData struct {
	// nullAsBytes is table.json.payload.null.behavior=optional_bytes: a null member gets an optional
	// bytes field instead of none.
	nullAsBytes bool
	fieldNames  *schema.NameAdjuster // field.name.adjustment.mode

	// Equal inferred schemas are interned to one pointer: the router caches value schemas by payload
	// schema (Debezium by schema equality) and converters cache their rendering per schema.
	mu       sync.Mutex
	interned map[string]*schema.Schema
}

// expand turns a JSON payload into a Connect struct and its schema. A document that cannot be parsed or
// whose schema cannot be inferred fails with a schemaErr, and Debezium keeps the payload as it was; a
// document whose schema was inferred but whose value does not fit it fails with a plain error, which in
// Debezium fails the record (the inferred schema replaced the column's while the value stayed a string).
// An empty array has no schema: the payload stays the text, without a schema.
func (j *jsonSchemaData) expand(key, payload string) (*schema.Schema, any, error) {
	doc, err := parseJSONPayload(payload)
	if err != nil {
		return nil, nil, schemaErr{err}
	}
	s, err := j.schemaOf(key, doc)
	if err != nil {
		return nil, nil, schemaErr{err}
	}
	if s == nil {
		// An empty array: Debezium's payload schema becomes null while the payload stays the text.
		return nil, payload, nil
	}
	if s.Type != schema.StructT {
		return nil, nil, fmt.Errorf("the JSON payload is not an object: only an object expands to a Struct")
	}
	s = j.intern(s)
	v, err := j.structOf(doc, s)
	if err != nil {
		return nil, nil, err
	}
	return s, v, nil
}

// schemaErr is a payload Debezium leaves unexpanded, with a warning.
type schemaErr struct{ err error }

func (e schemaErr) Error() string { return e.err.Error() }
func (e schemaErr) Unwrap() error { return e.err }

func (j *jsonSchemaData) intern(s *schema.Schema) *schema.Schema {
	b, err := json.Marshal(s)
	if err != nil { // inferred schemas hold only strings, bools and nested schemas: never happens
		return s
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if known, ok := j.interned[string(b)]; ok {
		return known
	}
	if j.interned == nil || len(j.interned) >= schemaCacheSize {
		j.interned = make(map[string]*schema.Schema)
	}
	j.interned[string(b)] = s
	return s
}

// schemaOf is toConnectSchema: the schema of node found under key (a dotted path naming its structs); nil
// for a node that gets no field (a null, unless nulls are bytes, or an empty array).
func (j *jsonSchemaData) schemaOf(key string, n *jsonNode) (*schema.Schema, error) {
	switch n.kind {
	case jsonString:
		return jsonStringSchema, nil
	case jsonBool:
		return jsonBooleanSchema, nil
	case jsonInt:
		return jsonInt32Schema, nil
	case jsonLong:
		return jsonInt64Schema, nil
	case jsonBigInt, jsonDouble:
		return jsonFloat64Schema, nil
	case jsonNull:
		if j.nullAsBytes {
			return jsonBytesSchema, nil
		}
		return nil, nil
	case jsonArray:
		if len(n.items) == 0 {
			return nil, nil
		}
		items, err := j.arrayItemsSchema(key, n)
		if err != nil {
			return nil, err
		}
		return &schema.Schema{Type: schema.Array, Optional: true, Items: items}, nil
	}
	s := &schema.Schema{Type: schema.StructT, Optional: true, Name: key}
	for _, m := range n.members {
		name, err := j.fieldNames.Adjust(m.name)
		if err != nil {
			return nil, err
		}
		fieldKey := name
		if !javacompat.TrimIsEmpty(key) {
			fieldKey = key + "." + name
		}
		fs, err := j.schemaOf(fieldKey, m.value)
		if err != nil {
			return nil, err
		}
		if fs != nil && s.FieldIndex(name) < 0 {
			s.Fields = append(s.Fields, schema.Field{Name: name, Schema: fs})
		}
	}
	return s, nil
}

// arrayItemsSchema is toConnectSchemaWithCycles: the non-null items must be of one JSON type (and numbers
// of one schema); objects' schemas are merged, any other item's schema is the first non-null one's.
func (j *jsonSchemaData) arrayItemsSchema(key string, array *jsonNode) (*schema.Schema, error) {
	sample, err := j.firstArrayItem(array)
	if err != nil {
		return nil, err
	}
	if sample.kind != jsonObject {
		s, err := j.schemaOf("", sample)
		if err != nil {
			return nil, err
		}
		if s == nil {
			return nil, fmt.Errorf("array has unrecognized member schema")
		}
		return s, nil
	}
	// Debezium merges the distinct item schemas in HashSet order, which depends on the JVM run when the
	// objects differ in shape; cdcd merges them in document order.
	var distinct []*schema.Schema
	for _, item := range array.items {
		if item.kind != jsonObject {
			continue
		}
		s, err := j.schemaOf(key, item)
		if err != nil {
			return nil, err
		}
		if !containsSchema(distinct, s) {
			distinct = append(distinct, s)
		}
	}
	merged := distinct[0]
	for _, s := range distinct[1:] {
		merged = mergeStructSchemas(merged, s)
	}
	return merged, nil
}

func containsSchema(list []*schema.Schema, s *schema.Schema) bool {
	for _, l := range list {
		if reflect.DeepEqual(l, s) {
			return true
		}
	}
	return false
}

// firstArrayItem is getFirstArrayElement: the first non-null item (a null node when there is none),
// failing when the non-null items are not homogeneous.
func (j *jsonSchemaData) firstArrayItem(array *jsonNode) (*jsonNode, error) {
	ref := &jsonNode{kind: jsonNull}
	for _, item := range array.items {
		if item.kind == jsonNull {
			continue
		}
		if ref.kind == jsonNull {
			ref = item
		}
		if item.kind.isNumber() != ref.kind.isNumber() || !item.kind.isNumber() && item.kind != ref.kind {
			return nil, fmt.Errorf("field is not a homogenous array")
		}
		if ref.kind.isNumber() && numberSchema(item.kind) != numberSchema(ref.kind) {
			return nil, fmt.Errorf("field is not a homogenous array (%s x %s), different number types", ref.str, item.str)
		}
	}
	return ref, nil
}

func numberSchema(k jsonKind) *schema.Schema {
	switch k {
	case jsonInt:
		return jsonInt32Schema
	case jsonLong:
		return jsonInt64Schema
	}
	return jsonFloat64Schema
}

// mergeStructSchemas is mergeSchema: left's fields then right's new ones, a bytes field (a null) giving
// way to a typed one. Like SchemaUtil.copySchemaBasics, the merged struct is no longer optional.
func mergeStructSchemas(left, right *schema.Schema) *schema.Schema {
	merged := copyBasics(left)
	merged.Fields = append([]schema.Field(nil), left.Fields...)
	for _, f := range right.Fields {
		i := merged.FieldIndex(f.Name)
		switch {
		case i < 0:
			merged.Fields = append(merged.Fields, f)
		case merged.Fields[i].Schema.Type == schema.Bytes && f.Schema.Type != schema.Bytes:
			merged.Fields[i].Schema = f.Schema
		}
	}
	return merged
}

// structOf is toConnectData: each field of s takes the document's member of that name, validated as
// Connect's Struct.put validates it.
func (j *jsonSchemaData) structOf(doc *jsonNode, s *schema.Schema) (*schema.Struct, error) {
	if s.Type != schema.StructT {
		return nil, fmt.Errorf("a JSON object does not fit a %s schema", s.Type)
	}
	st := schema.NewStruct(s)
	for i, f := range s.Fields {
		m := doc.member(f.Name)
		if m == nil {
			continue
		}
		v, err := j.valueOf(m, f.Schema)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		st.Values[i] = v
	}
	return st, nil
}

// valueOf is getStructFieldValue followed by Connect's validation of the value against s.
func (j *jsonSchemaData) valueOf(n *jsonNode, s *schema.Schema) (any, error) {
	mismatch := func() error { return fmt.Errorf("a JSON %s does not fit a %s schema", jsonKindNames[n.kind], s.Type) }
	switch n.kind {
	case jsonNull:
		if !s.Optional {
			return nil, errors.New("null used for a required field")
		}
		return nil, nil
	case jsonObject:
		if s.Type != schema.StructT {
			return nil, mismatch()
		}
		return j.structOf(n, s)
	case jsonArray:
		if s.Type != schema.Array {
			return nil, mismatch()
		}
		items := make([]any, len(n.items))
		for i, item := range n.items {
			v, err := j.valueOf(item, s.Items)
			if err != nil {
				return nil, err
			}
			items[i] = v
		}
		return items, nil
	}
	// A big integer is a BigDecimal value, which fits no inferred schema.
	if t, ok := jsonScalarTypes[n.kind]; !ok || t != s.Type {
		return nil, mismatch()
	}
	switch n.kind {
	case jsonString:
		return n.str, nil
	case jsonBool:
		return n.boolean, nil
	case jsonInt:
		return int32(n.integer), nil
	case jsonLong:
		return n.integer, nil
	}
	return n.double, nil
}

// jsonScalarTypes are the Connect types whose Java values Jackson's scalar nodes yield.
var jsonScalarTypes = map[jsonKind]schema.Type{jsonString: schema.String, jsonBool: schema.Boolean,
	jsonInt: schema.Int32, jsonLong: schema.Int64, jsonDouble: schema.Float64}

var jsonKindNames = map[jsonKind]string{jsonNull: "null", jsonBool: "boolean", jsonString: "string", jsonInt: "int",
	jsonLong: "long", jsonBigInt: "big integer", jsonDouble: "double", jsonArray: "array", jsonObject: "object"}

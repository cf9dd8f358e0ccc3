// Package schema is the Kafka Connect data model that cdcd's events are built from: schemas with
// Connect's types, names, versions, parameters and defaults, and the values that fill them.
//
// Converters (JSON in schema/jsonconv, Avro in schema/avro) turn a (Schema, value) pair into bytes; the
// readers in source/ build values that match the Schema they publish. Values are plain Go values:
//
//	Boolean → bool          Int8 → int8      Int16 → int16    Int32 → int32    Int64 → int64
//	Float32 → float32       Float64 → float64                 String → string  Bytes → []byte
//	Array → []any           Map → []MapEntry (ordered, as Java's LinkedHashMap keeps it)
//	Struct → *Struct        Decimal (a Bytes schema named DecimalName) → Decimal
//	nil → a null value (only valid for an optional schema, or one with a default)
package schema

import (
	"fmt"
	"math/big"
)

// Type is a Kafka Connect schema type; its string form is the one JsonConverter writes.
type Type string

const (
	Boolean Type = "boolean"
	Int8    Type = "int8"
	Int16   Type = "int16"
	Int32   Type = "int32"
	Int64   Type = "int64"
	Float32 Type = "float"
	Float64 Type = "double"
	String  Type = "string"
	Bytes   Type = "bytes"
	Array   Type = "array"
	Map     Type = "map"
	StructT Type = "struct"
)

// Param is one schema parameter. Parameters are a list, not a map, because JsonConverter writes them in
// the builder's insertion order and byte equality depends on it.
type Param struct {
	Key, Value string
}

// Schema is a Connect schema. A nil *Schema means "no schema" (a tombstone's value, a keyless table's key).
//
// Schemas are immutable once built: readers cache them per table version and share them between events.
type Schema struct {
	Type       Type
	Optional   bool
	Name       string
	Version    int // 0 means unset
	Doc        string
	Parameters []Param
	// Default is the field default; HasDefault distinguishes "no default" from a null default.
	Default    any
	HasDefault bool

	Fields []Field // StructT
	Items  *Schema // Array
	Keys   *Schema // Map
	Values *Schema // Map
}

// Field is one field of a struct schema.
type Field struct {
	Name   string
	Schema *Schema
}

// Struct is a value of a struct schema. Values holds one entry per schema field, in field order.
type Struct struct {
	Schema *Schema
	Values []any
}

// MapEntry is one entry of a Map value.
type MapEntry struct {
	Key, Value any
}

// Decimal is the value of Connect's Decimal logical type: Unscaled × 10^-Scale.
type Decimal struct {
	Unscaled *big.Int
	Scale    int32
}

// Names of Connect's own logical types.
const (
	DecimalName   = "org.apache.kafka.connect.data.Decimal"
	DateName      = "org.apache.kafka.connect.data.Date"
	TimeName      = "org.apache.kafka.connect.data.Time"
	TimestampName = "org.apache.kafka.connect.data.Timestamp"
)

// NewStruct returns an empty struct value of s.
func NewStruct(s *Schema) *Struct {
	return &Struct{Schema: s, Values: make([]any, len(s.Fields))}
}

// Set sets the named field and panics if the field does not exist: that is a programming error in a
// reader that built its own schema, never a consequence of input data.
func (st *Struct) Set(name string, v any) *Struct {
	i := st.Schema.FieldIndex(name)
	if i < 0 {
		panic(fmt.Sprintf("schema: struct %q has no field %q", st.Schema.Name, name))
	}
	st.Values[i] = v
	return st
}

// Get returns the named field's value, or nil when the field does not exist.
func (st *Struct) Get(name string) any {
	if i := st.Schema.FieldIndex(name); i >= 0 {
		return st.Values[i]
	}
	return nil
}

// FieldIndex returns the index of the named field, or -1.
func (s *Schema) FieldIndex(name string) int {
	for i, f := range s.Fields {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// Field returns the named field's schema, or nil.
func (s *Schema) Field(name string) *Schema {
	if i := s.FieldIndex(name); i >= 0 {
		return s.Fields[i].Schema
	}
	return nil
}

// Param returns the value of the named parameter and whether it is set.
func (s *Schema) Param(key string) (string, bool) {
	for _, p := range s.Parameters {
		if p.Key == key {
			return p.Value, true
		}
	}
	return "", false
}

// WithOptional returns a copy of s with Optional set to opt (s itself when it already is).
func (s *Schema) WithOptional(opt bool) *Schema {
	if s.Optional == opt {
		return s
	}
	c := *s
	c.Optional = opt
	return &c
}

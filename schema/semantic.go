package schema

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"

	"github.com/cdcd/cdcd/schema/javacompat"
)

// Debezium's semantic types (spec §3.1) and Kafka Connect's logical types, as their Java builders make
// them: the Connect type, the name, version 1, the parameters in the order the builder adds them, and the
// doc string where the builder sets one. Every constructor returns a fresh schema, so a caller may set
// Optional, Default and Doc on it without affecting anyone else.

// Names of Debezium's semantic types.
const (
	DebeziumDateName      = "io.debezium.time.Date"
	DebeziumTimeName      = "io.debezium.time.Time"
	MicroTimeName         = "io.debezium.time.MicroTime"
	NanoTimeName          = "io.debezium.time.NanoTime"
	DebeziumTimestampName = "io.debezium.time.Timestamp"
	MicroTimestampName    = "io.debezium.time.MicroTimestamp"
	NanoTimestampName     = "io.debezium.time.NanoTimestamp"
	ZonedTimestampName    = "io.debezium.time.ZonedTimestamp"
	ZonedTimeName         = "io.debezium.time.ZonedTime"
	IsoDateName           = "io.debezium.time.IsoDate"
	IsoTimeName           = "io.debezium.time.IsoTime"
	IsoTimestampName      = "io.debezium.time.IsoTimestamp"
	MicroDurationName     = "io.debezium.time.MicroDuration"
	IntervalName          = "io.debezium.time.Interval"
	YearName              = "io.debezium.time.Year"

	VariableScaleDecimalName = "io.debezium.data.VariableScaleDecimal"
	JsonName                 = "io.debezium.data.Json"
	XmlName                  = "io.debezium.data.Xml"
	UuidName                 = "io.debezium.data.Uuid"
	BitsName                 = "io.debezium.data.Bits"
	EnumName                 = "io.debezium.data.Enum"
	EnumSetName              = "io.debezium.data.EnumSet"
	LtreeName                = "io.debezium.data.Ltree"
	TsvectorName             = "io.debezium.data.Tsvector"
	FloatVectorName          = "io.debezium.data.FloatVector"
	GeometryName             = "io.debezium.data.geometry.Geometry"
	PointName                = "io.debezium.data.geometry.Point"
)

// Parameter keys of the semantic types.
const (
	DecimalScaleParam     = "scale"
	DecimalPrecisionParam = "connect.decimal.precision"
	BitsLengthParam       = "length"
	EnumAllowedParam      = "allowed"
)

func named(t Type, name string) *Schema { return &Schema{Type: t, Name: name, Version: 1} }

// DebeziumDate is io.debezium.time.Date: INT32 days since the epoch.
func DebeziumDate() *Schema { return named(Int32, DebeziumDateName) }

// DebeziumTime is io.debezium.time.Time: INT32 milliseconds past midnight.
func DebeziumTime() *Schema { return named(Int32, DebeziumTimeName) }

// MicroTime is io.debezium.time.MicroTime: INT64 microseconds past midnight.
func MicroTime() *Schema { return named(Int64, MicroTimeName) }

// NanoTime is io.debezium.time.NanoTime: INT64 nanoseconds past midnight.
func NanoTime() *Schema { return named(Int64, NanoTimeName) }

// DebeziumTimestamp is io.debezium.time.Timestamp: INT64 milliseconds since the epoch, no time zone.
func DebeziumTimestamp() *Schema { return named(Int64, DebeziumTimestampName) }

// MicroTimestamp is io.debezium.time.MicroTimestamp: INT64 microseconds since the epoch, no time zone.
func MicroTimestamp() *Schema { return named(Int64, MicroTimestampName) }

// NanoTimestamp is io.debezium.time.NanoTimestamp: INT64 nanoseconds since the epoch, no time zone.
func NanoTimestamp() *Schema { return named(Int64, NanoTimestampName) }

// ZonedTimestamp is io.debezium.time.ZonedTimestamp: an ISO-8601 STRING with offset.
func ZonedTimestamp() *Schema { return named(String, ZonedTimestampName) }

// ZonedTime is io.debezium.time.ZonedTime: an ISO-8601 time STRING with offset.
func ZonedTime() *Schema { return named(String, ZonedTimeName) }

// IsoDate is io.debezium.time.IsoDate (time.precision.mode=isostring), e.g. "2016-11-04Z".
func IsoDate() *Schema { return named(String, IsoDateName) }

// IsoTime is io.debezium.time.IsoTime (time.precision.mode=isostring), e.g. "13:51:30.123Z".
func IsoTime() *Schema { return named(String, IsoTimeName) }

// IsoTimestamp is io.debezium.time.IsoTimestamp (time.precision.mode=isostring).
func IsoTimestamp() *Schema { return named(String, IsoTimestampName) }

// MicroDuration is io.debezium.time.MicroDuration: INT64 approximate microseconds.
func MicroDuration() *Schema { return named(Int64, MicroDurationName) }

// Interval is io.debezium.time.Interval: a STRING such as "P1Y2M3DT4H5M6.78S".
func Interval() *Schema { return named(String, IntervalName) }

// Year is io.debezium.time.Year: an INT32 year (MySQL YEAR).
func Year() *Schema { return named(Int32, YearName) }

// ConnectDate is Connect's Date: INT32; its values are days since the epoch (int32).
func ConnectDate() *Schema { return named(Int32, DateName) }

// ConnectTime is Connect's Time: INT32; its values are milliseconds past midnight (int32).
func ConnectTime() *Schema { return named(Int32, TimeName) }

// ConnectTimestamp is Connect's Timestamp: INT64; its values are milliseconds since the epoch (int64).
func ConnectTimestamp() *Schema { return named(Int64, TimestampName) }

// ConnectDecimal is Connect's Decimal.builder(scale): BYTES with only the scale parameter (PG money).
func ConnectDecimal(scale int) *Schema {
	s := named(Bytes, DecimalName)
	s.Parameters = []Param{{DecimalScaleParam, strconv.Itoa(scale)}}
	return s
}

// DecimalSchema is the Decimal Debezium builds for a column of known precision
// (SpecialValueDecimal.builder): parameters scale, then connect.decimal.precision.
func DecimalSchema(scale, precision int) *Schema {
	s := ConnectDecimal(scale)
	s.Parameters = append(s.Parameters, Param{DecimalPrecisionParam, strconv.Itoa(precision)})
	return s
}

// VariableScaleDecimal is io.debezium.data.VariableScaleDecimal: a struct of scale (INT32) and value
// (BYTES, the unscaled value in two's complement), used for numeric columns without a declared scale.
func VariableScaleDecimal() *Schema {
	s := named(StructT, VariableScaleDecimalName)
	s.Doc = "Variable scaled decimal"
	s.Fields = []Field{
		{Name: "scale", Schema: &Schema{Type: Int32}},
		{Name: "value", Schema: &Schema{Type: Bytes}},
	}
	return s
}

// VariableScaleDecimalValue is the value of a VariableScaleDecimal schema s holding d
// (VariableScaleDecimal.fromLogical).
func VariableScaleDecimalValue(s *Schema, d Decimal) *Struct {
	return &Struct{Schema: s, Values: []any{d.Scale, javacompat.AppendBigIntegerBytes(nil, d.Unscaled)}}
}

// Json is io.debezium.data.Json: a STRING holding JSON text.
func Json() *Schema { return named(String, JsonName) }

// FloatVector is io.debezium.data.FloatVector: an ARRAY of FLOAT32, a vector of 4-byte elements (MySQL's
// VECTOR).
func FloatVector() *Schema {
	s := named(Array, FloatVectorName)
	s.Items = &Schema{Type: Float32}
	return s
}

// Xml is io.debezium.data.Xml: a STRING holding XML text.
func Xml() *Schema { return named(String, XmlName) }

// Uuid is io.debezium.data.Uuid: a STRING holding a UUID.
func Uuid() *Schema { return named(String, UuidName) }

// Ltree is io.debezium.data.Ltree: a STRING holding a PostgreSQL ltree label path.
func Ltree() *Schema { return named(String, LtreeName) }

// Tsvector is io.debezium.data.Tsvector: a STRING holding a PostgreSQL tsvector.
func Tsvector() *Schema { return named(String, TsvectorName) }

// Bits is io.debezium.data.Bits: BYTES (little-endian) with the parameter length, the number of bits.
func Bits(length int) *Schema {
	s := named(Bytes, BitsName)
	s.Parameters = []Param{{BitsLengthParam, strconv.Itoa(length)}}
	return s
}

// Enum is io.debezium.data.Enum: a STRING with the parameter allowed, the values joined by commas.
func Enum(allowed []string) *Schema {
	s := named(String, EnumName)
	s.Parameters = []Param{{EnumAllowedParam, strings.Join(allowed, ",")}}
	return s
}

// EnumSet is io.debezium.data.EnumSet: a STRING (comma-joined members) with the parameter allowed.
func EnumSet(allowed []string) *Schema {
	s := named(String, EnumSetName)
	s.Parameters = []Param{{EnumAllowedParam, strings.Join(allowed, ",")}}
	return s
}

// Geometry is io.debezium.data.geometry.Geometry: an optional struct of wkb (BYTES) and srid (optional
// INT32), doc "Geometry".
func Geometry() *Schema {
	s := named(StructT, GeometryName)
	s.Doc = "Geometry"
	s.Optional = true
	s.Fields = []Field{
		{Name: "wkb", Schema: &Schema{Type: Bytes}},
		{Name: "srid", Schema: &Schema{Type: Int32, Optional: true}},
	}
	return s
}

// Point is io.debezium.data.geometry.Point: a struct of x, y (FLOAT64), wkb (optional BYTES) and srid
// (optional INT32), doc "Geometry (POINT)". Unlike Geometry it is not optional by itself.
func Point() *Schema {
	s := named(StructT, PointName)
	s.Doc = "Geometry (POINT)"
	s.Fields = []Field{
		{Name: "x", Schema: &Schema{Type: Float64}},
		{Name: "y", Schema: &Schema{Type: Float64}},
		{Name: "wkb", Schema: &Schema{Type: Bytes, Optional: true}},
		{Name: "srid", Schema: &Schema{Type: Int32, Optional: true}},
	}
	return s
}

// PointValue is the value of a Point schema s (Point.createValue): x, y, the 21-byte WKB Debezium builds
// (byte-order mark 1, then type 1, x and y, all little-endian) and no srid.
func PointValue(s *Schema, x, y float64) *Struct {
	wkb := make([]byte, 21)
	wkb[0] = 1
	binary.LittleEndian.PutUint32(wkb[1:], 1)
	binary.LittleEndian.PutUint64(wkb[5:], math.Float64bits(x))
	binary.LittleEndian.PutUint64(wkb[13:], math.Float64bits(y))
	return &Struct{Schema: s, Values: []any{x, y, wkb, nil}}
}

package types

import (
	"fmt"
	"log/slog"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source/mysql/tables"
)

// Schema is the Connect schema of c's field in the row struct (TableSchemaBuilder.addField): the type
// and semantic name BinlogValueConverters.schemaBuilder gives it, optional when the column is nullable,
// the column comment as doc, and the default parsed from the column's default expression.
//
// A column Debezium does not capture gives ErrUnsupportedType; the caller leaves it out.
func (m Modes) Schema(c *tables.Column) (*schema.Schema, error) {
	if err := m.validate(); err != nil {
		return nil, err
	}
	k, err := m.kindOf(c)
	if err != nil {
		return nil, err
	}
	s := m.baseSchema(c, k)
	if s == nil {
		return nil, fmt.Errorf("%w: %s", ErrUnsupportedType, c.TypeName)
	}
	// Geometry.builder() is optional by itself and Debezium only ever adds optionality.
	s.Optional = s.Optional || c.Optional
	if c.HasComment {
		s.Doc = c.Comment
	}
	if c.HasDefault && c.DefaultSet {
		// Debezium's event.converting.failure.handling.mode (warn) drops a default it cannot convert.
		d, err := m.defaultValue(c, k)
		if err != nil {
			slog.Warn("mysql: column default cannot be converted; the field has no default",
				"column", c.Name, "type", c.TypeName, "default", c.Default, "error", err)
		} else if d != nil {
			s.Default, s.HasDefault = d, true
		}
	}
	return s, nil
}

// baseSchema is BinlogValueConverters.schemaBuilder (and JdbcValueConverters.schemaBuilder under it) for
// a column of kind k, before optionality and default; nil for a kind without a schema.
func (m Modes) baseSchema(c *tables.Column, k kind) *schema.Schema {
	plain := func(t schema.Type) *schema.Schema { return &schema.Schema{Type: t} }
	switch k {
	case kindBool, kindBit:
		return plain(schema.Boolean)
	case kindBits:
		return schema.Bits(c.Length)
	case kindInt8:
		return plain(schema.Int8)
	case kindInt16, kindUint8:
		return plain(schema.Int16)
	case kindInt32, kindUint16, kindUint24:
		return plain(schema.Int32)
	case kindInt64, kindUint32:
		return plain(schema.Int64)
	case kindUint64:
		if m.BigintUnsigned == BigintPrecise {
			return schema.DecimalSchema(0, 20)
		}
		return plain(schema.Int64)
	case kindFloat32:
		return plain(schema.Float32)
	case kindFloat64:
		return plain(schema.Float64)
	case kindDecimal:
		switch m.Decimal {
		case DecimalDouble:
			return plain(schema.Float64)
		case DecimalString:
			return plain(schema.String)
		}
		return schema.DecimalSchema(scale(c), c.Length)
	case kindString:
		return plain(schema.String)
	case kindBinary:
		if m.Binary == BinaryBytes {
			return plain(schema.Bytes)
		}
		return plain(schema.String)
	case kindJSON:
		return schema.Json()
	case kindEnum:
		return schema.Enum(enumOptions(c))
	case kindSet:
		return schema.EnumSet(enumOptions(c))
	case kindYear:
		return schema.Year()
	case kindDate:
		if m.Time == TimeConnect {
			return schema.ConnectDate()
		}
		return schema.DebeziumDate()
	case kindTime:
		if m.Time == TimeConnect {
			return schema.ConnectTime()
		}
		return schema.MicroTime()
	case kindDatetime:
		return m.datetimeSchema(c)
	case kindTimestamp:
		return schema.ZonedTimestamp()
	case kindPoint:
		// Point.builder() is not optional by itself, unlike Geometry.builder(); Schema sets Optional.
		return schema.Point()
	case kindGeometry:
		return schema.Geometry()
	case kindFloatVector:
		return schema.FloatVector()
	case kindUUID:
		return schema.Uuid()
	case kindInet:
		return &schema.Schema{Type: schema.String}
	}
	return nil
}

// datetimeSchema is TemporalPrecisionMode's timestamp builder for DATETIME(fsp): in
// adaptive_time_microseconds, milliseconds up to fsp 3 (and without fsp), microseconds up to 6.
func (m Modes) datetimeSchema(c *tables.Column) *schema.Schema {
	if m.Time == TimeConnect {
		return schema.ConnectTimestamp()
	}
	if length(c) <= 3 {
		return schema.DebeziumTimestamp()
	}
	if length(c) <= 6 {
		return schema.MicroTimestamp()
	}
	return schema.NanoTimestamp()
}

// scale is Column.scale() for a DECIMAL; the DDL parser always sets it, 0 stands in when it did not.
func scale(c *tables.Column) int {
	if c.HasScale {
		return c.Scale
	}
	return 0
}

package types

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/cdcd/cdcd/source/mysql/tables"
)

// FromBinlog converts one value of a go-mysql replication.RowsEvent row, decoded with the options
// SyncerConfig sets, for column c into the Connect value of c's field (see Schema).
//
// It follows what Debezium's binlog client and value converters make of the same bytes: unsigned
// values corrected, ENUM indexes and SET bitmaps resolved to their members, strings decoded from the
// column's character set, zero dates as null (or, in a NOT NULL column, its default or the epoch),
// TIMESTAMP fractions padded to the column's precision.
func (m Modes) FromBinlog(c *tables.Column, v any) (any, error) {
	k, err := m.kindOf(c)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return m.nullValue(c, k)
	}
	out, err := m.fromBinlog(c, k, v)
	if err != nil {
		return nil, fmt.Errorf("column %s (%s): %w", c.Name, c.TypeName, err)
	}
	return out, nil
}

func (m Modes) fromBinlog(c *tables.Column, k kind, v any) (any, error) {
	switch k {
	case kindBool, kindBit, kindBits, kindInt8, kindInt16, kindInt32, kindInt64, kindUint8, kindUint16,
		kindUint24, kindUint32, kindUint64, kindEnum, kindSet, kindYear:
		x, ok := asInt64(v)
		if !ok {
			return nil, unexpected(v)
		}
		return m.fromInteger(c, k, x, true)
	case kindFloat32, kindFloat64:
		switch f := v.(type) {
		case float32:
			return floatValue(k, float64(f), f), nil
		case float64:
			return floatValue(k, f, float32(f)), nil
		}
	case kindDecimal:
		if s, ok := v.(string); ok {
			return m.decimalValue(c, s)
		}
	case kindString:
		if b, ok := asBytes(v); ok {
			return decodeString(c.Charset, b), nil
		}
	case kindBinary:
		if b, ok := asBytes(v); ok {
			return m.binaryValue(c, b, true), nil
		}
	case kindJSON:
		// go-mysql renders MySQL's binary JSON as text (see debeziumJSON); an empty document is what
		// IGNORE or a non-strict sql_mode leaves, and Debezium writes it as null or {}.
		if b, ok := asBytes(v); ok {
			if len(b) == 0 {
				return m.nullValue(c, k)
			}
			return debeziumJSON(string(b)), nil
		}
	case kindFloatVector:
		if b, ok := asBytes(v); ok {
			return floatVector(b)
		}
	case kindDate, kindDatetime, kindTimestamp:
		return m.temporalFromBinlog(c, k, v)
	case kindTime:
		if s, ok := v.(string); ok {
			nanos, err := parseDuration(s)
			if err != nil {
				return nil, err
			}
			return m.timeValue(c, nanos), nil
		}
	case kindPoint, kindGeometry:
		if b, ok := asBytes(v); ok {
			return geometryValue(c, k, b)
		}
	case kindUUID:
		if b, ok := asBytes(v); ok {
			return uuidFromBytes(b), nil
		}
	case kindInet:
		if b, ok := asBytes(v); ok {
			return inetFromBytes(b)
		}
	}
	return nil, unexpected(v)
}

// temporalFromBinlog converts DATE, DATETIME and TIMESTAMP values. go-mysql gives them as text when
// ParseTime is off (SyncerConfig's choice, because it keeps zero dates and pre-1970 DATETIMEs in one
// form) and as time.Time otherwise; TIMESTAMP text is in UTC by SyncerConfig's TimestampStringLocation.
func (m Modes) temporalFromBinlog(c *tables.Column, k kind, v any) (any, error) {
	var d civil
	switch x := v.(type) {
	case string:
		var err error
		if d, err = parseCivil(x); err != nil {
			return nil, err
		}
	case time.Time:
		d = civilOf(x)
	default:
		return nil, unexpected(v)
	}
	if k == kindTimestamp {
		d = epochFirstSecond(d)
	}
	// 3.6.1's RowDeserializers read a zero TIMESTAMP (second 0) as null, like a DATE or DATETIME with
	// a zero part; 3.5.0 (the MariaDB goldens) wrote the epoch instead.
	if d.anyZeroPart() {
		return m.nullValue(c, k)
	}
	switch k {
	case kindDate:
		return m.dateValue(d), nil
	case kindDatetime:
		return m.datetimeValue(c, d), nil
	}
	return zonedTimestamp(d.utc(), length(c)), nil
}

// FromSnapshot converts one value of the snapshot's SELECT, read through go-mysql's client on a session
// prepared with SnapshotSession (text protocol, as ExecuteSelectStreaming hands values over), for
// column c into the Connect value of c's field.
//
// It follows the MariaDB connector's JDBC reads: TIMESTAMP values are written without fraction
// padding, FLOAT values keep the server's shorter text form, and only a zero month or day makes a date
// a zero date.
func (m Modes) FromSnapshot(c *tables.Column, v mysql.FieldValue) (any, error) {
	k, err := m.kindOf(c)
	if err != nil {
		return nil, err
	}
	out, err := m.fromSnapshot(c, k, v)
	if err != nil {
		return nil, fmt.Errorf("column %s (%s): %w", c.Name, c.TypeName, err)
	}
	return out, nil
}

func (m Modes) fromSnapshot(c *tables.Column, k kind, v mysql.FieldValue) (any, error) {
	switch v.Type {
	case mysql.FieldValueTypeNull:
		return m.nullValue(c, k)
	case mysql.FieldValueTypeSigned:
		return m.fromInteger(c, k, v.AsInt64(), false)
	case mysql.FieldValueTypeUnsigned:
		return m.fromInteger(c, k, int64(v.AsUint64()), false)
	case mysql.FieldValueTypeFloat:
		if k == kindFloat32 || k == kindFloat64 {
			return snapshotFloat(c, k, v.AsFloat64()), nil
		}
		return nil, unexpected(v.AsFloat64())
	}
	b := v.AsString() // go-mysql reuses this buffer for the next row: every []byte kept is a copy
	switch k {
	case kindBit:
		return bitsFromBigEndian(b) != 0, nil
	case kindBits:
		return bitsValue(c, bitsFromBigEndian(b)), nil
	case kindDecimal:
		return m.decimalValue(c, string(b))
	case kindString, kindEnum, kindSet, kindJSON, kindUUID, kindInet:
		return string(b), nil
	case kindBinary:
		return m.binaryValue(c, bytes.Clone(b), true), nil
	case kindFloatVector:
		return floatVector(b)
	case kindDate, kindDatetime, kindTimestamp:
		d, err := parseCivil(string(b))
		if err != nil {
			return nil, err
		}
		return m.temporalFromSnapshot(c, k, d)
	case kindTime:
		nanos, err := parseDuration(string(b))
		if err != nil {
			return nil, err
		}
		return m.timeValue(c, nanos), nil
	case kindPoint, kindGeometry:
		return geometryValue(c, k, b)
	}
	return nil, unexpected(b)
}

// temporalFromSnapshot follows MariaDbFieldReader: a DATE or DATETIME with a zero month or day is null
// (a zero year is kept and then adjusted), and a zero TIMESTAMP is null because the JDBC driver returns
// null for it. A TIMESTAMP arrives as a java.sql.Timestamp, which Debezium writes without padding.
func (m Modes) temporalFromSnapshot(c *tables.Column, k kind, d civil) (any, error) {
	if d.zeroDate() || (k == kindTimestamp && d.anyZeroPart()) {
		return m.nullValue(c, k)
	}
	switch k {
	case kindDate:
		return m.dateValue(d), nil
	case kindDatetime:
		return m.datetimeValue(c, d), nil
	}
	return zonedTimestamp(d.utc(), 0), nil
}

// fromInteger converts the kinds whose values are integers in the binlog or the snapshot. fromBinlog says the
// value is the binlog's: YEAR 0 is 1900 there (the binlog client adds 1900 to the stored byte).
func (m Modes) fromInteger(c *tables.Column, k kind, x int64, fromBinlog bool) (any, error) {
	switch k {
	case kindBool, kindBit:
		return x != 0, nil
	case kindBits:
		return bitsValue(c, uint64(x)), nil
	case kindEnum:
		return enumValue(c, x), nil
	case kindSet:
		return setValue(c, uint64(x)), nil
	case kindYear:
		// The binlog client makes a Year of 1900 plus the stored byte, the JDBC driver a date of the
		// year: neither is a two-digit year for the time adjuster.
		if fromBinlog && x == 0 {
			x = 1900
		}
		return int32(x), nil
	case kindInt8, kindInt16, kindInt32, kindInt64, kindUint8, kindUint16, kindUint24, kindUint32, kindUint64:
		return m.intValue(k, x), nil
	}
	return nil, unexpected(x)
}

// snapshotFloat is floatValue for a value the snapshot read as text. A FLOAT(M,D) column has a DOUBLE
// field but single-precision storage (FLOAT(p) with p > 24 is a DOUBLE, and has no scale): the JDBC driver reads it as a Float, which Debezium widens (9999.999
// is written 9999.9990234375, as the binlog's float is).
func snapshotFloat(c *tables.Column, k kind, f float64) any {
	if k == kindFloat64 && c.HasScale && typeNameIs(strings.ToUpper(c.TypeName), floatNames...) {
		f = float64(float32(f))
	}
	return floatValue(k, f, float32(f))
}

func floatValue(k kind, f64 float64, f32 float32) any {
	if k == kindFloat32 {
		return f32
	}
	return f64
}

// asInt64 sign- or zero-extends the integer types go-mysql decodes.
func asInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		return int64(x), true
	}
	return 0, false
}

// asBytes returns a copy of the bytes of a string or BLOB value: go-mysql's point into its event buffer.
func asBytes(v any) ([]byte, bool) {
	switch x := v.(type) {
	case []byte:
		return bytes.Clone(x), true
	case string:
		return []byte(x), true
	}
	return nil, false
}

func unexpected(v any) error { return fmt.Errorf("%w: %T", ErrValue, v) }

package types

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math"
	"math/big"
	"net/netip"
	"regexp"
	"strings"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/javacompat"
	"github.com/cdcd/cdcd/source/mysql/tables"
)

// The conversions both sources share, each the counterpart of one BinlogValueConverters or
// JdbcValueConverters method, taking the value in the form the sources have in common.

// intValue converts an integer read as a (possibly sign-extended) int64 for the integer kinds:
// unsigned columns whose value arrived as a negative signed number are corrected as
// BinlogUnsignedIntegerConverter does, and BIGINT UNSIGNED keeps Java's long wrap-around in long mode.
func (m Modes) intValue(k kind, x int64) any {
	switch k {
	case kindInt8:
		return int8(x)
	case kindInt16:
		return int16(x)
	case kindInt32:
		return int32(x)
	case kindUint8:
		return int16(unsign(x, 8))
	case kindUint16:
		return int32(unsign(x, 16))
	case kindUint24:
		return int32(unsign(x, 24))
	case kindUint32:
		return unsign(x, 32)
	case kindUint64:
		if m.BigintUnsigned == BigintPrecise {
			return schema.Decimal{Unscaled: new(big.Int).SetUint64(uint64(x)), Scale: 0}
		}
	}
	return x
}

// unsign reads a value of a bits-wide unsigned column that may have arrived sign-extended.
func unsign(x int64, bits uint) int64 {
	if x < 0 {
		return x + 1<<bits
	}
	return x
}

// decimalValue converts DECIMAL text ("-1234.500") per decimal.handling.mode, at the column's scale
// (rounding half up, as BinlogDefaultValueConverter does for defaults).
func (m Modes) decimalValue(c *tables.Column, text string) (any, error) {
	d, err := parseDecimal(strings.TrimSpace(text))
	if err != nil {
		return nil, err
	}
	if c.HasScale {
		d = schema.Decimal{Unscaled: javacompat.SetScaleHalfUp(d.Unscaled, d.Scale, int32(c.Scale)), Scale: int32(c.Scale)}
	}
	switch m.Decimal {
	case DecimalString:
		return javacompat.FormatBigDecimalPlain(d.Unscaled, d.Scale), nil
	case DecimalDouble:
		f, _ := new(big.Rat).SetFrac(d.Unscaled, pow10(d.Scale)).Float64() // BigDecimal.doubleValue: nearest
		return f, nil
	}
	return d, nil
}

// decimalText is what BigDecimal(String) takes without an exponent: plain digits, as MySQL prints DECIMAL
// values. It is narrower than javacompat.ParseBigDecimal on purpose, so that no negative scale (which
// only an exponent makes) reaches decimalValue.
var decimalText = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$`)

func parseDecimal(s string) (schema.Decimal, error) {
	if !decimalText.MatchString(s) {
		return schema.Decimal{}, fmt.Errorf("%w: decimal %q", ErrValue, s)
	}
	intPart, frac, _ := strings.Cut(s, ".")
	u, _ := new(big.Int).SetString(intPart+frac, 10) // valid: the pattern leaves at least one digit
	return schema.Decimal{Unscaled: u, Scale: int32(len(frac))}, nil
}

func pow10(n int32) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

// binaryValue is convertBinary: BINARY(n) values right-padded with zero bytes to n (DBZ-254), then
// written per binary.handling.mode.
func (m Modes) binaryValue(c *tables.Column, b []byte, pad bool) any {
	if pad && c.JDBCType == tables.JDBCBinary && len(b) < c.Length {
		b = append(b, make([]byte, c.Length-len(b))...)
	}
	switch m.Binary {
	case BinaryBase64:
		return base64.StdEncoding.EncodeToString(b)
	case BinaryBase64URLSafe:
		return base64.URLEncoding.EncodeToString(b)
	case BinaryHex:
		return hex.EncodeToString(b)
	}
	return b
}

// bitsValue writes the value of a BIT(n>1) column as Debezium's Bits: little-endian, (n+7)/8 bytes.
func bitsValue(c *tables.Column, v uint64) []byte {
	out := make([]byte, (c.Length+7)/8)
	for i := range out {
		if i < 8 {
			out[i] = byte(v >> (8 * i))
		}
	}
	return out
}

// bitsFromBigEndian reads the big-endian bytes the text protocol sends for a BIT column.
func bitsFromBigEndian(b []byte) uint64 {
	var v uint64
	for _, x := range b {
		v = v<<8 | uint64(x)
	}
	return v
}

// enumValue is convertEnumToString for a binlog ENUM index: 1-based, 0 for the empty "error" member.
func enumValue(c *tables.Column, index int64) any {
	if index == 0 {
		return ""
	}
	opts := enumOptions(c)
	if index < 1 || index > int64(len(opts)) {
		return conversionFailed(c, fmt.Sprintf("ENUM index %d is not a member", index))
	}
	return opts[index-1]
}

// conversionFailed is Debezium's answer to a value its converter cannot take, under the default
// event.converting.failure.handling.mode=warn: a warning, and null in the field.
func conversionFailed(c *tables.Column, reason string) any {
	slog.Warn("mysql: column value cannot be converted; the field is null", "column", c.Name, "type", c.TypeName, "reason", reason)
	return nil
}

// setValue is convertSetValue for a binlog SET bitmap: the members of the set bits, comma-joined. Like
// Debezium, a bit beyond the members still writes its separator.
func setValue(c *tables.Column, bits uint64) string {
	opts := enumOptions(c)
	var sb strings.Builder
	first := true
	for i := 0; bits != 0; i, bits = i+1, bits>>1 {
		if bits&1 == 0 {
			continue
		}
		if !first {
			sb.WriteByte(',')
		}
		first = false
		if i < len(opts) {
			sb.WriteString(opts[i])
		}
	}
	return sb.String()
}

// dateValue is convertDate for a valid date: days since the epoch, as an int32 in both modes.
func (m Modes) dateValue(d civil) any { return m.adjusted(d).epochDay() }

// datetimeValue is convertTimestamp for a DATETIME: the wall-clock value read as UTC, in milliseconds
// (connect, or fsp up to 3) or microseconds (fsp 4-6), rounded down as Instant.toEpochMilli does.
func (m Modes) datetimeValue(c *tables.Column, d civil) any {
	t := m.adjusted(d).utc()
	switch {
	case m.Time == TimeConnect || length(c) <= 3:
		return t.UnixMilli()
	case length(c) <= 6:
		return t.UnixMicro()
	}
	return t.UnixNano()
}

const nanosPerDay = int64(secondsPerDay) * 1e9

// timeValue is the TIME conversion of a duration: microseconds in adaptive_time_microseconds; in
// connect, milliseconds of a day, where a value outside 00:00:00-24:00:00 cannot be represented.
func (m Modes) timeValue(c *tables.Column, nanos int64) any {
	if m.Time != TimeConnect {
		return nanos / 1000
	}
	if nanos < 0 || nanos > nanosPerDay {
		return conversionFailed(c, fmt.Sprintf("TIME of %dns is outside 00:00:00-24:00:00, which time.precision.mode=connect cannot write", nanos))
	}
	return int32(nanos / 1e6)
}

// geometryValue is convertGeometry/convertPoint: the server's form is a little-endian SRID (0 for none)
// followed by WKB.
func geometryValue(c *tables.Column, k kind, b []byte) (any, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("%w: geometry of %d bytes in column %s", ErrValue, len(b), c.Name)
	}
	var srid any
	if id := int32(binary.LittleEndian.Uint32(b)); id != 0 {
		srid = id
	}
	wkb := bytes.Clone(b[4:]) // the snapshot's buffer is reused for the next row
	if k == kindGeometry {
		return &schema.Struct{Schema: geometrySchema, Values: []any{wkb, srid}}, nil
	}
	const wkbPointSize = 1 + 4 + 8 + 8
	if len(wkb) != wkbPointSize {
		return conversionFailed(c, "the geometry is not a POINT"), nil
	}
	var order binary.ByteOrder = binary.BigEndian
	if wkb[0] == 1 {
		order = binary.LittleEndian
	}
	x := math.Float64frombits(order.Uint64(wkb[5:]))
	y := math.Float64frombits(order.Uint64(wkb[13:]))
	return &schema.Struct{Schema: pointSchema, Values: []any{x, y, wkb, srid}}, nil
}

// The struct schemas geometry values are built with; a field's own schema differs from these only in
// Optional, which a struct value does not carry.
var (
	geometrySchema = schema.Geometry()
	pointSchema    = schema.Point()
)

// uuidFromBytes is MariaDbValueConverters.convertUuid for the binlog's bytes: read as one unsigned
// big-endian number, of which the low 128 bits are printed as a UUID.
func uuidFromBytes(b []byte) string {
	var u [16]byte
	if len(b) > 16 {
		b = b[len(b)-16:]
	}
	copy(u[16-len(b):], b)
	h := hex.EncodeToString(u[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// inetFromBytes prints an INET4 (4 bytes) or INET6 (16 bytes, IPv4-mapped addresses as ::ffff:a.b.c.d)
// binlog value as MariaDB prints it.
func inetFromBytes(b []byte) (string, error) {
	switch len(b) {
	case 4:
		return netip.AddrFrom4([4]byte(b)).String(), nil
	case 16:
		return netip.AddrFrom16([16]byte(b)).String(), nil
	}
	return "", fmt.Errorf("%w: an INET value of %d bytes", ErrValue, len(b))
}

// nullValue is convertValue's answer for a null: null for a nullable column, otherwise the field's
// default, or the type's fallback (zero, empty, the epoch). A NOT NULL column meets null when a zero
// date is read or an invalid value was stored.
func (m Modes) nullValue(c *tables.Column, k kind) (any, error) {
	if c.Optional {
		return nil, nil
	}
	if c.HasDefault && c.DefaultSet {
		if d, err := m.defaultValue(c, k); err == nil && d != nil {
			return d, nil
		}
	}
	switch k {
	case kindBool, kindBit:
		return false, nil
	case kindBits:
		return []byte{}, nil
	case kindInt8, kindInt16, kindInt32, kindInt64, kindUint8, kindUint16, kindUint24, kindUint32, kindUint64:
		return m.intValue(k, 0), nil
	case kindFloat32:
		return float32(0), nil
	case kindFloat64:
		return float64(0), nil
	case kindDecimal:
		return m.decimalValue(c, "0")
	case kindString, kindEnum, kindSet, kindUUID, kindInet:
		return "", nil
	case kindBinary:
		return m.binaryValue(c, []byte{}, false), nil
	case kindJSON:
		return "{}", nil
	case kindYear, kindDate:
		return int32(0), nil
	case kindTime:
		return m.timeValue(c, 0), nil
	case kindDatetime:
		return int64(0), nil
	case kindTimestamp:
		return epochZoned, nil
	case kindFloatVector:
		return []any{}, nil
	case kindGeometry:
		return &schema.Struct{Schema: geometrySchema, Values: []any{emptyGeometryCollection(), nil}}, nil
	}
	return nil, fmt.Errorf("%w: null in NOT NULL column %s of type %s", ErrValue, c.Name, c.TypeName)
}

// epochZoned is the ZonedTimestamp of the epoch as Debezium writes its fallback and a zero TIMESTAMP
// default (a java.sql.Timestamp, so without fraction padding).
const epochZoned = "1970-01-01T00:00:00Z"

// emptyGeometryCollection is the WKB of GEOMETRYCOLLECTION EMPTY, BinlogGeometry.createEmpty.
func emptyGeometryCollection() []byte { return []byte{1, 7, 0, 0, 0, 0, 0, 0, 0} }

// floatVector is a VECTOR value, as the server stores and sends it (binlog and text protocol alike):
// its elements as little-endian IEEE 754 single-precision floats.
func floatVector(b []byte) (any, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("%w: a VECTOR value of %d bytes, not a whole number of 4-byte elements", ErrValue, len(b))
	}
	out := make([]any, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, nil
}

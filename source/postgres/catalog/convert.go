package catalog

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/cdcd/cdcd/schema"
)

// Converter is one column's mapping to Debezium's representation. It is immutable and safe for
// concurrent use.
type Converter interface {
	// Schema is the field schema Debezium publishes for the column: Optional when the column is nullable,
	// Default/HasDefault from the column default as Debezium converts it, no Doc (Debezium's PostgreSQL
	// connector does not copy comments). Callers must not modify it.
	Schema() *schema.Schema
	// Decode turns one pgoutput text-format value (tuple column kind 't'; SQL NULL is the caller's nil)
	// into the value for Schema, following schema.go's value table. An error means the text is not a
	// valid value of the type, or a value Debezium cannot represent either (ErrSpecialDecimal).
	Decode(text []byte) (any, error)
	// DecodeSnapshot is Decode for a value a snapshot query read, as Debezium's snapshot reads it through
	// JDBC rather than from the replication stream: the same but for the types whose streamed value
	// Debezium resolves differently (name: its text here, null when streamed).
	DecodeSnapshot(text []byte) (any, error)
	// Unavailable is the value Debezium writes for an unchanged TOASTed column (tuple column kind 'u')
	// when no old value is known: unavailable.value.placeholder as a string, as bytes for bytea, a
	// one-element list for text-like arrays, and so on. It is nil for types Debezium has no placeholder
	// for (they cannot be TOASTed in practice, or Debezium itself would fail on them).
	Unavailable() any
	// Fallback is the value Debezium puts into a NOT NULL column that has no value, such as the non-key
	// columns of a DELETE's old tuple under REPLICA IDENTITY DEFAULT: the schema default when there is
	// one, else the type's zero (JdbcValueConverters.convertValue).
	Fallback() any
}

type decodeFunc func(text string) (any, error)

// valueType is what a column type maps to, independent of the column's nullability and default.
type valueType struct {
	schema         *schema.Schema
	decode         decodeFunc
	snapshotDecode decodeFunc // nil: decode
	fallback       any
	unavailable    any
}

type converter struct {
	schema         *schema.Schema
	decode         decodeFunc
	snapshotDecode decodeFunc
	fallback       any
	unavailable    any
}

func (c *converter) Schema() *schema.Schema                  { return c.schema }
func (c *converter) Decode(text []byte) (any, error)         { return c.decode(string(text)) }
func (c *converter) DecodeSnapshot(text []byte) (any, error) { return c.snapshotDecode(string(text)) }
func (c *converter) Unavailable() any                        { return c.unavailable }
func (c *converter) Fallback() any                           { return c.fallback }

// NewConverter maps a column to Debezium's representation under the given modes. It returns an error
// wrapping ErrUnsupportedType for a type Debezium drops, and a plain error for invalid modes or a column
// whose type it cannot resolve (a non-builtin TypeOID that differs from the one the catalog read).
func NewConverter(col Column, m Modes) (Converter, error) {
	if err := m.validate(); err != nil {
		return nil, err
	}
	ti, err := typeOf(col)
	if err != nil {
		return nil, err
	}
	mod := col.TypeMod
	if mod == -1 {
		mod = ti.DomainMod
	}
	b := builder{m: m}
	vt, err := b.valueType(ti, mod, false)
	if err != nil {
		return nil, fmt.Errorf("column %s of type %s: %w", col.Name, ti.Name, err)
	}
	s := *vt.schema
	s.Optional = !col.NotNull
	c := &converter{schema: &s, decode: vt.decode, snapshotDecode: vt.snapshotDecode, fallback: vt.fallback, unavailable: vt.unavailable}
	if c.snapshotDecode == nil {
		c.snapshotDecode = c.decode
	}
	if col.HasDefault {
		if v, ok := defaultValue(col, ti, vt); ok {
			s.Default, s.HasDefault = v, true
			c.fallback = v
		}
	}
	return c, nil
}

func (m Modes) validate() error {
	ok := func(v string, allowed ...string) bool {
		for _, a := range allowed {
			if v == a {
				return true
			}
		}
		return false
	}
	switch {
	case !ok(string(m.Decimal), "precise", "double", "string"):
		return fmt.Errorf("invalid decimal.handling.mode %q", m.Decimal)
	case !ok(string(m.TimePrecision), "adaptive", "adaptive_time_microseconds", "connect", "microseconds", "nanoseconds", "isostring"):
		return fmt.Errorf("invalid time.precision.mode %q", m.TimePrecision)
	case !ok(string(m.Binary), "bytes", "base64", "base64-url-safe", "hex"):
		return fmt.Errorf("invalid binary.handling.mode %q", m.Binary)
	case !ok(string(m.HStore), "json", "map"):
		return fmt.Errorf("invalid hstore.handling.mode %q", m.HStore)
	case !ok(string(m.Interval), "numeric", "string"):
		return fmt.Errorf("invalid interval.handling.mode %q", m.Interval)
	case m.MoneyFractionDigits < 0:
		return fmt.Errorf("invalid money.fraction.digits %d", m.MoneyFractionDigits)
	}
	return nil
}

// builtinNames maps builtin type OIDs to names: pgx's type map, plus the builtins it does not register.
var builtinNames = func() map[uint32]string {
	names := map[uint32]string{790: "money", 791: "_money", 775: "_macaddr8", 1266: "timetz", 1270: "_timetz"}
	m := pgtype.NewMap()
	for oid := uint32(1); oid < 10000; oid++ { // builtin OIDs are below FirstGenbkiObjectId (10000)
		if t, ok := m.TypeForOID(oid); ok {
			names[oid] = t.Name
		}
	}
	return names
}()

// typeOf is the column's resolved type: the catalog's when TypeOID is still the one it read, else the
// builtin type of that OID.
func typeOf(col Column) (*TypeInfo, error) {
	if col.Type != nil && col.Type.DeclaredOID == col.TypeOID {
		return col.Type, nil
	}
	name, ok := builtinNames[col.TypeOID]
	if !ok {
		return nil, fmt.Errorf("column %s: type oid %d is not a builtin type and not the type the catalog read", col.Name, col.TypeOID)
	}
	ti := &TypeInfo{DeclaredOID: col.TypeOID, OID: col.TypeOID, Name: name, Schema: "pg_catalog", Kind: 'b', DomainMod: -1}
	if elem, ok := strings.CutPrefix(name, "_"); ok {
		for oid, n := range builtinNames {
			if n == elem {
				ti.Elem = &TypeInfo{DeclaredOID: oid, OID: oid, Name: n, Schema: "pg_catalog", Kind: 'b', DomainMod: -1}
			}
		}
	}
	if strings.HasSuffix(name, "range") {
		ti.Kind = 'r'
	}
	return ti, nil
}

type builder struct{ m Modes }

// placeholderBytes is unavailable.value.placeholder as PostgresConnectorConfig reads it.
func (b builder) placeholderBytes() []byte {
	if h, ok := strings.CutPrefix(b.m.UnavailablePlaceholder, "hex:"); ok {
		if raw, err := hex.DecodeString(h); err == nil {
			return raw
		}
	}
	return []byte(b.m.UnavailablePlaceholder)
}

func (b builder) placeholder() string { return string(b.placeholderBytes()) }

// stringType is a type whose values pass through as text (PostgresValueConverter.convertString).
func (b builder) stringType(s *schema.Schema) valueType {
	return valueType{schema: s, decode: decodeText, fallback: "", unavailable: b.placeholder()}
}

func decodeText(s string) (any, error) { return s, nil }

// valueType maps a base type. inArray selects pgjdbc's array-element parsing where it differs from the
// pgoutput path (time and timetz precision, numeric special values).
func (b builder) valueType(ti *TypeInfo, mod int32, inArray bool) (valueType, error) {
	switch ti.Kind {
	case 'e':
		return b.stringType(schema.Enum(ti.EnumValues)), nil
	case 'd', 'c', 'p', 'm':
		return valueType{}, fmt.Errorf("%w: %s (kind %c)", ErrUnsupportedType, ti.Name, ti.Kind)
	}
	if ti.Elem != nil {
		if inArray {
			return valueType{}, fmt.Errorf("%w: nested array type %s", ErrUnsupportedType, ti.Name)
		}
		return b.arrayType(ti, mod)
	}
	switch ti.Name {
	case "bool":
		return valueType{schema: &schema.Schema{Type: schema.Boolean}, decode: decodeBool, fallback: false}, nil
	case "bit", "varbit":
		return bitsType(ti.Name, mod), nil
	case "int2":
		return valueType{schema: &schema.Schema{Type: schema.Int16}, decode: decodeInt16, fallback: int16(0)}, nil
	case "int4":
		return valueType{schema: &schema.Schema{Type: schema.Int32}, decode: decodeInt32, fallback: int32(0)}, nil
	case "int8", "oid":
		return valueType{schema: &schema.Schema{Type: schema.Int64}, decode: decodeInt64, fallback: int64(0)}, nil
	case "float4":
		return valueType{schema: &schema.Schema{Type: schema.Float32}, decode: decodeFloat32, fallback: float32(0)}, nil
	case "float8":
		return valueType{schema: &schema.Schema{Type: schema.Float64}, decode: decodeFloat64, fallback: float64(0)}, nil
	case "numeric":
		return b.numericType(mod, inArray), nil
	case "money":
		return b.moneyType(), nil
	case "bpchar", "varchar", "text", "char", "citext", "isbn", "inet", "cidr", "macaddr", "macaddr8",
		"int4range", "int8range", "numrange", "tsrange", "tstzrange", "daterange":
		return b.stringType(&schema.Schema{Type: schema.String}), nil
	case "name":
		// ReplicationMessageColumnValueResolver has no case for name: without include.unknown.datatypes
		// a streamed value resolves to null, although the schema (JDBC VARCHAR) is a string. A snapshot
		// reads it through JDBC, as the string it is.
		vt := b.stringType(&schema.Schema{Type: schema.String})
		vt.snapshotDecode = vt.decode
		vt.decode = func(string) (any, error) { return nil, nil }
		return vt, nil
	case "json", "jsonb":
		return b.stringType(schema.Json()), nil
	case "xml":
		return b.stringType(schema.Xml()), nil
	case "uuid":
		return b.stringType(schema.Uuid()), nil
	case "tsvector":
		return b.stringType(schema.Tsvector()), nil
	case "ltree":
		return b.stringType(schema.Ltree()), nil
	case "hstore":
		return b.hstoreType(), nil
	case "bytea":
		return b.byteaType(), nil
	case "date":
		return b.dateType(inArray), nil
	case "time":
		return b.timeType(timePrecision(mod), inArray), nil
	case "timetz":
		return b.timetzType(inArray), nil
	case "timestamp":
		return b.timestampType(timePrecision(mod)), nil
	case "timestamptz":
		return b.timestamptzType(timePrecision(mod)), nil
	case "interval":
		return b.intervalType(), nil
	case "point":
		s := schema.Point()
		return valueType{schema: s, decode: func(t string) (any, error) { return decodePoint(s, t) }, fallback: schema.PointValue(s, 0, 0)}, nil
	}
	return valueType{}, fmt.Errorf("%w: %s", ErrUnsupportedType, ti.Name)
}

// timePrecision is the fractional-second precision pgjdbc's TypeInfoCache.getScale reports for the
// temporal types: the type modifier, 6 when there is none.
func timePrecision(mod int32) int {
	if mod < 0 {
		return 6
	}
	return int(mod)
}

// arrayElements are the element types PostgresValueConverter has array converters for.
var arrayElements = map[string]bool{
	"int2": true, "int4": true, "int8": true, "oid": true, "float4": true, "float8": true, "numeric": true,
	"bool": true, "text": true, "varchar": true, "bpchar": true, "char": true, "date": true, "time": true,
	"timetz": true, "timestamp": true, "timestamptz": true, "uuid": true, "json": true, "jsonb": true,
	"bytea": true, "inet": true, "cidr": true, "macaddr": true, "macaddr8": true, "int4range": true,
	"int8range": true, "numrange": true, "tsrange": true, "tstzrange": true, "daterange": true,
	"citext": true, "ltree": true, "hstore": true,
}

func (b builder) arrayType(ti *TypeInfo, mod int32) (valueType, error) {
	elem := ti.Elem
	if elem.Kind != 'e' && (elem.Kind != 'b' && elem.Kind != 'r' || !arrayElements[elem.Name]) {
		return valueType{}, fmt.Errorf("%w: %s (arrays of %s)", ErrUnsupportedType, ti.Name, elem.Name)
	}
	ev, err := b.valueType(elem, mod, true)
	if err != nil {
		return valueType{}, err
	}
	items := *ev.schema
	// Every element schema is optional, except an enum's: PostgresValueConverter builds that array
	// straight from Enum.builder.
	items.Optional = elem.Kind != 'e'
	s := &schema.Schema{Type: schema.Array, Items: &items}
	decode := func(text string) (any, error) {
		v, err := decodeArray(text, ev.decode)
		if err != nil || items.Optional {
			return v, err
		}
		// A NULL element cannot stand in a list of required elements: Debezium's converter gives up on the
		// whole array and writes null (seen in its golden capture of an enum array with a NULL).
		for _, e := range v.([]any) {
			if e == nil {
				return nil, nil
			}
		}
		return v, nil
	}
	return valueType{schema: s, decode: decode, fallback: []any{}, unavailable: b.arrayPlaceholder(elem.Name, &items)}, nil
}

// arrayPlaceholder follows UnchangedToastedReplicationMessageColumn and UnchangedToastedPlaceholder: a
// one-element list for text-like and uuid arrays, the placeholder's bytes as numbers for int4, date and
// int8 arrays; other arrays get a string Debezium cannot put into an array field, so nil here.
func (b builder) arrayPlaceholder(elem string, items *schema.Schema) any {
	raw := b.placeholderBytes()
	switch {
	case elem == "text" || elem == "varchar" || elem == "bpchar" || elem == "json" || elem == "jsonb":
		return []any{string(raw)}
	case elem == "bytea" && items.Type == schema.Bytes:
		return []any{raw}
	case (elem == "int4" || elem == "date") && items.Type == schema.Int32:
		out := make([]any, len(raw))
		for i, c := range raw {
			out[i] = int32(int8(c)) // Java bytes are signed
		}
		return out
	case elem == "int8":
		out := make([]any, len(raw))
		for i, c := range raw {
			out[i] = int64(int8(c))
		}
		return out
	case elem == "uuid":
		return []any{nameUUIDFromBytes(raw)}
	}
	return nil
}

// nameUUIDFromBytes is Java's UUID.nameUUIDFromBytes: an MD5, version-3 UUID.
func nameUUIDFromBytes(b []byte) string {
	h := md5.Sum(b)
	h[6] = h[6]&0x0f | 0x30
	h[8] = h[8]&0x3f | 0x80
	x := hex.EncodeToString(h[:])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

func (b builder) byteaType() valueType {
	raw := b.placeholderBytes()
	switch b.m.Binary {
	case BinaryBase64:
		return b.binaryString(base64.StdEncoding.EncodeToString, nil)
	case BinaryBase64URLSafe:
		return b.binaryString(base64.URLEncoding.EncodeToString, nil)
	case BinaryHex:
		// PostgresValueConverter.convertBinaryToHex returns the placeholder text itself.
		return b.binaryString(hex.EncodeToString, string(raw))
	}
	return valueType{schema: &schema.Schema{Type: schema.Bytes}, decode: func(t string) (any, error) { return decodeBytea(t) },
		fallback: []byte{}, unavailable: raw}
}

// binaryString is bytea under a string binary.handling.mode. Debezium has no placeholder for the base64
// modes (convertBinaryToBase64 logs the marker object as unexpected and yields null).
func (b builder) binaryString(encode func([]byte) string, unavailable any) valueType {
	decode := func(t string) (any, error) {
		raw, err := decodeBytea(t)
		if err != nil {
			return nil, err
		}
		return encode(raw), nil
	}
	return valueType{schema: &schema.Schema{Type: schema.String}, decode: decode, fallback: "", unavailable: unavailable}
}

// decodeBytea reads bytea's hex output format (bytea_output=hex, which Debezium requires).
func decodeBytea(t string) ([]byte, error) {
	h, ok := strings.CutPrefix(t, `\x`)
	if !ok {
		return nil, fmt.Errorf("bytea %q is not in hex format (bytea_output must be hex)", truncate(t))
	}
	raw, err := hex.DecodeString(h)
	if err != nil {
		return nil, fmt.Errorf("bytea: %w", err)
	}
	return raw, nil
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// decodePoint reads point's "(x,y)" as pgjdbc's PGpoint does: parentheses removed, split at the comma,
// each half through Double.parseDouble (which trims white space).
func decodePoint(s *schema.Schema, text string) (any, error) {
	inner := strings.TrimSpace(text)
	if strings.HasPrefix(inner, "(") && strings.HasSuffix(inner, ")") {
		inner = inner[1 : len(inner)-1]
	}
	xs, ys, ok := strings.Cut(inner, ",")
	x, err1 := strconv.ParseFloat(strings.TrimSpace(xs), 64)
	y, err2 := strconv.ParseFloat(strings.TrimSpace(ys), 64)
	if !ok || err1 != nil || err2 != nil {
		return nil, fmt.Errorf("invalid point %q", truncate(text))
	}
	return schema.PointValue(s, x, y), nil
}

package catalog

import (
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/cdcd/cdcd/schema"
)

// builtin is a nullable column of a builtin type, resolved by OID as a relation message would give it.
func builtin(oid uint32, mod int32) Column {
	return Column{Name: "c", TypeOID: oid, TypeMod: mod}
}

func numericMod(precision, scale int32) int32 { return precision<<16 | scale + 4 }

func withModes(f func(*Modes)) Modes {
	m := DefaultModes
	f(&m)
	return m
}

func dec(unscaled int64, scale int32) schema.Decimal {
	return schema.Decimal{Unscaled: big.NewInt(unscaled), Scale: scale}
}

// equalValue compares decoded values, treating NaN as equal to NaN and decimals by value and scale.
func equalValue(a, b any) bool {
	switch x := a.(type) {
	case float64:
		if y, ok := b.(float64); ok && math.IsNaN(x) && math.IsNaN(y) {
			return true
		}
	case schema.Decimal:
		y, ok := b.(schema.Decimal)
		return ok && x.Scale == y.Scale && x.Unscaled.Cmp(y.Unscaled) == 0
	case *schema.Struct:
		y, ok := b.(*schema.Struct)
		return ok && reflect.DeepEqual(x.Values, y.Values) && x.Schema.Name == y.Schema.Name
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) || (x == nil) != (y == nil) {
			return false
		}
		for i := range x {
			if !equalValue(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

func TestDecode(t *testing.T) {
	vsd := schema.VariableScaleDecimal()
	point := schema.Point()
	tests := []struct {
		name  string
		col   Column
		modes Modes
		in    string
		want  any
	}{
		{"bool true", builtin(pgtype.BoolOID, -1), DefaultModes, "t", true},
		{"bool false", builtin(pgtype.BoolOID, -1), DefaultModes, "f", false},
		{"bit(1)", builtin(pgtype.BitOID, 1), DefaultModes, "1", true},
		{"bit(2)", builtin(pgtype.BitOID, 2), DefaultModes, "11", []byte{3}},
		{"bit(7)", builtin(pgtype.BitOID, 7), DefaultModes, "1000000", []byte{64}},
		{"varbit(1)", builtin(pgtype.VarbitOID, 1), DefaultModes, "1", true},
		{"varbit(2) zero has no bytes", builtin(pgtype.VarbitOID, 2), DefaultModes, "00", []byte{}},
		{"varbit(24)", builtin(pgtype.VarbitOID, 24), DefaultModes, "000000110000001000000001", []byte{1, 2, 3}},
		{"varbit(64) top bit", builtin(pgtype.VarbitOID, 64), DefaultModes, "1" + strings.Repeat("0", 63), []byte{0, 0, 0, 0, 0, 0, 0, 0x80}},
		{"varbit unbounded", builtin(pgtype.VarbitOID, -1), DefaultModes, "101", []byte{5}},
		{"varbit unbounded long", builtin(pgtype.VarbitOID, -1), DefaultModes, "1" + "1101101000100011" + "0000001000000001", []byte{1, 2, 0x23, 0xda, 1}},
		{"int2", builtin(pgtype.Int2OID, -1), DefaultModes, "-32768", int16(-32768)},
		{"int4", builtin(pgtype.Int4OID, -1), DefaultModes, "2147483647", int32(2147483647)},
		{"int8", builtin(pgtype.Int8OID, -1), DefaultModes, "-9223372036854775808", int64(math.MinInt64)},
		{"oid", builtin(pgtype.OIDOID, -1), DefaultModes, "4294967295", int64(4294967295)},
		{"float4", builtin(pgtype.Float4OID, -1), DefaultModes, "3.14", float32(3.14)},
		{"float4 infinity", builtin(pgtype.Float4OID, -1), DefaultModes, "-Infinity", float32(math.Inf(-1))},
		{"float8 NaN", builtin(pgtype.Float8OID, -1), DefaultModes, "NaN", math.NaN()},
		{"float8", builtin(pgtype.Float8OID, -1), DefaultModes, "1e+100", 1e100},
		{"numeric(5,2) precise", builtin(pgtype.NumericOID, numericMod(5, 2)), DefaultModes, "-123.45", dec(-12345, 2)},
		{"numeric(5,0)", builtin(pgtype.NumericOID, numericMod(5, 0)), DefaultModes, "12345", dec(12345, 0)},
		{"numeric(5,2) string", builtin(pgtype.NumericOID, numericMod(5, 2)), withModes(func(m *Modes) { m.Decimal = DecimalString }), "0.50", "0.50"},
		{"numeric(5,2) double", builtin(pgtype.NumericOID, numericMod(5, 2)), withModes(func(m *Modes) { m.Decimal = DecimalDouble }), "1.10", 1.1},
		{"numeric NaN string", builtin(pgtype.NumericOID, numericMod(5, 2)), withModes(func(m *Modes) { m.Decimal = DecimalString }), "NaN", "NAN"},
		{"numeric Infinity string", builtin(pgtype.NumericOID, -1), withModes(func(m *Modes) { m.Decimal = DecimalString }), "Infinity", "POSITIVE_INFINITY"},
		{"numeric NaN double", builtin(pgtype.NumericOID, -1), withModes(func(m *Modes) { m.Decimal = DecimalDouble }), "NaN", math.NaN()},
		{"numeric variable", builtin(pgtype.NumericOID, -1), DefaultModes, "1.10", schema.VariableScaleDecimalValue(vsd, dec(11, 1))},
		{"numeric variable negative scale", builtin(pgtype.NumericOID, -1), DefaultModes, "100", schema.VariableScaleDecimalValue(vsd, dec(100, 0))},
		{"numeric variable zero", builtin(pgtype.NumericOID, -1), DefaultModes, "-0.00", schema.VariableScaleDecimalValue(vsd, dec(0, 0))},
		{"numeric variable string keeps text", builtin(pgtype.NumericOID, -1), withModes(func(m *Modes) { m.Decimal = DecimalString }), "1.10", "1.10"},
		{"money", builtin(790, -1), DefaultModes, "$1,234.56", dec(123456, 2)},
		{"money negative", builtin(790, -1), DefaultModes, "-$1,234.56", dec(-123456, 2)},
		{"money rounds half up", builtin(790, -1), withModes(func(m *Modes) { m.MoneyFractionDigits = 1 }), "$0.25", dec(3, 1)},
		{"money string", builtin(790, -1), withModes(func(m *Modes) { m.Decimal = DecimalString }), "-$1,234.56", "-1234.56"},
		{"money double", builtin(790, -1), withModes(func(m *Modes) { m.Decimal = DecimalDouble }), "$1,234.56", 1234.56},
		{"text", builtin(pgtype.TextOID, -1), DefaultModes, "héllo", "héllo"},
		{"bpchar keeps padding", builtin(pgtype.BPCharOID, 9), DefaultModes, "ab   ", "ab   "},
		{"name resolves to null", builtin(pgtype.NameOID, -1), DefaultModes, "x", nil},
		{"json", builtin(pgtype.JSONBOID, -1), DefaultModes, `{"a": 1}`, `{"a": 1}`},
		{"uuid", builtin(pgtype.UUIDOID, -1), DefaultModes, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
		{"inet", builtin(pgtype.InetOID, -1), DefaultModes, "192.168.0.1/24", "192.168.0.1/24"},
		{"tstzrange", builtin(pgtype.TstzrangeOID, -1), DefaultModes, `["2020-01-01 00:00:00+00",)`, `["2020-01-01 00:00:00+00",)`},
		{"bytea", builtin(pgtype.ByteaOID, -1), DefaultModes, `\x010203`, []byte{1, 2, 3}},
		{"bytea base64", builtin(pgtype.ByteaOID, -1), withModes(func(m *Modes) { m.Binary = BinaryBase64 }), `\xfbff`, "+/8="},
		{"bytea base64-url-safe", builtin(pgtype.ByteaOID, -1), withModes(func(m *Modes) { m.Binary = BinaryBase64URLSafe }), `\xfbff`, "-_8="},
		{"bytea hex", builtin(pgtype.ByteaOID, -1), withModes(func(m *Modes) { m.Binary = BinaryHex }), `\xABCD`, "abcd"},
		{"date", builtin(pgtype.DateOID, -1), DefaultModes, "2016-11-04", int32(17109)},
		{"date BC", builtin(pgtype.DateOID, -1), DefaultModes, "0001-01-01 BC", int32(-719528)},
		{"date infinity", builtin(pgtype.DateOID, -1), DefaultModes, "infinity", int32(-2147472692)},
		{"date -infinity", builtin(pgtype.DateOID, -1), DefaultModes, "-infinity", int32(-2147472691)},
		{"date connect", builtin(pgtype.DateOID, -1), withModes(func(m *Modes) { m.TimePrecision = TimeConnect }), "1969-12-31", int32(-1)},
		{"date isostring BC", builtin(pgtype.DateOID, -1), withModes(func(m *Modes) { m.TimePrecision = TimeIsoString }), "0044-03-15 BC", "-0043-03-15Z"},
		{"time", builtin(pgtype.TimeOID, -1), DefaultModes, "13:51:30.123456", int64(49890123456)},
		{"time(3) adaptive millis", builtin(pgtype.TimeOID, 3), DefaultModes, "13:51:30.123", int32(49890123)},
		{"time 24:00", builtin(pgtype.TimeOID, -1), DefaultModes, "24:00:00", int64(86400000000)},
		{"time(3) microseconds", builtin(pgtype.TimeOID, 3), withModes(func(m *Modes) { m.TimePrecision = TimeMicroseconds }), "13:51:30.123", int64(49890123000)},
		{"time nanoseconds", builtin(pgtype.TimeOID, -1), withModes(func(m *Modes) { m.TimePrecision = TimeNanoseconds }), "00:00:01.5", int64(1500000000)},
		{"time connect", builtin(pgtype.TimeOID, -1), withModes(func(m *Modes) { m.TimePrecision = TimeConnect }), "00:00:01.5", int32(1500)},
		{"time isostring", builtin(pgtype.TimeOID, -1), withModes(func(m *Modes) { m.TimePrecision = TimeIsoString }), "13:51:30.123450", "13:51:30.12345Z"},
		{"time isostring 24:00", builtin(pgtype.TimeOID, -1), withModes(func(m *Modes) { m.TimePrecision = TimeIsoString }), "24:00:00", "00:00:00Z"},
		{"timetz", builtin(pgtype.TimetzOID, -1), DefaultModes, "13:51:30.123789+02", "11:51:30.123789Z"},
		{"timetz wraps", builtin(pgtype.TimetzOID, -1), DefaultModes, "01:00:00+05:30", "19:30:00Z"},
		{"timetz 24:00", builtin(pgtype.TimetzOID, -1), DefaultModes, "24:00:00+00", "00:00:00Z"},
		{"timetz 24:00 east of UTC", builtin(pgtype.TimetzOID, -1), DefaultModes, "24:00:00+02", "22:00:00Z"},
		{"timetz[] 24:00", builtin(1270, -1), DefaultModes, `{24:00:00-01}`, []any{"01:00:00Z"}},
		{"timetz whole second", builtin(pgtype.TimetzOID, 3), DefaultModes, "11:51:30-01", "12:51:30Z"},
		{"timestamp", builtin(pgtype.TimestampOID, -1), DefaultModes, "2016-11-04 13:51:30.123456", int64(1478267490123456)},
		{"timestamp negative", builtin(pgtype.TimestampOID, -1), DefaultModes, "1936-10-25 22:10:12.608", int64(-1047174587392000)},
		{"timestamp(3) millis floor", builtin(pgtype.TimestampOID, 3), DefaultModes, "1969-12-31 23:59:59.999", int64(-1)},
		{"timestamp infinity", builtin(pgtype.TimestampOID, -1), DefaultModes, "infinity", int64(9223372036825200000)},
		{"timestamp -infinity", builtin(pgtype.TimestampOID, -1), DefaultModes, "-infinity", int64(-9223372036832400000)},
		{"timestamp(3) infinity", builtin(pgtype.TimestampOID, 3), DefaultModes, "infinity", int64(9223372036825200)},
		{"timestamp nanos infinity", builtin(pgtype.TimestampOID, -1), withModes(func(m *Modes) { m.TimePrecision = TimeNanoseconds }), "infinity", int64(math.MaxInt64)},
		{"timestamp nanos", builtin(pgtype.TimestampOID, -1), withModes(func(m *Modes) { m.TimePrecision = TimeNanoseconds }), "1970-01-01 00:00:01.000001", int64(1000001000)},
		{"timestamp BC", builtin(pgtype.TimestampOID, -1), DefaultModes, "4713-12-31 23:59:59.999999 BC", int64(-210831897600000001)},
		{"timestamp max", builtin(pgtype.TimestampOID, -1), DefaultModes, "294247-01-01 23:59:59.999999", int64(9223371331200000000 - 1)},
		{"timestamp connect", builtin(pgtype.TimestampOID, -1), withModes(func(m *Modes) { m.TimePrecision = TimeConnect }), "2016-11-04 13:51:30.123456", int64(1478267490123)},
		{"timestamp isostring", builtin(pgtype.TimestampOID, -1), withModes(func(m *Modes) { m.TimePrecision = TimeIsoString }), "2016-11-04 13:51:30.120", "2016-11-04T13:51:30.12Z"},
		{"timestamp isostring infinity", builtin(pgtype.TimestampOID, -1), withModes(func(m *Modes) { m.TimePrecision = TimeIsoString }), "infinity", "+294247-01-10T04:00:25.2Z"},
		{"timestamptz pads to 6", builtin(pgtype.TimestamptzOID, -1), DefaultModes, "2016-11-04 13:51:30.123456+02", "2016-11-04T11:51:30.123456Z"},
		{"timestamptz zero fraction", builtin(pgtype.TimestamptzOID, -1), DefaultModes, "21016-11-04 13:51:30+07", "+21016-11-04T06:51:30.000000Z"},
		{"timestamptz(3)", builtin(pgtype.TimestamptzOID, 3), DefaultModes, "2020-01-01 00:00:00.5+00", "2020-01-01T00:00:00.500Z"},
		{"timestamptz(0)", builtin(pgtype.TimestamptzOID, 0), DefaultModes, "2020-01-01 10:00:00-03:30", "2020-01-01T13:30:00Z"},
		{"timestamptz LMT offset", builtin(pgtype.TimestamptzOID, -1), DefaultModes, "1850-01-01 00:00:00+00:53:28", "1849-12-31T23:06:32.000000Z"},
		{"timestamptz BC", builtin(pgtype.TimestamptzOID, -1), DefaultModes, "4714-12-31 23:59:59.999999+00 BC", "-4713-12-31T23:59:59.999999Z"},
		{"timestamptz infinity", builtin(pgtype.TimestamptzOID, -1), DefaultModes, "-infinity", "-infinity"},
		{"interval", builtin(pgtype.IntervalOID, -1), DefaultModes, "1 year 2 mons 3 days 04:05:06.78", int64(37091106780000)},
		{"interval zero", builtin(pgtype.IntervalOID, -1), DefaultModes, "00:00:00", int64(0)},
		{"interval negative", builtin(pgtype.IntervalOID, -1), DefaultModes, "-1 days +02:03:00", int64(-86400000000 + 7380000000)},
		{"interval string", builtin(pgtype.IntervalOID, -1), withModes(func(m *Modes) { m.Interval = IntervalString }), "1 year 2 mons 3 days 04:05:06.78", "P1Y2M3DT4H5M6.78S"},
		{"interval string negative time", builtin(pgtype.IntervalOID, -1), withModes(func(m *Modes) { m.Interval = IntervalString }), "-00:00:01.5", "P0Y0M0DT0H0M-1.5S"},
		{"point", builtin(pgtype.PointOID, -1), DefaultModes, "(1.5,-2)", schema.PointValue(point, 1.5, -2)},
		{"int4[]", builtin(pgtype.Int4ArrayOID, -1), DefaultModes, "{1,NULL,-3}", []any{int32(1), nil, int32(-3)}},
		{"int4[] with bounds", builtin(pgtype.Int4ArrayOID, -1), DefaultModes, "[0:1]={1,2}", []any{int32(1), int32(2)}},
		{"empty array", builtin(pgtype.TextArrayOID, -1), DefaultModes, "{}", []any{}},
		{"text[] quoting", builtin(pgtype.TextArrayOID, -1), DefaultModes, `{a,"b c","d\"e\\f",NULL,"NULL",""}`, []any{"a", "b c", `d"e\f`, nil, "NULL", ""}},
		{"int4[][] elements are null", builtin(pgtype.Int4ArrayOID, -1), DefaultModes, "{{1,2},{3,4}}", []any{nil, nil}},
		{"numeric(10,2)[]", builtin(pgtype.NumericArrayOID, numericMod(10, 2)), DefaultModes, "{1.50,NULL}", []any{dec(150, 2), nil}},
		{"timestamptz[] pads", builtin(pgtype.TimestamptzArrayOID, -1), DefaultModes, `{"2020-04-01 13:51:02+02"}`, []any{"2020-04-01T11:51:02.000000Z"}},
		{"time[] keeps milliseconds", builtin(pgtype.TimeArrayOID, -1), DefaultModes, `{13:51:30.123456}`, []any{int64(49890123000)}},
		{"timetz[] keeps seconds", builtin(1270, -1), DefaultModes, `{13:51:30.123456+02}`, []any{"11:51:30Z"}},
		{"bytea[]", builtin(pgtype.ByteaArrayOID, -1), DefaultModes, `{"\\x0102",NULL}`, []any{[]byte{1, 2}, nil}},
		{"bool[]", builtin(pgtype.BoolArrayOID, -1), DefaultModes, `{t,f}`, []any{true, false}},
		{"uuid[]", builtin(pgtype.UUIDArrayOID, -1), DefaultModes, `{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}`, []any{"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"}},
		{"date[]", builtin(pgtype.DateArrayOID, -1), DefaultModes, `{2016-11-04}`, []any{int32(17109)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewConverter(tc.col, tc.modes)
			if err != nil {
				t.Fatalf("NewConverter: %v", err)
			}
			got, err := c.Decode([]byte(tc.in))
			if err != nil {
				t.Fatalf("Decode(%q): %v", tc.in, err)
			}
			if !equalValue(got, tc.want) {
				t.Errorf("Decode(%q) = %#v, want %#v", tc.in, got, tc.want)
			}
		})
	}
}

// Debezium reads a snapshot's date, and every date array element, through JDBC as a java.sql.Date: ±infinity
// are then pgjdbc's sentinel instants' truncated epoch days (captured from Debezium 3.6.1's own
// conversion in a UTC JVM), not the streamed LocalDate stand-ins. Other dates keep the day PostgreSQL holds,
// including BC dates and 1582-10-05…14, which java.sql.Date gets wrong.
func TestDatesReadThroughJDBC(t *testing.T) {
	date, err := NewConverter(builtin(pgtype.DateOID, -1), DefaultModes)
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]int32{"infinity": -622191234, "-infinity": -625821272, "1582-10-10": -141432, "0044-03-15 BC": -735160} {
		if v, err := date.DecodeSnapshot([]byte(in)); err != nil || v != want {
			t.Errorf("snapshot date %s: %v, %v; want %d", in, v, err, want)
		}
	}
	if v, err := date.Decode([]byte("infinity")); err != nil || v != int32(-2147472692) {
		t.Errorf("streamed date infinity: %v, %v; want the LocalDate stand-in", v, err)
	}
	array, err := NewConverter(builtin(pgtype.DateArrayOID, -1), DefaultModes)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{int32(-622191234), int32(-625821272), int32(18262), nil}
	for _, decode := range []func([]byte) (any, error){array.Decode, array.DecodeSnapshot} {
		if v, err := decode([]byte("{infinity,-infinity,2020-01-01,NULL}")); err != nil || !equalValue(v, want) {
			t.Errorf("date[]: %#v, %v; want %#v", v, err, want)
		}
	}
}

// A name column is a string in the schema; Debezium writes a streamed value as null (its replication value
// resolver has no case for name) and a snapshot value, read through JDBC, as its text. Every other type
// decodes the same either way.
func TestNameIsNullWhenStreamedAndItsTextInASnapshot(t *testing.T) {
	c, err := NewConverter(builtin(pgtype.NameOID, -1), DefaultModes)
	if err != nil {
		t.Fatal(err)
	}
	if c.Schema().Type != schema.String {
		t.Errorf("schema %v, want a string", c.Schema().Type)
	}
	if v, err := c.Decode([]byte("pg_catalog")); err != nil || v != nil {
		t.Errorf("streamed: %v, %v; want null", v, err)
	}
	if v, err := c.DecodeSnapshot([]byte("pg_catalog")); err != nil || v != "pg_catalog" {
		t.Errorf("snapshot: %v, %v; want its text", v, err)
	}
	text, err := NewConverter(builtin(pgtype.TextOID, -1), DefaultModes)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := text.DecodeSnapshot([]byte("x")); err != nil || v != "x" {
		t.Errorf("text in a snapshot: %v, %v", v, err)
	}
}

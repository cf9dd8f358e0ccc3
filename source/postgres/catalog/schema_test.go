package catalog

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/cdcd/cdcd/schema"
)

func TestSchemas(t *testing.T) {
	opt := func(s *schema.Schema) *schema.Schema { s.Optional = true; return s }
	str := func() *schema.Schema { return &schema.Schema{Type: schema.String} }
	tests := []struct {
		name  string
		col   Column
		modes Modes
		want  *schema.Schema
	}{
		{"bit(1) is boolean", builtin(pgtype.BitOID, 1), DefaultModes, opt(&schema.Schema{Type: schema.Boolean})},
		{"bit(3) is Bits", builtin(pgtype.BitOID, 3), DefaultModes, opt(schema.Bits(3))},
		{"varbit unbounded", builtin(pgtype.VarbitOID, -1), DefaultModes, opt(schema.Bits(2147483647))},
		{"oid is int64", builtin(pgtype.OIDOID, -1), DefaultModes, opt(&schema.Schema{Type: schema.Int64})},
		{"numeric(10,2)", builtin(pgtype.NumericOID, numericMod(10, 2)), DefaultModes, opt(schema.DecimalSchema(2, 10))},
		{"numeric variable", builtin(pgtype.NumericOID, -1), DefaultModes, opt(schema.VariableScaleDecimal())},
		{"numeric variable string", builtin(pgtype.NumericOID, -1), withModes(func(m *Modes) { m.Decimal = DecimalString }), opt(str())},
		{"numeric double", builtin(pgtype.NumericOID, numericMod(10, 2)), withModes(func(m *Modes) { m.Decimal = DecimalDouble }), opt(&schema.Schema{Type: schema.Float64})},
		{"money has scale only", builtin(790, -1), withModes(func(m *Modes) { m.MoneyFractionDigits = 4 }), opt(schema.ConnectDecimal(4))},
		{"date", builtin(pgtype.DateOID, -1), DefaultModes, opt(schema.DebeziumDate())},
		{"date connect", builtin(pgtype.DateOID, -1), withModes(func(m *Modes) { m.TimePrecision = TimeConnect }), opt(schema.ConnectDate())},
		{"time(0) adaptive", builtin(pgtype.TimeOID, 0), DefaultModes, opt(schema.DebeziumTime())},
		{"time adaptive", builtin(pgtype.TimeOID, -1), DefaultModes, opt(schema.MicroTime())},
		{"time(3) adaptive_time_microseconds", builtin(pgtype.TimeOID, 3), withModes(func(m *Modes) { m.TimePrecision = TimeAdaptiveTimeMicroseconds }), opt(schema.MicroTime())},
		{"time connect", builtin(pgtype.TimeOID, -1), withModes(func(m *Modes) { m.TimePrecision = TimeConnect }), opt(schema.ConnectTime())},
		{"time isostring", builtin(pgtype.TimeOID, -1), withModes(func(m *Modes) { m.TimePrecision = TimeIsoString }), opt(schema.IsoTime())},
		{"timestamp(3)", builtin(pgtype.TimestampOID, 3), DefaultModes, opt(schema.DebeziumTimestamp())},
		{"timestamp", builtin(pgtype.TimestampOID, -1), DefaultModes, opt(schema.MicroTimestamp())},
		{"timestamp(3) adaptive_time_microseconds", builtin(pgtype.TimestampOID, 3), withModes(func(m *Modes) { m.TimePrecision = TimeAdaptiveTimeMicroseconds }), opt(schema.DebeziumTimestamp())},
		{"timestamp nanoseconds", builtin(pgtype.TimestampOID, -1), withModes(func(m *Modes) { m.TimePrecision = TimeNanoseconds }), opt(schema.NanoTimestamp())},
		{"timestamp connect", builtin(pgtype.TimestampOID, -1), withModes(func(m *Modes) { m.TimePrecision = TimeConnect }), opt(schema.ConnectTimestamp())},
		{"timestamp isostring", builtin(pgtype.TimestampOID, -1), withModes(func(m *Modes) { m.TimePrecision = TimeIsoString }), opt(schema.IsoTimestamp())},
		{"timestamptz any mode", builtin(pgtype.TimestamptzOID, -1), withModes(func(m *Modes) { m.TimePrecision = TimeConnect }), opt(schema.ZonedTimestamp())},
		{"timetz", builtin(1266, -1), DefaultModes, opt(schema.ZonedTime())},
		{"interval numeric", builtin(pgtype.IntervalOID, -1), DefaultModes, opt(schema.MicroDuration())},
		{"interval string", builtin(pgtype.IntervalOID, -1), withModes(func(m *Modes) { m.Interval = IntervalString }), opt(schema.Interval())},
		{"bytea", builtin(pgtype.ByteaOID, -1), DefaultModes, opt(&schema.Schema{Type: schema.Bytes})},
		{"bytea hex", builtin(pgtype.ByteaOID, -1), withModes(func(m *Modes) { m.Binary = BinaryHex }), opt(str())},
		{"jsonb", builtin(pgtype.JSONBOID, -1), DefaultModes, opt(schema.Json())},
		{"xml", builtin(pgtype.XMLOID, -1), DefaultModes, opt(schema.Xml())},
		{"uuid", builtin(pgtype.UUIDOID, -1), DefaultModes, opt(schema.Uuid())},
		{"point", builtin(pgtype.PointOID, -1), DefaultModes, opt(schema.Point())},
		{"tsvector", builtin(pgtype.TSVectorOID, -1), DefaultModes, opt(schema.Tsvector())},
		{"daterange", builtin(pgtype.DaterangeOID, -1), DefaultModes, opt(str())},
		{"int2[]", builtin(pgtype.Int2ArrayOID, -1), DefaultModes, opt(&schema.Schema{Type: schema.Array, Items: &schema.Schema{Type: schema.Int16, Optional: true}})},
		{"numeric(5,1)[]", builtin(pgtype.NumericArrayOID, numericMod(5, 1)), DefaultModes, opt(&schema.Schema{Type: schema.Array, Items: opt(schema.DecimalSchema(1, 5))})},
		{"time(3)[] adaptive", builtin(pgtype.TimeArrayOID, 3), DefaultModes, opt(&schema.Schema{Type: schema.Array, Items: opt(schema.DebeziumTime())})},
		{"bytea[] base64", builtin(pgtype.ByteaArrayOID, -1), withModes(func(m *Modes) { m.Binary = BinaryBase64 }), opt(&schema.Schema{Type: schema.Array, Items: opt(str())})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewConverter(tc.col, tc.modes)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Schema(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("schema = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestUnsupportedTypes(t *testing.T) {
	for _, oid := range []uint32{791 /* money[] */, pgtype.NameArrayOID, pgtype.IntervalArrayOID, pgtype.VarbitArrayOID,
		pgtype.BitArrayOID, pgtype.XMLArrayOID, pgtype.PointArrayOID, pgtype.BoxOID, pgtype.PolygonOID, pgtype.TIDOID} {
		_, err := NewConverter(builtin(oid, -1), DefaultModes)
		if !errors.Is(err, ErrUnsupportedType) {
			t.Errorf("oid %d: err = %v, want ErrUnsupportedType", oid, err)
		}
	}
	composite := Column{Name: "c", TypeOID: 90001, TypeMod: -1, Type: &TypeInfo{DeclaredOID: 90001, OID: 90001, Name: "pair", Kind: 'c', DomainMod: -1}}
	if _, err := NewConverter(composite, DefaultModes); !errors.Is(err, ErrUnsupportedType) {
		t.Errorf("composite: err = %v, want ErrUnsupportedType", err)
	}
	domainArray := Column{Name: "c", TypeOID: 90002, TypeMod: -1, Type: &TypeInfo{DeclaredOID: 90002, OID: 90002, Name: "_posint", Kind: 'b', DomainMod: -1,
		Elem: &TypeInfo{OID: 90003, Name: "posint", Kind: 'd', DomainMod: -1}}}
	if _, err := NewConverter(domainArray, DefaultModes); !errors.Is(err, ErrUnsupportedType) {
		t.Errorf("array of domain: err = %v, want ErrUnsupportedType", err)
	}
}

func TestNewConverterRejects(t *testing.T) {
	if _, err := NewConverter(builtin(pgtype.Int4OID, -1), Modes{}); err == nil {
		t.Error("zero Modes accepted")
	}
	stale := Column{Name: "c", TypeOID: 90010, TypeMod: -1, Type: &TypeInfo{DeclaredOID: 90011, OID: 90011, Name: "mood", Kind: 'e'}}
	if _, err := NewConverter(stale, DefaultModes); err == nil || errors.Is(err, ErrUnsupportedType) {
		t.Errorf("non-builtin type oid that differs from the catalog's: err = %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		col  Column
		in   string
		is   error
	}{
		{"numeric NaN precise", builtin(pgtype.NumericOID, numericMod(5, 2)), "NaN", ErrSpecialDecimal},
		{"variable numeric Infinity precise", builtin(pgtype.NumericOID, -1), "-Infinity", ErrSpecialDecimal},
		{"numeric[] NaN", builtin(pgtype.NumericArrayOID, -1), "{NaN}", ErrSpecialDecimal},
		{"numeric too many digits", builtin(pgtype.NumericOID, numericMod(5, 1)), "1.25", nil},
		{"bytea escape format", builtin(pgtype.ByteaOID, -1), `abc\000`, nil},
		{"int4 garbage", builtin(pgtype.Int4OID, -1), "12x", nil},
		{"timestamp garbage", builtin(pgtype.TimestampOID, -1), "2020-13-01 00:00:00", nil},
		{"timestamptz without offset", builtin(pgtype.TimestamptzOID, -1), "2020-01-01 00:00:00", nil},
		{"interval iso style", builtin(pgtype.IntervalOID, -1), "P1D", nil},
		{"money other locale", builtin(790, -1), "1.234,56 EUR", nil},
		{"array unterminated", builtin(pgtype.TextArrayOID, -1), `{"a}`, nil},
		{"nanoseconds out of range", builtin(pgtype.TimestampOID, -1), "2300-01-01 00:00:00", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := DefaultModes
			if tc.name == "nanoseconds out of range" {
				m.TimePrecision = TimeNanoseconds
			}
			c, err := NewConverter(tc.col, m)
			if err != nil {
				t.Fatal(err)
			}
			v, err := c.Decode([]byte(tc.in))
			if err == nil {
				t.Fatalf("Decode(%q) = %#v, want an error", tc.in, v)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err = %v, want %v", err, tc.is)
			}
		})
	}
}

func TestEnumAndDomain(t *testing.T) {
	mood := &TypeInfo{DeclaredOID: 90020, OID: 90020, Name: "mood", Schema: "public", Kind: 'e', DomainMod: -1, EnumValues: []string{"sad", "ok", "happy"}}
	c, err := NewConverter(Column{Name: "m", TypeOID: 90020, TypeMod: -1, TypeName: "mood", NotNull: true, HasDefault: true, DefaultExpr: "'ok'::mood", Type: mood}, DefaultModes)
	if err != nil {
		t.Fatal(err)
	}
	want := schema.Enum([]string{"sad", "ok", "happy"})
	want.Default, want.HasDefault = "ok", true
	if !reflect.DeepEqual(c.Schema(), want) {
		t.Errorf("enum schema = %+v, want %+v", c.Schema(), want)
	}
	if v, _ := c.Decode([]byte("happy")); v != "happy" {
		t.Errorf("enum value = %v", v)
	}

	enumArray := &TypeInfo{DeclaredOID: 90021, OID: 90021, Name: "_mood", Kind: 'b', DomainMod: -1, Elem: mood}
	c, err = NewConverter(Column{Name: "ms", TypeOID: 90021, TypeMod: -1, TypeName: "_mood", Type: enumArray}, DefaultModes)
	if err != nil {
		t.Fatal(err)
	}
	items := c.Schema().Items
	if items.Optional || items.Name != schema.EnumName {
		t.Errorf("enum array items = %+v, want a required Enum", items)
	}

	// A domain over numeric(10,2): the domain's modifier applies, and the domain's own name has no
	// default parser.
	money := &TypeInfo{DeclaredOID: 90030, OID: pgtype.NumericOID, Name: "numeric", Kind: 'b', DomainMod: numericMod(10, 2)}
	c, err = NewConverter(Column{Name: "p", TypeOID: 90030, TypeMod: -1, TypeName: "price", HasDefault: true, DefaultExpr: "1.5", Type: money}, DefaultModes)
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Schema(); s.Name != schema.DecimalName || s.HasDefault || !reflect.DeepEqual(s.Parameters, schema.DecimalSchema(2, 10).Parameters) {
		t.Errorf("domain schema = %+v", s)
	}
}

func TestHStore(t *testing.T) {
	// Keys and order from java.util.HashMap (checked with jshell): the first list fits in 16 buckets.
	in := `"a"=>"va", "key1"=>"v\"1", "b"=>NULL, "zz"=>"z", "Aa"=>"1", "BB"=>"2", "c"=>"c", "hello world"=>"h", "x"=>"x"`
	c, err := NewConverter(Column{Name: "h", TypeOID: 90040, TypeMod: -1, Type: &TypeInfo{DeclaredOID: 90040, OID: 90040, Name: "hstore", Kind: 'b', DomainMod: -1}}, DefaultModes)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Decode([]byte(in))
	want := `{"key1":"v\"1","zz":"z","Aa":"1","BB":"2","a":"va","b":null,"c":"c","x":"x","hello world":"h"}`
	if err != nil || got != want {
		t.Errorf("hstore json = %v, %v\nwant %s", got, err, want)
	}
	if u := c.Unavailable(); u != `{"__debezium_unavailable_value":"__debezium_unavailable_value"}` {
		t.Errorf("hstore placeholder = %v", u)
	}

	var pairs []string
	for i := 0; i < 30; i++ {
		pairs = append(pairs, `"k`+itoa(i*7)+`"=>NULL`)
	}
	entries, err := parseHStore(strings.Join(pairs, ", "))
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, e := range entries {
		order = append(order, e.key)
	}
	wantOrder := []string{"k91", "k70", "k77", "k98", "k35", "k56", "k14", "k161", "k182", "k140", "k189", "k147", "k168", "k105", "k126", "k203", "k0", "k84", "k42", "k63", "k21", "k7", "k28", "k49", "k196", "k154", "k175", "k112", "k133", "k119"}
	if !reflect.DeepEqual(order, wantOrder) {
		t.Errorf("order after resizes = %v\nwant %v", order, wantOrder)
	}

	mapModes := withModes(func(m *Modes) { m.HStore = HStoreMap })
	c, err = NewConverter(Column{Name: "h", TypeOID: 90040, TypeMod: -1, Type: &TypeInfo{DeclaredOID: 90040, OID: 90040, Name: "hstore", Kind: 'b', DomainMod: -1}}, mapModes)
	if err != nil {
		t.Fatal(err)
	}
	got, err = c.Decode([]byte(`"b"=>NULL, "a"=>"1", "a"=>"2"`))
	wantMap := []schema.MapEntry{{Key: "a", Value: "2"}, {Key: "b", Value: nil}}
	if err != nil || !reflect.DeepEqual(got, wantMap) {
		t.Errorf("hstore map = %#v, %v", got, err)
	}
	if s := c.Schema(); s.Type != schema.Map || !s.Values.Optional || s.Keys.Optional {
		t.Errorf("hstore map schema = %+v", s)
	}
}

func itoa(i int) string { return string(appendInt(nil, i)) }

func appendInt(b []byte, i int) []byte {
	if i >= 10 {
		b = appendInt(b, i/10)
	}
	return append(b, byte('0'+i%10))
}

func TestUnavailable(t *testing.T) {
	ph := "__debezium_unavailable_value"
	phBytes := []any{}
	for _, c := range []byte(ph) {
		phBytes = append(phBytes, int32(c))
	}
	phLongs := []any{}
	for _, c := range []byte(ph) {
		phLongs = append(phLongs, int64(c))
	}
	tests := []struct {
		name  string
		col   Column
		modes Modes
		want  any
	}{
		{"text", builtin(pgtype.TextOID, -1), DefaultModes, ph},
		{"jsonb", builtin(pgtype.JSONBOID, -1), DefaultModes, ph},
		{"bytea", builtin(pgtype.ByteaOID, -1), DefaultModes, []byte(ph)},
		{"bytea hex", builtin(pgtype.ByteaOID, -1), withModes(func(m *Modes) { m.Binary = BinaryHex }), ph},
		{"bytea base64 has none", builtin(pgtype.ByteaOID, -1), withModes(func(m *Modes) { m.Binary = BinaryBase64 }), nil},
		{"text[]", builtin(pgtype.TextArrayOID, -1), DefaultModes, []any{ph}},
		{"int4[]", builtin(pgtype.Int4ArrayOID, -1), DefaultModes, phBytes},
		{"int8[]", builtin(pgtype.Int8ArrayOID, -1), DefaultModes, phLongs},
		{"uuid[]", builtin(pgtype.UUIDArrayOID, -1), DefaultModes, []any{"b68a35a7-17ad-35b3-af2a-ae46edb4545a"}},
		{"int2[] has none", builtin(pgtype.Int2ArrayOID, -1), DefaultModes, nil},
		{"int4 has none", builtin(pgtype.Int4OID, -1), DefaultModes, nil},
		{"hex placeholder", builtin(pgtype.TextOID, -1), withModes(func(m *Modes) { m.UnavailablePlaceholder = "hex:4142" }), "AB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewConverter(tc.col, tc.modes)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Unavailable(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Unavailable() = %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestFallback(t *testing.T) {
	notNull := func(c Column) Column { c.NotNull = true; return c }
	vsd := schema.VariableScaleDecimal()
	tests := []struct {
		name  string
		col   Column
		modes Modes
		want  any
	}{
		{"int2", notNull(builtin(pgtype.Int2OID, -1)), DefaultModes, int16(0)},
		{"int4 with default", Column{Name: "c", TypeOID: pgtype.Int4OID, TypeMod: -1, NotNull: true, HasDefault: true, DefaultExpr: "42"}, DefaultModes, int32(42)},
		{"text", notNull(builtin(pgtype.TextOID, -1)), DefaultModes, ""},
		{"bool", notNull(builtin(pgtype.BoolOID, -1)), DefaultModes, false},
		{"bits", notNull(builtin(pgtype.BitOID, 4)), DefaultModes, []byte{}},
		{"numeric(5,2)", notNull(builtin(pgtype.NumericOID, numericMod(5, 2))), DefaultModes, dec(0, 2)},
		{"numeric variable", notNull(builtin(pgtype.NumericOID, -1)), DefaultModes, schema.VariableScaleDecimalValue(vsd, dec(0, 0))},
		{"numeric(5,2) string", notNull(builtin(pgtype.NumericOID, numericMod(5, 2))), withModes(func(m *Modes) { m.Decimal = DecimalString }), "0.00"},
		{"money string", notNull(builtin(790, -1)), withModes(func(m *Modes) { m.Decimal = DecimalString }), "0.00"},
		{"money string scientific", notNull(builtin(790, -1)), withModes(func(m *Modes) { m.Decimal = DecimalString; m.MoneyFractionDigits = 10 }), "0E-10"},
		{"date", notNull(builtin(pgtype.DateOID, -1)), DefaultModes, int32(0)},
		{"date isostring", notNull(builtin(pgtype.DateOID, -1)), withModes(func(m *Modes) { m.TimePrecision = TimeIsoString }), "1970-01-01Z"},
		{"time(3)", notNull(builtin(pgtype.TimeOID, 3)), DefaultModes, int32(0)},
		{"timestamp isostring", notNull(builtin(pgtype.TimestampOID, -1)), withModes(func(m *Modes) { m.TimePrecision = TimeIsoString }), "1970-01-01T00:00:00Z"},
		{"timestamptz", notNull(builtin(pgtype.TimestamptzOID, -1)), DefaultModes, "1970-01-01T00:00:00Z"},
		{"timetz", notNull(builtin(1266, -1)), DefaultModes, "00:00:00Z"},
		{"interval string", notNull(builtin(pgtype.IntervalOID, -1)), withModes(func(m *Modes) { m.Interval = IntervalString }), "P0Y0M0DT0H0M0S"},
		{"hstore", Column{Name: "h", TypeOID: 90040, TypeMod: -1, NotNull: true, Type: &TypeInfo{DeclaredOID: 90040, OID: 90040, Name: "hstore", Kind: 'b', DomainMod: -1}}, DefaultModes, "{}"},
		{"point", notNull(builtin(pgtype.PointOID, -1)), DefaultModes, schema.PointValue(schema.Point(), 0, 0)},
		{"array", notNull(builtin(pgtype.Int4ArrayOID, -1)), DefaultModes, []any{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewConverter(tc.col, tc.modes)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Fallback(); !equalValue(got, tc.want) {
				t.Errorf("Fallback() = %#v, want %#v", got, tc.want)
			}
			if c.Schema().Optional {
				t.Error("NOT NULL column has an optional schema")
			}
		})
	}
}

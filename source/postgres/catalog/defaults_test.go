package catalog

import (
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
)

func TestDefaults(t *testing.T) {
	col := func(oid uint32, mod int32, typeName, expr string) Column {
		return Column{Name: "c", TypeOID: oid, TypeMod: mod, TypeName: typeName, HasDefault: true, DefaultExpr: expr}
	}
	tests := []struct {
		name  string
		col   Column
		modes Modes
		want  any // nil: no default
	}{
		{"serial nextval is 0", col(pgtype.Int4OID, -1, "int4", "nextval('t_id_seq'::regclass)"), DefaultModes, int32(0)},
		{"bigint literal", col(pgtype.Int8OID, -1, "int8", "'9223372036854775807'::bigint"), DefaultModes, int64(9223372036854775807)},
		{"negative int", col(pgtype.Int2OID, -1, "int2", "'-1'::integer"), DefaultModes, int16(-1)},
		{"NULL default", col(pgtype.Int4OID, -1, "int4", "NULL::integer"), DefaultModes, nil},
		{"expression is not read", col(pgtype.Int4OID, -1, "int4", "(1 + 2)"), DefaultModes, nil},
		{"bool", col(pgtype.BoolOID, -1, "bool", "true"), DefaultModes, true},
		{"text", col(pgtype.TextOID, -1, "text", "'abc'::text"), DefaultModes, "abc"},
		{"text stops at the first quote pair", col(pgtype.VarcharOID, -1, "varchar", "'it''s'::character varying"), DefaultModes, "it"},
		{"text NULL", col(pgtype.TextOID, -1, "text", "NULL::text"), DefaultModes, nil},
		{"text function", col(pgtype.TextOID, -1, "text", "md5((random())::text)"), DefaultModes, ""},
		{"numeric(5,2)", col(pgtype.NumericOID, numericMod(5, 2), "numeric", "1.5"), DefaultModes, dec(150, 2)},
		{"numeric(5,2) string", col(pgtype.NumericOID, numericMod(5, 2), "numeric", "1.5"), withModes(func(m *Modes) { m.Decimal = DecimalString }), "1.50"},
		{"numeric variable precise is a struct: none", col(pgtype.NumericOID, -1, "numeric", "1.5"), DefaultModes, nil},
		{"numeric variable double", col(pgtype.NumericOID, -1, "numeric", "1.5"), withModes(func(m *Modes) { m.Decimal = DecimalDouble }), 1.5},
		{"numeric NaN", col(pgtype.NumericOID, -1, "numeric", "'NaN'::numeric"), withModes(func(m *Modes) { m.Decimal = DecimalString }), nil},
		{"float8", col(pgtype.Float8OID, -1, "float8", "'1.5'::double precision"), DefaultModes, 1.5},
		{"json", col(pgtype.JSONBOID, -1, "jsonb", `'{"a": 1}'::jsonb`), DefaultModes, `{"a": 1}`},
		{"uuid function", col(pgtype.UUIDOID, -1, "uuid", "gen_random_uuid()"), DefaultModes, "00000000-0000-0000-0000-000000000000"},
		{"uuid literal", col(pgtype.UUIDOID, -1, "uuid", "'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'::uuid"), DefaultModes, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
		{"date CURRENT_DATE", col(pgtype.DateOID, -1, "date", "CURRENT_DATE"), DefaultModes, int32(0)},
		{"date literal", col(pgtype.DateOID, -1, "date", "'2016-11-04'::date"), DefaultModes, int32(17109)},
		{"time literal", col(pgtype.TimeOID, -1, "time", "'10:00:00'::time without time zone"), DefaultModes, int64(36000000000)},
		{"time function", col(pgtype.TimeOID, 3, "time", "LOCALTIME"), DefaultModes, int32(0)},
		{"timestamp now", col(pgtype.TimestampOID, -1, "timestamp", "now()"), DefaultModes, int64(0)},
		{"timestamp literal", col(pgtype.TimestampOID, -1, "timestamp", "'2020-01-01 10:00:00'::timestamp without time zone"), DefaultModes, int64(1577872800000000)},
		{"timestamptz now pads", col(pgtype.TimestamptzOID, -1, "timestamptz", "now()"), DefaultModes, "1970-01-01T00:00:00.000000Z"},
		{"timestamptz CURRENT_TIMESTAMP", col(pgtype.TimestamptzOID, 3, "timestamptz", "CURRENT_TIMESTAMP"), DefaultModes, "1970-01-01T00:00:00.000Z"},
		{"timestamptz literal", col(pgtype.TimestamptzOID, -1, "timestamptz", "'2020-01-01 10:00:00+02'::timestamp with time zone"), DefaultModes, "2020-01-01T08:00:00.000000Z"},
		{"timestamptz infinity", col(pgtype.TimestamptzOID, -1, "timestamptz", "'infinity'::timestamp with time zone"), DefaultModes, nil},
		{"interval", col(pgtype.IntervalOID, -1, "interval", "'1 day'::interval"), DefaultModes, int64(86400000000)},
		{"interval string", col(pgtype.IntervalOID, -1, "interval", "'01:00:00'::interval"), withModes(func(m *Modes) { m.Interval = IntervalString }), "P0Y0M0DT1H0M0S"},
		{"bit(1)", col(pgtype.BitOID, 1, "bit", `B'1'::"bit"`), DefaultModes, true},
		{"bit(3)", col(pgtype.BitOID, 3, "bit", `B'101'::"bit"`), DefaultModes, []byte{5}},
		{"bytea has no parser", col(pgtype.ByteaOID, -1, "bytea", `'\x01'::bytea`), DefaultModes, nil},
		{"timetz has no parser", col(1266, -1, "timetz", `'10:00:00+00'::time with time zone`), DefaultModes, nil},
		{"array has no parser", col(pgtype.Int4ArrayOID, -1, "_int4", `'{1}'::integer[]`), DefaultModes, nil},
		{"money has no parser", col(790, -1, "money", `'$1.00'::money`), DefaultModes, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewConverter(tc.col, tc.modes)
			if err != nil {
				t.Fatal(err)
			}
			s := c.Schema()
			if tc.want == nil {
				if s.HasDefault {
					t.Errorf("default = %#v, want none", s.Default)
				}
				return
			}
			if !s.HasDefault || !equalValue(s.Default, tc.want) {
				t.Errorf("default = %#v (set %v), want %#v", s.Default, s.HasDefault, tc.want)
			}
		})
	}
}

func TestEnumDefaults(t *testing.T) {
	mood := &TypeInfo{DeclaredOID: 90020, OID: 90020, Name: "mood", Schema: "s1", Kind: 'e', DomainMod: -1, EnumValues: []string{"sad", "happy"}}
	for expr, want := range map[string]any{
		"'happy'::mood":        "happy",
		"'happy'::s1.mood":     "happy",
		`'happy'::"s1"."mood"`: "happy",
		"'happy'::s2.mood":     nil,
		"'happy'::other":       nil,
	} {
		c, err := NewConverter(Column{Name: "m", TypeOID: 90020, TypeMod: -1, TypeName: "mood", HasDefault: true, DefaultExpr: expr, Type: mood}, DefaultModes)
		if err != nil {
			t.Fatal(err)
		}
		s := c.Schema()
		if (want == nil) == s.HasDefault || want != nil && s.Default != want {
			t.Errorf("%s: default = %v (set %v), want %v", expr, s.Default, s.HasDefault, want)
		}
	}
}

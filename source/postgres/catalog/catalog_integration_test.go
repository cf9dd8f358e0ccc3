package catalog_test

import (
	"context"
	"errors"
	"math"
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source/postgres/catalog"
)

// setupSQL runs as separate batches: a new enum value cannot be used in the transaction that adds it.
var setupSQL = []string{`
SET TimeZone = 'Europe/Berlin';
CREATE EXTENSION hstore; CREATE EXTENSION citext; CREATE EXTENSION ltree;
CREATE TYPE mood AS ENUM ('sad', 'happy');
ALTER TYPE mood ADD VALUE 'ok' BEFORE 'happy';`, `
CREATE DOMAIN price AS numeric(10,2) CHECK (VALUE >= 0);
CREATE DOMAIN price2 AS price;
CREATE TABLE every_type (
  b_id int4 NOT NULL,
  a_id serial,
  c_bool bool DEFAULT true,
  c_bit1 bit(1), c_bit5 bit(5), c_varbit varbit,
  c_int2 int2 NOT NULL DEFAULT -1, c_int8 int8, c_oid oid,
  c_float4 real, c_float8 double precision,
  c_num numeric(7,2) DEFAULT 1.5, c_numvar numeric, c_money money,
  c_char char(4), c_varchar varchar(10) DEFAULT 'x''y', c_text text, c_name name,
  c_date date DEFAULT CURRENT_DATE, c_time time(3), c_timetz timetz,
  c_ts timestamp, c_tstz timestamptz DEFAULT now(), c_tstz0 timestamptz(0), c_interval interval,
  c_bytea bytea, c_json json, c_jsonb jsonb, c_xml xml, c_uuid uuid,
  c_point point, c_hstore hstore, c_inet inet, c_cidr cidr, c_macaddr macaddr,
  c_int4range int4range, c_tstzrange tstzrange, c_citext citext, c_ltree ltree, c_tsvector tsvector,
  c_mood mood DEFAULT 'ok', c_price price2,
  c_int4arr int4[], c_textarr text[], c_numarr numeric(5,1)[], c_tstzarr timestamptz[], c_moodarr mood[],
  c_int2d int4[][],
  c_moneyarr money[], c_intervalarr interval[], c_box box,
  c_gen int4 GENERATED ALWAYS AS (b_id * 2) STORED,
  PRIMARY KEY (b_id, a_id)
);
COMMENT ON COLUMN every_type.c_text IS 'some text';
INSERT INTO every_type (b_id, c_bit1, c_bit5, c_varbit, c_int8, c_oid, c_float4, c_float8, c_numvar, c_money,
  c_char, c_text, c_name, c_date, c_time, c_timetz, c_ts, c_tstz, c_tstz0, c_interval, c_bytea, c_json, c_jsonb, c_xml,
  c_uuid, c_point, c_hstore, c_inet, c_cidr, c_macaddr, c_int4range, c_tstzrange, c_citext, c_ltree, c_tsvector,
  c_price, c_int4arr, c_textarr, c_numarr, c_tstzarr, c_moodarr, c_int2d)
VALUES (7, B'1', B'10100', B'101', -9223372036854775808, 4294967295, 3.14, 'NaN', 123.4500, -1234.56,
  'ab', 'héllo', 'nm', '2016-11-04', '13:51:30.123', '13:51:30.123789+02', '2016-11-04 13:51:30.123456',
  '2016-11-04 13:51:30.123456+02', '2016-11-04 13:51:30+02', '1 year 2 months 3 days 04:05:06.78',
  '\x010203', '{"a": 1}', '{"b": [1, 2]}', '<a>x</a>', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
  '(1.5,-2)', 'a=>1, key1=>NULL', '192.168.0.1/24', '10.0.0.0/8', '08:00:2b:01:02:03', '[1,10)',
  '[2020-01-01 00:00:00+00,)', 'MiXeD', 'a.b.c', 'a fat cat', 12.5, '{1,NULL,3}',
  '{"a b","c\"d",NULL}', '{1.5,NULL}', '{"2020-04-01 13:51:02+02"}', '{sad,happy}', '{{1,2},{3,4}}');

CREATE TABLE no_pk (a int NOT NULL, b text NOT NULL, c int);
CREATE UNIQUE INDEX no_pk_z ON no_pk (c);
CREATE UNIQUE INDEX no_pk_expr ON no_pk (lower(b));
CREATE UNIQUE INDEX no_pk_ab ON no_pk (b, a);
ALTER TABLE no_pk REPLICA IDENTITY USING INDEX no_pk_ab;
`}

func TestLoadAndDecodeEveryType(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, testenv.NewPostgresDB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, batch := range setupSQL {
		if _, err := conn.Exec(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}

	tbl, err := catalog.Load(ctx, conn, "public", "every_type")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tbl.PrimaryKey, []string{"b_id", "a_id"}) || tbl.ReplicaIdentity != 'd' || !reflect.DeepEqual(tbl.IdentityColumns, tbl.PrimaryKey) {
		t.Errorf("keys: pk %v (%s), identity %c %v", tbl.PrimaryKey, tbl.KeyIndex, tbl.ReplicaIdentity, tbl.IdentityColumns)
	}
	cols := map[string]catalog.Column{}
	for _, c := range tbl.Columns {
		cols[c.Name] = c
	}
	if c := cols["c_text"]; c.Comment != "some text" || c.Position != 17 {
		t.Errorf("c_text: comment %q, position %d", c.Comment, c.Position)
	}
	if c := cols["c_mood"]; !reflect.DeepEqual(c.Type.EnumValues, []string{"sad", "ok", "happy"}) {
		t.Errorf("enum values = %v, want enumsortorder order", c.Type.EnumValues)
	}
	if c := cols["c_price"]; c.TypeName != "price2" || c.Type.Name != "numeric" || c.Type.DomainMod == -1 {
		t.Errorf("domain over domain: %+v / %+v", c, c.Type)
	}
	if c := cols["c_gen"]; !c.HasDefault || c.DefaultExpr != "(b_id * 2)" {
		t.Errorf("generated column: %+v", c)
	}

	vsd := schema.VariableScaleDecimal()
	want := map[string]any{
		"b_id": int32(7), "a_id": int32(1), "c_bool": true, "c_bit1": true, "c_bit5": []byte{0x14}, "c_varbit": []byte{5},
		"c_int2": int16(-1), "c_int8": int64(math.MinInt64), "c_oid": int64(4294967295),
		"c_float4": float32(3.14), "c_float8": "NaN",
		"c_num":    schema.Decimal{Unscaled: big.NewInt(150), Scale: 2},
		"c_numvar": schema.VariableScaleDecimalValue(vsd, schema.Decimal{Unscaled: big.NewInt(12345), Scale: 2}),
		"c_money":  schema.Decimal{Unscaled: big.NewInt(-123456), Scale: 2},
		"c_char":   "ab  ", "c_varchar": "x'y", "c_text": "héllo", "c_name": nil,
		"c_date": int32(17109), "c_time": int32(49890123), "c_timetz": "11:51:30.123789Z",
		"c_ts": int64(1478267490123456), "c_tstz": "2016-11-04T11:51:30.123456Z", "c_tstz0": "2016-11-04T11:51:30Z",
		"c_interval": int64(37091106780000),
		"c_bytea":    []byte{1, 2, 3}, "c_json": `{"a": 1}`, "c_jsonb": `{"b": [1, 2]}`, "c_xml": "<a>x</a>",
		"c_uuid": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "c_point": schema.PointValue(schema.Point(), 1.5, -2),
		"c_hstore": `{"key1":null,"a":"1"}`, "c_inet": "192.168.0.1/24", "c_cidr": "10.0.0.0/8", "c_macaddr": "08:00:2b:01:02:03",
		"c_int4range": "[1,10)", "c_tstzrange": `["2020-01-01 01:00:00+01",)`, "c_citext": "MiXeD", "c_ltree": "a.b.c",
		"c_tsvector": "'a' 'cat' 'fat'", "c_mood": "ok",
		"c_price":   schema.Decimal{Unscaled: big.NewInt(1250), Scale: 2},
		"c_int4arr": []any{int32(1), nil, int32(3)}, "c_textarr": []any{"a b", `c"d`, nil},
		"c_numarr":  []any{schema.Decimal{Unscaled: big.NewInt(15), Scale: 1}, nil},
		"c_tstzarr": []any{"2020-04-01T11:51:02.000000Z"}, "c_moodarr": []any{"sad", "happy"}, "c_int2d": []any{nil, nil},
		"c_gen": int32(14),
	}
	unsupported := map[string]bool{"c_moneyarr": true, "c_intervalarr": true, "c_box": true}
	for _, col := range tbl.Columns {
		conv, err := catalog.NewConverter(col, catalog.DefaultModes)
		if unsupported[col.Name] {
			if !errors.Is(err, catalog.ErrUnsupportedType) {
				t.Errorf("%s: err = %v, want ErrUnsupportedType", col.Name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", col.Name, err)
			continue
		}
		text := outputText(ctx, t, conn, col.Name)
		got, err := conv.Decode(text)
		if err != nil {
			t.Errorf("%s: Decode(%q): %v", col.Name, text, err)
			continue
		}
		if w, ok := want[col.Name]; !ok || !sameValue(got, w) {
			t.Errorf("%s: Decode(%q) = %#v, want %#v", col.Name, text, got, w)
		}
	}

	defaults := map[string]any{
		"a_id": int32(0), "c_bool": true, "c_int2": int16(-1), "c_num": schema.Decimal{Unscaled: big.NewInt(150), Scale: 2},
		"c_varchar": "x", "c_date": int32(0), "c_tstz": "1970-01-01T00:00:00.000000Z", "c_mood": "ok",
	}
	for _, col := range tbl.Columns {
		conv, err := catalog.NewConverter(col, catalog.DefaultModes)
		if err != nil {
			continue
		}
		s := conv.Schema()
		w, ok := defaults[col.Name]
		if s.HasDefault != ok || ok && !sameValue(s.Default, w) {
			t.Errorf("%s: default %#v (set %v), want %#v (set %v)", col.Name, s.Default, s.HasDefault, w, ok)
		}
		if s.Optional == col.NotNull {
			t.Errorf("%s: optional %v for NOT NULL %v", col.Name, s.Optional, col.NotNull)
		}
	}

	noPK, err := catalog.Load(ctx, conn, "public", "no_pk")
	if err != nil {
		t.Fatal(err)
	}
	// The expression index sorts first by name but cannot be a key; no_pk_ab comes before no_pk_z.
	if !reflect.DeepEqual(noPK.PrimaryKey, []string{"b", "a"}) || noPK.KeyIndex != "no_pk_ab" {
		t.Errorf("no_pk key = %v from %s", noPK.PrimaryKey, noPK.KeyIndex)
	}
	if noPK.ReplicaIdentity != 'i' || !reflect.DeepEqual(noPK.IdentityColumns, []string{"b", "a"}) {
		t.Errorf("no_pk identity %c %v", noPK.ReplicaIdentity, noPK.IdentityColumns)
	}

	all, err := catalog.LoadAll(ctx, conn, func(_, table string) bool { return table == "no_pk" })
	if err != nil || len(all) != 1 || all[0].Name != "no_pk" {
		t.Errorf("LoadAll = %v, %v", all, err)
	}
	if _, err := catalog.Load(ctx, conn, "public", "missing"); !errors.Is(err, pgx.ErrNoRows) {
		t.Errorf("missing table: err = %v", err)
	}
}

// outputText reads a column of the test row in text format, which is its type's output function: the
// text pgoutput sends (a ::text cast differs for bool and char(n)).
func outputText(ctx context.Context, t *testing.T, conn *pgx.Conn, column string) []byte {
	t.Helper()
	rows, err := conn.Query(ctx, "SELECT "+pgx.Identifier{column}.Sanitize()+" FROM every_type", pgx.QueryResultFormats{pgx.TextFormatCode})
	if err != nil {
		t.Fatalf("%s: %v", column, err)
	}
	defer rows.Close()
	if !rows.Next() {
		t.Fatalf("%s: no row: %v", column, rows.Err())
	}
	raw := rows.RawValues()[0]
	if raw == nil {
		t.Fatalf("%s: NULL in the test row", column)
	}
	return append([]byte(nil), raw...)
}

// sameValue compares decoded values: "NaN" stands for a float64 NaN, decimals compare by value and scale.
func sameValue(got, want any) bool {
	switch w := want.(type) {
	case string:
		if f, ok := got.(float64); ok && w == "NaN" {
			return math.IsNaN(f)
		}
	case schema.Decimal:
		g, ok := got.(schema.Decimal)
		return ok && g.Scale == w.Scale && g.Unscaled.Cmp(w.Unscaled) == 0
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !sameValue(g[i], w[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(got, want)
}

func BenchmarkDecodeRow(b *testing.B) {
	mk := func(oid uint32, mod int32) catalog.Converter {
		c, err := catalog.NewConverter(catalog.Column{Name: "c", TypeOID: oid, TypeMod: mod}, catalog.DefaultModes)
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	row := []struct {
		conv catalog.Converter
		text []byte
	}{
		{mk(23, -1), []byte("123456")},
		{mk(25, -1), []byte("a typical text value of a few dozen bytes")},
		{mk(1184, -1), []byte("2024-05-17 09:41:12.123456+02")},
		{mk(1700, 12<<16|2+4), []byte("12345.67")},
		{mk(3802, -1), []byte(`{"id": 42, "tags": ["a", "b"], "ok": true}`)},
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range row {
			if _, err := c.conv.Decode(c.text); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestNotNullDomainIsRequired: a column whose type is a NOT NULL domain is a required field, as pgjdbc's
// getColumns (and so Debezium) reports it; a domain over that domain does not carry the constraint to
// the column in pgjdbc's report, and the field stays optional.
func TestNotNullDomainIsRequired(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, testenv.NewPostgresDB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `CREATE DOMAIN posint AS int NOT NULL CHECK (VALUE > 0);
		CREATE DOMAIN posint2 AS posint;
		CREATE TABLE d (id int PRIMARY KEY, a posint, b posint2, c int)`); err != nil {
		t.Fatal(err)
	}
	tbl, err := catalog.Load(ctx, conn, "public", "d")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"id": true, "a": true, "b": false, "c": false}
	for _, c := range tbl.Columns {
		if c.NotNull != want[c.Name] {
			t.Errorf("column %s: NOT NULL %v, want %v (pgjdbc's getColumns)", c.Name, c.NotNull, want[c.Name])
		}
	}
}

package columns_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source/columns"
	"github.com/cdcd/cdcd/source/props"
)

// parse reads settings and fails the test on a refused value.
func parse(t *testing.T, settings map[string]string) *columns.Mappers {
	t.Helper()
	p := props.NewParser(settings)
	ms := columns.Parse(p, settings)
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	return ms
}

// java.sql.Types codes the tests describe columns with.
const (
	jdbcVarchar = 12
	jdbcInteger = 4
	jdbcOther   = 1111
)

var (
	text    = columns.Column{Name: "txt", TypeName: "text", JDBCType: jdbcVarchar, Length: 2147483647, HasScale: true}
	varchar = columns.Column{Name: "vc", TypeName: "varchar", JDBCType: jdbcVarchar, Length: 20, HasScale: true}
)

func stringSchema() *schema.Schema {
	return &schema.Schema{Type: schema.String, Optional: true, Parameters: []schema.Param{{Key: "existing", Value: "1"}}}
}

func params(s *schema.Schema) string {
	var parts []string
	for _, p := range s.Parameters {
		parts = append(parts, p.Key+"="+p.Value)
	}
	return strings.Join(parts, " ")
}

func TestParseWithoutOptionsMapsNothing(t *testing.T) {
	ms := parse(t, map[string]string{"topic.prefix": "x", "column.include.list": "a.b.c"})
	if ms != nil {
		t.Fatalf("Parse = %+v, want nil", ms)
	}
	var m *columns.Mapper = ms.For("s.t", text)
	s := stringSchema()
	if m.Schema(s) != s || m.Value("v") != "v" || m.Changes() {
		t.Error("a nil mapper changed something")
	}
}

func TestParseRefusesBadValues(t *testing.T) {
	settings := map[string]string{
		"column.truncate.to.99999999999.chars":    "s.t.c",
		"column.mask.with.5.chars":                "s.t.(c",
		"column.mask.hash.MD2.with.salt.x":        "s.t.c",
		"column.mask.hash.v2.NOPE.with.salt.x":    "s.t.c",
		"column.propagate.source.type":            "s.t.[",
		"datatype.propagate.source.type":          "(?<=x)y",
		"column.mask.hash.SHA-256.with.salt.good": "s.t.c",
	}
	p := props.NewParser(settings)
	columns.Parse(p, settings)
	var refused []string
	for _, err := range p.Err().(interface{ Unwrap() []error }).Unwrap() {
		var ce *props.ConfigError
		if !errors.As(err, &ce) {
			t.Fatalf("%v is not a *props.ConfigError", err)
		}
		refused = append(refused, ce.Key)
		if strings.Contains(ce.Key, "hash") && !strings.Contains(ce.Reason, "SHA-256") {
			t.Errorf("%s: the reason %q does not say what to write", ce.Key, ce.Reason)
		}
	}
	want := []string{"column.truncate.to.99999999999.chars", "column.mask.with.5.chars", "column.propagate.source.type",
		"datatype.propagate.source.type", "column.mask.hash.MD2.with.salt.x", "column.mask.hash.v2.NOPE.with.salt.x"}
	if !reflect.DeepEqual(refused, want) {
		t.Errorf("refused %q, want %q", refused, want)
	}
}

func TestForMatchesWholeQualifiedNamesCaseInsensitively(t *testing.T) {
	ms := parse(t, map[string]string{"column.mask.with.3.chars": `PUBLIC\.t\.TXT, other\.t\..*`})
	for _, c := range []struct {
		table string
		col   columns.Column
		want  bool
	}{
		{"public.t", text, true},
		{"other.t", varchar, true},
		{"public.t", varchar, false},
		{"xpublic.t", text, false},   // the whole name must match
		{"db.public.t", text, false}, // no database prefix on PostgreSQL names
	} {
		if got := ms.For(c.table, c.col) != nil; got != c.want {
			t.Errorf("For(%s, %s) selected %v, want %v", c.table, c.col.Name, got, c.want)
		}
	}
}

// TestForTakesTheFirstOptionInDebeziumsOrder: truncation, masking, propagation by column, by type, then
// hashing; one mapper per column.
func TestForTakesTheFirstOptionInDebeziumsOrder(t *testing.T) {
	ms := parse(t, map[string]string{
		"column.mask.hash.SHA-256.with.salt.x": "s.t.(a|b|c|d)",
		"column.propagate.source.type":         "s.t.(a|b|c|e)",
		"column.mask.with.2.chars":             "s.t.(a|b)",
		"column.truncate.to.1.chars":           "s.t.(a|e)",
		"datatype.propagate.source.type":       `s\.t\.int4`,
	})
	for name, want := range map[string]string{
		"a": "existing=1 truncateLength=1",
		"b": "existing=1 masked=true",
		"c": "existing=1 __debezium.source.column.type=TEXT __debezium.source.column.length=2147483647 __debezium.source.column.scale=0 __debezium.source.column.name=c",
		"d": "existing=1 masked=true",
		"e": "existing=1", // a truncation it cannot apply still decides
	} {
		col := text
		col.Name = name
		if name == "e" {
			col.Length = 1
		}
		if got := params(ms.For("s.t", col).Schema(stringSchema())); got != want {
			t.Errorf("column %s: parameters %q, want %q", name, got, want)
		}
	}
	byType := columns.Column{Name: "n", TypeName: "int4", JDBCType: jdbcInteger, Length: 10, HasScale: true}
	if got := params(ms.For("s.t", byType).Schema(stringSchema())); !strings.Contains(got, "__debezium.source.column.type=INT4") {
		t.Errorf("datatype.propagate.source.type: parameters %q", got)
	}
}

func TestTruncate(t *testing.T) {
	ms := parse(t, map[string]string{"column.truncate.to.3.chars": "s.t.*"})
	m := ms.For("s.t", text)
	if got := params(m.Schema(stringSchema())); got != "existing=1 truncateLength=3" {
		t.Errorf("parameters %q", got)
	}
	for _, c := range []struct{ in, want any }{
		{"abcdef", "abc"},
		{"ab", "ab"},
		{"ñ😀z", "ñ😀"},  // Java counts UTF-16 units: the emoji is two
		{"ab😀z", "ab"}, // a cut inside the surrogate pair drops the whole emoji
		{[]byte{1, 2, 3, 4}, []byte{1, 2, 3}},
		{int32(123456), int32(123456)},
		{nil, nil},
	} {
		if got := m.Value(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Value(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	// A column no longer than the limit is left alone, schema included; an unknown length is truncated.
	short := columns.Column{Name: "c", TypeName: "bpchar", JDBCType: 1, Length: 3}
	if m := ms.For("s.t", short); m != nil {
		t.Errorf("char(3) under truncate.to.3: mapper %+v, want none", m)
	}
	unknown := columns.Column{Name: "c", TypeName: "TEXT", JDBCType: -1, Length: -1}
	if got := ms.For("s.t", unknown).Value("abcd"); got != "abc" {
		t.Errorf("unknown length: %v", got)
	}
}

func TestMaskWithChars(t *testing.T) {
	ms := parse(t, map[string]string{"column.mask.with.4.chars": "s.t.*"})
	m := ms.For("s.t", varchar)
	for _, in := range []any{"secret", "", nil} { // Debezium masks null too
		if got := m.Value(in); got != "****" {
			t.Errorf("Value(%v) = %v", in, got)
		}
	}
	// A non-character column keeps its values but still gets masked=true.
	uuid := columns.Column{Name: "u", TypeName: "uuid", JDBCType: jdbcOther, Length: 2147483647}
	m = ms.For("s.t", uuid)
	if got := m.Value("a0ee"); got != "a0ee" || m.Changes() {
		t.Errorf("uuid value %v", got)
	}
	if got := params(m.Schema(stringSchema())); got != "existing=1 masked=true" {
		t.Errorf("uuid parameters %q", got)
	}
}

// TestMaskHash checks digests against Java's MessageDigest over ObjectOutputStream (v1) and
// String.getBytes (v2); the expected values were printed by a Java program.
func TestMaskHash(t *testing.T) {
	ms := parse(t, map[string]string{
		"column.mask.hash.SHA-256.with.salt.salt":    "s.a.*",
		"column.mask.hash.v2.SHA-256.with.salt.salt": "s.b.*",
		"column.mask.hash.MD5.with.salt.s.a.lt":      "s.c.*",
		"column.mask.hash.v2.md5.with.salt.s.a.lt":   "s.d.*",
		"column.mask.hash.sha512.with.salt.p":        "s.e.*",
		"column.mask.hash.SHA3-256.with.salt.q":      "s.f.*",
		"column.mask.hash.SHA-1.with.salt.k":         "s.g.*",
	})
	for _, c := range []struct {
		table string
		in    string
		want  string
	}{
		{"s.a", "alice@example.org", "a8695864c5944ff3e7f3bcfc5aecd86cc4b18d0e438105c277140599cd0c30d3"},
		{"s.b", "alice@example.org", "6d36aafc056d0b6ca0b327904ce7cebc2566556c09a830b439982b1d1f05d75d"},
		{"s.a", "bøb😀\x00x", "c3d50b6017e2902c88d963f710263bad9231edf1d2f4abb580bfc4abe50e82a8"},
		{"s.b", "bøb😀\x00x", "689645c1be0307c90631b3746591bbbffd47230b49a1e114b049d796c4677b56"},
		{"s.c", "bøb😀\x00x", "d50efd113bf2ae20314ad77bf1d2f4f9"},
		{"s.d", "bøb😀\x00x", "c1a84ea031e9ac57fa23ef8afd54a0dc"},
		{"s.e", "x", "49640cdd9f07cc3da1f29d68dacc8a82c765246717446ecc0c858698de2f3d75812927bbf76129f2ba7109859a94c18b22b6c6be3e18b37312b3fa47ce36ba57"},
		{"s.f", "", "536cb9b195701729c0410ee5317c4bf1d152fac1be0d4e1406a5987c42ad0d50"},
		{"s.g", strings.Repeat("é", 40000), "3cd1b8ca723df893680dd58e3d7c631fd45ff057"}, // TC_LONGSTRING
	} {
		m := ms.For(c.table, text)
		if got := m.Value(c.in); got != c.want {
			t.Errorf("%s: Value(%.20q) = %v, want %s", c.table, c.in, got, c.want)
		}
		if got := params(m.Schema(stringSchema())); got != "existing=1 masked=true" {
			t.Errorf("%s: parameters %q", c.table, got)
		}
	}
	m := ms.For("s.a", text)
	if got := m.Value(nil); got != nil {
		t.Errorf("null hashed to %v, want null", got)
	}
	// The digest is cut to the column's length.
	if got := ms.For("s.a", varchar).Value("alice@example.org"); got != "a8695864c5944ff3e7f3" {
		t.Errorf("varchar(20): %v", got)
	}
	if m := ms.For("s.a", columns.Column{Name: "n", JDBCType: jdbcInteger, Length: 10}); m.Changes() || m.Value(int32(1)) != int32(1) {
		t.Error("an integer column's values were hashed")
	}
}

func TestPropagateSourceType(t *testing.T) {
	ms := parse(t, map[string]string{"column.propagate.source.type": "db.t.*"})
	for _, c := range []struct {
		col  columns.Column
		want string
	}{
		{columns.Column{Name: "price", TypeName: "decimal", Length: 10, Scale: 2, HasScale: true, Comment: "net"},
			"__debezium.source.column.type=DECIMAL __debezium.source.column.length=10 __debezium.source.column.scale=2 __debezium.source.column.comment=net __debezium.source.column.name=price"},
		{columns.Column{Name: "big", TypeName: "bigint unsigned", Length: -1},
			"__debezium.source.column.type=BIGINT UNSIGNED __debezium.source.column.name=big"},
	} {
		m := ms.For("db.t", c.col)
		if got := params(m.Schema(&schema.Schema{Type: schema.Int64})); got != c.want {
			t.Errorf("%s: %q, want %q", c.col.Name, got, c.want)
		}
		if m.Changes() || m.Value(int64(7)) != int64(7) {
			t.Errorf("%s: propagation changed a value", c.col.Name)
		}
	}
}

func TestSchemaLeavesTheOriginalAlone(t *testing.T) {
	ms := parse(t, map[string]string{"column.mask.with.1.chars": "s.t.*"})
	orig := stringSchema()
	orig.Parameters = append(make([]schema.Param, 0, 4), orig.Parameters...) // spare capacity must not be written
	mapped := ms.For("s.t", text).Schema(orig)
	if len(orig.Parameters) != 1 || orig.Parameters[:2][1] != (schema.Param{}) {
		t.Errorf("the original schema changed: %+v", orig.Parameters[:2])
	}
	if mapped == orig || !mapped.Optional || mapped.Type != schema.String {
		t.Errorf("mapped schema %+v", mapped)
	}
}

func TestRowCarriesUnmappedKeyValues(t *testing.T) {
	s := &schema.Schema{Type: schema.StructT, Fields: []schema.Field{{Name: "a", Schema: stringSchema()}, {Name: "b", Schema: stringSchema()}}}
	row := columns.NewRow(s, 2)
	row.Values[0] = "****"
	columns.SetKeyValue(row, 1, "secret")
	if len(row.Values) != 2 || columns.KeyValue(row, 1) != "secret" || columns.KeyValue(row, 0) != nil {
		t.Errorf("row %v, key values %v %v", row.Values, columns.KeyValue(row, 0), columns.KeyValue(row, 1))
	}
	plain := schema.NewStruct(s)
	columns.SetKeyValue(plain, 0, "x") // no room: ignored
	if columns.KeyValue(plain, 0) != nil || columns.KeyValue(row, 5) != nil {
		t.Error("a row without room returned a key value")
	}
}

// TestMaskHashAcceptsJavaDigestNames: MessageDigest's names and the JDK's aliases, in any case, each
// giving a digest of its size.
func TestMaskHashAcceptsJavaDigestNames(t *testing.T) {
	for name, size := range map[string]int{
		"MD5": 16, "SHA": 20, "sha1": 20, "SHA-1": 20, "SHA-224": 28, "SHA224": 28, "SHA256": 32, "SHA-384": 48,
		"sha384": 48, "SHA512": 64, "SHA-512/224": 28, "SHA512/256": 32, "SHA3-224": 28, "SHA3-384": 48, "sha3-512": 64,
	} {
		ms := parse(t, map[string]string{"column.mask.hash." + name + ".with.salt.s": "s.t.*"})
		if got, _ := ms.For("s.t", text).Value("v").(string); len(got) != 2*size {
			t.Errorf("%s: digest %q, want %d bytes", name, got, size)
		}
	}
}

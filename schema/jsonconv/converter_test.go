package jsonconv

import (
	"bufio"
	"encoding/base64"
	"errors"
	"math"
	"math/big"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/cdcd/cdcd/schema"
)

// goldenCase mirrors one case of testdata/gen/ConverterGolden.java, built with cdcd's data model.
type goldenCase struct {
	schema *schema.Schema
	value  any
}

var goldenConfigs = map[string]Converter{
	"default":   New(),
	"noschemas": {SchemasEnable: false, DecimalFormat: Base64, ReplaceNullWithDefault: true},
	"numeric":   {SchemasEnable: true, DecimalFormat: Numeric, ReplaceNullWithDefault: true},
	"keepnulls": {SchemasEnable: true, DecimalFormat: Base64, ReplaceNullWithDefault: false},
}

func prim(t schema.Type, optional bool) *schema.Schema {
	return &schema.Schema{Type: t, Optional: optional}
}

func withDefault(s *schema.Schema, d any) *schema.Schema {
	s.Default, s.HasDefault = d, true
	return s
}

func structOf(name string, optional bool, fields ...schema.Field) *schema.Schema {
	return &schema.Schema{Type: schema.StructT, Name: name, Optional: optional, Fields: fields}
}

func decimalSchema(scale string, optional bool) *schema.Schema {
	return &schema.Schema{Type: schema.Bytes, Optional: optional, Name: schema.DecimalName, Version: 1,
		Parameters: []schema.Param{{Key: "scale", Value: scale}}}
}

func dec(unscaled string, scale int32) schema.Decimal {
	u, ok := new(big.Int).SetString(unscaled, 10)
	if !ok {
		panic("bad test decimal " + unscaled)
	}
	return schema.Decimal{Unscaled: u, Scale: scale}
}

func goldenCases() map[string]goldenCase {
	cs := map[string]goldenCase{}

	nested := structOf("test.Nested", true, schema.Field{Name: "x", Schema: withDefault(prim(schema.Int64, true), int64(7))})
	withDefaults := structOf("test.Value", false,
		schema.Field{Name: "id", Schema: withDefault(prim(schema.Int32, false), int32(0))},
		schema.Field{Name: "name", Schema: withDefault(prim(schema.String, true), "dflt")},
		schema.Field{Name: "note", Schema: prim(schema.String, true)},
		schema.Field{Name: "flag", Schema: withDefault(prim(schema.Boolean, true), true)},
		schema.Field{Name: "nested", Schema: nested},
	)
	cs["struct_defaults"] = goldenCase{withDefaults, schema.NewStruct(withDefaults).Set("id", int32(5)).Set("nested", schema.NewStruct(nested))}
	cs["struct_defaults_set"] = goldenCase{withDefaults, schema.NewStruct(withDefaults).Set("id", int32(5)).Set("name", "n").
		Set("note", "x").Set("flag", false).Set("nested", schema.NewStruct(nested).Set("x", int64(-1)))}
	requiredDefault := structOf("test.RequiredDefault", false, schema.Field{Name: "req", Schema: withDefault(prim(schema.String, false), "r")})
	cs["required_default_field"] = goldenCase{requiredDefault, schema.NewStruct(requiredDefault)}

	prims := structOf("test.Prims", false,
		schema.Field{Name: "i8", Schema: prim(schema.Int8, false)}, schema.Field{Name: "i16", Schema: prim(schema.Int16, false)},
		schema.Field{Name: "i32", Schema: prim(schema.Int32, false)}, schema.Field{Name: "i64", Schema: prim(schema.Int64, false)},
		schema.Field{Name: "f32", Schema: prim(schema.Float32, false)}, schema.Field{Name: "f64", Schema: prim(schema.Float64, false)},
		schema.Field{Name: "f64nan", Schema: prim(schema.Float64, false)}, schema.Field{Name: "f64inf", Schema: prim(schema.Float64, false)},
		schema.Field{Name: "f32neg0", Schema: prim(schema.Float32, false)}, schema.Field{Name: "bool", Schema: prim(schema.Boolean, false)},
		schema.Field{Name: "bytes", Schema: prim(schema.Bytes, false)}, schema.Field{Name: "empty", Schema: prim(schema.Bytes, true)},
	)
	prims.Version, prims.Doc = 3, "all the primitives"
	cs["primitives"] = goldenCase{prims, schema.NewStruct(prims).Set("i8", int8(-128)).Set("i16", int16(32767)).
		Set("i32", int32(math.MinInt32)).Set("i64", int64(math.MaxInt64)).Set("f32", float32(3.4028235e38)).
		Set("f64", 1.0e7).Set("f64nan", math.NaN()).Set("f64inf", math.Inf(-1)).
		Set("f32neg0", float32(math.Copysign(0, -1))).Set("bool", true).Set("bytes", []byte{0, 1, 0xfe, 0xff, 'a'}).
		Set("empty", []byte{})}

	dec2, dec0 := decimalSchema("2", true), decimalSchema("0", false)
	decs := structOf("test.Decimals", false,
		schema.Field{Name: "a", Schema: dec2}, schema.Field{Name: "b", Schema: dec2}, schema.Field{Name: "c", Schema: dec2},
		schema.Field{Name: "d", Schema: dec0}, schema.Field{Name: "e", Schema: dec0},
		schema.Field{Name: "f", Schema: withDefault(decimalSchema("3", true), dec("1500", 3))},
		schema.Field{Name: "g", Schema: dec2}, schema.Field{Name: "h", Schema: dec0},
	)
	cs["decimals"] = goldenCase{decs, schema.NewStruct(decs).Set("a", dec("12345", 2)).Set("b", dec("-128", 2)).
		Set("c", dec("128", 2)).Set("d", dec("123456789012345678901234567890", 0)).
		Set("e", dec("-98765432109876543210", 0)).Set("g", dec("1", 2)).Set("h", dec("0", 0))}
	cs["decimal_sci_small"] = goldenCase{decimalSchema("10", false), dec("12", 10)}
	cs["decimal_negative_scale"] = goldenCase{decimalSchema("-3", false), dec("12", -3)}
	cs["decimal_scale_mismatch"] = goldenCase{decimalSchema("2", false), dec("15", 1)}

	arrays := structOf("test.Arrays", false,
		schema.Field{Name: "strs", Schema: &schema.Schema{Type: schema.Array, Items: prim(schema.String, true)}},
		schema.Field{Name: "ints", Schema: &schema.Schema{Type: schema.Array, Optional: true, Items: withDefault(prim(schema.Int32, true), int32(9))}},
		schema.Field{Name: "none", Schema: &schema.Schema{Type: schema.Array, Optional: true, Items: prim(schema.Int32, false)}},
	)
	cs["arrays"] = goldenCase{arrays, schema.NewStruct(arrays).Set("strs", []any{"a", nil, "c"}).Set("ints", []any{int32(1), nil, int32(3)})}

	maps := structOf("test.Maps", false,
		schema.Field{Name: "bystr", Schema: &schema.Schema{Type: schema.Map, Keys: prim(schema.String, false), Values: prim(schema.Int64, true)}},
		schema.Field{Name: "byint", Schema: &schema.Schema{Type: schema.Map, Keys: prim(schema.Int32, false), Values: prim(schema.String, true)}},
	)
	cs["maps"] = goldenCase{maps, schema.NewStruct(maps).
		Set("bystr", []schema.MapEntry{{Key: "z", Value: int64(1)}, {Key: "a"}, {Key: "m\"q", Value: int64(-3)}}).
		Set("byint", []schema.MapEntry{{Key: int32(2), Value: "two"}, {Key: int32(-1)}})}

	cs["unicode"] = goldenCase{prim(schema.String, false), "a\x00\x01\x1f\b\t\n\f\r\"\\/\x7f\u0080\u00e9\u2028\u4e2d\U0001F600\uffff end"}
	cs["optional_null"] = goldenCase{prim(schema.String, true), nil}
	cs["default_null"] = goldenCase{withDefault(prim(schema.String, false), "d"), nil}
	cs["required_null"] = goldenCase{prim(schema.String, false), nil}
	cs["tombstone"] = goldenCase{nil, nil}
	cs["schemaless"] = goldenCase{nil, []schema.MapEntry{{Key: "a", Value: int64(1)}, {Key: "b", Value: []any{true, "x", nil, 2.5}}, {Key: "c"}}}
	cs["schemaless_intkeys"] = goldenCase{nil, []schema.MapEntry{{Key: int32(1), Value: "x"}}}

	logical := structOf("test.Logical", false,
		schema.Field{Name: "date", Schema: &schema.Schema{Type: schema.Int32, Name: schema.DateName, Version: 1}},
		schema.Field{Name: "time", Schema: &schema.Schema{Type: schema.Int32, Name: schema.TimeName, Version: 1}},
		schema.Field{Name: "ts", Schema: &schema.Schema{Type: schema.Int64, Name: schema.TimestampName, Version: 1}},
		schema.Field{Name: "tsdef", Schema: withDefault(&schema.Schema{Type: schema.Int64, Optional: true, Name: schema.TimestampName, Version: 1}, time.UnixMilli(0))},
	)
	cs["logical"] = goldenCase{logical, schema.NewStruct(logical).Set("date", time.UnixMilli(19000*millisPerDay)).
		Set("time", int32(45296789)).Set("ts", int64(-1234567))}

	snapshot := withDefault(&schema.Schema{Type: schema.String, Optional: true, Name: "io.debezium.data.Enum", Version: 1,
		Parameters: []schema.Param{{Key: "allowed", Value: "true,first,false"}, {Key: "b", Value: "2"}}}, "false")
	params := structOf("test.Params", false,
		schema.Field{Name: "snapshot", Schema: snapshot},
		schema.Field{Name: "empty", Schema: &schema.Schema{Type: schema.String, Optional: true, Parameters: []schema.Param{}}},
	)
	cs["params"] = goldenCase{params, schema.NewStruct(params)}
	return cs
}

// TestEncodeMatchesJsonConverter compares against bytes produced by Kafka Connect 4.4.0's JsonConverter.
func TestEncodeMatchesJsonConverter(t *testing.T) {
	cases := goldenCases()
	f, err := os.Open("testdata/converter_golden.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		parts := strings.Split(sc.Text(), "\t")
		if len(parts) != 3 {
			t.Fatalf("bad golden line %q", sc.Text())
		}
		name, cfgName, want := parts[0], parts[1], parts[2]
		gc, ok := cases[name]
		if !ok {
			t.Fatalf("golden case %q has no Go twin", name)
		}
		seen[name] = true
		conv, ok := goldenConfigs[cfgName]
		if !ok {
			t.Fatalf("golden config %q unknown", cfgName)
		}
		t.Run(name+"/"+cfgName, func(t *testing.T) {
			got, err := conv.Encode(gc.schema, gc.value)
			switch want {
			case "ERROR":
				if err == nil {
					t.Fatalf("want an error, got %s", got)
				}
			case "TOMBSTONE":
				if err != nil || got != nil {
					t.Fatalf("want a tombstone, got %q, %v", got, err)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				wantBytes, _ := base64.StdEncoding.DecodeString(want)
				if string(got) != string(wantBytes) {
					t.Fatalf("bytes differ\n got: %s\nwant: %s", got, wantBytes)
				}
			}
		})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for name := range cases {
		if !seen[name] {
			t.Errorf("Go case %q has no golden vector", name)
		}
	}
}

func TestEncodeAppendKeepsPrefixAndLeavesDstOnError(t *testing.T) {
	c := New()
	s := prim(schema.Int32, false)
	out, err := c.EncodeAppend([]byte("prefix:"), s, int32(7))
	if err != nil || string(out) != `prefix:{"schema":{"type":"int32","optional":false},"payload":7}` {
		t.Fatalf("got %q, %v", out, err)
	}
	out, err = c.EncodeAppend([]byte("prefix:"), s, "not an int")
	if !errors.Is(err, ErrValueType) || string(out) != "prefix:" {
		t.Fatalf("got %q, %v", out, err)
	}
	out, err = c.EncodeAppend([]byte("prefix:"), nil, nil)
	if err != nil || string(out) != "prefix:" {
		t.Fatalf("tombstone: got %q, %v", out, err)
	}
}

func TestEncodeErrorsNameThePath(t *testing.T) {
	inner := structOf("in", false, schema.Field{Name: "id", Schema: prim(schema.Int64, false)})
	outer := structOf("out", false, schema.Field{Name: "after", Schema: inner})
	_, err := New().Encode(outer, schema.NewStruct(outer).Set("after", schema.NewStruct(inner).Set("id", int32(1))))
	if !errors.Is(err, ErrValueType) || !strings.Contains(err.Error(), `field "after": field "id"`) {
		t.Fatalf("got %v", err)
	}
	_, err = New().Encode(outer, schema.NewStruct(outer))
	if !errors.Is(err, ErrNullRequired) {
		t.Fatalf("got %v", err)
	}
}

func TestEncodeRejectsMisshapenValues(t *testing.T) {
	s := structOf("s", false, schema.Field{Name: "a", Schema: prim(schema.Int32, true)})
	other := structOf("o", false, schema.Field{Name: "a", Schema: prim(schema.Int32, true)}, schema.Field{Name: "b", Schema: prim(schema.Int32, true)})
	for name, v := range map[string]any{
		"struct of another shape": schema.NewStruct(other),
		"too few values":          &schema.Struct{Schema: s},
		"map instead of struct":   []schema.MapEntry{},
	} {
		if _, err := New().Encode(s, v); !errors.Is(err, ErrValueType) {
			t.Errorf("%s: got %v", name, err)
		}
	}
	if _, err := New().Encode(&schema.Schema{Type: "int128"}, int64(1)); !errors.Is(err, ErrUnknownType) {
		t.Errorf("unknown type: got %v", err)
	}
	if _, err := New().Encode(nil, schema.NewStruct(s)); !errors.Is(err, ErrValueType) {
		t.Errorf("schemaless struct: got %v", err)
	}
	// A converter's error becomes a task's trace (shown by /status): it names the type, not the row's value.
	if _, err := New().Encode(&schema.Schema{Type: schema.Int32, Name: schema.DateName}, time.UnixMilli(1)); !errors.Is(err, ErrValueType) ||
		strings.Contains(err.Error(), "1970") {
		t.Errorf("date with a time of day: got %v", err)
	}
	mapSchema := &schema.Schema{Type: schema.Map, Keys: prim(schema.String, false), Values: prim(schema.Int32, false)}
	if _, err := New().Encode(mapSchema, []schema.MapEntry{{Key: "row-data-key", Value: "not an int"}}); !errors.Is(err, ErrValueType) ||
		strings.Contains(err.Error(), "row-data-key") {
		t.Errorf("map value of the wrong type: got %v", err)
	}
}

func TestFromConfig(t *testing.T) {
	c, err := FromConfig(map[string]string{"schemas.enable": " FALSE", "decimal.format": "numeric", "replace.null.with.default": "false", "other": "x"})
	if err != nil {
		t.Fatal(err)
	}
	if c != (Converter{SchemasEnable: false, DecimalFormat: Numeric, ReplaceNullWithDefault: false}) {
		t.Fatalf("got %+v", c)
	}
	if c, err := FromConfig(nil); err != nil || c != New() {
		t.Fatalf("defaults: got %+v, %v", c, err)
	}
	for key, val := range map[string]string{"schemas.enable": "yes", "decimal.format": "HEX", "replace.null.with.default": ""} {
		_, err := FromConfig(map[string]string{key: val})
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), `"`+val+`"`) {
			t.Errorf("%s=%q: got %v", key, val, err)
		}
	}
}

func TestInvalidUTF8BecomesReplacementCharacter(t *testing.T) {
	got := string(appendJSONString(nil, "a\xffb\xe2\x82"))
	if want := "\"a\uFFFDb\uFFFD\uFFFD\""; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestSchemaJSONIsRenderedOnceAndDroppedWithItsSchema(t *testing.T) {
	c := New()
	s := structOf("cache.Test", false, schema.Field{Name: "a", Schema: prim(schema.Int32, true)})
	first, err := c.schemaJSON(s)
	if err != nil {
		t.Fatal(err)
	}
	second, _ := c.schemaJSON(s)
	if &first[0] != &second[0] {
		t.Fatal("schema JSON rendered twice")
	}
	numeric := c
	numeric.DecimalFormat = Numeric
	if third, _ := numeric.schemaJSON(s); &third[0] == &first[0] {
		t.Fatal("settings that change defaults' rendering must not share a cache entry")
	}
	key := schemaCacheKey{schema: weak.Make(s), decimalFormat: c.DecimalFormat, replaceNull: c.ReplaceNullWithDefault}
	s = nil
	// Cleanups run on their own goroutine after a collection; give them bounded chances, no clock involved.
	for range 100 {
		runtime.GC()
		if _, ok := schemaCache.Load(key); !ok {
			return
		}
		runtime.Gosched()
	}
	t.Fatal("cache entry outlived its schema")
}

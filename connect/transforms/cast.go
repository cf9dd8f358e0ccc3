package transforms

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/javacompat"
	"github.com/cdcd/cdcd/source"
)

// cast is Kafka's Cast$Key or Cast$Value: "spec" lists field:type casts of a struct's (or schemaless map's)
// top-level fields, or a single type that the whole key or value is cast to. Casts go between the integer,
// floating-point, boolean and string types; bytes (and so a Decimal) cast only to string.
type cast struct {
	part
	fields                 map[string]schema.Type
	whole                  schema.Type // "" unless the spec is a single type
	replaceNullWithDefault bool
	schemas                schemaCache[*schema.Schema]
}

const castPurpose = "cast types"

// castOutputTypes are the types Cast casts to, by their spec names (Schema.Type names, any case).
var castOutputTypes = map[string]schema.Type{
	"INT8": schema.Int8, "INT16": schema.Int16, "INT32": schema.Int32, "INT64": schema.Int64,
	"FLOAT32": schema.Float32, "FLOAT64": schema.Float64, "BOOLEAN": schema.Boolean, "STRING": schema.String,
}

// castTypeNames are Connect's names of the types, for messages.
var castTypeNames = map[schema.Type]string{
	schema.Int8: "INT8", schema.Int16: "INT16", schema.Int32: "INT32", schema.Int64: "INT64",
	schema.Float32: "FLOAT32", schema.Float64: "FLOAT64", schema.Boolean: "BOOLEAN", schema.String: "STRING",
	schema.Bytes: "BYTES", schema.Array: "ARRAY", schema.Map: "MAP", schema.StructT: "STRUCT",
}

func newCast(s settings, p part) (transformation, error) {
	if _, err := s.required("spec"); err != nil {
		return nil, err
	}
	spec := s.list("spec")
	bad := func(problem string) error {
		return &ConfigError{Key: s.key("spec"), Value: s.str("spec", ""), Problem: problem}
	}
	if len(spec) == 0 {
		return nil, bad("Must specify at least one field to cast.")
	}
	t := &cast{part: p, fields: map[string]schema.Type{}}
	for _, mapping := range spec {
		parts := strings.Split(mapping, ":")
		if len(parts) > 2 {
			return nil, bad("Invalid rename mapping: " + mapping)
		}
		typeName := strings.TrimSpace(parts[len(parts)-1])
		typ, ok := castOutputTypes[strings.ToUpper(typeName)]
		if !ok {
			if _, known := schemaTypeByName(typeName); known {
				return nil, bad(fmt.Sprintf("Cast transformation does not support casting to %s; supported types are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]", strings.ToUpper(typeName)))
			}
			return nil, bad("Invalid type found in casting spec: " + typeName)
		}
		if len(parts) == 1 {
			t.whole = typ
		} else {
			t.fields[strings.TrimSpace(parts[0])] = typ
		}
	}
	if t.whole != "" && len(spec) > 1 {
		return nil, bad("Cast transformations that specify a type to cast the entire value to may only specify a single cast in their spec")
	}
	var err error
	if t.replaceNullWithDefault, err = replaceNullWithDefaultSetting(s); err != nil {
		return nil, err
	}
	return t, nil
}

func schemaTypeByName(name string) (schema.Type, bool) {
	for typ, n := range castTypeNames {
		if strings.EqualFold(n, name) {
			return typ, true
		}
	}
	return "", false
}

func (t *cast) apply(ev *source.Event) (bool, error) {
	sch, val := t.get(ev)
	if val == nil {
		return true, nil
	}
	if sch == nil {
		return true, t.applySchemaless(ev, val)
	}
	updated, err := t.schemas.get(sch, func() (*schema.Schema, error) { return t.updatedSchema(sch) })
	if err != nil {
		return false, err
	}
	if t.whole != "" {
		v, err := castValue(sch, val, t.whole)
		if err != nil {
			return false, err
		}
		t.set(ev, updated, v)
		return true, nil
	}
	st, err := requireStruct(val, castPurpose)
	if err != nil {
		return false, err
	}
	values := make([]any, len(st.Values))
	for i, f := range st.Schema.Fields {
		values[i] = structValue(st, i, t.replaceNullWithDefault)
		if typ, ok := t.fields[f.Name]; ok {
			if values[i], err = castValue(f.Schema, values[i], typ); err != nil {
				return false, err
			}
		}
	}
	t.set(ev, updated, &schema.Struct{Schema: updated, Values: values})
	return true, nil
}

func (t *cast) applySchemaless(ev *source.Event, val any) error {
	if t.whole != "" {
		v, err := castValue(nil, val, t.whole)
		if err == nil {
			t.set(ev, nil, v)
		}
		return err
	}
	m, err := requireMap(val, castPurpose)
	if err != nil {
		return err
	}
	out := newHashMap(m)
	for name, typ := range t.fields {
		v, err := castValue(nil, mapGet(m, name), typ)
		if err != nil {
			return err
		}
		out.put(name, v)
	}
	t.set(ev, nil, out.entries())
	return nil
}

// updatedSchema is Cast's getOrBuildSchema: a cast field gets a fresh schema of its new type, keeping its
// optionality and its default (cast too); a whole-value cast keeps the schema's name, version, doc and
// parameters on the new type.
func (t *cast) updatedSchema(s *schema.Schema) (*schema.Schema, error) {
	var out *schema.Schema
	if t.whole != "" {
		out = copyBasics(s)
		out.Type, out.Items, out.Keys, out.Values = t.whole, nil, nil, nil
	} else {
		if s.Type != schema.StructT {
			return nil, fmt.Errorf("only Struct objects supported for [%s], found: %s schema", castPurpose, s.Type)
		}
		out = copyBasics(s)
		for _, f := range s.Fields {
			typ, ok := t.fields[f.Name]
			if !ok {
				out.Fields = append(out.Fields, f)
				continue
			}
			fs := &schema.Schema{Type: typ, Optional: f.Schema.Optional}
			if f.Schema.HasDefault && f.Schema.Default != nil {
				d, err := castValue(f.Schema, f.Schema.Default, typ)
				if err != nil {
					return nil, err
				}
				fs.Default, fs.HasDefault = d, true
			}
			out.Fields = append(out.Fields, schema.Field{Name: f.Name, Schema: fs})
		}
	}
	out.Optional = s.Optional
	if s.HasDefault && s.Default != nil {
		d, err := castValue(s, s.Default, out.Type)
		if err != nil {
			return nil, err
		}
		out.Default, out.HasDefault = d, true
	}
	return out, nil
}

// castValue is Cast.castValueToType: s is the value's schema, nil for a schemaless value whose type is
// inferred from its class.
func castValue(s *schema.Schema, v any, target schema.Type) (any, error) {
	if v == nil {
		return nil, nil
	}
	if err := checkCastInput(s, v); err != nil {
		return nil, err
	}
	if s != nil && s.Name != "" {
		if target == schema.String {
			if tm, ok := connectTemporal(s, v); ok {
				return javaDateString(tm), nil
			}
		} else {
			var err error
			if v, err = logicalToInternal(s, v); err != nil {
				return nil, err
			}
		}
	}
	switch target {
	case schema.Int8, schema.Int16, schema.Int32, schema.Int64, schema.Float32, schema.Float64:
		return castToNumber(v, target)
	case schema.Boolean:
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			return strings.EqualFold(x, "true"), nil
		}
		if l, ok := javaLong(v); ok {
			return l != 0, nil
		}
	case schema.String:
		return castToString(v)
	}
	return nil, fmt.Errorf("unexpected type in Cast transformation: class %s", javaClassName(v))
}

// checkCastInput checks the value's type is one Cast casts from.
func checkCastInput(s *schema.Schema, v any) error {
	var typ schema.Type
	if s != nil {
		typ = s.Type
	} else {
		switch v.(type) {
		case bool:
			typ = schema.Boolean
		case int8:
			typ = schema.Int8
		case int16:
			typ = schema.Int16
		case int32:
			typ = schema.Int32
		case int64:
			typ = schema.Int64
		case float32:
			typ = schema.Float32
		case float64:
			typ = schema.Float64
		case string:
			typ = schema.String
		case []byte:
			typ = schema.Bytes
		case []any:
			typ = schema.Array
		case []schema.MapEntry:
			typ = schema.Map
		case *schema.Struct:
			typ = schema.StructT
		default:
			return fmt.Errorf("cast transformation was passed a value of type class %s which is not supported by Connect's data API", javaClassName(v))
		}
	}
	switch typ {
	case schema.Array, schema.Map, schema.StructT:
		return fmt.Errorf("cast transformation does not support casting from %s; supported types are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING, BYTES]", castTypeNames[typ])
	}
	return nil
}

func castToNumber(v any, target schema.Type) (any, error) {
	switch x := v.(type) {
	case bool:
		one := int64(0)
		if x {
			one = 1
		}
		return castNumber(one, zeroOfType(target))
	case string:
		return parseCastString(x, target)
	}
	n, err := castNumber(v, zeroOfType(target))
	if err != nil {
		return nil, fmt.Errorf("unexpected type in Cast transformation: class %s", javaClassName(v))
	}
	return n, nil
}

func zeroOfType(t schema.Type) any {
	switch t {
	case schema.Int8:
		return int8(0)
	case schema.Int16:
		return int16(0)
	case schema.Int32:
		return int32(0)
	case schema.Int64:
		return int64(0)
	case schema.Float32:
		return float32(0)
	}
	return float64(0)
}

// parseCastString is Byte.parseByte … Double.parseDouble: a string that is not a number of the target
// type fails the record.
func parseCastString(s string, target schema.Type) (any, error) {
	var out any
	var err error
	switch target {
	case schema.Int8:
		var n int64
		n, err = javacompat.ParseInteger(s, 8)
		out = int8(n)
	case schema.Int16:
		var n int64
		n, err = javacompat.ParseInteger(s, 16)
		out = int16(n)
	case schema.Int32:
		var n int64
		n, err = javacompat.ParseInteger(s, 32)
		out = int32(n)
	case schema.Int64:
		out, err = javacompat.ParseInteger(s, 64)
	case schema.Float32:
		var f float64
		f, err = javacompat.ParseDouble(s, 32)
		out = float32(f)
	default:
		out, err = javacompat.ParseDouble(s, 64)
	}
	if err != nil {
		// Kafka's message quotes the value; this one becomes a task's trace, shown by /status and /health,
		// so it names the type only and keeps the row's data out.
		return nil, fmt.Errorf("a string value is not a number of type %s (the value is not shown)", castTypeNames[target])
	}
	return out, nil
}

// castToString is Cast.castToString: Java's toString of the value, base64 for bytes.
func castToString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case int8, int16, int32, int64:
		l, _ := javaLong(x)
		return strconv.FormatInt(l, 10), nil
	case float32:
		return javacompat.FormatDouble(float64(x), 32), nil
	case float64:
		return javacompat.FormatDouble(x, 64), nil
	case []byte:
		return base64.StdEncoding.EncodeToString(x), nil
	case schema.Decimal:
		return javacompat.FormatBigDecimal(x.Unscaled, x.Scale), nil
	case time.Time:
		return javaDateString(x), nil
	}
	return "", fmt.Errorf("unexpected type in Cast transformation: class %s", javaClassName(v))
}

// javaDateString is Values.dateFormatFor(d).format(d), in UTC: a time of day for instants before the end
// of the epoch's first day, a date for midnights, a timestamp otherwise. (Connect formats in the worker
// JVM's default time zone; cdcd takes it to be UTC, as containers usually run.)
func javaDateString(t time.Time) string {
	ms := t.UnixMilli()
	switch {
	case ms < millisPerDay:
		return isoTimeFormat.format(t)
	case ms%millisPerDay == 0:
		return isoDateFormat.format(t)
	}
	return isoTimestampFormat.format(t)
}

// Connect's ISO 8601 formats (Values.ISO_8601_*_FORMAT_PATTERN).
var (
	isoDateFormat      = mustJavaDateFormat("yyyy-MM-dd")
	isoTimeFormat      = mustJavaDateFormat("HH:mm:ss.SSS'Z'")
	isoTimestampFormat = mustJavaDateFormat("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'")
)

// mustJavaDateFormat compiles one of cdcd's own constant patterns.
func mustJavaDateFormat(pattern string) *javaDateFormat {
	f, err := compileJavaDateFormat(pattern)
	if err != nil {
		panic("transforms: bad built-in date pattern " + pattern + ": " + err.Error())
	}
	return f
}

const millisPerDay = 24 * 60 * 60 * 1000

// connectTemporal returns the instant a Connect Date, Time or Timestamp value stands for; cdcd holds those
// either as a time.Time or in their integer encoding (days, milliseconds of the day, epoch milliseconds).
func connectTemporal(s *schema.Schema, v any) (time.Time, bool) {
	if tm, ok := v.(time.Time); ok {
		return tm, isConnectTemporal(s)
	}
	switch s.Name {
	case schema.DateName:
		if d, ok := v.(int32); ok {
			return time.UnixMilli(int64(d) * millisPerDay).UTC(), true
		}
	case schema.TimeName:
		if ms, ok := v.(int32); ok {
			return time.UnixMilli(int64(ms)).UTC(), true
		}
	case schema.TimestampName:
		if ms, ok := v.(int64); ok {
			return time.UnixMilli(ms).UTC(), true
		}
	}
	return time.Time{}, false
}

func isConnectTemporal(s *schema.Schema) bool {
	return s != nil && (s.Name == schema.DateName || s.Name == schema.TimeName || s.Name == schema.TimestampName)
}

// logicalToInternal is Cast.encodeLogicalType: a Connect Date, Time or Timestamp becomes its integer
// encoding, with the checks of their fromLogical.
func logicalToInternal(s *schema.Schema, v any) (any, error) {
	tm, ok := connectTemporal(s, v)
	if !ok {
		return v, nil
	}
	ms := tm.UnixMilli()
	switch s.Name {
	case schema.DateName:
		if ms%millisPerDay != 0 {
			return nil, fmt.Errorf("kafka Connect Date type should not have any time fields set to non-zero values")
		}
		return int32(ms / millisPerDay), nil
	case schema.TimeName:
		if ms < 0 || ms >= millisPerDay {
			return nil, fmt.Errorf("kafka Connect Time type should not have any date fields set to non-zero values")
		}
		return int32(ms), nil
	}
	return ms, nil
}

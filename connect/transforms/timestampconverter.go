package transforms

import (
	"fmt"
	"strings"
	"time"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
)

// Timestamp representations TimestampConverter converts between (target.type values).
const (
	tsString    = "string"
	tsUnix      = "unix"
	tsDate      = "Date"
	tsTime      = "Time"
	tsTimestamp = "Timestamp"
)

// timestampConverter is Kafka's TimestampConverter$Key or $Value: it converts the whole key or value, or
// one of its top-level fields ("field"), between a formatted string, Unix time, and Connect's Date, Time
// and Timestamp. Connect's temporal types are produced in their integer encoding (days, milliseconds of the
// day, epoch milliseconds), which every converter writes as Connect does.
type timestampConverter struct {
	part
	field                  string
	target                 string
	format                 *javaDateFormat // nil when "format" is blank
	unixPrecision          string
	replaceNullWithDefault bool
	schemas                schemaCache[*schema.Schema]
}

const timestampConverterPurpose = "converting timestamp formats"

func newTimestampConverter(s settings, p part) (transformation, error) {
	t := &timestampConverter{part: p, field: s.str("field", "")}
	var err error
	if _, err = s.required("target.type"); err != nil {
		return nil, err
	}
	if t.target, err = validString(s, "target.type", "", tsString, tsUnix, tsDate, tsTime, tsTimestamp); err != nil {
		return nil, err
	}
	if t.unixPrecision, err = validString(s, "unix.precision", "milliseconds", "nanoseconds", "microseconds", "milliseconds", "seconds"); err != nil {
		return nil, err
	}
	if t.replaceNullWithDefault, err = replaceNullWithDefaultSetting(s); err != nil {
		return nil, err
	}
	pattern := s.str("format", "")
	if t.target == tsString && pattern == "" {
		return nil, &ConfigError{Key: s.key("format"), Problem: "TimestampConverter requires format option to be specified when using string timestamps"}
	}
	if pattern != "" {
		if t.format, err = compileJavaDateFormat(pattern); err != nil {
			return nil, &ConfigError{Key: s.key("format"), Value: pattern,
				Problem: "TimestampConverter requires a SimpleDateFormat-compatible pattern for string timestamps: " + err.Error()}
		}
	}
	return t, nil
}

// validString is ConfigDef.ValidString: one of allowed, exactly (case matters).
func validString(s settings, name, def string, allowed ...string) (string, error) {
	v, ok := s.lookup(name)
	if !ok {
		return def, nil
	}
	for _, a := range allowed {
		if v == a {
			return v, nil
		}
	}
	return "", &ConfigError{Key: s.key(name), Value: v, Problem: "String must be one of: " + strings.Join(allowed, ", ")}
}

func (t *timestampConverter) apply(ev *source.Event) (bool, error) {
	sch, val := t.get(ev)
	if sch == nil {
		return true, t.applySchemaless(ev, val)
	}
	if t.field == "" {
		v, err := t.convert(val, sch)
		if err != nil {
			return false, err
		}
		t.set(ev, t.targetSchema(sch.Optional), v)
		return true, nil
	}
	var st *schema.Struct
	if val != nil {
		var err error
		if st, err = requireStruct(val, timestampConverterPurpose); err != nil {
			return false, err
		}
	}
	updated, err := t.schemas.get(sch, func() (*schema.Schema, error) { return t.updatedSchema(sch) })
	if err != nil {
		return false, err
	}
	out, err := t.convertStruct(st, updated)
	if err != nil {
		return false, err
	}
	if out == nil {
		t.set(ev, updated, nil)
	} else {
		t.set(ev, updated, out)
	}
	return true, nil
}

func (t *timestampConverter) applySchemaless(ev *source.Event, val any) error {
	if val == nil || t.field == "" {
		v, err := t.convert(val, nil)
		if err == nil {
			t.set(ev, nil, v)
		}
		return err
	}
	m, err := requireMap(val, timestampConverterPurpose)
	if err != nil {
		return err
	}
	out := newHashMap(m)
	v, err := t.convert(mapGet(m, t.field), nil)
	if err != nil {
		return err
	}
	out.put(t.field, v)
	t.set(ev, nil, out.entries())
	return nil
}

func (t *timestampConverter) updatedSchema(s *schema.Schema) (*schema.Schema, error) {
	if s.Type != schema.StructT {
		return nil, fmt.Errorf("only Struct objects supported for [%s], found: %s schema", timestampConverterPurpose, s.Type)
	}
	out := copyBasics(s)
	for _, f := range s.Fields {
		if f.Name == t.field {
			f = schema.Field{Name: f.Name, Schema: t.targetSchema(f.Schema.Optional)}
		}
		out.Fields = append(out.Fields, f)
	}
	out.Optional = s.Optional
	if def, ok := s.Default.(*schema.Struct); ok && s.HasDefault && def != nil {
		d, err := t.convertStruct(def, out)
		if err != nil {
			return nil, err
		}
		out.Default, out.HasDefault = d, true
	}
	return out, nil
}

// convertStruct converts the field of st, a struct of the input schema, into a struct of updated.
func (t *timestampConverter) convertStruct(st *schema.Struct, updated *schema.Schema) (*schema.Struct, error) {
	if st == nil {
		return nil, nil
	}
	values := make([]any, len(st.Values))
	for i, f := range st.Schema.Fields {
		values[i] = structValue(st, i, t.replaceNullWithDefault)
		if f.Name == t.field {
			var err error
			if values[i], err = t.convert(values[i], f.Schema); err != nil {
				return nil, err
			}
		}
	}
	return &schema.Struct{Schema: updated, Values: values}, nil
}

// targetSchema is the schema of target.type.
func (t *timestampConverter) targetSchema(optional bool) *schema.Schema {
	var s *schema.Schema
	switch t.target {
	case tsString:
		s = requiredStringSchema
	case tsUnix:
		s = &schema.Schema{Type: schema.Int64}
	case tsDate:
		s = schema.ConnectDate()
	case tsTime:
		s = schema.ConnectTime()
	default:
		s = timestampSchema
	}
	return s.WithOptional(optional)
}

// convert reads v as the representation its schema names (inferred from its Go type when schemaless) and
// returns it in target.type's.
func (t *timestampConverter) convert(v any, s *schema.Schema) (any, error) {
	if v == nil {
		return nil, nil
	}
	from, err := timestampType(s, v)
	if err != nil {
		return nil, err
	}
	instant, err := t.toInstant(from, v, s)
	if err != nil {
		return nil, err
	}
	ms := instant.UnixMilli()
	switch t.target {
	case tsString:
		return t.format.format(instant), nil
	case tsUnix:
		switch t.unixPrecision {
		case "seconds": // TimeUnit truncates toward zero
			return ms / 1000, nil
		case "microseconds":
			return ms * 1000, nil
		case "nanoseconds":
			return ms * 1000000, nil
		}
		return ms, nil
	case tsDate:
		return int32(floorDiv(ms, millisPerDay)), nil
	case tsTime:
		return int32(ms - floorDiv(ms, millisPerDay)*millisPerDay), nil
	}
	return ms, nil
}

// floorDiv is Math.floorDiv: the day of an instant, as Calendar's UTC fields give it.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// timestampType is TimestampConverter's timestampTypeFromSchema, or inferTimestampType when s is nil.
func timestampType(s *schema.Schema, v any) (string, error) {
	if s == nil {
		switch v.(type) {
		case time.Time:
			return tsTimestamp, nil
		case int64:
			return tsUnix, nil
		case string:
			return tsString, nil
		}
		return "", fmt.Errorf("TimestampConverter does not support class %s objects as timestamps", javaClassName(v))
	}
	switch {
	case s.Name == schema.TimestampName:
		return tsTimestamp, nil
	case s.Name == schema.DateName:
		return tsDate, nil
	case s.Name == schema.TimeName:
		return tsTime, nil
	case s.Type == schema.String:
		return tsString, nil
	case s.Type == schema.Int64:
		return tsUnix, nil
	}
	return "", fmt.Errorf("schema %s does not correspond to a known timestamp type format", describeSchema(s))
}

func describeSchema(s *schema.Schema) string {
	if s.Name != "" {
		return fmt.Sprintf("Schema{%s:%s}", s.Name, castTypeNames[s.Type])
	}
	return fmt.Sprintf("Schema{%s}", castTypeNames[s.Type])
}

// toInstant is the source translator's toRaw.
func (t *timestampConverter) toInstant(from string, v any, s *schema.Schema) (time.Time, error) {
	switch from {
	case tsString:
		str, ok := v.(string)
		if !ok {
			return time.Time{}, fmt.Errorf("expected string timestamp to be a String, but found class %s", javaClassName(v))
		}
		if t.format == nil {
			return time.Time{}, fmt.Errorf("TimestampConverter requires format option to be specified when using string timestamps")
		}
		tm, err := t.format.parse(str)
		if err != nil {
			return time.Time{}, fmt.Errorf("could not parse timestamp: value (%s) does not match pattern (%s): %w", str, t.format.pattern, err)
		}
		return tm, nil
	case tsUnix:
		n, ok := v.(int64)
		if !ok {
			return time.Time{}, fmt.Errorf("expected Unix timestamp to be a Long, but found class %s", javaClassName(v))
		}
		// TimeUnit conversions truncate toward zero.
		switch t.unixPrecision {
		case "seconds":
			return time.UnixMilli(n * 1000).UTC(), nil
		case "microseconds":
			return time.UnixMilli(n / 1000).UTC(), nil
		case "nanoseconds":
			return time.UnixMilli(n / 1000000).UTC(), nil
		}
		return time.UnixMilli(n).UTC(), nil
	}
	tm, ok := connectTemporal(s, v)
	if !ok {
		if tt, isTime := v.(time.Time); isTime {
			return tt, nil
		}
		return time.Time{}, fmt.Errorf("expected %s to be a java.util.Date, but found class %s", from, javaClassName(v))
	}
	return tm, nil
}

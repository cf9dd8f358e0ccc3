package transforms

import (
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/source"
)

func TestJavaDateFormatFormats(t *testing.T) {
	at := time.Date(2024, time.March, 5, 14, 7, 9, 42_000_000, time.UTC)
	cases := []struct{ pattern, want string }{
		{"yyyyMMdd", "20240305"},
		{"yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2024-03-05T14:07:09.042Z"},
		{"EEE, d MMM yyyy HH:mm:ss Z", "Tue, 5 Mar 2024 14:07:09 +0000"},
		{"EEEE MMMM yy G", "Tuesday March 24 AD"},
		{"h:mm a, K k", "2:07 PM, 2 14"},
		{"D F u z zzzz", "65 1 2 UTC Coordinated Universal Time"},
		{"'o''clock' ''", "o'clock '"},
		{"y S SSSSS", "2024 42 00042"},
	}
	for _, tc := range cases {
		f, err := compileJavaDateFormat(tc.pattern)
		if err != nil {
			t.Fatalf("%q: %v", tc.pattern, err)
		}
		if got := f.format(at); got != tc.want {
			t.Errorf("format %q = %q, want %q", tc.pattern, got, tc.want)
		}
	}
	midnight := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	f, _ := compileJavaDateFormat("hh a kk")
	if got := f.format(midnight); got != "12 AM 24" {
		t.Errorf("midnight = %q", got)
	}
	for _, bad := range []string{"yyyy-MM-dd'T", "yyyy-ww", "YYYY", "bb"} {
		if _, err := compileJavaDateFormat(bad); err == nil {
			t.Errorf("pattern %q accepted", bad)
		}
	}
}

func TestJavaDateFormatUsesTheJulianCalendarBeforeTheReform(t *testing.T) {
	f, _ := compileJavaDateFormat("EEE, d MMM yyyy G HH:mm:ss.SSS D")
	// PostgreSQL's -infinity as Debezium's io.debezium.time.Timestamp; Kafka Connect 4.4 wrote this.
	if got := f.format(time.UnixMilli(-9223372036832400)); got != "Sun, 10 Dec 290303 BC 19:59:27.600 344" {
		t.Errorf("-infinity = %q", got)
	}
	day, _ := compileJavaDateFormat("yyyy-MM-dd EEE")
	lastJulian := time.Date(1582, 10, 14, 0, 0, 0, 0, time.UTC) // proleptic Gregorian
	if got := day.format(lastJulian); got != "1582-10-04 Thu" {
		t.Errorf("the day before the reform = %q", got)
	}
	if got := day.format(lastJulian.AddDate(0, 0, 1)); got != "1582-10-15 Fri" {
		t.Errorf("the reform = %q", got)
	}
	for text, want := range map[string]time.Time{"1582-10-04": lastJulian, "0001-01-01": time.Date(0, 12, 30, 0, 0, 0, 0, time.UTC),
		"1582-10-15": lastJulian.AddDate(0, 0, 1), "1500-02-29": time.Date(1500, 3, 10, 0, 0, 0, 0, time.UTC)} {
		if got, err := isoDateFormat.parse(text); err != nil || !got.Equal(want) {
			t.Errorf("parse %s = %v, %v; want %v", text, got, err, want)
		}
	}
}

func TestJavaDateFormatParses(t *testing.T) {
	cases := []struct {
		pattern, text string
		want          time.Time
	}{
		{"yyyy-MM-dd HH:mm:ss.SSS", "2024-03-05 14:07:09.042", time.Date(2024, 3, 5, 14, 7, 9, 42e6, time.UTC)},
		{"yyyyMMdd", "20240305", time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC)},
		{"yyyy-MM-dd", "2024-02-30", time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)},                   // lenient rollover
		{"yyyy-MM-dd", "2024-3-5 trailing", time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC)},            // text after the pattern is ignored
		{"dd MMM yyyy h:mm a", "05 mar 2024 2:07 PM", time.Date(2024, 3, 5, 14, 7, 0, 0, time.UTC)}, // names ignore case
		{"yyyy-MM-dd'T'HH:mmXXX", "2024-03-05T14:07+02:00", time.Date(2024, 3, 5, 12, 7, 0, 0, time.UTC)},
		{"yyyy-MM-dd HH:mm Z", "2024-03-05 14:07 -0130", time.Date(2024, 3, 5, 15, 37, 0, 0, time.UTC)},
		{"EEE, d MMMM yyyy", "Tue, 5 March 2024", time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC)},
		{"yy-MM-dd", "24-03-05", time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC)},
		{"yy-MM-dd", "70-03-05", time.Date(1970, 3, 5, 0, 0, 0, 0, time.UTC)},
	}
	for _, tc := range cases {
		f, err := compileJavaDateFormat(tc.pattern)
		if err != nil {
			t.Fatalf("%q: %v", tc.pattern, err)
		}
		f.now = func() time.Time { return time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC) }
		got, err := f.parse(tc.text)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("parse %q with %q = %v, %v; want %v", tc.text, tc.pattern, got, err, tc.want)
		}
	}
	f, _ := compileJavaDateFormat("yyyy-MM-dd")
	for _, bad := range []string{"", "2024/03/05", "March"} {
		if _, err := f.parse(bad); err == nil {
			t.Errorf("parse %q succeeded", bad)
		}
	}
}

// tsRow is a row with a Connect Timestamp, a Debezium MicroTimestamp, a date string and a Connect Date.
var tsRowSchema = &schema.Schema{Type: schema.StructT, Name: "ts.Value", Fields: []schema.Field{
	{Name: "created", Schema: schema.ConnectTimestamp().WithOptional(true)},
	{Name: "micros", Schema: schema.MicroTimestamp()},
	{Name: "text", Schema: &schema.Schema{Type: schema.String}},
	{Name: "day", Schema: schema.ConnectDate()},
}}

func tsEvent() source.Event {
	ms := time.Date(2024, 3, 5, 14, 7, 9, 42e6, time.UTC).UnixMilli()
	return source.Event{Topic: "ts", ValueSchema: tsRowSchema, Value: &schema.Struct{Schema: tsRowSchema,
		Values: []any{ms, ms*1000 + 999, "05/03/2024 14:07", int32(19787)}}}
}

func TestTimestampConverterFields(t *testing.T) {
	ms := time.Date(2024, 3, 5, 14, 7, 9, 42e6, time.UTC).UnixMilli()
	cases := []struct {
		kv     []string
		field  string
		want   any
		schema *schema.Schema
	}{
		{[]string{"field", "created", "target.type", "string", "format", "yyyy-MM-dd HH:mm:ss.SSS"}, "created", "2024-03-05 14:07:09.042",
			optionalStringSchema},
		{[]string{"field", "created", "target.type", "unix", "unix.precision", "seconds"}, "created", ms / 1000,
			&schema.Schema{Type: schema.Int64, Optional: true}},
		{[]string{"field", "created", "target.type", "Date"}, "created", int32(19787), schema.ConnectDate().WithOptional(true)},
		{[]string{"field", "created", "target.type", "Time"}, "created", int32(ms % millisPerDay), schema.ConnectTime().WithOptional(true)},
		// A Debezium MicroTimestamp is an int64 to Kafka: Unix time in unix.precision.
		{[]string{"field", "micros", "target.type", "Timestamp", "unix.precision", "microseconds"}, "micros", ms, timestampSchema},
		{[]string{"field", "text", "target.type", "Timestamp", "format", "dd/MM/yyyy HH:mm"}, "text",
			time.Date(2024, 3, 5, 14, 7, 0, 0, time.UTC).UnixMilli(), timestampSchema},
		{[]string{"field", "day", "target.type", "unix"}, "day", time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC).UnixMilli(),
			&schema.Schema{Type: schema.Int64}},
	}
	for _, tc := range cases {
		out := mustTransformOne(t, "TimestampConverter$Value", tsEvent(), tc.kv...)
		st := valueStruct(t, out)
		if got := st.Get(tc.field); got != tc.want {
			t.Errorf("%v: %s = %#v, want %#v", tc.kv, tc.field, got, tc.want)
		}
		fs := out.ValueSchema.Field(tc.field)
		if fs.Type != tc.schema.Type || fs.Name != tc.schema.Name || fs.Optional != tc.schema.Optional {
			t.Errorf("%v: field schema %+v, want %+v", tc.kv, fs, tc.schema)
		}
		if out.ValueSchema.Name != "ts.Value" {
			t.Errorf("the struct lost its name")
		}
	}
	if _, err := transformOne(t, "TimestampConverter$Value", tsEvent(), "field", "text", "target.type", "unix", "format", "yyyy-MM-dd"); err == nil ||
		!strings.Contains(err.Error(), "could not parse timestamp") {
		t.Errorf("unparseable text: %v", err)
	}
}

func TestTimestampConverterWholeValue(t *testing.T) {
	ev := source.Event{KeySchema: &schema.Schema{Type: schema.Int64, Optional: true}, Key: int64(1709647629042)}
	out := mustTransformOne(t, "TimestampConverter$Key", ev, "target.type", "string", "format", "yyyy-MM-dd")
	if out.Key != "2024-03-05" || out.KeySchema.Type != schema.String || !out.KeySchema.Optional {
		t.Errorf("key = %#v %+v", out.Key, out.KeySchema)
	}
	schemaless := mustTransformOne(t, "TimestampConverter$Value", source.Event{Value: []schema.MapEntry{{Key: "at", Value: "2024-03-05"}}},
		"field", "at", "target.type", "unix", "format", "yyyy-MM-dd")
	if got := mapGet(schemaless.Value.([]schema.MapEntry), "at"); got != int64(1709596800000) {
		t.Errorf("schemaless = %v", got)
	}
	tomb := mustTransformOne(t, "TimestampConverter$Value", tombstone(), "target.type", "unix")
	if tomb.Value != nil {
		t.Errorf("tombstone = %v", tomb.Value)
	}
	if _, err := transformOne(t, "TimestampConverter$Value", rowEvent(row(1, "a", nil)), "field", "id", "target.type", "unix"); err == nil ||
		!strings.Contains(err.Error(), "does not correspond to a known timestamp type") {
		t.Errorf("an int32 field: %v", err)
	}
	for _, tc := range []struct{ kv []string }{
		{[]string{"target.type", "string"}},
		{[]string{"target.type", "timestamp"}},
		{[]string{"target.type", "unix", "unix.precision", "minutes"}},
		{[]string{"target.type", "unix", "format", "yyyy-bb"}},
		{[]string{"field", "x"}},
	} {
		configError(t, "TimestampConverter$Value", tc.kv...)
	}
}

func TestTimestampRouter(t *testing.T) {
	// Debezium's records carry no timestamp when transforms run: Kafka's TimestampRouter fails them.
	if _, err := transformOne(t, "TimestampRouter", rowEvent(row(1, "a", nil))); err == nil ||
		!strings.Contains(err.Error(), "timestamp missing") {
		t.Errorf("TimestampRouter on a Debezium record: %v", err)
	}
	c := mustChain(t, map[string]string{"transforms": "r", "transforms.r.type": kafkaSMT + "TimestampRouter",
		"transforms.r.topic.format": "${topic}_${timestamp}_${topic}", "transforms.r.timestamp.format": "yyyy-MM"})
	router := c.stages[0].transform.(*timestampRouter)
	if got := router.route("orders", time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC)); got != "orders_2024-03_orders" {
		t.Errorf("route = %q", got)
	}
	defaults := mustChain(t, map[string]string{"transforms": "r", "transforms.r.type": kafkaSMT + "TimestampRouter"})
	if got := defaults.stages[0].transform.(*timestampRouter).route("t", time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC)); got != "t-20240305" {
		t.Errorf("default route = %q", got)
	}
	configError(t, "TimestampRouter", "timestamp.format", "yyyy'")
}

func TestTimestampConverterConvertsAStructDefault(t *testing.T) {
	inner := &schema.Schema{Type: schema.StructT, Name: "d", Fields: []schema.Field{{Name: "at", Schema: &schema.Schema{Type: schema.Int64}}}}
	withDefault := *inner
	withDefault.Optional, withDefault.HasDefault = true, true
	withDefault.Default = &schema.Struct{Schema: inner, Values: []any{int64(86400000)}}
	ev := source.Event{ValueSchema: &withDefault}
	out := mustTransformOne(t, "TimestampConverter$Value", ev, "field", "at", "target.type", "Date")
	def, ok := out.ValueSchema.Default.(*schema.Struct)
	if !ok || def.Values[0] != int32(1) || def.Schema != out.ValueSchema || !out.ValueSchema.Optional {
		t.Errorf("converted default = %#v in %+v", out.ValueSchema.Default, out.ValueSchema)
	}
}

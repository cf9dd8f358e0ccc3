package avro

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	hamba "github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/cdcd/cdcd/schema"
)

// newRegistry starts srfake over real HTTP and counts the requests that reach it, by "METHOD path".
func newRegistry(t *testing.T, opts ...srfake.Option) (*srfake.Registry, *requestCounter) {
	t.Helper()
	reg := srfake.New(opts...)
	t.Cleanup(reg.Close)
	counter := &requestCounter{}
	reg.Intercept(func(_ http.ResponseWriter, r *http.Request) bool {
		counter.add(r.Method + " " + r.URL.Path)
		return false
	})
	return reg, counter
}

type requestCounter struct {
	mu    sync.Mutex
	paths []string
}

func (c *requestCounter) add(p string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paths = append(c.paths, p)
}

func (c *requestCounter) count(p string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, q := range c.paths {
		if q == p {
			n++
		}
	}
	return n
}

func (c *requestCounter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.paths)
}

// newConverter builds a converter from settings, as the worker does, with retries that do not sleep.
func newConverter(t *testing.T, isKey bool, settings map[string]string) *Converter {
	t.Helper()
	cfg, err := FromConfig(isKey, settings)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.registry.sleep = func(context.Context, time.Duration) error { return nil }
	return c
}

// customersEvent is an update of pg1.public.customers with every envelope field set, except
// source.snapshot (null: streaming), which is written as its default "false".
func customersEvent(env *schema.Schema) *schema.Struct {
	rowSchema := env.Field("before")
	src := schema.NewStruct(schema.PostgresSourceSchema()).
		Set("version", schema.DebeziumVersion).Set("connector", "postgresql").Set("name", "pg1").
		Set("ts_ms", int64(1700000000123)).Set("db", "app").Set("sequence", `["24023119","24023128"]`).
		Set("ts_us", int64(1700000000123456)).Set("ts_ns", int64(1700000000123456000)).
		Set("schema", "public").Set("table", "customers").Set("txId", int64(555)).Set("lsn", int64(24023128))
	return schema.NewStruct(env).
		Set("before", schema.NewStruct(rowSchema).Set("id", int32(1)).Set("email", "old@b.c")).
		Set("after", schema.NewStruct(rowSchema).Set("id", int32(1)).Set("email", "ünïcode@b.c")).
		Set("source", src).
		Set("transaction", schema.NewStruct(schema.TransactionBlockSchema()).Set("id", "555:24023128").
			Set("total_order", int64(1)).Set("data_collection_order", int64(1))).
		Set("op", schema.OpUpdate).Set("ts_ms", int64(1700000000200))
}

// customersEventDecoded is customersEvent as hamba/avro decodes it from the registered schema: records in
// ["null", record] unions come keyed by their full name.
func customersEventDecoded() map[string]any {
	return map[string]any{
		"before": map[string]any{"pg1.public.customers.Value": map[string]any{"id": 1, "email": "old@b.c"}},
		"after":  map[string]any{"pg1.public.customers.Value": map[string]any{"id": 1, "email": "ünïcode@b.c"}},
		"source": map[string]any{
			"version": schema.DebeziumVersion, "connector": "postgresql", "name": "pg1",
			"ts_ms": int64(1700000000123), "snapshot": "false", "db": "app", "sequence": `["24023119","24023128"]`,
			"ts_us": int64(1700000000123456), "ts_ns": int64(1700000000123456000), "schema": "public",
			"table": "customers", "txId": int64(555), "lsn": int64(24023128), "xmin": nil, "origin": nil, "origin_lsn": nil,
		},
		"transaction": map[string]any{"event.block": map[string]any{"id": "555:24023128", "total_order": int64(1), "data_collection_order": int64(1)}},
		"op":          "u", "ts_ms": int64(1700000000200), "ts_us": nil, "ts_ns": nil,
	}
}

// decodeRecord checks the Confluent framing and decodes the body as a consumer would: the schema fetched
// by the record's id, the body decoded by hamba/avro (an implementation independent of ours).
func decodeRecord(t *testing.T, reg *srfake.Registry, b []byte) (decoded any, text string) {
	t.Helper()
	if len(b) < 5 || b[0] != 0 {
		t.Fatalf("not Confluent framing: % x", b)
	}
	id := int(binary.BigEndian.Uint32(b[1:5]))
	cl, err := sr.NewClient(sr.URLs(reg.URL()))
	if err != nil {
		t.Fatal(err)
	}
	ss, err := cl.SchemaByID(context.Background(), id)
	if err != nil {
		t.Fatalf("schema id %d: %v", id, err)
	}
	if err := hamba.Unmarshal(hamba.MustParse(ss.Schema), b[5:], &decoded); err != nil {
		t.Fatalf("hamba cannot decode the record: %v", err)
	}
	return decoded, ss.Schema
}

func TestEnvelopeRoundTrip(t *testing.T) {
	reg, _ := newRegistry(t)
	c := newConverter(t, false, map[string]string{"schema.registry.url": reg.URL()})
	env := customersEnvelope()
	b, err := c.Encode("pg1.public.customers", env, customersEvent(env))
	if err != nil {
		t.Fatal(err)
	}
	got, text := decodeRecord(t, reg, b)
	if text != pgEnvelopeText {
		t.Errorf("registered schema\n got %s\nwant %s", text, pgEnvelopeText)
	}
	if !reg.SubjectExists("pg1.public.customers-value") {
		t.Error("subject is not <topic>-value")
	}
	if want := customersEventDecoded(); !reflect.DeepEqual(got, any(want)) {
		t.Errorf("decoded\n got %#v\nwant %#v", got, want)
	}
}

// A row with the types whose encoding has a trap: decimals (two's complement, scale checked), a variable
// scale decimal, int8/int16, a Connect Date given as time.Time, a map with non-string keys, an optional
// field with a default left null, arrays, floats.
func TestValueTypesRoundTrip(t *testing.T) {
	s := row(
		schema.Field{Name: "price", Schema: schema.DecimalSchema(2, 10)},
		schema.Field{Name: "neg", Schema: optional(schema.DecimalSchema(0, 20))},
		schema.Field{Name: "vsd", Schema: optional(schema.VariableScaleDecimal())},
		schema.Field{Name: "tiny", Schema: &schema.Schema{Type: schema.Int8}},
		schema.Field{Name: "small", Schema: withDefault(optional(&schema.Schema{Type: schema.Int16}), int16(7))},
		schema.Field{Name: "day", Schema: schema.ConnectDate()},
		schema.Field{Name: "f", Schema: &schema.Schema{Type: schema.Float32}},
		schema.Field{Name: "vec", Schema: doubleVector()},
		schema.Field{Name: "sv", Schema: sparseVector()},
		schema.Field{Name: "h", Schema: &schema.Schema{Type: schema.Map, Keys: &schema.Schema{Type: schema.String}, Values: optional(&schema.Schema{Type: schema.String})}},
		schema.Field{Name: "raw", Schema: &schema.Schema{Type: schema.Bytes}},
	)
	vsdSchema := schema.VariableScaleDecimal()
	v := schema.NewStruct(s).
		Set("price", schema.Decimal{Unscaled: big.NewInt(12345), Scale: 2}).
		Set("neg", schema.Decimal{Unscaled: big.NewInt(-129), Scale: 0}).
		Set("vsd", schema.VariableScaleDecimalValue(vsdSchema, schema.Decimal{Unscaled: big.NewInt(-1), Scale: 3})).
		Set("tiny", int8(-3)).
		Set("day", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)).
		Set("f", float32(1.5)).
		Set("vec", []any{1.0, -2.5}).
		Set("sv", schema.NewStruct(sparseVector()).Set("dimensions", int16(3)).Set("vector", []schema.MapEntry{{Key: int16(1), Value: 2.5}, {Key: int16(2), Value: -1.0}})).
		Set("h", []schema.MapEntry{{Key: "a", Value: "x"}, {Key: "b", Value: nil}}).
		Set("raw", []byte{0, 1, 0xff})
	reg, _ := newRegistry(t)
	c := newConverter(t, false, map[string]string{"schema.registry.url": reg.URL()})
	b, err := c.Encode("t", s, v)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := decodeRecord(t, reg, b)
	m := got.(map[string]any)
	if r := m["price"].(*big.Rat); r.RatString() != "2469/20" { // 123.45
		t.Errorf("price %s", r.RatString())
	}
	if r := m["neg"].(*big.Rat); r.RatString() != "-129" {
		t.Errorf("neg %s", r.RatString())
	}
	if d := m["day"].(time.Time); !d.Equal(time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("day %v", d)
	}
	delete(m, "price")
	delete(m, "neg")
	delete(m, "day")
	want := map[string]any{
		"vsd":   map[string]any{"io.debezium.data.VariableScaleDecimal": map[string]any{"scale": 3, "value": []byte{0xff}}},
		"tiny":  -3,
		"small": 7,
		"f":     float32(1.5),
		"vec":   []any{1.0, -2.5},
		"sv": map[string]any{"dimensions": 3, "vector": []any{
			map[string]any{"key": 1, "value": 2.5}, map[string]any{"key": 2, "value": -1.0}}},
		"h":   map[string]any{"a": "x", "b": nil},
		"raw": []byte{0, 1, 0xff},
	}
	if !reflect.DeepEqual(got, any(want)) {
		t.Errorf("decoded\n got %#v\nwant %#v", got, want)
	}
}

func TestWireFormatBytes(t *testing.T) {
	reg, _ := newRegistry(t)
	// Take id 1 with another subject so that the converter's id is 2 and the framing shows it.
	if _, _, err := reg.RegisterSchema("other-value", sr.Schema{Schema: `"string"`}); err != nil {
		t.Fatal(err)
	}
	c := newConverter(t, true, map[string]string{"schema.registry.url": reg.URL()})
	key := &schema.Schema{Type: schema.StructT, Name: "pg1.public.t.Key", Fields: []schema.Field{
		{Name: "id", Schema: &schema.Schema{Type: schema.Int64}},
		{Name: "code", Schema: optional(&schema.Schema{Type: schema.String})},
	}}
	b, err := c.Encode("pg1.public.t", key, schema.NewStruct(key).Set("id", int64(-2)).Set("code", "é"))
	if err != nil {
		t.Fatal(err)
	}
	// magic 0, id 2 big-endian, id -2 zig-zag (3), union branch 1 (2), length 2 (4), "é" in UTF-8.
	want := []byte{0, 0, 0, 0, 2, 3, 2, 4, 0xc3, 0xa9}
	if !bytes.Equal(b, want) {
		t.Errorf("got % x, want % x", b, want)
	}
	if !reg.SubjectExists("pg1.public.t-key") {
		t.Error("key schema not registered under <topic>-key")
	}
}

func TestTombstonesAndNullKeysTouchNoRegistry(t *testing.T) {
	reg, counter := newRegistry(t)
	c := newConverter(t, false, map[string]string{"schema.registry.url": reg.URL()})
	for _, s := range []*schema.Schema{nil, optional(customersRow())} {
		b, err := c.Encode("pg1.public.customers", s, nil)
		if err != nil || b != nil {
			t.Errorf("schema %v: got %v, %v; want nil bytes", s, b, err)
		}
	}
	if counter.total() != 0 {
		t.Errorf("%d registry requests for null values", counter.total())
	}
	if _, err := c.Encode("t", customersEnvelope(), nil); !errors.Is(err, ErrNullRequired) {
		t.Errorf("null for a required schema: %v", err)
	}
}

func TestSchemaRegisteredOncePerSubjectAndSchema(t *testing.T) {
	reg, counter := newRegistry(t)
	c := newConverter(t, false, map[string]string{"schema.registry.url": reg.URL()})
	env := customersEnvelope()
	again := customersEnvelope() // another table version with the same shape
	for _, s := range []*schema.Schema{env, env, again} {
		if _, err := c.Encode("pg1.public.customers", s, customersEvent(s)); err != nil {
			t.Fatal(err)
		}
	}
	if n := counter.count("POST /subjects/pg1.public.customers-value/versions"); n != 1 {
		t.Errorf("registered %d times, want once", n)
	}
	// The same schema on another topic is another subject.
	if _, err := c.Encode("pg1.public.copy", env, customersEvent(env)); err != nil {
		t.Fatal(err)
	}
	if n := counter.count("POST /subjects/pg1.public.copy-value/versions"); n != 1 {
		t.Errorf("second subject registered %d times, want once", n)
	}
}

func TestSubjectNameStrategies(t *testing.T) {
	const pkg = "io.confluent.kafka.serializers.subject."
	cases := []struct {
		isKey    bool
		strategy string
		want     string
	}{
		{false, "", "pg1.public.customers-value"},
		{true, "", "pg1.public.customers-key"},
		{false, pkg + "TopicNameStrategy", "pg1.public.customers-value"},
		{false, pkg + "RecordNameStrategy", "pg1.public.customers.Envelope"},
		{false, pkg + "TopicRecordNameStrategy", "pg1.public.customers-pg1.public.customers.Envelope"},
		{true, pkg + "RecordNameStrategy", "pg1.public.customers.Envelope"},
	}
	for _, tc := range cases {
		reg, _ := newRegistry(t)
		settings := map[string]string{"schema.registry.url": reg.URL()}
		if tc.strategy != "" {
			key := "value.subject.name.strategy"
			if tc.isKey {
				key = "key.subject.name.strategy"
			}
			settings[key] = tc.strategy
			// The other side's strategy must not leak into this one.
			settings[map[bool]string{true: "value", false: "key"}[tc.isKey]+".subject.name.strategy"] = pkg + "TopicNameStrategy"
		}
		c := newConverter(t, tc.isKey, settings)
		env := customersEnvelope()
		if _, err := c.Encode("pg1.public.customers", env, customersEvent(env)); err != nil {
			t.Fatal(err)
		}
		if !reg.SubjectExists(tc.want) {
			t.Errorf("key=%v %s: subject %s not registered", tc.isKey, tc.strategy, tc.want)
		}
	}
	reg, _ := newRegistry(t)
	c := newConverter(t, false, map[string]string{"schema.registry.url": reg.URL(), "value.subject.name.strategy": pkg + "RecordNameStrategy"})
	if _, err := c.Encode("t", &schema.Schema{Type: schema.String}, "x"); !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), "value") {
		t.Errorf("RecordNameStrategy with a string value: %v", err)
	}
}

func TestBasicAuthHeaderSent(t *testing.T) {
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:s3cret"))
	cases := map[string]func(url string) map[string]string{
		"USER_INFO": func(u string) map[string]string {
			return map[string]string{"schema.registry.url": u, "basic.auth.credentials.source": "USER_INFO", "basic.auth.user.info": "alice:s3cret"}
		},
		"URL": func(u string) map[string]string {
			return map[string]string{"schema.registry.url": strings.Replace(u, "http://", "http://alice:s3cret@", 1)}
		},
	}
	for name, settings := range cases {
		reg, _ := newRegistry(t, srfake.WithAuth(want))
		c := newConverter(t, false, settings(reg.URL()))
		env := customersEnvelope()
		if _, err := c.Encode("pg1.public.customers", env, customersEvent(env)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Without credentials the registry refuses, and the error carries its answer but no retry.
	reg, counter := newRegistry(t, srfake.WithAuth(want))
	c := newConverter(t, false, map[string]string{"schema.registry.url": reg.URL()})
	_, err := c.Encode("t", &schema.Schema{Type: schema.String}, "x")
	if !errors.Is(err, ErrRegistry) || !strings.Contains(err.Error(), "HTTP 401") || counter.total() != 1 {
		t.Errorf("unauthenticated: %v after %d requests", err, counter.total())
	}
}

func TestUnreachableRegistryIsRetriedThenNamed(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	c := newConverter(t, false, map[string]string{"schema.registry.url": deadURL, "max.retries": "2", "retries.wait.ms": "10"})
	var waits []time.Duration
	c.registry.sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	_, err := c.Encode("pg1.public.customers", &schema.Schema{Type: schema.String}, "x")
	if !errors.Is(err, ErrRegistry) || !strings.Contains(err.Error(), deadURL) ||
		!strings.Contains(err.Error(), `"pg1.public.customers-value"`) || !strings.Contains(err.Error(), "3 attempts") {
		t.Errorf("error should be ErrRegistry naming the URL, the subject and the attempts: %v", err)
	}
	if !reflect.DeepEqual(waits, []time.Duration{10 * time.Millisecond, 20 * time.Millisecond}) {
		t.Errorf("waits %v, want doubling from retries.wait.ms", waits)
	}
}

func TestSecondURLServesWhenFirstIsDown(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	reg, _ := newRegistry(t)
	c := newConverter(t, false, map[string]string{"schema.registry.url": dead.URL + " , " + reg.URL()})
	if _, err := c.Encode("t", &schema.Schema{Type: schema.String}, "x"); err != nil {
		t.Fatal(err)
	}
	if !reg.SubjectExists("t-value") {
		t.Error("not registered through the second URL")
	}
}

func TestTransientStatusIsRetried(t *testing.T) {
	reg, _ := newRegistry(t)
	var failures atomic.Int64
	reg.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if failures.Add(1) <= 2 {
			http.Error(w, `{"error_code":50003,"message":"leader election"}`, http.StatusServiceUnavailable)
			return true
		}
		return false
	})
	c := newConverter(t, false, map[string]string{"schema.registry.url": reg.URL()})
	if _, err := c.Encode("t", &schema.Schema{Type: schema.String}, "x"); err != nil {
		t.Fatalf("two 503s then success: %v", err)
	}
}

func TestIncompatibleSchemaIsAClearError(t *testing.T) {
	reg, _ := newRegistry(t)
	const msg = "Schema being registered is incompatible with an earlier schema for subject \"t-value\""
	reg.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPost {
			return false
		}
		w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
		w.WriteHeader(http.StatusConflict)
		fmt.Fprintf(w, `{"error_code":409,"message":%q}`, msg)
		return true
	})
	c := newConverter(t, false, map[string]string{"schema.registry.url": reg.URL()})
	_, err := c.Encode("t", &schema.Schema{Type: schema.String}, "x")
	if !errors.Is(err, ErrIncompatible) || !errors.Is(err, ErrRegistry) || !strings.Contains(err.Error(), msg) {
		t.Errorf("got %v", err)
	}
}

func TestWithoutAutoRegister(t *testing.T) {
	env := customersEnvelope()
	text, err := SchemaText(env)
	if err != nil {
		t.Fatal(err)
	}
	const subject = "pg1.public.customers-value"
	t.Run("use.latest.version", func(t *testing.T) {
		reg, counter := newRegistry(t)
		reg.SeedSchema(subject, 1, 41, sr.Schema{Schema: `"string"`})
		reg.SeedSchema(subject, 2, 42, sr.Schema{Schema: text})
		c := newConverter(t, false, map[string]string{"schema.registry.url": reg.URL(), "auto.register.schemas": "false", "use.latest.version": "true"})
		b, err := c.Encode("pg1.public.customers", env, customersEvent(env))
		if err != nil {
			t.Fatal(err)
		}
		if id := binary.BigEndian.Uint32(b[1:5]); id != 42 {
			t.Errorf("id %d, want the latest version's 42", id)
		}
		if counter.count("POST /subjects/"+subject+"/versions") != 0 {
			t.Error("registered although auto.register.schemas=false")
		}
		// A latest version with another shape cannot be written with.
		reg.SeedSchema("t-value", 1, 50, sr.Schema{Schema: `"string"`})
		if _, err := c.Encode("t", &schema.Schema{Type: schema.Int32}, int32(1)); !errors.Is(err, ErrRegistry) || !strings.Contains(err.Error(), "id 50") {
			t.Errorf("mismatching latest version: %v", err)
		}
	})
	t.Run("lookup", func(t *testing.T) {
		reg, _ := newRegistry(t)
		c := newConverter(t, false, map[string]string{"schema.registry.url": reg.URL(), "auto.register.schemas": "false"})
		if _, err := c.Encode("pg1.public.customers", env, customersEvent(env)); !errors.Is(err, ErrRegistry) || !strings.Contains(err.Error(), subject) {
			t.Errorf("unregistered schema: %v", err)
		}
		reg.SeedSchema(subject, 1, 7, sr.Schema{Schema: text})
		b, err := c.Encode("pg1.public.customers", env, customersEvent(env))
		if err != nil {
			t.Fatal(err)
		}
		if id := binary.BigEndian.Uint32(b[1:5]); id != 7 {
			t.Errorf("id %d, want 7", id)
		}
	})
}

func TestEncodeRejectsMisshapenValues(t *testing.T) {
	reg, counter := newRegistry(t)
	c := newConverter(t, false, map[string]string{"schema.registry.url": reg.URL()})
	s := row(schema.Field{Name: "price", Schema: schema.DecimalSchema(2, 10)}, schema.Field{Name: "n", Schema: &schema.Schema{Type: schema.Int32}})
	cases := map[string]*schema.Struct{
		"decimal of another scale": schema.NewStruct(s).Set("price", schema.Decimal{Unscaled: big.NewInt(1), Scale: 3}).Set("n", int32(1)),
		"int64 for an int32":       schema.NewStruct(s).Set("price", schema.Decimal{Unscaled: big.NewInt(1), Scale: 2}).Set("n", int64(1)),
		"null required field":      schema.NewStruct(s).Set("price", schema.Decimal{Unscaled: big.NewInt(1), Scale: 2}),
	}
	for name, v := range cases {
		_, err := c.Encode("t", s, v)
		if !errors.Is(err, ErrValueType) && !errors.Is(err, ErrNullRequired) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := c.Encode("t", nil, "schemaless"); !errors.Is(err, ErrSchema) {
		t.Errorf("schemaless value: %v", err)
	}
	if counter.total() != 0 {
		t.Errorf("%d registry requests for values that cannot be written", counter.total())
	}
}

func TestIgnoreDefaultForNullables(t *testing.T) {
	s := row(schema.Field{Name: "status", Schema: withDefault(optional(&schema.Schema{Type: schema.String}), "new")})
	for setting, want := range map[string]any{"false": "new", "true": nil} {
		reg, _ := newRegistry(t)
		c := newConverter(t, false, map[string]string{"schema.registry.url": reg.URL(), "ignore.default.for.nullables": setting})
		b, err := c.Encode("t", s, schema.NewStruct(s))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := decodeRecord(t, reg, b)
		if status := got.(map[string]any)["status"]; status != want {
			t.Errorf("ignore.default.for.nullables=%s: status %v, want %v", setting, status, want)
		}
	}
}

func TestConcurrentFirstUsesAgreeOnOneID(t *testing.T) {
	reg, _ := newRegistry(t)
	c := newConverter(t, false, map[string]string{"schema.registry.url": reg.URL()})
	env := customersEnvelope()
	ids := make(chan uint32, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			b, err := c.Encode("pg1.public.customers", env, customersEvent(env))
			if err != nil {
				t.Error(err)
				return
			}
			ids <- binary.BigEndian.Uint32(b[1:5])
		})
	}
	wg.Wait()
	close(ids)
	for id := range ids {
		if id != 1 {
			t.Errorf("id %d, want 1 for every record", id)
		}
	}
}

func TestWriterSchemaIsBuiltOnceAndDroppedWithItsSchema(t *testing.T) {
	reg, _ := newRegistry(t)
	c := newConverter(t, false, map[string]string{"schema.registry.url": reg.URL()})
	s := customersEnvelope()
	first, err := c.writerSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	if second, _ := c.writerSchema(s); second != first {
		t.Fatal("writer schema built twice for one schema")
	}
	key := weak.Make(s)
	s = nil
	// Cleanups run on their own goroutine after a collection; give them bounded chances, no clock involved.
	for range 100 {
		runtime.GC()
		if _, ok := c.writers.Load(key); !ok {
			return
		}
		runtime.Gosched()
	}
	t.Fatal("cache entry outlived its schema")
}

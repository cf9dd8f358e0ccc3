package offsets

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"testing"
)

func TestKey(t *testing.T) {
	cases := []struct {
		connector string
		partition map[string]any
		want      string
	}{
		{"inventory", map[string]any{"server": "dbserver1"}, `["inventory",{"server":"dbserver1"}]`},
		// HashMap order, not sorted order (Go's encoding/json would put database first).
		{"sqlserver", map[string]any{"server": "srv", "database": "inventory"}, `["sqlserver",{"server":"srv","database":"inventory"}]`},
		{"mongo", map[string]any{"server_id": "m1", "rs": "rs0"}, `["mongo",{"rs":"rs0","server_id":"m1"}]`},
		{"a<b>&\"c\"", map[string]any{}, `["a<b>&\"c\"",{}]`},
	}
	for _, c := range cases {
		got, err := Key(c.connector, c.partition)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("Key(%q, %v) = %s, want %s", c.connector, c.partition, got, c.want)
		}
	}
}

func TestEncodeValuePostgresOffsetInJavaOrder(t *testing.T) {
	// Put in PostgresOffsetContext.getOffset's order.
	got, err := EncodeValue(Fields{
		{"ts_usec", int64(1718000000000000)}, {"txId", int64(555)}, {"lsn", int64(24023128)},
		{"lsn_proc", int64(24023128)}, {"lsn_commit", int64(24023128)}, {"messageType", "INSERT"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"lsn_proc":24023128,"messageType":"INSERT","lsn_commit":24023128,"lsn":24023128,"txId":555,"ts_usec":1718000000000000}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestEncodeValuePrimitives(t *testing.T) {
	cases := []struct {
		value any
		want  string
	}{
		{nil, `null`},
		{true, `true`},
		{int64(math.MaxInt64), `9223372036854775807`},
		{int8(-8), `-8`},
		{uint32(7), `7`},
		{uint64(math.MaxInt64), `9223372036854775807`},
		{1.0, `1.0`},
		{float32(0.1), `0.1`},
		{1e21, `1.0E21`},
		{json.Number("12"), `12`},
		{json.Number("1.50"), `1.5`},
		{[]byte{0, 1, 2, 0xff}, `"AAEC/w=="`},
		{"tab\there \"q\" \\ \x1f </> & \u2028 é", `"tab\there \"q\" \\ \u001F </> & ` + "\u2028 é" + `"`},
		{"😀", `"\uD83D\uDE00"`}, // Jackson escapes surrogate pairs
	}
	for _, c := range cases {
		got, err := EncodeValue(Fields{{"f", c.value}})
		if err != nil {
			t.Errorf("%#v: %v", c.value, err)
			continue
		}
		if want := `{"f":` + c.want + `}`; string(got) != want {
			t.Errorf("%#v: got %s, want %s", c.value, got, want)
		}
	}
}

func TestEncodeValueRejects(t *testing.T) {
	for name, value := range map[string]any{
		"nested map":      map[string]any{"a": 1},
		"list":            []any{1},
		"NaN":             math.NaN(),
		"uint64 > long":   uint64(math.MaxUint64),
		"bad utf8":        "\xff",
		"bad json.Number": json.Number("x"),
	} {
		_, err := EncodeValue(Fields{{"f", value}})
		var je *JSONError
		if !errors.As(err, &je) {
			t.Errorf("%s: error %v, want a *JSONError", name, err)
		}
	}
}

func TestEncodeValueNilIsTombstone(t *testing.T) {
	got, err := EncodeValue(nil)
	if err != nil || got != nil {
		t.Fatalf("got %q, %v; want nil", got, err)
	}
}

func TestDecodeValueKeepsIntegersAndOrder(t *testing.T) {
	value := []byte(`{"b":true,"s":"x","f":1.5,"lsn":9007199254740993,"g":1.0,"n":null}`)
	got, err := DecodeValue(value)
	if err != nil {
		t.Fatal(err)
	}
	want := Fields{{"b", true}, {"s", "x"}, {"f", 1.5}, {"lsn", int64(9007199254740993)}, {"g", 1.0}, {"n", nil}}
	if !slices.Equal(got, want) {
		t.Fatalf("got  %#v\nwant %#v", got, want)
	}
	if m := got.Map(); m["lsn"] != int64(9007199254740993) || len(m) != 6 {
		t.Fatalf("map %#v", m)
	}
	again, err := EncodeValue(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(value) {
		t.Fatalf("re-encoded %s, want %s", again, value)
	}
}

// TestEncodeValueCollidingKeysKeepPutOrder uses MySQL's "event" and
// "server_id", which share a bucket: their order follows the put order.
func TestEncodeValueCollidingKeysKeepPutOrder(t *testing.T) {
	for _, c := range []struct {
		fields Fields
		want   string
	}{
		{Fields{{"event", int64(1)}, {"server_id", int64(2)}}, `{"event":1,"server_id":2}`},
		{Fields{{"server_id", int64(2)}, {"event", int64(1)}}, `{"server_id":2,"event":1}`},
		{Fields{{"event", int64(1)}, {"server_id", int64(2)}, {"event", int64(3)}}, `{"event":3,"server_id":2}`},
	} {
		got, err := EncodeValue(c.fields)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("%v: got %s, want %s", c.fields, got, c.want)
		}
	}
}

func TestDecodeValueTombstones(t *testing.T) {
	for _, v := range [][]byte{nil, []byte("null")} {
		got, err := DecodeValue(v)
		if err != nil || got != nil {
			t.Fatalf("DecodeValue(%q) = %v, %v; want nil", v, got, err)
		}
	}
}

func TestDecodeValueRejects(t *testing.T) {
	for _, v := range []string{`{"a":{"b":1}}`, `{"a":[1]}`, `{"a":1} x`, `[1]`, `{"a":92233720368547758070}`, `{`, ``} {
		_, err := DecodeValue([]byte(v))
		var je *JSONError
		if !errors.As(err, &je) {
			t.Errorf("DecodeValue(%s): error %v, want a *JSONError", v, err)
		}
	}
}

func TestDecodeKey(t *testing.T) {
	key, err := Key("inventory", map[string]any{"server": "dbserver1", "n": int64(1) << 60})
	if err != nil {
		t.Fatal(err)
	}
	connector, partition, err := DecodeKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if connector != "inventory" || partition["server"] != "dbserver1" || partition["n"] != int64(1)<<60 || len(partition) != 2 {
		t.Fatalf("got %q %#v", connector, partition)
	}
	for _, bad := range []string{`["a"]`, `["a",{},1]`, `[1,{}]`, `["a",[1]]`, `{}`} {
		if _, _, err := DecodeKey([]byte(bad)); err == nil {
			t.Errorf("DecodeKey(%s) accepted", bad)
		}
	}
}

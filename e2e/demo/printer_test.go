package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestFormatRecord(t *testing.T) {
	const topic = "demo.public.orders"
	tests := []struct {
		name string
		rec  record
		want string
	}{{
		name: "create shows the after image",
		rec: record{Topic: topic, Key: []byte(`{"id":3}`),
			Value: []byte(`{"before":null,"after":{"id":3,"status":"new"},"source":{"lsn":1},"op":"c","ts_ms":1}`)},
		want: `demo.public.orders  key={"id":3}  c  {"id":3,"status":"new"}`,
	}, {
		name: "update with both images shows only the changed fields",
		rec: record{Topic: topic, Key: []byte(`{"id":3}`),
			Value: []byte(`{"before":{"id":3,"amount":"12.50","status":"new"},"after":{"id":3,"amount":"12.50","status":"paid"},"op":"u"}`)},
		want: `demo.public.orders  key={"id":3}  u  {"status":"new",…} → {"status":"paid",…}`,
	}, {
		name: "update compares values, not their spacing",
		rec: record{Topic: topic, Key: []byte(`{"id":3}`),
			Value: []byte(`{"before":{"id":3, "tags":[1, 2]},"after":{"id":3,"tags":[1,2,3]},"op":"u"}`)},
		want: `demo.public.orders  key={"id":3}  u  {"tags":[1,2],…} → {"tags":[1,2,3],…}`,
	}, {
		name: "update where every field changed has no ellipsis",
		rec: record{Topic: topic, Key: []byte(`{"id":3}`),
			Value: []byte(`{"before":{"status":"new"},"after":{"status":"paid"},"op":"u"}`)},
		want: `demo.public.orders  key={"id":3}  u  {"status":"new"} → {"status":"paid"}`,
	}, {
		name: "update without a before image shows the after image",
		rec: record{Topic: topic, Key: []byte(`{"id":3}`),
			Value: []byte(`{"before":null,"after":{"id":3,"status":"paid"},"op":"u"}`)},
		want: `demo.public.orders  key={"id":3}  u  {"id":3,"status":"paid"}`,
	}, {
		name: "update that changed nothing",
		rec: record{Topic: topic, Key: []byte(`{"id":3}`),
			Value: []byte(`{"before":{"id":3},"after":{"id":3},"op":"u"}`)},
		want: `demo.public.orders  key={"id":3}  u  (no change)`,
	}, {
		name: "delete shows the before image",
		rec: record{Topic: topic, Key: []byte(`{"id":3}`),
			Value: []byte(`{"before":{"id":3,"status":"paid"},"after":null,"op":"d"}`)},
		want: `demo.public.orders  key={"id":3}  d  {"id":3,"status":"paid"}`,
	}, {
		name: "tombstone",
		rec:  record{Topic: topic, Key: []byte(`{"id":3}`)},
		want: `demo.public.orders  key={"id":3}  (tombstone)`,
	}, {
		name: "key change headers are shown without their prefix",
		rec: record{Topic: "demo.public.customers", Key: []byte(`{"id":1001}`),
			Value:   []byte(`{"before":null,"after":{"id":1001,"name":"Ada"},"op":"c"}`),
			Headers: []header{{Key: "__debezium.oldkey", Value: []byte(`{"id":1}`)}}},
		want: `demo.public.customers  key={"id":1001}  c  {"id":1001,"name":"Ada"}  [oldkey={"id":1}]`,
	}, {
		name: "long header values are cut",
		rec: record{Topic: topic, Key: []byte(`{"id":3}`), Value: []byte(`{"after":{"id":3},"op":"r"}`),
			Headers: []header{{Key: "trace", Value: []byte(strings.Repeat("x", 70))}, {Key: "b", Value: []byte("1")}}},
		want: `demo.public.orders  key={"id":3}  r  {"id":3}  [trace=` + strings.Repeat("x", 60) + `… b=1]`,
	}, {
		name: "truncate",
		rec:  record{Topic: topic, Value: []byte(`{"before":null,"after":null,"op":"t"}`)},
		want: `demo.public.orders  key=null  t  (truncate)`,
	}, {
		name: "logical message",
		rec: record{Topic: "demo.message", Key: []byte(`{"prefix":"p"}`),
			Value: []byte(`{"op":"m","message":{"prefix":"p","content":"aGk="}}`)},
		want: `demo.message  key={"prefix":"p"}  m  {"prefix":"p","content":"aGk="}`,
	}, {
		name: "a value that is not an envelope is shown as it is",
		rec:  record{Topic: "demo.heartbeat", Key: []byte(`{"serverName":"demo"}`), Value: []byte(`{"ts_ms":5}`)},
		want: `demo.heartbeat  key={"serverName":"demo"}  {"ts_ms":5}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := formatRecord(tt.rec, false); got != tt.want {
				t.Errorf("formatRecord:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestFormatRecordColour(t *testing.T) {
	rec := record{Topic: "t", Key: []byte(`1`), Value: []byte(`{"before":{"a":1},"after":null,"op":"d"}`)}
	if got, want := formatRecord(rec, true), "t  key=1  "+styleRed+"d"+styleReset+`  {"a":1}`; got != want {
		t.Errorf("coloured delete:\n got %q\nwant %q", got, want)
	}
	tomb := record{Topic: "t", Key: []byte(`1`)}
	if got, want := formatRecord(tomb, true), "t  key=1  "+styleDim+"(tombstone)"+styleReset; got != want {
		t.Errorf("coloured tombstone:\n got %q\nwant %q", got, want)
	}
}

func TestConsoleWritesWholeLines(t *testing.T) {
	var out bytes.Buffer
	c := &console{w: &out}
	c.sql("DELETE FROM orders WHERE id = 1")
	c.note("ready on %d", 5)
	c.event(record{Topic: "t", Key: []byte(`1`)})
	want := "sql> DELETE FROM orders WHERE id = 1\nready on 5\nt  key=1  (tombstone)\n"
	if out.String() != want {
		t.Errorf("console output:\n got %q\nwant %q", out.String(), want)
	}
}

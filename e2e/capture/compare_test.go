package capture

import (
	"strings"
	"testing"
)

// Two captures of one change event that differ in what each mode blanks. The streaming pair differs only
// in processing time and version (same-db); the replay pair also in database time, LSNs, xid and tx id.
const (
	schemaPrefix = `{"schema":{"type":"struct","fields":[],"optional":false,"name":"pg1.public.t.Envelope","version":2},"payload":`

	streamA = `{"before":null,"after":{"id":1,"x":1.0},"source":{"version":"3.6.1.Final","connector":"postgresql","name":"pg1","ts_ms":1700000000123,"snapshot":"false","db":"d","sequence":"[null,\"100\"]","ts_us":1700000000123456,"ts_ns":1700000000123456000,"schema":"public","table":"t","txId":7,"lsn":100,"xmin":null,"origin":null,"origin_lsn":null},"transaction":{"id":"7:100","total_order":1,"data_collection_order":1},"op":"c","ts_ms":1,"ts_us":2,"ts_ns":3}`
	// Same database, another run: processing time and version differ.
	streamSameDB = `{"before":null,"after":{"id":1,"x":1.0},"source":{"version":"0.0.1-cdcd","connector":"postgresql","name":"pg1","ts_ms":1700000000123,"snapshot":"false","db":"d","sequence":"[null,\"100\"]","ts_us":1700000000123456,"ts_ns":1700000000123456000,"schema":"public","table":"t","txId":7,"lsn":100,"xmin":null,"origin":null,"origin_lsn":null},"transaction":{"id":"7:100","total_order":1,"data_collection_order":1},"op":"c","ts_ms":9,"ts_us":9,"ts_ns":9}`
	// Replayed on a fresh database: positions and database time differ as well.
	streamReplay = `{"before":null,"after":{"id":1,"x":1.0},"source":{"version":"3.6.1.Final","connector":"postgresql","name":"pg1","ts_ms":1800000000999,"snapshot":"false","db":"d","sequence":"[\"150\",\"200\"]","ts_us":1800000000999000,"ts_ns":1800000000999000000,"schema":"public","table":"t","txId":99,"lsn":200,"xmin":null,"origin":null,"origin_lsn":null},"transaction":{"id":"99:200","total_order":1,"data_collection_order":1},"op":"c","ts_ms":9,"ts_us":9,"ts_ns":9}`

	snapshotA    = `{"before":null,"after":{"id":1},"source":{"version":"3.6.1.Final","ts_ms":5,"snapshot":"first","sequence":"[null,\"100\"]","ts_us":5000,"ts_ns":5000000,"txId":7,"lsn":100,"xmin":null},"transaction":null,"op":"r","ts_ms":1,"ts_us":2,"ts_ns":3}`
	snapshotLate = `{"before":null,"after":{"id":1},"source":{"version":"3.6.1.Final","ts_ms":6,"snapshot":"first","sequence":"[null,\"300\"]","ts_us":6000,"ts_ns":6000000,"txId":8,"lsn":300,"xmin":null},"transaction":null,"op":"r","ts_ms":4,"ts_us":5,"ts_ns":6}`
)

func withSchema(payload string) string { return schemaPrefix + payload + "}" }

func record(topic string, offset int64, key, value string) Record {
	return Record{Topic: topic, Offset: offset, Key: Bytes(key), Value: Bytes(value)}
}

func TestCompareBlanksPerMode(t *testing.T) {
	for _, schemas := range []bool{false, true} {
		wrap := func(s string) string { return s }
		if schemas {
			wrap = withSchema
		}
		cases := []struct {
			name  string
			mode  Mode
			a, b  string
			equal bool
		}{
			{"same-db ignores processing time and version", SameDB, streamA, streamSameDB, true},
			{"same-db keeps streaming positions", SameDB, streamA, streamReplay, false},
			{"same-db ignores the snapshot's own time and position", SameDB, snapshotA, snapshotLate, true},
			{"replay ignores positions and database time", Replay, streamA, streamReplay, true},
		}
		for _, tc := range cases {
			a := []Record{record("pg1.public.t", 0, `{"id":1}`, wrap(tc.a))}
			b := []Record{record("pg1.public.t", 0, `{"id":1}`, wrap(tc.b))}
			diffs := Compare(a, b, tc.mode)
			if (len(diffs) == 0) != tc.equal {
				t.Errorf("schemas=%v %s: got differences %v, want equal=%v", schemas, tc.name, diffs, tc.equal)
			}
		}
	}
}

func TestCompareReportsDifferenceOutsideBlankedFields(t *testing.T) {
	for _, schemas := range []bool{false, true} {
		wrap, payloadPath := func(s string) string { return s }, "value"
		if schemas {
			wrap, payloadPath = withSchema, "value.payload"
		}
		// Go would print 1 where Java prints 1.0: the byte difference must survive blanking.
		changed := strings.Replace(streamReplay, `"x":1.0`, `"x":1`, 1)
		a := []Record{record("pg1.public.t", 0, `{"id":1}`, wrap(streamA))}
		b := []Record{record("pg1.public.t", 0, `{"id":1}`, wrap(changed))}
		diffs := Compare(a, b, Replay)
		want := "pg1.public.t#0 " + payloadPath + ".after.x: 1.0 != 1"
		if len(diffs) != 1 || diffs[0].String() != want {
			t.Errorf("schemas=%v: got %v, want [%s]", schemas, diffs, want)
		}
	}
}

func TestCompareStructuralDifferences(t *testing.T) {
	cases := []struct {
		name string
		a, b Record
		want []string
	}{
		{
			name: "key order",
			a:    record("t", 0, `{"a":1,"b":2}`, `null`),
			b:    record("t", 0, `{"b":2,"a":1}`, `null`),
			want: []string{"t#0 key: key order [a,b] != [b,a]"},
		},
		{
			name: "missing field",
			a:    record("t", 0, `{"a":1,"b":2}`, `null`),
			b:    record("t", 0, `{"a":1}`, `null`),
			want: []string{"t#0 key.b: only in A: 2"},
		},
		{
			name: "array element",
			a:    record("t", 0, `{"a":[1,2]}`, `null`),
			b:    record("t", 0, `{"a":[1,3]}`, `null`),
			want: []string{"t#0 key.a[1]: 2 != 3"},
		},
		{
			name: "string escape",
			a:    record("t", 0, `{"a":"é"}`, `null`),
			b:    record("t", 0, `{"a":"\u00e9"}`, `null`),
			want: []string{`t#0 key.a: "é" != "\u00e9"`},
		},
		{
			name: "whitespace only",
			a:    record("t", 0, `{"a":1}`, `null`),
			b:    record("t", 0, `{"a": 1}`, `null`),
			want: []string{"t#0 key: formatting differs at byte 5"},
		},
		{
			name: "tombstone against value",
			a:    Record{Topic: "t", Key: Bytes(`{"id":1}`)},
			b:    record("t", 0, `{"id":1}`, `{"op":"d"}`),
			want: []string{`t#0 value: null != {"op":"d"}`},
		},
		{
			name: "non-JSON bytes",
			a:    Record{Topic: "t", Key: Bytes{0xff, 0x01}},
			b:    Record{Topic: "t", Key: Bytes{0xff, 0x02}},
			want: []string{"t#0 key: \xff\x01 != \xff\x02"},
		},
		{
			name: "header value",
			a:    Record{Topic: "t", Headers: []Header{{Key: "__debezium.newkey", Value: Bytes(`{"id":2}`)}}},
			b:    Record{Topic: "t", Headers: []Header{{Key: "__debezium.newkey", Value: Bytes(`{"id":3}`)}}},
			want: []string{"t#0 headers[0](__debezium.newkey).id: 2 != 3"},
		},
		{
			name: "run id header value is ignored, its key is not",
			a:    Record{Topic: "t", Headers: []Header{{Key: "__debezium.context.runId", Value: Bytes("01a2")}, {Key: "__debezium.context.runId", Value: Bytes("x")}}},
			b:    Record{Topic: "t", Headers: []Header{{Key: "__debezium.context.runId", Value: Bytes("77ff")}, {Key: "other", Value: Bytes("x")}}},
			want: []string{`t#0 headers[1].key: "__debezium.context.runId" != "other"`},
		},
	}
	for _, tc := range cases {
		got := strings.Join(stringsOf(Compare([]Record{tc.a}, []Record{tc.b}, Replay)), "\n")
		if got != strings.Join(tc.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func TestCompareRecordCountsAndTopics(t *testing.T) {
	a := []Record{record("t", 0, `1`, `1`), record("t", 1, `2`, `2`), record("only-a", 0, `1`, `1`)}
	b := []Record{record("t", 0, `1`, `1`)}
	got := stringsOf(Compare(a, b, SameDB))
	want := []string{
		"only-a: 1 records != 0 records",
		"only-a#0: only in A (partition 0 offset 0)",
		"t: 2 records != 1 records",
		"t#1: only in A (partition 0 offset 1)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestCompareOffsets(t *testing.T) {
	key := `["pg-golden",{"server":"pg1"}]`
	a := []Record{{Topic: OffsetsTopic, Key: Bytes(key), Value: Bytes(`{"lsn_proc":10,"messageType":"INSERT","lsn_commit":9,"lsn":10,"txId":5,"ts_usec":1}`)}}
	replayed := []Record{{Topic: OffsetsTopic, Key: Bytes(key), Value: Bytes(`{"lsn_proc":20,"messageType":"INSERT","lsn_commit":19,"lsn":20,"txId":6,"ts_usec":2}`)}}
	if diffs := Compare(a, replayed, Replay); len(diffs) != 0 {
		t.Errorf("replay: positions should be blanked, got %v", diffs)
	}
	if diffs := Compare(a, replayed, SameDB); len(diffs) != 5 {
		t.Errorf("same-db: want the 5 position differences, got %v", diffs)
	}
	reordered := []Record{{Topic: OffsetsTopic, Key: Bytes(key), Value: Bytes(`{"messageType":"INSERT","lsn_proc":20,"lsn_commit":19,"lsn":20,"txId":6,"ts_usec":2}`)}}
	if diffs := Compare(a, reordered, Replay); len(diffs) != 1 || !strings.Contains(diffs[0].String(), "key order") {
		t.Errorf("replay: key order of an offset value must be compared, got %v", diffs)
	}
}

func TestReadOffsetsJSON(t *testing.T) {
	records, err := ReadOffsetsJSON(strings.NewReader(`[{"key":"[\"c\",{\"server\":\"pg1\"}]","value":"{\"lsn\":1}"},{"key":"k","value":null}]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 2 || string(records[0].Key) != `["c",{"server":"pg1"}]` || string(records[0].Value) != `{"lsn":1}` || records[1].Value != nil {
		t.Errorf("got %+v", records)
	}
}

func stringsOf(diffs []Difference) []string {
	out := make([]string, len(diffs))
	for i, d := range diffs {
		out[i] = d.String()
	}
	return out
}

// A record flattened by ExtractNewRecordState has no source block; the positions and times add.fields copied
// into it are blanked in replay mode, and nothing else is.
func TestCompareBlanksUnwrappedAddFields(t *testing.T) {
	a := record("pg1.t", 0, `{"id":1}`, `{"id":1,"__op":"c","__lsn":100,"__source_ts_ms":5,"__ts_ms":7}`)
	b := record("pg1.t", 0, `{"id":1}`, `{"id":1,"__op":"c","__lsn":200,"__source_ts_ms":6,"__ts_ms":8}`)
	if d := Compare([]Record{a}, []Record{b}, Replay); len(d) != 0 {
		t.Fatalf("replay mode must blank __lsn, __source_ts_ms and __ts_ms: %v", d)
	}
	if d := Compare([]Record{a}, []Record{b}, SameDB); len(d) != 2 {
		t.Fatalf("same-db mode blanks only the processing time __ts_ms; want 2 differences, got %v", d)
	}
	c := record("pg1.t", 0, `{"id":1}`, `{"id":1,"__op":"u","__lsn":200,"__source_ts_ms":6,"__ts_ms":8}`)
	if d := Compare([]Record{a}, []Record{c}, Replay); len(d) != 1 {
		t.Fatalf("a different __op must still be reported: %v", d)
	}
}

package capture

import (
	"bytes"
	"reflect"
	"testing"
)

func TestJSONLRoundTrip(t *testing.T) {
	records := []Record{
		{Topic: "pg1.public.t", Partition: 0, Offset: 7, Key: Bytes(`{"id":1}`), Value: Bytes(`{"a":"<&>"}`),
			Headers: []Header{{Key: "h", Value: Bytes{0xff, 0x00}}, {Key: "n", Value: nil}}, Timestamp: 1700000000000},
		{Topic: "pg1.public.t", Offset: 8, Key: Bytes(`{"id":1}`), Value: nil, Headers: []Header{}},
		{Topic: "pg1.public.t", Offset: 9, Key: nil, Value: Bytes{}, Headers: []Header{}},
	}
	var buf bytes.Buffer
	if err := WriteJSONL(&buf, records); err != nil {
		t.Fatal(err)
	}
	wantText := `{"topic":"pg1.public.t","partition":0,"offset":7,"key":"{\"id\":1}","value":"{\"a\":\"<&>\"}","headers":[{"key":"h","value":{"b64":"/wA="}},{"key":"n","value":null}],"timestamp":1700000000000}
{"topic":"pg1.public.t","partition":0,"offset":8,"key":"{\"id\":1}","value":null,"headers":[],"timestamp":0}
{"topic":"pg1.public.t","partition":0,"offset":9,"key":null,"value":"","headers":[],"timestamp":0}
`
	if buf.String() != wantText {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), wantText)
	}
	back, err := ReadJSONL(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, records) {
		t.Errorf("round trip changed records:\n got %#v\nwant %#v", back, records)
	}
}

func TestReadJSONLRejectsBadBytes(t *testing.T) {
	if _, err := ReadJSONL(bytes.NewBufferString(`{"topic":"t","key":42}` + "\n")); err == nil {
		t.Error("a number is not a bytes field")
	}
}

func TestSortRecords(t *testing.T) {
	records := []Record{{Topic: "b", Offset: 1}, {Topic: "a", Partition: 1, Offset: 0}, {Topic: "a", Offset: 2}, {Topic: "a", Offset: 1}}
	SortRecords(records)
	var got []string
	for _, r := range records {
		got = append(got, r.Topic+string(rune('0'+r.Partition))+string(rune('0'+r.Offset)))
	}
	if want := []string{"a01", "a02", "a10", "b01"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

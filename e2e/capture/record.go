// Package capture records what a connector wrote to Kafka as a JSONL file and compares two such
// captures byte for byte, blanking only the fields that must differ between two runs (times, positions).
//
// A capture line is one Kafka record:
//
//	{"topic":"pg1.public.t","partition":0,"offset":3,"key":…,"value":…,"headers":[{"key":"k","value":…}],"timestamp":1700000000000}
//
// key, value and header values hold the record's raw bytes: a JSON string when they are valid UTF-8,
// null for a null key or value, and {"b64":"…"} otherwise. Lines are in topic, partition, offset order.
package capture

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"unicode/utf8"
)

// Record is one Kafka record of a capture.
type Record struct {
	Topic     string   `json:"topic"`
	Partition int32    `json:"partition"`
	Offset    int64    `json:"offset"`
	Key       Bytes    `json:"key"`
	Value     Bytes    `json:"value"`
	Headers   []Header `json:"headers"`
	Timestamp int64    `json:"timestamp"` // milliseconds since the epoch, as the broker stored it
}

// Header is one Kafka record header.
type Header struct {
	Key   string `json:"key"`
	Value Bytes  `json:"value"`
}

// Bytes is a raw Kafka byte field; nil means a null key, value or header value (not an empty one).
type Bytes []byte

type b64Bytes struct {
	B64 string `json:"b64"`
}

// MarshalJSON writes valid UTF-8 as a JSON string, nil as null and anything else as {"b64":…}.
func (b Bytes) MarshalJSON() ([]byte, error) {
	switch {
	case b == nil:
		return []byte("null"), nil
	case utf8.Valid(b):
		return marshalNoEscapeHTML(string(b))
	default:
		return marshalNoEscapeHTML(b64Bytes{B64: base64.StdEncoding.EncodeToString(b)})
	}
}

// UnmarshalJSON reads the forms MarshalJSON writes.
func (b *Bytes) UnmarshalJSON(data []byte) error {
	trimmed := bytes.TrimSpace(data)
	switch {
	case bytes.Equal(trimmed, []byte("null")):
		*b = nil
		return nil
	case len(trimmed) > 0 && trimmed[0] == '"':
		var s string
		if err := json.Unmarshal(trimmed, &s); err != nil {
			return err
		}
		*b = Bytes(s)
		return nil
	default:
		var enc b64Bytes
		if err := json.Unmarshal(trimmed, &enc); err != nil {
			return fmt.Errorf("bytes field must be a string, null or {\"b64\":…}: %w", err)
		}
		raw, err := base64.StdEncoding.DecodeString(enc.B64)
		if err != nil {
			return fmt.Errorf("bad b64 bytes field: %w", err)
		}
		*b = raw
		return nil
	}
}

// marshalNoEscapeHTML keeps <, > and & readable; JSON values in captures are full of them.
func marshalNoEscapeHTML(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// SortRecords puts records in topic, partition, offset order.
func SortRecords(records []Record) {
	sort.SliceStable(records, func(i, j int) bool {
		a, b := records[i], records[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		if a.Partition != b.Partition {
			return a.Partition < b.Partition
		}
		return a.Offset < b.Offset
	})
}

// WriteJSONL writes records one per line, in the order given.
func WriteJSONL(w io.Writer, records []Record) error {
	bw := bufio.NewWriter(w)
	for i := range records {
		rec := records[i]
		if rec.Headers == nil {
			rec.Headers = []Header{} // always an array, so every line has the same shape
		}
		line, err := marshalNoEscapeHTML(rec)
		if err != nil {
			return fmt.Errorf("encode %s/%d@%d: %w", rec.Topic, rec.Partition, rec.Offset, err)
		}
		bw.Write(line)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// ReadJSONL reads a capture written by WriteJSONL; blank lines are ignored.
func ReadJSONL(r io.Reader) ([]Record, error) {
	var records []Record
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	for lineNo := 1; sc.Scan(); lineNo++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var rec Record
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, fmt.Errorf("line %d: %w", lineNo, err)
		}
		records = append(records, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return records, nil
}

package capture

import (
	"encoding/json"
	"fmt"
	"io"
)

// offsetEntry is one line of the offsets JSON that e2e/debezium/OffsetsDump.java prints for a Connect
// standalone offsets file: the key and value bytes as text (value null for a reset).
type offsetEntry struct {
	Key   *string `json:"key"`
	Value *string `json:"value"`
}

// ReadOffsetsJSON reads that offsets JSON as records of topic OffsetsTopic, in file order (sorted by key),
// so Compare can diff two offset stores with the offset rules.
func ReadOffsetsJSON(r io.Reader) ([]Record, error) {
	var entries []offsetEntry
	if err := json.NewDecoder(r).Decode(&entries); err != nil {
		return nil, fmt.Errorf("decode offsets json: %w", err)
	}
	records := make([]Record, 0, len(entries))
	for i, e := range entries {
		records = append(records, Record{Topic: OffsetsTopic, Offset: int64(i), Key: optionalBytes(e.Key), Value: optionalBytes(e.Value)})
	}
	return records, nil
}

func optionalBytes(s *string) Bytes {
	if s == nil {
		return nil
	}
	return Bytes(*s)
}

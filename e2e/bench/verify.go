package main

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// change is one row change: an insert or update carries the version k it wrote (a number the workload
// increases with every change, so per key the versions rise in commit order); a delete carries none.
type change struct {
	ID int64
	K  int32
	Op byte // 'c', 'u' or 'd'
}

// correctness is what a run's Kafka topic proves about the changes the workload committed.
type correctness struct {
	Lost            int `json:"lost"`             // committed changes never seen
	OrderViolations int `json:"order_violations"` // per key, an event not after the one before it
	Duplicates      int `json:"duplicates"`       // events seen more than once (allowed after a crash only)
	Unexpected      int `json:"unexpected"`       // events matching no committed change
}

// checkChanges compares the changes read from Kafka (in offset order) with the committed ones.
func checkChanges(committed, seen []change) correctness {
	type key struct {
		id int64
		k  int32
		op byte
	}
	keyOf := func(c change) key {
		if c.Op == 'd' {
			return key{id: c.ID, op: 'd'}
		}
		return key{id: c.ID, k: c.K, op: c.Op}
	}
	want := make(map[key]int, len(committed))
	for _, c := range committed {
		want[keyOf(c)]++
	}
	var res correctness
	got := make(map[key]int, len(seen))
	last := make(map[int64]change, len(committed))
	for _, s := range seen {
		k := keyOf(s)
		got[k]++
		switch {
		case got[k] > want[k] && want[k] > 0:
			res.Duplicates++
			continue // a redelivery is not an order violation
		case want[k] == 0:
			res.Unexpected++
			continue
		}
		if prev, ok := last[s.ID]; ok && !follows(prev, s) {
			res.OrderViolations++
		}
		last[s.ID] = s
	}
	for k, n := range want {
		res.Lost += max(n-got[k], 0)
	}
	return res
}

// follows reports whether next may come after prev for the same key: nothing follows a delete, an
// insert comes first, and versions rise.
func follows(prev, next change) bool {
	switch {
	case prev.Op == 'd', next.Op == 'c':
		return false
	case next.Op == 'd':
		return true
	}
	return next.K > prev.K
}

// envelope is the part of a Debezium change event value the benchmark reads.
type envelope struct {
	Before *rowImage `json:"before"`
	After  *rowImage `json:"after"`
	Source struct {
		TsMs int64 `json:"ts_ms"`
	} `json:"source"`
	Op string `json:"op"`
}

type rowImage struct {
	ID int64 `json:"id"`
	K  int32 `json:"k"`
}

// payloadMarker starts the envelope's payload in JsonConverter output with schemas on; decoding from
// there skips the schema, half of every value.
var payloadMarker = []byte(`,"payload":{`)

// decodeChange reads a JsonConverter value (schemas on or off) into the change and its commit time.
func decodeChange(value []byte) (change, int64, error) {
	body := value
	if i := bytes.Index(value, payloadMarker); i >= 0 && bytes.HasPrefix(value, []byte(`{"schema":`)) {
		body = bytes.TrimSpace(value[i+len(payloadMarker)-1:])
		body = body[:len(body)-1] // the envelope's closing brace
	}
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return change{}, 0, fmt.Errorf("decoding change event: %w", err)
	}
	switch {
	case env.Op == "d" && env.Before != nil:
		return change{ID: env.Before.ID, Op: 'd'}, env.Source.TsMs, nil
	case (env.Op == "c" || env.Op == "u" || env.Op == "r") && env.After != nil:
		return change{ID: env.After.ID, K: env.After.K, Op: env.Op[0]}, env.Source.TsMs, nil
	}
	return change{}, 0, fmt.Errorf("change event with op %q lacks its row image", env.Op)
}

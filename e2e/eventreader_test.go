package e2e

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// eventReader reads JSON change events (schemas enabled) from the start of some topics and keeps, per
// topic, the op of the last event of each row id: payload.after.id → payload.op. A record that is not
// such an event (a tombstone, a delete without after) counts for nothing.
type eventReader struct {
	t    testing.TB
	cl   *kgo.Client
	ops  map[string]map[int]string // topic → row id → op
	logs func() string             // what a failure shows: the logs of the cdcd processes under test
}

// newEventReader consumes topics from their start through a client built from opts (at least the seed
// brokers; testenv.SASLSSLKafka.FranzOpts for the SASL_SSL listener). The client is closed when t ends.
func newEventReader(t testing.TB, logs func() string, topics []string, opts ...kgo.Opt) *eventReader {
	t.Helper()
	opts = append(opts, kgo.ConsumeTopics(topics...), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	r := &eventReader{t: t, cl: cl, ops: map[string]map[int]string{}, logs: logs}
	for _, topic := range topics {
		r.ops[topic] = map[int]string{}
	}
	return r
}

// waitFor reads until every topic has events of want distinct row ids, failing t, with the logs, when ctx
// ends first.
func (r *eventReader) waitFor(ctx context.Context, want int) {
	r.t.Helper()
	for !r.has(want) {
		fetches := r.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			r.t.Fatalf("read %v, want %d events on each topic; cdcd log:\n%s", r.ops, want, r.logs())
		}
		fetches.EachRecord(func(rec *kgo.Record) {
			if id, op, ok := rowEvent(rec.Value); ok && r.ops[rec.Topic] != nil {
				r.ops[rec.Topic][id] = op
			}
		})
	}
}

func (r *eventReader) has(want int) bool {
	for _, ops := range r.ops {
		if len(ops) < want {
			return false
		}
	}
	return true
}

// rowEvent reads a JSON change event's payload.after.id and payload.op; ok is false when value is not JSON
// (a tombstone). A delete has no after: its id is 0.
func rowEvent(value []byte) (id int, op string, ok bool) {
	var ev struct {
		Payload struct {
			Op    string `json:"op"`
			After struct {
				ID int `json:"id"`
			} `json:"after"`
		} `json:"payload"`
	}
	if json.Unmarshal(value, &ev) != nil {
		return 0, "", false
	}
	return ev.Payload.After.ID, ev.Payload.Op, true
}

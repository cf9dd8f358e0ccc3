package main

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestConsumeReadsMatchingTopicsFromTheStart produces before the consumer starts and to a topic
// that appears while it runs, and expects both, with tombstones and headers intact, and nothing
// from topics outside the pattern.
func TestConsumeReadsMatchingTopicsFromTheStart(t *testing.T) {
	cluster, addr, err := startBroker()
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	producer, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	produce := func(r *kgo.Record) {
		t.Helper()
		if err := producer.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("producing to %s: %v", r.Topic, err)
		}
	}
	produce(&kgo.Record{Topic: "demo.public.orders", Key: []byte(`{"id":1}`), Value: []byte(`{"op":"c"}`)})
	produce(&kgo.Record{Topic: "other.public.orders", Key: []byte(`{"id":9}`), Value: []byte(`{"op":"c"}`)})

	got := make(chan record, 10)
	consumed := make(chan error, 1)
	go func() {
		consumed <- consume(ctx, addr, `^demo\.`, func(r record) { got <- r }, func(err error) { t.Errorf("consumer: %v", err) })
	}()
	next := func() record {
		t.Helper()
		select {
		case r := <-got:
			return r
		case <-ctx.Done():
			t.Fatal("no record within 30s")
			return record{}
		}
	}
	if r := next(); r.Topic != "demo.public.orders" || string(r.Key) != `{"id":1}` || string(r.Value) != `{"op":"c"}` {
		t.Errorf("first record = %+v", r)
	}
	produce(&kgo.Record{Topic: "demo.public.customers", Key: []byte(`{"id":2}`),
		Headers: []kgo.RecordHeader{{Key: "__debezium.oldkey", Value: []byte(`{"id":1}`)}}})
	r := next()
	if r.Topic != "demo.public.customers" || r.Value != nil {
		t.Errorf("tombstone on a new topic = %+v, want a nil value on demo.public.customers", r)
	}
	if len(r.Headers) != 1 || r.Headers[0].Key != "__debezium.oldkey" || string(r.Headers[0].Value) != `{"id":1}` {
		t.Errorf("headers = %+v", r.Headers)
	}
	cancel()
	if err := <-consumed; err != nil {
		t.Errorf("consume: %v", err)
	}
	select {
	case r := <-got:
		t.Errorf("unexpected record %+v", r)
	default:
	}
}

func TestConsumeRejectsABadPattern(t *testing.T) {
	err := consume(context.Background(), "127.0.0.1:1", `(`, func(record) {}, func(error) {})
	if err == nil {
		t.Error("consume accepted the pattern `(`")
	}
}

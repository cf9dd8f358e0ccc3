package kafka

import (
	"context"
	"net"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	metadataAPI "github.com/segmentio/kafka-go/protocol/metadata"
)

// countingTripper answers metadata requests with one partition per topic, or with errorCode, and counts
// the requests it sees.
type countingTripper struct {
	calls     map[string]int
	errorCode int16
}

func (f *countingTripper) RoundTrip(_ context.Context, _ net.Addr, req kafkago.Request) (kafkago.Response, error) {
	mreq := req.(*metadataAPI.Request)
	f.calls[mreq.TopicNames[0]]++
	resp := &metadataAPI.Response{}
	for _, name := range mreq.TopicNames {
		topic := metadataAPI.ResponseTopic{Name: name, ErrorCode: f.errorCode}
		if f.errorCode == 0 {
			topic.Partitions = []metadataAPI.ResponsePartition{{PartitionIndex: 0}}
		}
		resp.Topics = append(resp.Topics, topic)
	}
	return resp, nil
}

func TestMetadataCacheAsksOncePerTopicAndTTL(t *testing.T) {
	next := &countingTripper{calls: map[string]int{}}
	cache := newTopicMetadataCache(next, time.Second)
	clock := time.Unix(1000, 0)
	cache.now = func() time.Time { return clock }
	lookup := func(topic string) {
		t.Helper()
		resp, err := cache.RoundTrip(t.Context(), nil, &metadataAPI.Request{TopicNames: []string{topic}, AllowAutoTopicCreation: true})
		if err != nil || resp.(*metadataAPI.Response).Topics[0].Name != topic {
			t.Fatalf("lookup of %s: %v, %v", topic, resp, err)
		}
	}
	for range 1000 { // one Send of 1000 records: kafka-go looks the topic up for each
		lookup("a")
	}
	lookup("b")
	if next.calls["a"] != 1 || next.calls["b"] != 1 {
		t.Fatalf("the broker side saw %v, want one request per topic", next.calls)
	}
	clock = clock.Add(time.Second)
	lookup("a")
	if next.calls["a"] != 2 {
		t.Fatalf("after the TTL the broker side saw %d requests for a, want 2", next.calls["a"])
	}
}

func TestMetadataCacheKeepsNoErrors(t *testing.T) {
	next := &countingTripper{calls: map[string]int{}, errorCode: 5} // LEADER_NOT_AVAILABLE: being created
	cache := newTopicMetadataCache(next, time.Hour)
	for range 3 {
		if _, err := cache.RoundTrip(t.Context(), nil, &metadataAPI.Request{TopicNames: []string{"new"}}); err != nil {
			t.Fatal(err)
		}
	}
	if next.calls["new"] != 3 {
		t.Fatalf("the broker side saw %d requests, want every one of 3 (error answers must not be kept)", next.calls["new"])
	}
}

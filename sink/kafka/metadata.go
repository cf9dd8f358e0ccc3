package kafka

import (
	"context"
	"net"
	"sync"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	metadataAPI "github.com/segmentio/kafka-go/protocol/metadata"
)

// partitionCountTTL is how long a topic's successful metadata answer is reused for kafka-go's
// per-record partition-count lookups. Partition counts only grow, by an operator's hand, and the Java
// producer notices that after metadata.max.age.ms (5 minutes); a second adds nothing to notice.
const partitionCountTTL = time.Second

// topicMetadataCache answers the one-topic metadata requests that kafka-go's Writer makes for every
// record it is given (WriteMessages asks for the topic's partition count per message). kafka-go's
// Transport caches metadata too, but each lookup still filters a fresh response and goes through
// abandonableTransport's per-call cancellation: about 6 % of cdcd's CPU in a backlog drain. Only
// answers without errors are kept, so a topic that is being created or has no leader is asked again.
// Every other request goes to next.
type topicMetadataCache struct {
	next kafkago.RoundTripper
	ttl  time.Duration
	now  func() time.Time

	mu      sync.RWMutex
	answers map[metadataKey]cachedMetadata
}

type metadataKey struct {
	topic      string
	autoCreate bool
}

type cachedMetadata struct {
	resp    *metadataAPI.Response
	expires time.Time
}

func newTopicMetadataCache(next kafkago.RoundTripper, ttl time.Duration) *topicMetadataCache {
	return &topicMetadataCache{next: next, ttl: ttl, now: time.Now, answers: map[metadataKey]cachedMetadata{}}
}

func (c *topicMetadataCache) RoundTrip(ctx context.Context, addr net.Addr, req kafkago.Request) (kafkago.Response, error) {
	mreq, ok := req.(*metadataAPI.Request)
	if !ok || len(mreq.TopicNames) != 1 || mreq.IncludeClusterAuthorizedOperations || mreq.IncludeTopicAuthorizedOperations {
		return c.next.RoundTrip(ctx, addr, req)
	}
	key := metadataKey{topic: mreq.TopicNames[0], autoCreate: mreq.AllowAutoTopicCreation}
	now := c.now()
	c.mu.RLock()
	hit, found := c.answers[key]
	c.mu.RUnlock()
	if found && now.Before(hit.expires) {
		return hit.resp, nil // shared: kafka-go only reads metadata responses
	}

	resp, err := c.next.RoundTrip(ctx, addr, req)
	if err != nil {
		return resp, err
	}
	if mresp, ok := resp.(*metadataAPI.Response); ok && answersTopic(mresp, key.topic) {
		c.mu.Lock()
		c.answers[key] = cachedMetadata{resp: mresp, expires: now.Add(c.ttl)}
		c.mu.Unlock()
	}
	return resp, nil
}

// answersTopic reports whether resp describes topic, with partitions and without an error.
func answersTopic(resp *metadataAPI.Response, topic string) bool {
	for _, t := range resp.Topics {
		if t.Name == topic {
			return t.ErrorCode == 0 && len(t.Partitions) > 0
		}
	}
	return false
}

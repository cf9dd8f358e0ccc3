package kafka

import (
	"math/rand/v2"
	"sync"

	kafkago "github.com/segmentio/kafka-go"
)

// javaPartitioner places records where the Java producer's built-in partitioner
// (BuiltInPartitioner in kafka-clients 4.x) places them, so a topic written by cdcd and one
// written by Kafka Connect agree on the partition of every key:
//
//   - a non-nil key (also an empty one) goes to (murmur2(key) & 0x7fffffff) % partitions, which is
//     kafka-go's Murmur2Balancer with Consistent set; testdata/partition_vectors.txt holds the
//     real Java function's answers and partition_test.go compares them;
//   - a nil key has no required placement. Java sticks to one partition until batch.size bytes went
//     there, then switches (weighted by broker queue sizes); we keep the stickiness, which keeps
//     batches large, and pick the next partition uniformly.
//
// It also records each message's partition in its recordRef, because kafka-go fills in
// Message.Partition only when the broker answered, and a failed batch must still name its partition.
type javaPartitioner struct {
	keyed kafkago.Murmur2Balancer

	stickyBytes int64 // batch.size: bytes after which a nil-key topic moves on
	mu          sync.Mutex
	sticky      map[string]*stickyPartition // by topic
}

var _ kafkago.Balancer = (*javaPartitioner)(nil)

type stickyPartition struct {
	partition int
	bytes     int64
}

func newJavaPartitioner(stickyBytes int64) *javaPartitioner {
	return &javaPartitioner{
		keyed:       kafkago.Murmur2Balancer{Consistent: true},
		stickyBytes: stickyBytes,
		sticky:      map[string]*stickyPartition{},
	}
}

// Balance implements kafkago.Balancer. kafka-go calls it from Send's goroutine, possibly from
// several Sends at once; partitions is always 0..n-1.
func (p *javaPartitioner) Balance(msg kafkago.Message, partitions ...int) int {
	var partition int
	if msg.Key != nil {
		partition = p.keyed.Balance(msg, partitions...)
	} else {
		partition = p.stickyFor(msg.Topic, int64(len(msg.Value)), partitions)
	}
	if ref, ok := msg.WriterData.(*recordRef); ok {
		ref.partition = partition
	}
	return partition
}

func (p *javaPartitioner) stickyFor(topic string, size int64, partitions []int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.sticky[topic]
	if s == nil {
		s = &stickyPartition{partition: -1}
		p.sticky[topic] = s
	}
	if s.partition < 0 || s.partition >= len(partitions) || s.bytes >= p.stickyBytes {
		next := rand.IntN(len(partitions))
		if len(partitions) > 1 && next == s.partition {
			// Like Java, never "switch" to the partition we are leaving.
			next = (next + 1 + rand.IntN(len(partitions)-1)) % len(partitions)
		}
		s.partition, s.bytes = next, 0
	}
	s.bytes += size
	return partitions[s.partition]
}

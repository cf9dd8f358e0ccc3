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
type javaPartitioner struct {
	stickyBytes int64 // batch.size: bytes after which a nil-key topic moves on
	mu          sync.Mutex
	sticky      map[string]*stickyPartition // by topic
}

type stickyPartition struct {
	partition int
	bytes     int64
}

func newJavaPartitioner(stickyBytes int64) *javaPartitioner {
	return &javaPartitioner{
		stickyBytes: stickyBytes,
		sticky:      map[string]*stickyPartition{},
	}
}

// place returns the partition of a record of topic with key (nil: no key) and a value of size bytes,
// among partitions partitions. It may be called concurrently.
func (p *javaPartitioner) place(topic string, key []byte, size int64, partitions int) int {
	if key != nil {
		return murmur2Partition(key, partitions)
	}
	return p.stickyFor(topic, size, partitions)
}

// murmur2Partition is Java's toPositive(murmur2(key)) % partitions: kafka-go's Murmur2Balancer with
// Consistent set computes exactly that.
func murmur2Partition(key []byte, partitions int) int {
	ids := partitionIDs[:]
	if partitions <= len(ids) {
		ids = ids[:partitions]
	} else {
		ids = make([]int, partitions)
		for i := range ids {
			ids[i] = i
		}
	}
	return kafkago.Murmur2Balancer{Consistent: true}.Balance(kafkago.Message{Key: key}, ids...)
}

// partitionIDs is 0…1023, the partition lists Murmur2Balancer takes, without an allocation per record.
var partitionIDs = func() (ids [1024]int) {
	for i := range ids {
		ids[i] = i
	}
	return ids
}()

func (p *javaPartitioner) stickyFor(topic string, size int64, partitions int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.sticky[topic]
	if s == nil {
		s = &stickyPartition{partition: -1}
		p.sticky[topic] = s
	}
	if s.partition < 0 || s.partition >= partitions || s.bytes >= p.stickyBytes {
		next := rand.IntN(partitions)
		if partitions > 1 && next == s.partition {
			// Like Java, never "switch" to the partition we are leaving.
			next = (next + 1 + rand.IntN(partitions-1)) % partitions
		}
		s.partition, s.bytes = next, 0
	}
	s.bytes += size
	return s.partition
}

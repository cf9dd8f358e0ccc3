package testenv

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// topicPrefixMaxLen keeps prefix.database.table topic names far below Kafka's 249-byte limit.
const topicPrefixMaxLen = 60

func kafkaBrokers() []string {
	return []string{serviceAddr("CDCD_KAFKA_PORT", "59092")}
}

// Kafka returns the bootstrap brokers of the test-bed Kafka 4.4 (one KRaft node, automatic
// topic creation with one partition). It skips or fails t as the package doc says.
func Kafka(t testing.TB) []string {
	t.Helper()
	brokers := kafkaBrokers()
	requireService(t, "kafka", func(ctx context.Context) error {
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
		if err != nil {
			return err
		}
		defer cl.Close()
		return cl.Ping(ctx)
	})
	return brokers
}

// NewTopicPrefix returns a topic prefix (Debezium's topic.prefix) of t's own, so that tests
// sharing the long-lived broker never read each other's topics. It is only a name: it needs no
// service and works with in-process fakes as well. The test bed's topics whose names contain it
// are deleted when t ends (see ownedName).
func NewTopicPrefix(t testing.TB) string {
	t.Helper()
	return ownedName(t, topicPrefixMaxLen)
}

// ownedName is uniqueName for t, and deletes the test-bed Kafka's topics whose names contain it
// when t ends: tests name their topics, internal topics and databases (which become topic
// prefixes) after it, and a broker that kept every run's topics (a distributed worker's offsets
// topic alone has 25 partitions) took minutes to start after a few hundred runs. The deletion is
// best effort and only with the integration tier on: a test that never reached Kafka has nothing
// there, and a broker that is down has been reported by the test that needed it.
func ownedName(t testing.TB, maxLen int) string {
	t.Helper()
	name := uniqueName(t.Name(), maxLen)
	if enabled() {
		t.Cleanup(func() {
			if err := deleteTopicsContaining(name); err != nil {
				t.Logf("testenv: deleting the topics of %s: %v", name, err)
			}
		})
	}
	return name
}

// deleteTopicsContaining deletes the test-bed broker's topics whose names contain name.
func deleteTopicsContaining(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkaBrokers()...))
	if err != nil {
		return err
	}
	defer cl.Close()
	meta, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	del := kmsg.NewPtrDeleteTopicsRequest()
	del.TimeoutMillis = int32(adminTimeout / time.Millisecond)
	for _, topic := range meta.Topics {
		if topic.Topic != nil && strings.Contains(*topic.Topic, name) {
			del.TopicNames = append(del.TopicNames, *topic.Topic)
			dt := kmsg.NewDeleteTopicsRequestTopic()
			dt.Topic = topic.Topic
			del.Topics = append(del.Topics, dt)
		}
	}
	if len(del.TopicNames) == 0 {
		return nil
	}
	resp, err := del.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	for _, topic := range resp.Topics {
		if err := kerr.ErrorForCode(topic.ErrorCode); err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
			return fmt.Errorf("topic %s: %w", deref(topic.Topic), err)
		}
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

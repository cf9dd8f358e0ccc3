package testenv

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
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
// service, works with in-process fakes as well, and the topics made under it are not deleted.
func NewTopicPrefix(t testing.TB) string {
	t.Helper()
	return uniqueName(t.Name(), topicPrefixMaxLen)
}

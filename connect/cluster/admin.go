package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol/metadata"
)

// TopicSpec is how one of Connect's internal topics is created and what it must look like.
type TopicSpec struct {
	Name string
	// Partitions and ReplicationFactor are used only when the topic is created; -1 takes the
	// broker's default.
	Partitions        int32
	ReplicationFactor int16
	// SinglePartition is the config topic's rule: Connect refuses to start when it has more than one
	// partition, because the order of its records is the order of the cluster's decisions.
	SinglePartition bool
	// Configs are extra topic settings (config.storage.*, …). cleanup.policy is always compact.
	Configs map[string]string
}

// ConfigTopic, OffsetTopic and StatusTopic are Connect's internal topics with DistributedConfig's
// partition counts: 1 for configs, offset.storage.partitions (25) and status.storage.partitions (5).
func ConfigTopic(name string, replication int16) TopicSpec {
	return TopicSpec{Name: name, Partitions: 1, ReplicationFactor: replication, SinglePartition: true}
}

// OffsetTopic: see ConfigTopic.
func OffsetTopic(name string, partitions int32, replication int16) TopicSpec {
	return TopicSpec{Name: name, Partitions: partitions, ReplicationFactor: replication}
}

// StatusTopic: see ConfigTopic.
func StatusTopic(name string, partitions int32, replication int16) TopicSpec {
	return TopicSpec{Name: name, Partitions: partitions, ReplicationFactor: replication}
}

// metadataRetry is how long a topic that was just created may stay invisible to metadata and
// list-offsets requests, and how often they are retried meanwhile.
const (
	metadataRetryFor   = 30 * time.Second
	metadataRetryEvery = 100 * time.Millisecond
)

// ensureTopic creates spec's topic as compacted, or checks that the existing one is compacted only
// (and has one partition when it must), as KafkaTopicBasedBackingStore does before reading.
// It returns the topic's partition count.
func ensureTopic(ctx context.Context, c client, spec TopicSpec) (int32, error) {
	configs := map[string]string{}
	maps.Copy(configs, spec.Configs)
	configs["cleanup.policy"] = "compact"
	entries := make([]kafkago.ConfigEntry, 0, len(configs))
	for k, v := range configs {
		entries = append(entries, kafkago.ConfigEntry{ConfigName: k, ConfigValue: v})
	}
	// Once the topic is created, kafka-go's transport refreshes its metadata until the topic shows
	// up, within the client's Timeout, so that the requests below find its partitions.
	resp, err := c.CreateTopics(ctx, &kafkago.CreateTopicsRequest{Topics: []kafkago.TopicConfig{{
		Topic:             spec.Name,
		NumPartitions:     int(spec.Partitions),
		ReplicationFactor: int(spec.ReplicationFactor),
		ConfigEntries:     entries,
	}}})
	if err != nil {
		return 0, fmt.Errorf("create topic %s: %w", spec.Name, err)
	}
	created, ok := resp.Errors[spec.Name]
	switch {
	case !ok:
		return 0, fmt.Errorf("create topic %s: broker did not answer for it", spec.Name)
	case created == nil:
	case errors.Is(created, kafkago.TopicAlreadyExists):
		if err := checkCleanupPolicy(ctx, c, spec.Name); err != nil {
			return 0, err
		}
	default:
		return 0, fmt.Errorf("create topic %s: %w", spec.Name, created)
	}
	partitions, err := partitionCount(ctx, c, spec.Name)
	if err != nil {
		return 0, err
	}
	if spec.SinglePartition && partitions != 1 {
		return 0, &TopicError{Topic: spec.Name, Reason: fmt.Sprintf("has %d partitions; the config topic must have exactly 1", partitions)}
	}
	return partitions, nil
}

// checkCleanupPolicy refuses a topic whose cleanup.policy is not exactly compact: with deletion,
// connector configs and offsets would expire.
func checkCleanupPolicy(ctx context.Context, c client, topic string) error {
	resp, err := c.DescribeConfigs(ctx, &kafkago.DescribeConfigsRequest{Resources: []kafkago.DescribeConfigRequestResource{{
		ResourceType: kafkago.ResourceTypeTopic,
		ResourceName: topic,
		ConfigNames:  []string{"cleanup.policy"},
	}}})
	if err != nil {
		return fmt.Errorf("describe topic %s: %w", topic, err)
	}
	for _, r := range resp.Resources {
		if r.Error != nil {
			return fmt.Errorf("describe topic %s: %w", topic, r.Error)
		}
		for _, e := range r.ConfigEntries {
			if e.ConfigName != "cleanup.policy" {
				continue
			}
			policies := strings.Split(strings.ReplaceAll(e.ConfigValue, " ", ""), ",")
			if len(policies) != 1 || policies[0] != "compact" {
				return &TopicError{Topic: topic, Reason: fmt.Sprintf("cleanup.policy=%s; Connect's internal topics must be cleanup.policy=compact only", e.ConfigValue)}
			}
			return nil
		}
	}
	return &TopicError{Topic: topic, Reason: "broker did not report its cleanup.policy"}
}

// topicMetadata returns topic's partitions and their leaders as kafka-go's transport last saw
// them: it answers metadata requests from a cache that it refreshes every few seconds and after
// creating a topic, so a topic created elsewhere a moment ago may be unknown for a while
// (UNKNOWN_TOPIC_OR_PARTITION, which is retriable). The request never asks the broker to
// auto-create the topic. It is sent raw because kafka-go's typed Metadata turns a partition
// without a leader (-1) into one led by broker 0.
func topicMetadata(ctx context.Context, c client, topic string) (metadata.ResponseTopic, error) {
	resp, err := c.roundTrip(ctx, requestTimeout, &metadata.Request{TopicNames: []string{topic}})
	if err != nil {
		return metadata.ResponseTopic{}, fmt.Errorf("metadata of topic %s: %w", topic, err)
	}
	topics := resp.(*metadata.Response).Topics
	if len(topics) != 1 {
		return metadata.ResponseTopic{}, fmt.Errorf("metadata of topic %s: broker answered for %d topics", topic, len(topics))
	}
	if err := kafkaError(topics[0].ErrorCode); err != nil {
		return metadata.ResponseTopic{}, fmt.Errorf("metadata of topic %s: %w", topic, err)
	}
	return topics[0], nil
}

// partitionCount asks for the topic's partitions, waiting out the moments after creation when
// metadata does not know it yet.
func partitionCount(ctx context.Context, c client, topic string) (int32, error) {
	deadline := time.Now().Add(metadataRetryFor)
	for {
		t, err := topicMetadata(ctx, c, topic)
		switch {
		case err == nil && len(t.Partitions) > 0:
			return int32(len(t.Partitions)), nil
		case err != nil && !retriable(err):
			return 0, err
		case time.Now().After(deadline):
			if err == nil {
				err = fmt.Errorf("metadata of topic %s: %w", topic, kafkago.UnknownTopicOrPartition)
			}
			return 0, err
		}
		if err := sleep(ctx, metadataRetryEvery); err != nil {
			return 0, err
		}
	}
}

// listOffsets returns an offset of each of topic's partitions: at is kafkago.FirstOffset for the
// log start offset, or kafkago.LastOffset for the log end offset (the offset the next record will
// get, which a reader has caught up with when its position reaches it). It waits out the moments
// after creation when the partitions have no leader yet.
func listOffsets(ctx context.Context, c client, topic string, partitions []int, at int64, isolation kafkago.IsolationLevel) (map[int32]int64, error) {
	deadline := time.Now().Add(metadataRetryFor)
	for {
		offsets, err := listOffsetsOnce(ctx, c, topic, partitions, at, isolation)
		if err == nil || !retriable(err) || time.Now().After(deadline) {
			return offsets, err
		}
		if err := sleep(ctx, metadataRetryEvery); err != nil {
			return nil, err
		}
	}
}

func listOffsetsOnce(ctx context.Context, c client, topic string, partitions []int, at int64, isolation kafkago.IsolationLevel) (map[int32]int64, error) {
	reqs := make([]kafkago.OffsetRequest, len(partitions))
	for i, p := range partitions {
		reqs[i] = kafkago.OffsetRequest{Partition: p, Timestamp: at}
	}
	resp, err := c.ListOffsets(ctx, &kafkago.ListOffsetsRequest{Topics: map[string][]kafkago.OffsetRequest{topic: reqs}, IsolationLevel: isolation})
	if err != nil {
		return nil, fmt.Errorf("list offsets: %w", err)
	}
	offsets := make(map[int32]int64, len(partitions))
	for _, p := range resp.Topics[topic] {
		switch {
		case errors.Is(p.Error, kafkago.Unknown):
			// kafka-go sends one request per partition and reports one that did not reach the
			// partition's leader as UNKNOWN_SERVER_ERROR. Not wrapped: it is the failure to reach
			// a broker, and retried as one.
			return nil, fmt.Errorf("list offsets of partition %d: its leader did not answer", p.Partition)
		case p.Error != nil:
			return nil, fmt.Errorf("list offsets of partition %d: %w", p.Partition, p.Error)
		case at == kafkago.FirstOffset:
			offsets[int32(p.Partition)] = p.FirstOffset
		default:
			offsets[int32(p.Partition)] = p.LastOffset
		}
	}
	if len(offsets) != len(partitions) {
		return nil, fmt.Errorf("list offsets: got %d of %d partitions: %w", len(offsets), len(partitions), kafkago.UnknownTopicOrPartition)
	}
	return offsets, nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

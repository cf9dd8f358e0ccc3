package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
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
func ensureTopic(ctx context.Context, cl *kgo.Client, spec TopicSpec) (int32, error) {
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic = spec.Name
	rt.NumPartitions = spec.Partitions
	rt.ReplicationFactor = spec.ReplicationFactor
	configs := map[string]string{}
	for k, v := range spec.Configs {
		configs[k] = v
	}
	configs["cleanup.policy"] = "compact"
	for k, v := range configs {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, kmsg.StringPtr(v)
		rt.Configs = append(rt.Configs, c)
	}
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 30000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return 0, fmt.Errorf("create topic %s: %w", spec.Name, err)
	}
	if len(resp.Topics) != 1 {
		return 0, fmt.Errorf("create topic %s: broker answered for %d topics", spec.Name, len(resp.Topics))
	}
	switch err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); {
	case err == nil:
	case errors.Is(err, kerr.TopicAlreadyExists):
		if err := checkCleanupPolicy(ctx, cl, spec.Name); err != nil {
			return 0, err
		}
	default:
		return 0, fmt.Errorf("create topic %s: %w", spec.Name, err)
	}
	partitions, err := partitionCount(ctx, cl, spec.Name)
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
func checkCleanupPolicy(ctx context.Context, cl *kgo.Client, topic string) error {
	req := kmsg.NewPtrDescribeConfigsRequest()
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType = kmsg.ConfigResourceTypeTopic
	res.ResourceName = topic
	res.ConfigNames = []string{"cleanup.policy"}
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("describe topic %s: %w", topic, err)
	}
	for _, r := range resp.Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			return fmt.Errorf("describe topic %s: %w", topic, err)
		}
		for _, c := range r.Configs {
			if c.Name != "cleanup.policy" || c.Value == nil {
				continue
			}
			policies := strings.Split(strings.ReplaceAll(*c.Value, " ", ""), ",")
			if len(policies) != 1 || policies[0] != "compact" {
				return &TopicError{Topic: topic, Reason: fmt.Sprintf("cleanup.policy=%s; Connect's internal topics must be cleanup.policy=compact only", *c.Value)}
			}
			return nil
		}
	}
	return &TopicError{Topic: topic, Reason: "broker did not report its cleanup.policy"}
}

// partitionCount asks for the topic's partitions, waiting out the moments after creation when
// metadata does not know it yet. It never asks the broker to auto-create the topic.
func partitionCount(ctx context.Context, cl *kgo.Client, topic string) (int32, error) {
	deadline := time.Now().Add(metadataRetryFor)
	for {
		req := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, rt)
		req.AllowAutoTopicCreation = false
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return 0, fmt.Errorf("metadata of topic %s: %w", topic, err)
		}
		if len(resp.Topics) == 1 {
			t := resp.Topics[0]
			err := kerr.ErrorForCode(t.ErrorCode)
			if err == nil && len(t.Partitions) > 0 {
				return int32(len(t.Partitions)), nil
			}
			if err != nil && !kerr.IsRetriable(err) && !errors.Is(err, kerr.UnknownTopicOrPartition) {
				return 0, fmt.Errorf("metadata of topic %s: %w", topic, err)
			}
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("metadata of topic %s: %w", topic, kerr.UnknownTopicOrPartition)
		}
		if err := sleep(ctx, metadataRetryEvery); err != nil {
			return 0, err
		}
	}
}

// endOffsets returns the log end offset of every partition of topic: the offset the next record
// will get, which a reader has caught up with when its position reaches it.
func endOffsets(ctx context.Context, cl *kgo.Client, topic string, partitions int32) (map[int32]int64, error) {
	deadline := time.Now().Add(metadataRetryFor)
	for {
		ends, err := listEndOffsets(ctx, cl, topic, partitions)
		if err == nil || !kerr.IsRetriable(err) || time.Now().After(deadline) {
			return ends, err
		}
		if err := sleep(ctx, metadataRetryEvery); err != nil {
			return nil, err
		}
	}
}

func listEndOffsets(ctx context.Context, cl *kgo.Client, topic string, partitions int32) (map[int32]int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for p := range partitions {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition = p
		rp.Timestamp = -1 // latest
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("end offsets of topic %s: %w", topic, err)
	}
	ends := make(map[int32]int64, partitions)
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, fmt.Errorf("end offset of %s[%d]: %w", topic, p.Partition, err)
			}
			ends[p.Partition] = p.Offset
		}
	}
	if int32(len(ends)) != partitions {
		return nil, fmt.Errorf("end offsets of topic %s: got %d of %d partitions: %w", topic, len(ends), partitions, kerr.UnknownTopicOrPartition)
	}
	return ends, nil
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

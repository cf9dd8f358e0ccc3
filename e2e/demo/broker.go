package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// startBroker starts an in-process Kafka-protocol broker on a random port of 127.0.0.1 and
// returns it with its address. Topics are created on first use, with one partition each so that
// a topic's events print in the order they were produced.
func startBroker() (*kfake.Cluster, string, error) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1))
	if err != nil {
		return nil, "", fmt.Errorf("starting kfake: %w", err)
	}
	return cluster, cluster.ListenAddrs()[0], nil
}

// topicDiscoveryInterval is how often the consumer looks for new topics: cdcd creates a table's
// topic with its first event, and that event should print soon after.
const topicDiscoveryInterval = time.Second

// consume reads every topic whose name matches topicPattern from its beginning and hands each
// record to onRecord, one at a time, until ctx ends. Errors the client cannot retry past go to
// onError. It returns once the client is closed.
func consume(ctx context.Context, broker, topicPattern string, onRecord func(record), onError func(error)) error {
	if _, err := regexp.Compile(topicPattern); err != nil {
		return fmt.Errorf("consumer: topic pattern: %w", err)
	}
	client, err := kgo.NewClient(
		kgo.SeedBrokers(broker),
		kgo.ConsumeRegex(),
		kgo.ConsumeTopics(topicPattern),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.MetadataMaxAge(topicDiscoveryInterval),
		kgo.MetadataMinAge(topicDiscoveryInterval/4),
		kgo.FetchMaxWait(250*time.Millisecond),
	)
	if err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	defer client.Close()
	for ctx.Err() == nil {
		fetches := client.PollFetches(ctx)
		fetches.EachError(func(topic string, partition int32, err error) {
			if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				onError(fmt.Errorf("consumer: %s[%d]: %w", topic, partition, err))
			}
		})
		fetches.EachRecord(func(r *kgo.Record) {
			headers := make([]header, len(r.Headers))
			for i, h := range r.Headers {
				headers[i] = header{Key: h.Key, Value: h.Value}
			}
			onRecord(record{Topic: r.Topic, Key: r.Key, Value: r.Value, Headers: headers})
		})
	}
	return nil
}

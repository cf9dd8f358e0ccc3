package cluster

import (
	"context"
	"log/slog"

	"github.com/cdcd/cdcd/connect/config"
	kafkago "github.com/segmentio/kafka-go"
)

// Stores are a distributed worker's three internal topics.
type Stores struct {
	Configs *ConfigStore
	Offsets *OffsetStore
	Status  *StatusStore
}

// A StoresOption changes how OpenStores reaches Kafka.
type StoresOption func(*LogConfig)

// WithTransport sends every request of the three topics through t (see LogConfig.Transport).
func WithTransport(t kafkago.RoundTripper) StoresOption {
	return func(c *LogConfig) { c.Transport = t }
}

// OpenStores opens the topics a distributed worker config names, creating them with its partition
// counts and replication factors when missing, in Connect's start order (offsets, statuses, configs),
// each read to its end. onConfigChange is ConfigStoreConfig.OnChange (may be nil).
func OpenStores(ctx context.Context, w *config.Worker, onConfigChange func(connector string), logger *slog.Logger, opts ...StoresOption) (*Stores, error) {
	base := clientIDBase(w)
	logCfg := func(suffix string, spec TopicSpec) LogConfig {
		c := LogConfig{Brokers: w.BootstrapServers, ClientID: base + suffix, Topic: spec, Logger: logger}
		for _, opt := range opts {
			opt(&c)
		}
		return c
	}
	offsetsCfg := logCfg("-offsets", OffsetTopic(w.OffsetStorageTopic, w.OffsetStoragePartitions, w.OffsetStorageReplicationFactor))
	// Under exactly-once, tasks write their offsets in transactions: an aborted one's must not count.
	offsetsCfg.ReadCommitted = w.ExactlyOnceSource
	offsets, err := OpenOffsetStore(ctx, offsetsCfg)
	if err != nil {
		return nil, err
	}
	status, err := OpenStatusStore(ctx, logCfg("-statuses", StatusTopic(w.StatusStorageTopic, w.StatusStoragePartitions, w.StatusStorageReplicationFactor)))
	if err != nil {
		offsets.Close()
		return nil, err
	}
	configsCfg := logCfg("-configs", ConfigTopic(w.ConfigStorageTopic, w.ConfigStorageReplicationFactor))
	// A Java leader of an exactly-once cluster writes the config topic in transactions (its fencable
	// writer); KafkaConfigBackingStore reads it read_committed then, so an aborted write never counts.
	configsCfg.ReadCommitted = w.ExactlyOnceSource
	configs, err := OpenConfigStore(ctx, ConfigStoreConfig{Log: configsCfg, OnChange: onConfigChange})
	if err != nil {
		offsets.Close()
		status.Close()
		return nil, err
	}
	return &Stores{Configs: configs, Offsets: offsets, Status: status}, nil
}

// Close stops reading all three topics.
func (s *Stores) Close() {
	s.Configs.Close()
	s.Status.Close()
	s.Offsets.Close()
}

// SlotLedgerLog is the LogConfig of cdcd's own internal topic beside Connect's, the slot guardian's
// ledger: one partition, compacted, with config.storage.replication.factor (the ledger matters as much
// as the configs: without it a deleted connector's slot is foreign, never orphaned).
func SlotLedgerLog(w *config.Worker, topic string, logger *slog.Logger, opts ...StoresOption) LogConfig {
	c := LogConfig{Brokers: w.BootstrapServers, ClientID: clientIDBase(w) + "-slots", Logger: logger,
		Topic: TopicSpec{Name: topic, Partitions: 1, ReplicationFactor: w.ConfigStorageReplicationFactor}}
	for _, opt := range opts {
		opt(&c)
	}
	return c
}

// ConnectorOffsetLog is the LogConfig of a connector's own offsets topic (the connector key
// offsets.storage.topic, KIP-618), on the worker's cluster: created when missing as Connect's
// KafkaOffsetBackingStore creates it, with the worker's offset.storage.partitions and
// offset.storage.replication.factor, compacted; read read_committed, as Connect's offsets consumer of
// a connector reads it under exactly-once and by default without.
func ConnectorOffsetLog(w *config.Worker, topic string, logger *slog.Logger, opts ...StoresOption) LogConfig {
	c := LogConfig{Brokers: w.BootstrapServers, ClientID: clientIDBase(w) + "-connector-offsets", Logger: logger,
		Topic: OffsetTopic(topic, w.OffsetStoragePartitions, w.OffsetStorageReplicationFactor), ReadCommitted: true}
	for _, opt := range opts {
		opt(&c)
	}
	return c
}

// MemberConfigFor fills a MemberConfig's Kafka and group settings from a distributed worker config;
// the caller adds URL, Configs and OnAssignment, and Transport when the stores got one.
func MemberConfigFor(w *config.Worker) MemberConfig {
	return MemberConfig{
		Brokers:                    w.BootstrapServers,
		ClientID:                   clientIDBase(w),
		GroupID:                    w.GroupID,
		SessionTimeout:             w.SessionTimeout,
		HeartbeatInterval:          w.HeartbeatInterval,
		RebalanceTimeout:           w.RebalanceTimeout,
		ScheduledRebalanceMaxDelay: w.ScheduledRebalanceMaxDelay,
	}
}

// clientIDBase is client.id, or one naming the group, as Connect derives its internal clients' ids.
func clientIDBase(w *config.Worker) string {
	if w.ClientID != "" {
		return w.ClientID
	}
	return "cdcd-" + w.GroupID
}

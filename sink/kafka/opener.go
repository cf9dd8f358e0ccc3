package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/cdcd/cdcd/sink"
)

// Opener is the Kafka sink as the runtime sees it: one Writer per task, built from Connect's producer
// settings (with their security), the admin client's security settings and the connector's
// topic.creation.* settings. It holds no state and may be used concurrently.
type Opener struct{}

var (
	_ sink.Opener = Opener{}
	_ sink.Fencer = Opener{}
)

// Fence takes over cfg.TransactionalID with InitProducerId (which fences its earlier producers and aborts
// their open transaction), with the task producer's settings and security, as Connect's
// Admin.fenceProducers does.
func (Opener) Fence(ctx context.Context, cfg sink.Config) error {
	if cfg.TransactionalID == "" {
		return errors.New("kafka: fencing needs a transactional.id")
	}
	settings, err := parseProducerSettings(Config{Brokers: cfg.Servers, ClientID: cfg.ClientID, Producer: cfg.Settings, TransactionalID: cfg.TransactionalID}, slog.New(slog.DiscardHandler))
	if err != nil {
		return fmt.Errorf("kafka producer: %w", WithKeyPrefix(err, "producer."))
	}
	sec, err := ParseClientSecurity(cfg.Settings)
	if err != nil {
		return fmt.Errorf("kafka producer: %w", WithKeyPrefix(err, "producer."))
	}
	d := &dialer{security: sec, clientID: settings.clientID, timeout: settings.requestTimeout}
	find := &syncConn{dialer: d, addrs: func() []string { return settings.brokers }}
	defer find.close()
	c := &transactionCoordinator{id: settings.transactionalID, find: find, dialer: d, timeout: settings.requestTimeout, backoff: settings.backoffMin}
	defer c.close()
	_, err = c.initTransactions(ctx, settings.transactionTimeout)
	return err
}

// OpenSink builds a Writer for one task; it does not contact Kafka.
func (Opener) OpenSink(cfg sink.Config, log *slog.Logger) (sink.Sink, error) {
	worker := map[string]string{"topic.creation.enable": strconv.FormatBool(cfg.TopicCreationEnabled)}
	topicCreation, err := ParseTopicCreation(worker, cfg.ConnectorConfig)
	if err != nil {
		return nil, err
	}
	admin := cfg.AdminSettings
	if admin == nil {
		admin = map[string]string{}
	}
	w, err := NewWriter(Config{
		Brokers: cfg.Servers, ClientID: cfg.ClientID, Producer: cfg.Settings, TopicCreation: topicCreation,
		// Connect names a source task's admin client connector-adminclient-<connector>-<task>.
		Admin: admin, AdminClientID: "connector-adminclient-" + cfg.Connector + "-0",
		TransactionalID: cfg.TransactionalID,
	}, log)
	if err != nil {
		return nil, err
	}
	return w, nil
}

package main

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"strings"

	"github.com/cdcd/cdcd/connect"
	"github.com/cdcd/cdcd/connect/cluster"
	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/connect/rest"
	"github.com/cdcd/cdcd/sink/kafka"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/mysql"
	"github.com/cdcd/cdcd/source/mysql/types"
	"github.com/cdcd/cdcd/source/postgres"
	"github.com/cdcd/cdcd/source/postgres/slotguard"
	"github.com/cdcd/cdcd/source/props"
	kafkago "github.com/segmentio/kafka-go"
)

// runtimeParts is the one place that names the concrete readers, the sink and the Kafka clients readers
// borrow (the schema history's log, the signal topic's consumer): a new reader or sink is one line here.
// ledger records the slots and publications the PostgreSQL tasks create. kafkaTransport is the worker's
// one Kafka transport (see workerTransport); the signal consumer does not use it, as Debezium's consumer
// takes its security from signal.consumer.* alone.
func runtimeParts(cfg *config.Worker, kafkaTransport *kafka.Transport, ledger *slotguard.Ledger, log *slog.Logger) connect.Parts {
	var transport kafkago.RoundTripper // nil (kafka-go's defaults) when there is none, not a nil *kafka.Transport
	if kafkaTransport != nil {
		transport = kafkaTransport
	}
	return connect.Parts{
		Connectors: []source.Connector{
			postgres.Connector{Recorder: ledger},
			mysql.Connector{Flavor: types.MySQL},
			mysql.Connector{Flavor: types.MariaDB},
		},
		Sink:          kafka.Opener{},
		Logs:          kafka.NewLogOpener(kafka.LogOpenerConfig{Brokers: cfg.BootstrapServers, Transport: transport, ClientID: cfg.ClientID, Log: log}),
		Signals:       kafka.NewSignalOpener(),
		Kafka:         transport,
		OwnsWorkerKey: ownsWorkerKey,
	}
}

// workerTransport is the one transport of the worker's own Kafka clients, with the TLS and SASL of its
// top-level settings as Connect gives them to its internal clients: the distributed group and internal
// topics, the cluster id lookup, and the durable logs (schema history) that name no security of their
// own. It also checks the security the worker's file gives the tasks' clients (producer.*, and admin.*
// over the top-level keys, as Connect's Worker.adminConfigs merges them), so a setting cdcd cannot honour
// stops the worker at start, naming the key.
func workerTransport(cfg *config.Worker) (*kafka.Transport, error) {
	clientID := cfg.ClientID
	if clientID == "" {
		clientID = "cdcd"
	}
	t, err := kafka.NewTransportFrom(cfg.Client, clientID)
	if err != nil {
		return nil, fmt.Errorf("%w: the Kafka client security settings: %w", config.ErrWorkerConfig, err)
	}
	if _, err := kafka.ParseClientSecurity(cfg.Producer); err != nil {
		return nil, fmt.Errorf("%w: the producer's security settings: %w", config.ErrWorkerConfig, kafka.WithKeyPrefix(err, "producer."))
	}
	admin := maps.Clone(cfg.Client)
	maps.Copy(admin, props.KafkaSecuritySettings(cfg.Admin))
	if _, err := kafka.ParseClientSecurity(admin); err != nil {
		return nil, fmt.Errorf("%w: the admin client's security settings (admin.* over the top-level ones): %w", config.ErrWorkerConfig, err)
	}
	return t, nil
}

// ownsWorkerKey reports worker keys of cdcd's own, which Connect does not know: the slot guardian's and the
// REST API's credentials file and read-only users.
func ownsWorkerKey(key string) bool {
	return strings.HasPrefix(key, slotguard.ConfigPrefix) || key == rest.CredentialsFileKey || key == rest.ReadOnlyUsersKey
}

// slotRegistry tells the guardian which PostgreSQL connectors exist and which slots they use: a
// standalone worker's, or (distributed) the whole cluster's from the config topic.
type slotRegistry struct {
	connectors interface {
		ConfiguredConnectors() []connect.ConfiguredConnector
	}
}

var _ slotguard.Registry = slotRegistry{}

func (r slotRegistry) Connectors() []slotguard.ConnectorSlot {
	var out []slotguard.ConnectorSlot
	for _, c := range r.connectors.ConfiguredConnectors() {
		cfg, ok := postgresConfig(c.Name, c.Resolved)
		if !ok {
			continue // not a PostgreSQL connector, or one whose config its task refuses too
		}
		out = append(out, slotguard.ConnectorSlot{
			Connector: c.Name, Server: cfg.Server(), Database: cfg.DBName, SlotName: cfg.SlotName,
			Publication: cfg.PublicationName, State: string(c.State), DSN: cfg.DSN(), Hide: c.Hide,
		})
	}
	return out
}

// dropSlotOnDelete is the delete hook for DELETE /connectors/{name}?dropSlot=true: it drops the deleted
// connector's slot with drop, and the publication cdcd created for it unless another connector uses it.
// resolve resolves the deleted config's placeholders.
func dropSlotOnDelete(resolve func(map[string]string) (map[string]string, error), drop func(ctx context.Context, server, slot string) error) connect.DeleteHook {
	return func(ctx context.Context, name string, props map[string]string) error {
		if !rest.DropSlotRequested(ctx) {
			return nil
		}
		resolved, err := resolve(props)
		if err != nil {
			return err
		}
		cfg, ok := postgresConfig(name, resolved)
		if !ok {
			return nil // only PostgreSQL connectors have slots
		}
		return drop(ctx, cfg.Server(), cfg.SlotName)
	}
}

// slotLeadership is the guardian's Leadership in distributed mode: the group's leader watches the slots.
type slotLeadership struct{ d *connect.Distributed }

func (l slotLeadership) Leads() bool {
	leads, _ := l.d.Leads()
	return leads
}

// ledgerTopic is the compacted topic a distributed cluster keeps the slot ledger in.
type ledgerTopic struct{ log *cluster.TopicLog } // set once the topic is open, before any task starts

var _ slotguard.RecordLog = (*ledgerTopic)(nil)

func (t *ledgerTopic) WriteRecords(ctx context.Context, entries []slotguard.LedgerEntry) error {
	msgs := make([]cluster.Message, len(entries))
	for i, e := range entries {
		msgs[i] = cluster.Message{Key: e.Key, Value: e.Value}
	}
	return t.log.Write(ctx, msgs...)
}

// openSlotLedger reads the cluster's slot ledger topic to its end into ledger and keeps tailing it until
// the returned log is closed; ledger writes through topic.
func openSlotLedger(ctx context.Context, cfg *config.Worker, topicName string, kafkaTransport *kafka.Transport, ledger *slotguard.Ledger, topic *ledgerTopic, log *slog.Logger) (*cluster.TopicLog, error) {
	var opts []cluster.StoresOption
	if kafkaTransport != nil {
		opts = append(opts, cluster.WithTransport(kafkaTransport))
	}
	logCfg := cluster.SlotLedgerLog(cfg, topicName, log, opts...)
	tl, err := cluster.OpenLog(ctx, logCfg, func(r cluster.Record) {
		if err := ledger.Apply(r.Key, r.Value); err != nil {
			log.Warn("skipping a record of the slot ledger topic", "topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "error", err)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("opening the slot ledger topic %s (%s): %w", topicName, slotguard.ConfigPrefix+"storage.topic", err)
	}
	topic.log = tl
	return tl, nil
}

// postgresConfig parses a resolved config when it is a valid PostgreSQL connector's.
func postgresConfig(name string, resolved map[string]string) (*postgres.Config, bool) {
	if !source.NamesClass(resolved["connector.class"], postgres.ConnectorClass) {
		return nil, false
	}
	cfg, err := postgres.ParseConfig(name, resolved, slog.New(slog.DiscardHandler))
	return cfg, err == nil
}

package main

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"strings"

	"github.com/cdcd/cdcd/connect"
	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/connect/rest"
	"github.com/cdcd/cdcd/sink/kafka"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/mysql"
	"github.com/cdcd/cdcd/source/mysql/types"
	"github.com/cdcd/cdcd/source/postgres"
	"github.com/cdcd/cdcd/source/postgres/slotguard"
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
	maps.Copy(admin, kafka.SecuritySettings(cfg.Admin))
	if _, err := kafka.ParseClientSecurity(admin); err != nil {
		return nil, fmt.Errorf("%w: the admin client's security settings (admin.* over the top-level ones): %w", config.ErrWorkerConfig, err)
	}
	return t, nil
}

// ownsWorkerKey reports worker keys of cdcd's own, which Connect does not know: the slot guardian's and the
// REST API's credentials file.
func ownsWorkerKey(key string) bool {
	return strings.HasPrefix(key, slotguard.ConfigPrefix) || key == rest.CredentialsFileKey
}

// slotRegistry tells the guardian which PostgreSQL connectors exist and which slots they use.
type slotRegistry struct{ w *connect.Worker }

var _ slotguard.Registry = slotRegistry{}

func (r slotRegistry) Connectors() []slotguard.ConnectorSlot {
	var out []slotguard.ConnectorSlot
	for _, c := range r.w.ConfiguredConnectors() {
		cfg, ok := postgresConfig(c.Name, c.Resolved)
		if !ok {
			continue // not a PostgreSQL connector, or one whose config its task refuses too
		}
		out = append(out, slotguard.ConnectorSlot{
			Connector: c.Name, Server: cfg.Server(), Database: cfg.DBName, SlotName: cfg.SlotName,
			Publication: cfg.PublicationName, State: string(c.State), DSN: cfg.DSN(),
		})
	}
	return out
}

// dropSlotOnDelete is the delete hook for DELETE /connectors/{name}?dropSlot=true: it drops the deleted
// connector's slot, and the publication cdcd created for it unless another connector uses it.
func dropSlotOnDelete(w *connect.Worker, guardian *slotguard.Guardian) connect.DeleteHook {
	return func(ctx context.Context, name string, props map[string]string) error {
		if !rest.DropSlotRequested(ctx) {
			return nil
		}
		resolved, err := w.ResolveConnectorConfig(props)
		if err != nil {
			return err
		}
		cfg, ok := postgresConfig(name, resolved)
		if !ok {
			return nil // only PostgreSQL connectors have slots
		}
		return guardian.DropConnectorSlot(ctx, cfg.Server(), cfg.SlotName)
	}
}

// postgresConfig parses a resolved config when it is a valid PostgreSQL connector's.
func postgresConfig(name string, resolved map[string]string) (*postgres.Config, bool) {
	if !source.NamesClass(resolved["connector.class"], postgres.ConnectorClass) {
		return nil, false
	}
	cfg, err := postgres.ParseConfig(name, resolved, slog.New(slog.DiscardHandler))
	return cfg, err == nil
}

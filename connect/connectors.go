package connect

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/cdcd/cdcd/sink"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/signal"
	kafkago "github.com/segmentio/kafka-go"
)

// Parts are the concrete pieces a runtime runs, wired by cmd/cdcd: the connector classes, the sink every
// task writes to, and the durable logs readers keep. The runtime knows them only through these contracts.
type Parts struct {
	// Connectors are the connector classes, in the order GET /connector-plugins lists them.
	Connectors []source.Connector
	// Sink opens each task's sink.
	Sink sink.Opener
	// Logs opens the durable logs readers keep beside their stream (the binlog schema history).
	Logs source.LogOpener
	// Signals opens the consumers of the connectors' Kafka signal topics (the kafka signal channel).
	Signals signal.KafkaOpener
	// Kafka carries every request of the distributed worker's own Kafka clients (the group membership and
	// the config, offset and status topics): the worker's one transport, with the TLS and SASL of its
	// top-level settings, shared by all of them. Nil gives each client a kafka-go Transport of its own
	// with kafka-go's defaults (plaintext). Standalone mode has no such clients.
	Kafka kafkago.RoundTripper
	// OwnsWorkerKey reports worker keys that a wired part reads (the slot guardian's, the REST API's
	// credentials file), which Connect does not define; nil owns none.
	OwnsWorkerKey func(key string) bool
}

// connectorSet is the connector classes a runtime runs.
type connectorSet []source.Connector

// find returns the connector that name (a class, its simple name, or that without "Connector") names, as
// Connect's plugin aliases do, or nil.
func (s connectorSet) find(name string) source.Connector {
	for _, c := range s {
		if source.NamesClass(name, c.Class()) {
			return c
		}
	}
	return nil
}

// forConfig returns the connector of a config, or an error naming connector.class.
func (s connectorSet) forConfig(props map[string]string) (source.Connector, error) {
	class, ok := props["connector.class"]
	if !ok {
		return nil, fmt.Errorf("the connector config has no connector.class; set it to one of %s", s.classes())
	}
	c := s.find(class)
	if c == nil {
		return nil, fmt.Errorf("connector.class %q is not supported; cdcd runs %s", class, s.classes())
	}
	return c, nil
}

// taskClass is the task.class of a config's connector, "" when the class is unknown.
func (s connectorSet) taskClass(props map[string]string) string {
	if c := s.find(props["connector.class"]); c != nil {
		return c.TaskClass()
	}
	return ""
}

func (s connectorSet) classes() string {
	classes := make([]string, len(s))
	for i, c := range s {
		classes[i] = c.Class()
	}
	return strings.Join(classes, ", ")
}

// CheckConnectorConfig resolves a connector config as submitted and checks it as its task will read it: a
// known class, Connect keys at values cdcd implements, and values the connector accepts. The error names
// keys and problems, never a secret.
func (w *Worker) CheckConnectorConfig(name string, raw map[string]string, log *slog.Logger) error {
	resolved, err := w.ResolveConnectorConfig(raw)
	if err != nil {
		return err
	}
	c, err := w.plugins.forConfig(resolved)
	if err != nil {
		return err
	}
	hidden := secretsOf(raw, resolved, w.keysOf(resolved))
	var errs []error
	for _, e := range append(connectKeyRefusals(resolved), w.exactlyOnceErrors(resolved)...) {
		errs = append(errs, errors.New(e.String()))
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if _, err = c.NewTask(name, resolved, hidden.logger(log)); err != nil {
		return refusalError(hidden.refusals(resolved, taskRefusals(c, name)), source.IsFatal(err))
	}
	for _, e := range hidden.refusals(resolved, w.clientRefusals(name)) {
		errs = append(errs, errors.New(e.String()))
	}
	return errors.Join(errs...)
}

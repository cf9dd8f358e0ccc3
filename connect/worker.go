package connect

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/sink/kafka"
)

// Worker is a standalone worker: connect-standalone's behaviour with the same worker and connector files.
type Worker struct {
	cfg           *config.Worker
	log           *slog.Logger
	offsets       *offsets.FileStore
	encoder       Encoder
	flushInterval time.Duration

	mu         sync.Mutex
	connectors map[string]*connector
	wg         sync.WaitGroup
}

// NewStandalone builds a standalone worker from worker properties; config providers are resolved here.
// Nothing runs until AddConnector.
func NewStandalone(props map[string]string, log *slog.Logger) (*Worker, error) {
	cfg, res, err := config.ParseWorker(props, config.Standalone)
	if err != nil {
		return nil, err
	}
	for _, u := range res.Unknown {
		log.Warn("unknown worker property ignored", "key", u.Name, "did_you_mean", u.Suggestion)
	}
	store, err := offsets.OpenFile(cfg.OffsetStorageFile)
	if err != nil {
		return nil, fmt.Errorf("offset.storage.file.filename: %w", err)
	}
	enc, err := newRecordEncoder(cfg)
	if err != nil {
		return nil, err
	}
	return &Worker{
		cfg: cfg, log: log, offsets: store, encoder: enc,
		flushInterval: cfg.OffsetFlushInterval,
		connectors:    map[string]*connector{},
	}, nil
}

// AddConnector starts a connector (its config already validated by the caller). Connectors are isolated:
// one failing does not stop the others.
func (w *Worker) AddConnector(ctx context.Context, name string, props map[string]string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.connectors[name]; ok {
		return fmt.Errorf("Connector %s already exists", name)
	}
	c := &connector{name: name, props: props, log: w.log.With("connector", name), w: w, state: Unassigned}
	w.connectors[name] = c
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		c.run(ctx)
	}()
	return nil
}

// Wait blocks until every connector stopped (after the context given to AddConnector ends).
func (w *Worker) Wait() { w.wg.Wait() }

// Status returns a connector's state, or false if it does not exist.
func (w *Worker) Status(name string) (State, string, bool) {
	w.mu.Lock()
	c, ok := w.connectors[name]
	w.mu.Unlock()
	if !ok {
		return "", "", false
	}
	s, trace := c.Status()
	return s, trace, true
}

// producerConfig is the sink configuration of one connector: the worker's producer.* settings, overridden
// by the connector's producer.override.* settings, and the connector's topic.creation.* settings.
func (w *Worker) producerConfig(name string, props map[string]string) (kafka.Config, error) {
	producer := maps.Clone(w.cfg.Producer)
	if producer == nil {
		producer = map[string]string{}
	}
	for k, v := range props {
		if rest, ok := strings.CutPrefix(k, "producer.override."); ok {
			producer[rest] = v
		}
	}
	topicCreation, err := kafka.ParseTopicCreation(map[string]string{"topic.creation.enable": strconv.FormatBool(w.cfg.TopicCreationEnable)}, props)
	if err != nil {
		return kafka.Config{}, err
	}
	// Connect names a source task's producer connector-producer-<connector>-<task>.
	clientID := "connector-producer-" + name + "-0"
	return kafka.Config{Brokers: w.cfg.BootstrapServers, ClientID: clientID, Producer: producer, TopicCreation: topicCreation}, nil
}

// ResolveConnectorConfig resolves config-provider placeholders (${env:…}, ${file:…}) in a connector config
// with the worker's providers, as Connect does before a connector sees its config.
func (w *Worker) ResolveConnectorConfig(props map[string]string) (map[string]string, error) {
	res, err := w.cfg.Providers.Resolve(props)
	if err != nil {
		return nil, err
	}
	return res.Values, nil
}

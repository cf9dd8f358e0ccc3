package kafka

import (
	"log/slog"
	"strconv"

	"github.com/cdcd/cdcd/sink"
)

// Opener is the Kafka sink as the runtime sees it: one Writer per task, built from Connect's producer
// settings and the connector's topic.creation.* settings. It holds no state and may be used concurrently.
type Opener struct{}

var _ sink.Opener = Opener{}

// OpenSink builds a Writer for one task; it does not contact Kafka.
func (Opener) OpenSink(cfg sink.Config, log *slog.Logger) (sink.Sink, error) {
	worker := map[string]string{"topic.creation.enable": strconv.FormatBool(cfg.TopicCreationEnabled)}
	topicCreation, err := ParseTopicCreation(worker, cfg.ConnectorConfig)
	if err != nil {
		return nil, err
	}
	w, err := NewWriter(Config{Brokers: cfg.Servers, ClientID: cfg.ClientID, Producer: cfg.Settings, TopicCreation: topicCreation}, log)
	if err != nil {
		return nil, err
	}
	return w, nil
}

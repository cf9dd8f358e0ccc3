package pipeline

import (
	"fmt"

	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/avro"
	"github.com/cdcd/cdcd/schema/jsonconv"
	"github.com/cdcd/cdcd/sink"
	"github.com/cdcd/cdcd/source"
)

// Converter serialises a Connect value as a worker's key.converter or value.converter does.
type Converter interface {
	// Encode returns the record bytes of v under s for a record of topic; nil for a null value (a
	// tombstone or a null key). It is safe for concurrent use. It may block on a schema registry (the
	// AvroConverter's first record of a schema); an error fails the record, and the pipeline restarts
	// from its durable offset.
	Encode(topic string, s *schema.Schema, v any) ([]byte, error)
}

// topicFreeConverter is a converter whose bytes do not depend on the topic: JsonConverter and the header
// converters.
type topicFreeConverter interface {
	Encode(s *schema.Schema, v any) ([]byte, error)
}

// ignoreTopic makes a topicFreeConverter a Converter.
type ignoreTopic struct{ topicFreeConverter }

func (c ignoreTopic) Encode(_ string, s *schema.Schema, v any) ([]byte, error) {
	return c.topicFreeConverter.Encode(s, v)
}

// RecordEncoder converts events with the worker's key, value and header converters.
type RecordEncoder struct {
	// Key and Value are the key.converter and value.converter.
	Key, Value Converter
	header     topicFreeConverter
}

var _ Encoder = (*RecordEncoder)(nil)

func (e *RecordEncoder) Encode(ev *source.Event) (sink.Record, error) {
	rec := sink.Record{Topic: ev.Topic, Time: ev.Timestamp}
	var err error
	if ev.KeySchema != nil || ev.Key != nil {
		if rec.Key, err = e.Key.Encode(ev.Topic, ev.KeySchema, ev.Key); err != nil {
			return rec, fmt.Errorf("key: %w", err)
		}
	}
	if ev.ValueSchema != nil || ev.Value != nil {
		if rec.Value, err = e.Value.Encode(ev.Topic, ev.ValueSchema, ev.Value); err != nil {
			return rec, fmt.Errorf("value: %w", err)
		}
	}
	for _, h := range ev.Headers {
		b, err := e.header.Encode(h.Schema, h.Value)
		if err != nil {
			return rec, fmt.Errorf("header %s: %w", h.Key, err)
		}
		rec.Headers = append(rec.Headers, sink.Header{Key: h.Key, Value: b})
	}
	return rec, nil
}

// NewRecordEncoder builds the worker's converters. cdcd implements JsonConverter and Confluent's
// AvroConverter for keys and values, and SimpleHeaderConverter or JsonConverter for headers; the worker
// config refuses other classes.
func NewRecordEncoder(cfg *config.Worker) (*RecordEncoder, error) {
	key, err := newConverter("key.converter", cfg.KeyConverter, cfg.KeyConverterConfig)
	if err != nil {
		return nil, err
	}
	value, err := newConverter("value.converter", cfg.ValueConverter, cfg.ValueConverterConfig)
	if err != nil {
		return nil, err
	}
	var header topicFreeConverter = simpleHeaderConverter{}
	if cfg.HeaderConverter == config.JSONConverter {
		if header, err = newJSONConverter("header.converter", cfg.HeaderConverterConfig); err != nil {
			return nil, err
		}
	}
	return &RecordEncoder{Key: key, Value: value, header: header}, nil
}

// newConverter builds the key.converter or value.converter named by key from its class and settings.
func newConverter(key, class string, settings map[string]string) (Converter, error) {
	switch class {
	case config.JSONConverter:
		c, err := newJSONConverter(key, settings)
		if err != nil {
			return nil, err
		}
		return ignoreTopic{c}, nil
	case config.AvroConverter:
		cfg, err := avro.FromConfig(key == "key.converter", settings)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		c, err := avro.New(cfg)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		return c, nil
	}
	return nil, fmt.Errorf("%s=%s is not implemented by cdcd yet; use %s or %s", key, class, config.JSONConverter, config.AvroConverter)
}

func newJSONConverter(key string, settings map[string]string) (jsonconv.Converter, error) {
	c, err := jsonconv.FromConfig(settings)
	if err != nil {
		return c, fmt.Errorf("%s: %w", key, err)
	}
	return c, nil
}

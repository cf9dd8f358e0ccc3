package connect

import (
	"fmt"

	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/schema/jsonconv"

	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/sink/kafka"
	"github.com/cdcd/cdcd/source"
)

// Converter serialises a Connect value as a worker's key.converter or value.converter does.
type Converter interface {
	// Encode returns the record bytes of v under s; nil for a null value (a tombstone or a null key).
	Encode(s *schema.Schema, v any) ([]byte, error)
}

// recordEncoder converts events with the worker's key, value and header converters.
type recordEncoder struct {
	key, value, header Converter
}

var _ Encoder = recordEncoder{}

func (e recordEncoder) Encode(ev *source.Event) (kafka.Record, error) {
	rec := kafka.Record{Topic: ev.Topic}
	var err error
	if ev.KeySchema != nil || ev.Key != nil {
		if rec.Key, err = e.key.Encode(ev.KeySchema, ev.Key); err != nil {
			return rec, fmt.Errorf("key: %w", err)
		}
	}
	if ev.ValueSchema != nil || ev.Value != nil {
		if rec.Value, err = e.value.Encode(ev.ValueSchema, ev.Value); err != nil {
			return rec, fmt.Errorf("value: %w", err)
		}
	}
	for _, h := range ev.Headers {
		b, err := e.header.Encode(h.Schema, h.Value)
		if err != nil {
			return rec, fmt.Errorf("header %s: %w", h.Key, err)
		}
		rec.Headers = append(rec.Headers, kafka.Header{Key: h.Key, Value: b})
	}
	return rec, nil
}

// newRecordEncoder builds the worker's converters. cdcd implements JsonConverter for keys and values, and
// SimpleHeaderConverter or JsonConverter for headers; the worker config refuses other classes.
func newRecordEncoder(cfg *config.Worker) (Encoder, error) {
	key, err := newConverter("key.converter", cfg.KeyConverter, cfg.KeyConverterConfig)
	if err != nil {
		return nil, err
	}
	value, err := newConverter("value.converter", cfg.ValueConverter, cfg.ValueConverterConfig)
	if err != nil {
		return nil, err
	}
	var header Converter = simpleHeaderConverter{}
	if cfg.HeaderConverter == jsonConverterClass {
		if header, err = newConverter("header.converter", cfg.HeaderConverter, cfg.HeaderConverterConfig); err != nil {
			return nil, err
		}
	}
	return recordEncoder{key: key, value: value, header: header}, nil
}

const jsonConverterClass = "org.apache.kafka.connect.json.JsonConverter"

func newConverter(key, class string, settings map[string]string) (Converter, error) {
	if class != jsonConverterClass {
		return nil, fmt.Errorf("%s=%s is not implemented by cdcd yet; use %s", key, class, jsonConverterClass)
	}
	c, err := jsonconv.FromConfig(settings)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return c, nil
}

// Package avro writes Kafka Connect data as Confluent's AvroConverter does: the Connect schema is mapped to
// an Avro schema by AvroData's rules, registered with a Confluent-compatible schema registry, and each
// record is framed in Confluent's wire format (magic byte 0, the 4-byte big-endian schema id, the Avro
// binary body). Pipelines that read Debezium's Avro topics read cdcd's unchanged, and the registry
// deduplicates cdcd's schemas with Debezium's because the schema text is the one Java's Avro prints.
//
// Not implemented, because Debezium's schemas never need them: schemaless values, Connect structs that
// stand for Avro unions (io.confluent.connect.avro.Union), Avro enums and fixed types (the AvroData
// options that produce them are refused by FromConfig), and schema references.
package avro

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"weak"

	"github.com/cdcd/cdcd/schema"
)

// Converter is one configured AvroConverter, for keys or for values. It is safe for concurrent use.
type Converter struct {
	cfg      Config
	registry *registryClient
	encoder  valueEncoder

	// writers caches the Avro form of each Connect schema by identity (schemas are immutable and
	// shared); an entry is dropped when its schema is garbage collected.
	writers sync.Map // weak.Pointer[schema.Schema] → *writerSchema

	mu  sync.Mutex
	ids map[subjectSchema]int // registry ids already obtained
}

// writerSchema is the Avro schema a Connect schema is written with.
type writerSchema struct {
	root *avroSchema
	text string // what Schema.toString() prints: registered as is
}

type subjectSchema struct {
	subject, text string
}

// New returns a Converter for cfg (see FromConfig). It does not contact the registry until the first
// record.
func New(cfg Config) (*Converter, error) {
	reg, err := newRegistryClient(cfg)
	if err != nil {
		return nil, err
	}
	return &Converter{
		cfg:      cfg,
		registry: reg,
		encoder:  valueEncoder{ignoreDefaultForNullables: cfg.IgnoreDefaultForNullables},
		ids:      map[subjectSchema]int{},
	}, nil
}

// Encode returns the record bytes of v under s for a record of topic. A null value is nil bytes (a
// tombstone, or a keyless table's null key) and touches no registry.
//
// The first record of a schema blocks while the schema is registered (or looked up) under its subject;
// later records reuse the cached id. A registry that stays unreachable through the retries, or refuses
// the schema, fails the record with ErrRegistry: the pipeline then restarts from its durable offset.
func (c *Converter) Encode(topic string, s *schema.Schema, v any) ([]byte, error) {
	if v == nil {
		if s != nil && !s.Optional {
			return nil, ErrNullRequired
		}
		return nil, nil
	}
	if s == nil {
		return nil, fmt.Errorf("%w: a value without a schema", ErrSchema)
	}
	ws, err := c.writerSchema(s)
	if err != nil {
		return nil, err
	}
	// The value is converted before the registry is asked, as AvroConverter does: a value that cannot be
	// written registers nothing.
	out, err := c.encoder.appendValue([]byte{0, 0, 0, 0, 0}, ws.root, s, v)
	if err != nil {
		return nil, err
	}
	subject, err := c.subject(topic, ws)
	if err != nil {
		return nil, err
	}
	id, err := c.schemaID(context.Background(), subject, ws.text)
	if err != nil {
		return nil, err
	}
	binary.BigEndian.PutUint32(out[1:5], uint32(id))
	return out, nil
}

// writerSchema converts s once and caches the result for as long as s lives.
func (c *Converter) writerSchema(s *schema.Schema) (*writerSchema, error) {
	key := weak.Make(s)
	if ws, ok := c.writers.Load(key); ok {
		return ws.(*writerSchema), nil
	}
	root, err := toAvroSchema(s, c.cfg.ConnectMetaData)
	if err != nil {
		return nil, err
	}
	ws := &writerSchema{root: root, text: string(renderSchema(root))}
	if prev, loaded := c.writers.LoadOrStore(key, ws); loaded {
		return prev.(*writerSchema), nil
	}
	runtime.AddCleanup(s, func(k weak.Pointer[schema.Schema]) { c.writers.Delete(k) }, key)
	return ws, nil
}

// subject names the registry subject of a record by the configured strategy.
func (c *Converter) subject(topic string, ws *writerSchema) (string, error) {
	if c.cfg.Strategy == TopicName {
		if c.cfg.IsKey {
			return topic + "-key", nil
		}
		return topic + "-value", nil
	}
	if ws.root.typ != typeRecord {
		side := "value"
		if c.cfg.IsKey {
			side = "key"
		}
		return "", fmt.Errorf("%w: with RecordNameStrategy or TopicRecordNameStrategy the message %s must be a record schema", ErrSchema, side)
	}
	if c.cfg.Strategy == RecordName {
		return ws.root.fullName(), nil
	}
	return topic + "-" + ws.root.fullName(), nil
}

// schemaID returns the registry id of text under subject: registered (auto.register.schemas), the
// subject's latest version (use.latest.version), or looked up. Concurrent first uses may both ask the
// registry; it answers both with the same id.
func (c *Converter) schemaID(ctx context.Context, subject, text string) (int, error) {
	key := subjectSchema{subject, text}
	c.mu.Lock()
	id, ok := c.ids[key]
	c.mu.Unlock()
	if ok {
		return id, nil
	}
	var err error
	switch {
	case c.cfg.AutoRegister:
		id, err = c.registry.register(ctx, subject, text)
	case c.cfg.UseLatestVersion:
		id, err = c.registry.latest(ctx, subject, text)
	default:
		id, err = c.registry.lookup(ctx, subject, text)
	}
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	c.ids[key] = id
	c.mu.Unlock()
	return id, nil
}

// SchemaText returns the Avro schema text AvroConverter registers for s with its default settings.
func SchemaText(s *schema.Schema) (string, error) {
	root, err := toAvroSchema(s, true)
	if err != nil {
		return "", err
	}
	return string(renderSchema(root)), nil
}

package connect

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/schema/avro"
	"github.com/cdcd/cdcd/source"
)

// SchemaCheck is the answer of POST /connectors/{name}/schemas/check: whether the schema registry would
// accept the schemas each captured table's next events would carry.
type SchemaCheck struct {
	Connector string             `json:"connector"`
	Tables    []TableSchemaCheck `json:"tables"`
}

// TableSchemaCheck is the verdict on one subject of a table: its key's or its value's.
type TableSchemaCheck struct {
	Table      string   `json:"table"`
	Subject    string   `json:"subject"`
	Compatible bool     `json:"compatible"`
	Messages   []string `json:"messages"`
	key        bool     // the key's subject, not the value's
}

// schemaChecker is a converter that can ask its schema registry about a schema without writing with it
// (AvroConverter).
type schemaChecker interface {
	CheckCompatibility(ctx context.Context, topic string, s *schema.Schema) (avro.Compatibility, error)
}

var _ schemaChecker = (*avro.Converter)(nil)

// CheckSchemas builds the key and envelope schemas of every table the connector captures from the
// database's catalog as it is now, and asks the registry whether each would be accepted: a pre-flight
// check before resuming a connector after DDL. The schemas are those the connector emits, before any
// transforms. It refuses a connector whose converters do not use a schema registry.
func (w *Worker) CheckSchemas(ctx context.Context, name string) (SchemaCheck, error) {
	info, err := w.ConnectorInfo(name)
	if err != nil {
		return SchemaCheck{}, err
	}
	return w.checkSchemas(ctx, name, info.Config)
}

// checkSchemas is CheckSchemas for a connector config (unresolved) looked up by the caller.
func (w *Worker) checkSchemas(ctx context.Context, name string, connectorConfig map[string]string) (SchemaCheck, error) {
	key, keyChecks := w.encoder.Key.(schemaChecker)
	value, valueChecks := w.encoder.Value.(schemaChecker)
	if !keyChecks && !valueChecks {
		return SchemaCheck{}, &RequestError{Kind: BadRequest, Message: fmt.Sprintf(
			"Connector %s does not use a schema registry: neither key.converter nor value.converter is %s", name, config.AvroConverter)}
	}
	resolved, err := w.ResolveConnectorConfig(connectorConfig)
	if err != nil {
		return SchemaCheck{}, &RequestError{Kind: BadRequest, Message: err.Error()}
	}
	p, err := w.plugins.forConfig(resolved)
	if err != nil {
		return SchemaCheck{}, &RequestError{Kind: BadRequest, Message: err.Error()}
	}
	hidden := secretsOf(connectorConfig, resolved, w.keysOf(resolved))
	src, err := p.NewTask(name, resolved, slog.New(slog.DiscardHandler))
	if err != nil {
		return SchemaCheck{}, &RequestError{Kind: BadRequest, Message: refusalError(hidden.refusals(resolved, taskRefusals(p, name)), false).Error()}
	}
	lister, ok := src.(source.SchemaLister)
	if !ok {
		return SchemaCheck{}, &RequestError{Kind: BadRequest, Message: fmt.Sprintf(
			"Connector %s (%s) cannot list its tables' schemas before streaming", name, p.Class())}
	}
	tables, err := lister.CurrentSchemas(ctx, hidden.logger(w.log))
	if err != nil {
		return SchemaCheck{}, hidden.error(fmt.Errorf("connector %s: %w", name, err))
	}
	out := SchemaCheck{Connector: name, Tables: []TableSchemaCheck{}}
	for _, t := range tables {
		sides := []struct {
			checker schemaChecker
			schema  *schema.Schema
			isKey   bool
		}{{key, t.Key, true}, {value, t.Value, false}}
		for _, side := range sides {
			if side.checker == nil || side.schema == nil { // not Avro, or a keyless table's null keys
				continue
			}
			res, err := side.checker.CheckCompatibility(ctx, t.Topic, side.schema)
			if err != nil {
				return SchemaCheck{}, fmt.Errorf("connector %s, table %s.%s: %w", name, t.Schema, t.Table, err)
			}
			messages := res.Messages
			if messages == nil {
				messages = []string{}
			}
			out.Tables = append(out.Tables, TableSchemaCheck{Table: t.Schema + "." + t.Table, Subject: res.Subject, Compatible: res.Compatible, Messages: messages, key: side.isKey})
		}
	}
	return out, nil
}

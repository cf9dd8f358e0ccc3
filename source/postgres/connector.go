package postgres

import (
	"context"
	"log/slog"

	"github.com/cdcd/cdcd/schema/configdef"
	"github.com/cdcd/cdcd/source"
)

// Connector is Debezium's PostgresConnector as the runtime runs it. Recorder, when set, learns every slot and
// publication a task creates (the slot guardian's ledger).
type Connector struct {
	Recorder Recorder
}

var _ source.Connector = Connector{}

func (Connector) Class() string { return ConnectorClass }

func (Connector) TaskClass() string { return "io.debezium.connector.postgresql.PostgresConnectorTask" }

func (Connector) ConfigKeys() []configdef.Key { return ConfigKeys() }

func (Connector) Validate(props map[string]string) configdef.Result { return ValidateConfig(props) }

// MapLegacyKeys maps old Debezium names (database.server.name, *.whitelist, database.history.*…) to
// today's, as ParseConfig reads them.
func (Connector) MapLegacyKeys(given map[string]string) (map[string]string, []string, error) {
	return MapLegacyKeys(given)
}

// KeyFamilies are the prefixes under which ParseConfig honours or refuses every key (see Keys).
func (Connector) KeyFamilies() []string { return keyFamilies }

func (c Connector) NewTask(name string, resolved map[string]string, log *slog.Logger) (source.Task, error) {
	cfg, err := ParseConfig(name, resolved, log)
	if err != nil {
		return nil, err
	}
	return task{cfg: cfg, recorder: c.Recorder}, nil
}

// task is one parsed PostgreSQL connector config.
type task struct {
	cfg      *Config
	recorder Recorder
}

var _ source.SchemaLister = task{}

func (t task) Partition() map[string]any { return source.ServerPartition(t.cfg.TopicPrefix) }

func (t task) OpenReader(stored map[string]any, env source.Env) (source.Reader, error) {
	start, err := source.ResumeOffset(stored, ParseOffset)
	if err != nil {
		return nil, err
	}
	r := NewReader(t.cfg, start, env.Log)
	r.Recorder = t.recorder
	r.KafkaSignals = env.Signals
	r.Waiting = env.Waiting
	return r, nil
}

func (t task) CurrentSchemas(ctx context.Context, log *slog.Logger) ([]source.TableSchemas, error) {
	return CurrentSchemas(ctx, t.cfg, log)
}

// AccountedKeys are the keys ParseConfig reads: ConfigKeys and those Debezium reads outside its ConfigDef
// (see Keys), so that the runtime reports none of them as unknown.
func (Connector) AccountedKeys() []configdef.Key { return Keys().Declared }

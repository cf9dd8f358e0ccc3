package mysql

import (
	"context"
	"log/slog"
	"strings"

	"github.com/cdcd/cdcd/schema/configdef"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/mysql/types"
)

// Connector is Debezium's MySqlConnector or MariaDbConnector as the runtime runs it: one reader, the flavor
// chosen by the class.
type Connector struct {
	Flavor types.Flavor
}

var _ source.Connector = Connector{}

func (c Connector) Class() string {
	if c.Flavor == types.MariaDB {
		return MariaDBConnectorClass
	}
	return MySQLConnectorClass
}

func (c Connector) TaskClass() string {
	return strings.TrimSuffix(c.Class(), "Connector") + "ConnectorTask"
}

func (c Connector) ConfigKeys() []configdef.Key { return ConfigKeys(c.Flavor) }

func (c Connector) Validate(props map[string]string) configdef.Result {
	return ValidateConfig(c.Flavor, props)
}

// MapLegacyKeys maps old Debezium names (database.server.name, *.whitelist, database.history.*…) to
// today's, as ParseConfig reads them.
func (c Connector) MapLegacyKeys(given map[string]string) (map[string]string, []string, error) {
	return MapLegacyKeys(c.Flavor, given)
}

// KeyFamilies are the prefixes under which ParseConfig honours or refuses every key (see Keys).
func (Connector) KeyFamilies() []string { return keyFamilies }

func (c Connector) NewTask(name string, resolved map[string]string, log *slog.Logger) (source.Task, error) {
	cfg, err := ParseConfig(name, c.Flavor, resolved, log)
	if err != nil {
		return nil, err
	}
	return task{cfg: cfg}, nil
}

// task is one parsed MySQL or MariaDB connector config.
type task struct{ cfg *Config }

var _ source.SchemaLister = task{}

func (t task) Partition() map[string]any { return source.ServerPartition(t.cfg.TopicPrefix) }

func (t task) OpenReader(stored map[string]any, env source.Env) (source.Reader, error) {
	start, err := source.ResumeOffset(stored, ParseOffset)
	if err != nil {
		return nil, err
	}
	r := NewReader(t.cfg, start, env.Log)
	r.HistoryLogs = env.Logs
	r.KafkaSignals = env.Signals
	return r, nil
}

func (t task) CurrentSchemas(ctx context.Context, log *slog.Logger) ([]source.TableSchemas, error) {
	return CurrentSchemas(ctx, t.cfg, log)
}

// AccountedKeys are the keys ParseConfig reads: ConfigKeys and those Debezium reads outside its ConfigDef
// (see Keys), so that the runtime reports none of them as unknown.
func (c Connector) AccountedKeys() []configdef.Key { return Keys(c.Flavor).Declared }

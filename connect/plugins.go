package connect

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/cdcd/cdcd/schema/configdef"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/mysql"
	"github.com/cdcd/cdcd/source/mysql/types"
	"github.com/cdcd/cdcd/source/postgres"
)

// plugin is a connector class cdcd runs: what the worker needs of a connector, whatever its database.
type plugin struct {
	class     string // connector.class, e.g. io.debezium.connector.postgresql.PostgresConnector
	taskClass string // task.class in the task configs, as Debezium names its task
	keys      func() []configdef.Key
	// validate checks each key as Debezium's ConfigDef does.
	validate func(props map[string]string) configdef.Result
	// parse reads a resolved config as the task will. Errors name their key through configKeyError where
	// they concern one key; errors.Join of several when several are wrong.
	parse func(name string, resolved map[string]string, log *slog.Logger) (taskSource, error)
}

// taskSource is a parsed connector config: where its offsets live and how to build its reader.
type taskSource interface {
	// Partition is the connector's source partition in the offset store ({"server": topic.prefix}).
	Partition() map[string]any
	// NewReader builds a reader that resumes from stored, the decoded offset (nil when none is stored).
	NewReader(stored map[string]any, w *Worker, log *slog.Logger) (Reader, error)
}

// schemaLister is a taskSource that can list its tables' current Connect schemas without reading the
// change stream (for the schema registry pre-flight check).
type schemaLister interface {
	CurrentSchemas(ctx context.Context, log *slog.Logger) ([]source.TableSchemas, error)
}

// configKeyError is a config error about one key (postgres.ConfigError and its MySQL twin).
type configKeyError interface {
	error
	ConfigKey() string
}

// plugins are the connector classes cdcd runs, in the order GET /connector-plugins lists them.
var plugins = []*plugin{postgresPlugin, mysqlPlugin(mysql.MySQLConnectorClass, types.MySQL), mysqlPlugin(mysql.MariaDBConnectorClass, types.MariaDB)}

// findPlugin returns the plugin that name (a class, its simple name, or that without "Connector") names,
// as Connect's plugin aliases do, or nil.
func findPlugin(name string) *plugin {
	for _, p := range plugins {
		simple := p.class[strings.LastIndexByte(p.class, '.')+1:]
		if name == p.class || name == simple || name == strings.TrimSuffix(simple, "Connector") {
			return p
		}
	}
	return nil
}

// pluginFor returns the plugin of a connector config, or an error naming connector.class.
func pluginFor(props map[string]string) (*plugin, error) {
	class, ok := props["connector.class"]
	if !ok {
		return nil, fmt.Errorf("the connector config has no connector.class; set it to one of %s", pluginClasses())
	}
	p := findPlugin(class)
	if p == nil {
		return nil, fmt.Errorf("connector.class %q is not supported; cdcd runs %s", class, pluginClasses())
	}
	return p, nil
}

func pluginClasses() string {
	classes := make([]string, len(plugins))
	for i, p := range plugins {
		classes[i] = p.class
	}
	return strings.Join(classes, ", ")
}

// ParseConnectorConfig checks a resolved connector config as its task will read it: a known class and
// values the connector accepts.
func ParseConnectorConfig(name string, resolved map[string]string, log *slog.Logger) error {
	p, err := pluginFor(resolved)
	if err != nil {
		return err
	}
	_, err = p.parse(name, resolved, log)
	return err
}

var postgresPlugin = &plugin{
	class:     postgres.ConnectorClass,
	taskClass: "io.debezium.connector.postgresql.PostgresConnectorTask",
	keys:      postgres.ConfigKeys,
	validate:  postgres.ValidateConfig,
	parse: func(name string, resolved map[string]string, log *slog.Logger) (taskSource, error) {
		cfg, err := postgres.ParseConfig(name, resolved, log)
		if err != nil {
			return nil, err
		}
		return postgresSource{cfg}, nil
	},
}

type postgresSource struct{ cfg *postgres.Config }

func (s postgresSource) Partition() map[string]any {
	return map[string]any{"server": s.cfg.TopicPrefix}
}

func (s postgresSource) NewReader(stored map[string]any, w *Worker, log *slog.Logger) (Reader, error) {
	var start *postgres.Offset
	if stored != nil {
		o, err := postgres.ParseOffset(stored)
		if err != nil {
			return nil, err
		}
		start = &o
	}
	r := postgres.NewReader(s.cfg, start, log)
	r.Recorder = w.ledger
	return r, nil
}

func (s postgresSource) CurrentSchemas(ctx context.Context, log *slog.Logger) ([]source.TableSchemas, error) {
	return postgres.CurrentSchemas(ctx, s.cfg, log)
}

// mysqlPlugin is the MySQL or MariaDB connector: one reader, the flavor chosen by the class.
func mysqlPlugin(class string, flavor types.Flavor) *plugin {
	return &plugin{
		class:     class,
		taskClass: strings.TrimSuffix(class, "Connector") + "ConnectorTask",
		keys:      mysql.ConfigKeys,
		validate:  mysql.ValidateConfig,
		parse: func(name string, resolved map[string]string, log *slog.Logger) (taskSource, error) {
			cfg, err := mysql.ParseConfig(name, flavor, resolved, log)
			if err != nil {
				return nil, err
			}
			return mysqlSource{cfg}, nil
		},
	}
}

type mysqlSource struct{ cfg *mysql.Config }

func (s mysqlSource) Partition() map[string]any { return map[string]any{"server": s.cfg.TopicPrefix} }

func (s mysqlSource) NewReader(stored map[string]any, _ *Worker, log *slog.Logger) (Reader, error) {
	var start *mysql.Offset
	if stored != nil {
		o, err := mysql.ParseOffset(stored)
		if err != nil {
			return nil, err
		}
		start = &o
	}
	return mysql.NewReader(s.cfg, start, log), nil
}

func (s mysqlSource) CurrentSchemas(ctx context.Context, log *slog.Logger) ([]source.TableSchemas, error) {
	return mysql.CurrentSchemas(ctx, s.cfg, log)
}

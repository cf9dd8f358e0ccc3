package connect

import (
	"context"
	"log/slog"
	"testing"

	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/schema/configdef"
	"github.com/cdcd/cdcd/sink/kafka"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/mysql"
	"github.com/cdcd/cdcd/source/mysql/types"
	"github.com/cdcd/cdcd/source/postgres"
)

// testParts are the parts cmd/cdcd wires, for tests of the runtime with real connector classes.
func testParts(brokers []string) Parts {
	return Parts{
		Connectors: []source.Connector{unchecked{postgres.Connector{}}, unchecked{mysql.Connector{Flavor: types.MySQL}}, unchecked{mysql.Connector{Flavor: types.MariaDB}}},
		Sink:       kafka.Opener{},
		Logs:       kafka.NewLogOpener(kafka.LogOpenerConfig{Brokers: brokers}),
		Signals:    kafka.NewSignalOpener(),
	}
}

// parseTestWorker parses worker properties as cmd/cdcd does.
func parseTestWorker(t testing.TB, props map[string]string, mode config.Mode) *config.Worker {
	t.Helper()
	cfg, _, err := config.ParseWorker(props, mode)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// newTestStandalone builds a standalone worker from worker properties with the real connector classes.
func newTestStandalone(t testing.TB, props map[string]string, log *slog.Logger) *Worker {
	t.Helper()
	cfg := parseTestWorker(t, props, config.Standalone)
	w, err := NewStandalone(cfg, testParts(cfg.BootstrapServers), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Shutdown)
	return w
}

// unchecked is a real connector class whose tasks do not check their database connection at validation
// (source.ConnectionChecker): the unit tier has no database. Tests of the check wire their own.
type unchecked struct{ source.Connector }

func (u unchecked) KeyFamilies() []string { return u.Connector.(keyFamilies).KeyFamilies() }

func (u unchecked) MapLegacyKeys(given map[string]string) (map[string]string, []string, error) {
	return u.Connector.(legacyNames).MapLegacyKeys(given)
}

func (u unchecked) AccountedKeys() []configdef.Key {
	return u.Connector.(accountedKeys).AccountedKeys()
}

func (u unchecked) NewTask(name string, resolved map[string]string, log *slog.Logger) (source.Task, error) {
	t, err := u.Connector.NewTask(name, resolved, log)
	if err != nil {
		return nil, err
	}
	return uncheckedTask{t}, nil
}

// uncheckedTask hides its task's CheckConnection, and keeps its CurrentSchemas.
type uncheckedTask struct{ source.Task }

func (t uncheckedTask) CurrentSchemas(ctx context.Context, log *slog.Logger) ([]source.TableSchemas, error) {
	return t.Task.(source.SchemaLister).CurrentSchemas(ctx, log)
}

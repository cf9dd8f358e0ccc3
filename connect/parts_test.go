package connect

import (
	"log/slog"
	"testing"

	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/sink/kafka"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/mysql"
	"github.com/cdcd/cdcd/source/mysql/types"
	"github.com/cdcd/cdcd/source/postgres"
)

// testParts are the parts cmd/cdcd wires, for tests of the runtime with real connector classes.
func testParts(brokers []string) Parts {
	return Parts{
		Connectors: []source.Connector{postgres.Connector{}, mysql.Connector{Flavor: types.MySQL}, mysql.Connector{Flavor: types.MariaDB}},
		Sink:       kafka.Opener{},
		Logs:       kafka.NewLogOpener(kafka.LogOpenerConfig{Brokers: brokers}),
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

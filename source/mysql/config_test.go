package mysql

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/cdcd/cdcd/source/mysql/types"
)

// TestParseConfigNamesEveryRefusedKey: every missing or refused value is reported at once, each naming its
// key, including Debezium's refusal of time.precision.mode=adaptive for the binlog connectors.
func TestParseConfigNamesEveryRefusedKey(t *testing.T) {
	_, err := ParseConfig("c", types.MariaDB, map[string]string{
		"database.hostname":   "h",
		"database.user":       "u",
		"topic.prefix":        "p",
		"time.precision.mode": "adaptive",
		"snapshot.mode":       "sometimes",
		"database.port":       "x",
	}, slog.New(slog.DiscardHandler))
	want := []string{"database.server.id", "schema.history.internal.kafka.topic", "schema.history.internal.kafka.bootstrap.servers",
		"time.precision.mode", "snapshot.mode", "database.port"}
	got := map[string]bool{}
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) {
		t.Fatalf("error %v is not a list of refusals", err)
	}
	for _, e := range joined.Unwrap() {
		var ce *ConfigError
		if !errors.As(e, &ce) {
			t.Fatalf("%v is not a *ConfigError", e)
		}
		got[ce.Key] = true
	}
	for _, k := range want {
		if !got[k] {
			t.Errorf("no refusal names %s (got %v)", k, got)
		}
	}
}

func TestParseConfigDefaults(t *testing.T) {
	cfg, err := ParseConfig("c", types.MySQL, map[string]string{
		"database.hostname": "h", "database.user": "u", "database.server.id": "5400", "topic.prefix": "p",
		"schema.history.internal.kafka.topic": "hist", "schema.history.internal.kafka.bootstrap.servers": "a:1, b:2",
	}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Port != 3306 || cfg.ServerID != 5400 || !cfg.IncludeSchemaChanges || cfg.LockingMode != "minimal" ||
		cfg.Modes.Time != "adaptive_time_microseconds" || !cfg.TombstonesOnDelete || !cfg.SkippedOps['t'] ||
		len(cfg.HistoryBrokers) != 2 || cfg.Connector() != "mysql" {
		t.Errorf("defaults: %+v", cfg)
	}
	if cfg.Filter.IncludeSchema("mysql") || cfg.Filter.IncludeSchema("performance_schema") || !cfg.Filter.IncludeSchema("shop") {
		t.Error("system databases must never be captured, others by default")
	}
}

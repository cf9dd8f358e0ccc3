package mysql

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

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

// TestRefuseNamesWhatToChange: each server setting the binlog connectors cannot work with is refused with the
// setting, its value and the fix.
func TestRefuseNamesWhatToChange(t *testing.T) {
	cfg := &Config{Flavor: types.MariaDB, Host: "db", Port: 3306, User: "cdc"}
	good := func() serverFacts {
		return serverFacts{version: "10.11.19-MariaDB-log", variables: map[string]string{"log_bin": "1", "binlog_format": "ROW", "binlog_row_image": "FULL"},
			grants: []string{"GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO `cdc`@`%`"}}
	}
	if err := cfg.refuse(good()); err != nil {
		t.Fatalf("a good server refused: %v", err)
	}
	cases := []struct {
		name   string
		change func(*serverFacts)
		want   string
	}{
		{"statement binlog", func(f *serverFacts) { f.variables["binlog_format"] = "STATEMENT" }, `binlog_format is "STATEMENT", not ROW: set binlog_format=ROW`},
		{"mixed binlog", func(f *serverFacts) { f.variables["binlog_format"] = "MIXED" }, "set binlog_format=ROW"},
		{"minimal row image", func(f *serverFacts) { f.variables["binlog_row_image"] = "MINIMAL" }, "set binlog_row_image=FULL"},
		{"binlog off", func(f *serverFacts) { f.variables["log_bin"] = "0" }, "start the server with log_bin"},
		{"no replication grant", func(f *serverFacts) { f.grants = []string{"GRANT SELECT, RELOAD ON *.* TO `cdc`@`%`"} }, "lacks the REPLICATION SLAVE privilege"},
		{"a MySQL server", func(f *serverFacts) { f.version = "8.0.36" }, "set connector.class=io.debezium.connector.mysql.MySqlConnector"},
	}
	for _, c := range cases {
		f := good()
		c.change(&f)
		err := cfg.refuse(f)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// TestHeartbeatActionQueryNeedsHeartbeats: a query that runs with every heartbeat is refused without
// heartbeats (heartbeat.interval.ms 0, the default), where it would never run.
func TestHeartbeatActionQueryNeedsHeartbeats(t *testing.T) {
	base := map[string]string{
		"database.hostname": "h", "database.user": "u", "database.server.id": "5400", "topic.prefix": "p",
		"schema.history.internal.kafka.topic": "hist", "schema.history.internal.kafka.bootstrap.servers": "a:1",
		"heartbeat.action.query": "INSERT INTO beats VALUES (NOW())",
	}
	_, err := ParseConfig("c", types.MariaDB, base, slog.New(slog.DiscardHandler))
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Key != "heartbeat.action.query" || !strings.Contains(err.Error(), "set heartbeat.interval.ms") {
		t.Fatalf("without heartbeats: %v, want heartbeat.action.query refused", err)
	}
	base["heartbeat.interval.ms"] = "1000"
	cfg, err := ParseConfig("c", types.MariaDB, base, slog.New(slog.DiscardHandler))
	if err != nil || cfg.HeartbeatQuery != base["heartbeat.action.query"] || cfg.HeartbeatInterval != time.Second {
		t.Fatalf("with heartbeats: %v, %+v", err, cfg)
	}
}

// TestSnapshotMaxThreads: snapshot.max.threads is an integer from 1 to 64, as for PostgreSQL; a bad value
// is refused naming the key, and more than one thread without the global read lock that lines the
// connections up (snapshot.locking.mode=none) is refused naming both keys and the way out.
func TestSnapshotMaxThreads(t *testing.T) {
	parse := func(settings map[string]string) (*Config, error) {
		base := map[string]string{
			"database.hostname": "h", "database.user": "u", "database.server.id": "5400", "topic.prefix": "p",
			"schema.history.internal.kafka.topic": "hist", "schema.history.internal.kafka.bootstrap.servers": "a:1",
		}
		for k, v := range settings {
			base[k] = v
		}
		return ParseConfig("c", types.MariaDB, base, slog.New(slog.DiscardHandler))
	}
	cfg, err := parse(nil)
	if err != nil || cfg.SnapshotThreads != 1 {
		t.Fatalf("default: %v, threads %d, want 1", err, cfg.SnapshotThreads)
	}
	for _, mode := range []string{"minimal", "extended"} {
		cfg, err := parse(map[string]string{"snapshot.max.threads": "3", "snapshot.locking.mode": mode})
		if err != nil || cfg.SnapshotThreads != 3 {
			t.Errorf("3 threads with %s locking: %v, want accepted", mode, err)
		}
	}
	if cfg, err := parse(map[string]string{"snapshot.max.threads": "1", "snapshot.locking.mode": "none"}); err != nil || cfg.SnapshotThreads != 1 {
		t.Errorf("1 thread without locking: %v, want accepted", err)
	}
	for _, bad := range []string{"0", "65", "-1", "two", "1.5"} {
		_, err := parse(map[string]string{"snapshot.max.threads": bad})
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Key != "snapshot.max.threads" {
			t.Errorf("snapshot.max.threads=%s: %v, want it refused by name", bad, err)
		}
	}
	_, err = parse(map[string]string{"snapshot.max.threads": "2", "snapshot.locking.mode": "none"})
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Key != "snapshot.max.threads" || !strings.Contains(err.Error(), "snapshot.locking.mode=none") ||
		!strings.Contains(err.Error(), "global read lock") || !strings.Contains(err.Error(), "snapshot.locking.mode=minimal") || !strings.Contains(err.Error(), "snapshot.max.threads=1") {
		t.Errorf("2 threads without locking: %v, want refused naming both keys, the reason and the fix", err)
	}
}

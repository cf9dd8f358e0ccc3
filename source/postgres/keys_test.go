package postgres

import (
	"log/slog"
	"maps"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/source/props"
	"github.com/cdcd/cdcd/source/props/keytest"
)

func keysConnector() keytest.Connector {
	return keytest.Connector{
		Name: "PostgreSQL",
		Keys: Keys(),
		Base: map[string]string{"database.hostname": "db", "database.user": "u", "database.dbname": "d",
			"topic.prefix": "p", "plugin.name": "pgoutput"},
		Parse: func(cfg map[string]string) (*props.Parser, error) {
			_, p, err := parseConfig("keys", cfg, slog.New(slog.DiscardHandler))
			return p, err
		},
		Validate: ValidateConfig,
	}
}

// TestKeysAccounted fails when a key of Debezium's connector is neither read by ParseConfig nor refused,
// so that no key can be silently ignored again.
func TestKeysAccounted(t *testing.T) { keytest.Accounted(t, keysConnector()) }

// TestRefusedKeys: a refused key away from its default is refused, naming it; at its default it passes.
func TestRefusedKeys(t *testing.T) { keytest.Refused(t, keysConnector()) }

// TestKeyFamilies: a key under one of Debezium's families is honoured when cdcd maps it (the JDBC options),
// accepted with a note when it changes nothing in cdcd, and refused by name otherwise; a converter's own
// settings are refused with it.
func TestKeyFamilies(t *testing.T) {
	keytest.Families(t, keysConnector(), []keytest.FamilyCase{
		{Set: map[string]string{"database.connectTimeout": "5", "database.socketTimeout": "30", "database.ApplicationName": "app", "database.tcpKeepAlive": "false"}, Refused: nil},
		{Set: map[string]string{"database.loginTimeout": "5", "database.options": "-c search_path=s", "database.stringtype": "unspecified"}, Refused: nil}, // mapped or noted
		{Set: map[string]string{"database.preferQueryMode": "simple"}, Refused: []string{"database.preferQueryMode"}},
		{Set: map[string]string{"driver.connectTimeout": "5"}, Refused: []string{"driver.connectTimeout"}},
		{Set: map[string]string{"signal.kafka.topic": "s", "signal.kafka.groupId": "g", "signal.consumer.security.protocol": "SSL"}, Refused: nil},
		{Set: map[string]string{"signal.kafka.other": "s", "signal.consumer.fetch.max.bytes": "1"}, Refused: []string{"signal.kafka.other", "signal.consumer.fetch.max.bytes"}},
		{Set: map[string]string{"snapshot.select.statement.overrides": "public.t", "snapshot.select.statement.overrides.public.t": "SELECT 1"}, Refused: nil},
		{Set: map[string]string{"converters": "isbn", "isbn.type": "x.Y"}, Refused: []string{"converters", "isbn.type"}},
		{Set: map[string]string{"column.mask.with.3.chars": "public.t.c", "column.mask.foo": "x"}, Refused: []string{"column.mask.foo"}},
	})
}

// TestLSNFlushMode: every mode Debezium has, and the deprecated flush.lsn.source, is accepted (what each
// means: TestParseConfigFlushModes); another value is refused.
func TestLSNFlushMode(t *testing.T) {
	c := keysConnector()
	for set, ok := range map[string]bool{"lsn.flush.mode=connector": true, "flush.lsn.source=true": true,
		"lsn.flush.mode=manual": true, "lsn.flush.mode=connector_and_driver": true, "flush.lsn.source=false": true,
		"lsn.flush.mode=sometimes": false} {
		cfg := maps.Clone(c.Base)
		k, v, _ := strings.Cut(set, "=")
		cfg[k] = v
		if _, err := c.Parse(cfg); (err == nil) != ok {
			t.Errorf("%s: %v", set, err)
		}
	}
}

// TestJDBCOptions: the mapped pgjdbc options reach the connection settings.
func TestJDBCOptions(t *testing.T) {
	cfg := maps.Clone(keysConnector().Base)
	cfg["database.connectTimeout"], cfg["database.socketTimeout"], cfg["database.ApplicationName"], cfg["database.tcpKeepAlive"] = "7", "30", "billing", "false"
	c, err := ParseConfig("keys", cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	dsn := c.dsn(false)
	for _, want := range []string{"connect_timeout=7", "application_name=billing"} {
		if !strings.Contains(dsn, want) {
			t.Errorf("dsn %s lacks %s", dsn, want)
		}
	}
	if c.SocketTimeout.Seconds() != 30 || c.TCPKeepAlive {
		t.Errorf("socket timeout %v, keepalive %v", c.SocketTimeout, c.TCPKeepAlive)
	}
	c, _ = ParseConfig("keys", keysConnector().Base, slog.New(slog.DiscardHandler))
	if dsn := c.dsn(false); !strings.Contains(dsn, "application_name=cdcd-keys") || strings.Contains(dsn, "connect_timeout") {
		t.Errorf("default dsn %s", dsn)
	}
}

// TestSnapshotSelectOverrides: each listed table's statement is read; a listed table without a statement,
// and a statement for a table the list does not name, are refused naming the key (Debezium skips the one
// and ignores the other).
func TestSnapshotSelectOverrides(t *testing.T) {
	c := keysConnector()
	parse := func(set map[string]string) (*Config, error) {
		cfg := maps.Clone(c.Base)
		maps.Copy(cfg, set)
		parsed, err := ParseConfig("pg", cfg, slog.New(slog.DiscardHandler))
		return parsed, err
	}
	cfg, err := parse(map[string]string{"snapshot.select.statement.overrides": "public.a, db.public.b",
		"snapshot.select.statement.overrides.public.a": "SELECT id FROM public.a WHERE id > 1", "snapshot.select.statement.overrides.db.public.b": "SELECT * FROM b"})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"public.a": "SELECT id FROM public.a WHERE id > 1", "db.public.b": "SELECT * FROM b"}; !maps.Equal(cfg.SnapshotSelects, want) {
		t.Errorf("got %v, want %v", cfg.SnapshotSelects, want)
	}
	for name, set := range map[string]map[string]string{
		"snapshot.select.statement.overrides.public.a":   {"snapshot.select.statement.overrides": "public.a"},
		"snapshot.select.statement.overrides.public.b: ": {"snapshot.select.statement.overrides": "public.a", "snapshot.select.statement.overrides.public.a": "SELECT 1", "snapshot.select.statement.overrides.public.b": "SELECT 2"},
	} {
		if _, err := parse(set); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%v: got %v, want a refusal naming %s", set, err, name)
		}
	}
}

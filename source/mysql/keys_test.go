package mysql

import (
	"log/slog"
	"maps"
	"testing"
	"time"

	"github.com/cdcd/cdcd/schema/configdef"
	"github.com/cdcd/cdcd/source/mysql/types"
	"github.com/cdcd/cdcd/source/props"
	"github.com/cdcd/cdcd/source/props/keytest"
)

func keysConnector(flavor types.Flavor) keytest.Connector {
	return keytest.Connector{
		Name: map[types.Flavor]string{types.MySQL: "MySQL", types.MariaDB: "MariaDB"}[flavor],
		Keys: Keys(flavor),
		Base: map[string]string{"database.hostname": "db", "database.user": "u", "database.server.id": "1",
			"topic.prefix": "p", "schema.history.internal.kafka.topic": "h", "schema.history.internal.kafka.bootstrap.servers": "k:9092"},
		Parse: func(cfg map[string]string) (*props.Parser, error) {
			_, p, err := parseConfig("keys", flavor, cfg, slog.New(slog.DiscardHandler))
			return p, err
		},
		Validate: func(cfg map[string]string) configdef.Result { return ValidateConfig(flavor, cfg) },
	}
}

var flavors = []types.Flavor{types.MySQL, types.MariaDB}

// TestKeysAccounted fails when a key of Debezium's connector is neither read by ParseConfig nor refused,
// so that no key can be silently ignored again.
func TestKeysAccounted(t *testing.T) {
	for _, f := range flavors {
		keytest.Accounted(t, keysConnector(f))
	}
}

// TestRefusedKeys: a refused key away from its default is refused, naming it; at its default it passes.
func TestRefusedKeys(t *testing.T) {
	for _, f := range flavors {
		keytest.Refused(t, keysConnector(f))
	}
}

// TestKeyFamilies: a key under one of Debezium's families is honoured when cdcd maps it (the JDBC options,
// the history clients' settings the log opener reads, the 1.x history names), accepted with a note when it
// changes nothing in cdcd, and refused by name otherwise.
func TestKeyFamilies(t *testing.T) {
	keytest.Families(t, keysConnector(types.MariaDB), []keytest.FamilyCase{
		{Set: map[string]string{"database.connectTimeout": "5000", "database.socketTimeout": "30000", "database.tcpKeepAlive": "false"}, Refused: nil},
		{Set: map[string]string{"database.useCursorFetch": "true", "database.allowPublicKeyRetrieval": "true"}, Refused: nil}, // no effect: noted
		{Set: map[string]string{"database.sessionVariables": "sql_mode=ANSI"}, Refused: []string{"database.sessionVariables"}},
		{Set: map[string]string{"database.history.kafka.topic": "h"}, Refused: nil}, // mapped to schema.history.internal.kafka.topic
		{Set: map[string]string{"schema.history.internal.file.filename": "/h"}, Refused: []string{"schema.history.internal.file.filename"}},
		{Set: map[string]string{"schema.history.internal.producer.acks": "all"}, Refused: nil},
		{Set: map[string]string{"notification.sink.topic.name": "n", "signal.file": "/s"}, Refused: nil},
		{Set: map[string]string{"converters": "boolean", "boolean.type": "io.debezium.connector.binlog.converters.TinyIntOneToBooleanConverter", "boolean.selector": "db.t.c", "boolean.length.checker": "false"}, Refused: nil},
		{Set: map[string]string{"converters": "isbn", "isbn.type": "x.Y", "isbn.schema.name": "s"}, Refused: []string{"isbn.schema.name", "isbn.type"}},
		{Set: map[string]string{"converters": "boolean", "boolean.type": "io.debezium.connector.mysql.converters.TinyIntOneToBooleanConverter", "boolean.other": "x"}, Refused: []string{"boolean.other"}},
		{Set: map[string]string{"snapshot.select.statement.overrides": "db.t", "snapshot.select.statement.overrides.db.t": "SELECT 1"}, Refused: nil},
		{Set: map[string]string{"signal.kafka.groupId": "g", "signal.kafka.poll.timeout.ms": "10", "signal.consumer.sasl.mechanism": "PLAIN"}, Refused: nil},
		{Set: map[string]string{"signal.kafka.other": "s", "signal.consumer.isolation.level": "read_committed"}, Refused: []string{"signal.kafka.other", "signal.consumer.isolation.level"}},
		{Set: map[string]string{"post.processors": "r", "r.type": "x.Y"}, Refused: []string{"post.processors", "r.type"}},
	})
}

// TestJDBCOptions: database.connectTimeout and database.socketTimeout are milliseconds, as both drivers read
// them; without database.connectTimeout the query connections take connect.timeout.ms, as Debezium passes it.
func TestJDBCOptions(t *testing.T) {
	c := keysConnector(types.MySQL)
	cfg := maps.Clone(c.Base)
	cfg["connect.timeout.ms"] = "4000"
	parsed, err := ParseConfig("keys", types.MySQL, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if parsed.QueryConnectTimeout != 4*time.Second || parsed.SocketTimeout != 0 || !parsed.TCPKeepAlive {
		t.Errorf("defaults: %v %v %v", parsed.QueryConnectTimeout, parsed.SocketTimeout, parsed.TCPKeepAlive)
	}
	cfg["database.connectTimeout"], cfg["database.socketTimeout"], cfg["database.tcpKeepAlive"] = "1500", "20000", "false"
	if parsed, err = ParseConfig("keys", types.MySQL, cfg, nil); err != nil {
		t.Fatal(err)
	}
	if parsed.QueryConnectTimeout != 1500*time.Millisecond || parsed.SocketTimeout != 20*time.Second || parsed.TCPKeepAlive || parsed.ConnectTimeout != 4*time.Second {
		t.Errorf("set: %v %v %v %v", parsed.QueryConnectTimeout, parsed.SocketTimeout, parsed.TCPKeepAlive, parsed.ConnectTimeout)
	}
}

package connect

import (
	"bytes"
	"log/slog"
	"maps"
	"strings"
	"testing"
)

// Old Debezium names are mapped alike by validate and by creation: the same config gets the same answer
// from PUT /connector-plugins/{class}/config/validate and POST /connectors, and a mapped key is never also
// logged as unknown.
func TestLegacyConfigsValidateAndCreateAlike(t *testing.T) {
	pg := map[string]string{"connector.class": "io.debezium.connector.postgresql.PostgresConnector",
		"database.hostname": "db", "database.user": "u", "database.dbname": "d", "plugin.name": "pgoutput"}
	binlog := func(class string) map[string]string {
		return map[string]string{"connector.class": class, "database.hostname": "db", "database.user": "u",
			"database.server.id": "184054"}
	}
	with := func(base map[string]string, kv ...string) map[string]string {
		out := maps.Clone(base)
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	mysqlClass, mariadbClass := "io.debezium.connector.mysql.MySqlConnector", "io.debezium.connector.mariadb.MariaDbConnector"
	history := []string{"database.history.kafka.topic", "schema-changes.inventory", "database.history.kafka.bootstrap.servers", "kafka:9092"}
	tests := []struct {
		name   string
		cfg    map[string]string
		refuse string // the key refused, "" when accepted
		mapped []string
	}{
		{"postgres 1.x names", with(pg, "database.server.name", "dbserver1", "table.whitelist", "public.orders", "schema.blacklist", "audit", "database.history.kafka.topic", "h"),
			"", []string{"database.server.name", "table.whitelist", "schema.blacklist", "database.history.kafka.topic"}},
		{"postgres 1.x snapshot mode", with(pg, "topic.prefix", "p", "snapshot.mode", "exported", "slot.seek.to.known.offset.on.start", "true"),
			"", []string{"slot.seek.to.known.offset.on.start"}},
		{"postgres changed meaning", with(pg, "topic.prefix", "p", "sanitize.field.names", "true"), "sanitize.field.names", nil},
		{"mysql 1.x names", with(binlog(mysqlClass), append([]string{"database.server.name", "dbserver1", "database.whitelist", "inventory",
			"table.blacklist", "inventory.audit", "database.history", "io.debezium.relational.history.KafkaDatabaseHistory",
			"database.history.store.only.monitored.tables.ddl", "true", "database.history.skip.unparseable.ddl", "true",
			"snapshot.mode", "schema_only"}, history...)...),
			"", []string{"database.server.name", "database.whitelist", "table.blacklist", "database.history", "database.history.kafka.topic",
				"database.history.kafka.bootstrap.servers", "database.history.store.only.monitored.tables.ddl", "database.history.skip.unparseable.ddl"}},
		{"mysql 1.x history clients' security", with(binlog(mysqlClass), append([]string{"database.server.name", "dbserver1",
			"database.history.producer.security.protocol", "SASL_SSL", "database.history.producer.sasl.mechanism", "SCRAM-SHA-512",
			"database.history.producer.sasl.jaas.config", `org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";`,
			"database.history.consumer.security.protocol", "SASL_SSL", "database.history.consumer.sasl.mechanism", "SCRAM-SHA-512",
			"database.history.consumer.sasl.jaas.config", `org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";`},
			history...)...),
			"", []string{"database.history.producer.security.protocol", "database.history.consumer.sasl.jaas.config"}},
		{"mariadb 1.x names", with(binlog(mariadbClass), append([]string{"database.server.name", "m", "table.whitelist", "inventory.a"}, history...)...),
			"", []string{"database.server.name", "table.whitelist", "database.history.kafka.topic"}},
		{"mysql file history", with(binlog(mysqlClass), append([]string{"topic.prefix", "p", "database.history", "io.debezium.relational.history.FileDatabaseHistory"}, history...)...),
			"database.history", nil},
		{"mysql old name next to the new one", with(binlog(mysqlClass), append([]string{"topic.prefix", "p", "database.server.name", "q",
			"schema.history.internal.kafka.topic", "h2"}, history...)...),
			"", []string{"database.server.name", "database.history.kafka.topic"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			w := newTestStandalone(t, map[string]string{"bootstrap.servers": "127.0.0.1:1",
				"key.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
				"offset.storage.file.filename": t.TempDir() + "/o"},
				slog.New(slog.NewTextHandler(&logs, nil)))
			cfg := with(tt.cfg, "name", "legacy")
			infos, err := w.ValidateConnectorConfig(cfg["connector.class"], cfg)
			if err != nil {
				t.Fatal(err)
			}
			var refused []string
			for _, c := range infos.Configs {
				if len(c.Value.Errors) > 0 {
					refused = append(refused, c.Value.Name+": "+strings.Join(c.Value.Errors, "; "))
				}
			}
			_, _, createErr := w.PutConnectorConfig("legacy", cfg, false, "stopped")
			if tt.refuse == "" {
				if len(refused) > 0 || createErr != nil {
					t.Fatalf("validate refused %q; create: %v", refused, createErr)
				}
			} else {
				if len(refused) != 1 || !strings.HasPrefix(refused[0], tt.refuse+": ") {
					t.Fatalf("validate refused %q, want only %s", refused, tt.refuse)
				}
				if createErr == nil || !strings.Contains(createErr.Error(), tt.refuse) {
					t.Fatalf("create: %v, want the refusal of %s", createErr, tt.refuse)
				}
			}
			for _, key := range tt.mapped {
				if strings.Contains(logs.String(), "key="+key) {
					t.Errorf("%s was mapped, and logged as unknown:\n%s", key, logs.String())
				}
			}
			if strings.Contains(logs.String(), `password=\"p\"`) {
				t.Errorf("a credential reached the log:\n%s", logs.String())
			}
		})
	}
}

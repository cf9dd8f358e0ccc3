package connect

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/source"
)

const clientTestSecret = "jaas-s3cret"

func newPolicyWorker(t *testing.T, extra map[string]string) *Worker {
	t.Helper()
	props := map[string]string{
		"bootstrap.servers":            "127.0.0.1:1",
		"key.converter":                "org.apache.kafka.connect.json.JsonConverter",
		"value.converter":              "org.apache.kafka.connect.json.JsonConverter",
		"offset.storage.file.filename": filepath.Join(t.TempDir(), "offsets.dat"),
	}
	maps.Copy(props, extra)
	return newTestStandalone(t, props, slog.New(slog.DiscardHandler))
}

// errorsByKey validates cfg and returns each key's errors.
func errorsByKey(t *testing.T, w *Worker, cfg map[string]string) map[string][]string {
	t.Helper()
	infos, err := w.ValidateConnectorConfig("PostgresConnector", cfg)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(infos)
	if strings.Contains(string(body), clientTestSecret) {
		t.Errorf("validation shows a secret: %s", body)
	}
	out := map[string][]string{}
	for _, c := range infos.Configs {
		if len(c.Value.Errors) > 0 {
			out[c.Value.Name] = c.Value.Errors
		}
	}
	return out
}

func saslOverrides(cfg map[string]string) map[string]string {
	cfg["producer.override.security.protocol"] = "SASL_SSL"
	cfg["producer.override.sasl.mechanism"] = "PLAIN"
	cfg["producer.override.sasl.jaas.config"] = `org.apache.kafka.common.security.plain.PlainLoginModule required username="app" password="` + clientTestSecret + `";`
	cfg["producer.override.linger.ms"] = "10"
	return cfg
}

// connector.client.config.override.policy as Connect 4.x applies it: All (the default) lets a connector
// override any producer setting, Principal only security.protocol, sasl.mechanism and sasl.jaas.config,
// None nothing; a refusal is a validation error on the key, in Connect's words.
func TestOverridePolicy(t *testing.T) {
	for _, tt := range []struct {
		policy  string
		refused []string
	}{
		{"", nil},
		{"All", nil},
		{"org.apache.kafka.connect.connector.policy.PrincipalConnectorClientConfigOverridePolicy", []string{"producer.override.linger.ms"}},
		{"None", []string{"producer.override.linger.ms", "producer.override.sasl.jaas.config", "producer.override.sasl.mechanism", "producer.override.security.protocol"}},
	} {
		extra := map[string]string{}
		if tt.policy != "" {
			extra["connector.client.config.override.policy"] = tt.policy
		}
		w := newPolicyWorker(t, extra)
		got := errorsByKey(t, w, saslOverrides(pgConfig("pg")))
		if len(got) != len(tt.refused) {
			t.Errorf("policy %q: errors %v, want refusals of %v", tt.policy, got, tt.refused)
		}
		for _, key := range tt.refused {
			name := strings.TrimPrefix(key, "producer.override.")
			if msgs := got[key]; len(msgs) != 1 || !strings.Contains(msgs[0], "policy does not allow '"+name+"' to be overridden in the connector configuration") {
				t.Errorf("policy %q: %s: got %v, want Connect's refusal", tt.policy, key, msgs)
			}
		}
		// A task started from a config stored before the policy changed refuses too.
		if err := w.checkOverrides(saslOverrides(pgConfig("pg"))); (err != nil) != (len(tt.refused) > 0) || err != nil && !source.IsFatal(err) {
			t.Errorf("policy %q: a task's check: %v", tt.policy, err)
		}
	}
	w := newPolicyWorker(t, nil)
	if got := w.cfg.ClientConfigOverridePolicy; got != "All" {
		t.Errorf("the default policy is %q, want All (Connect 3.0 and later)", got)
	}
}

func TestWorkerRefusesAnUnknownOverridePolicy(t *testing.T) {
	props := map[string]string{
		"bootstrap.servers": "b:9092", "key.converter": "org.apache.kafka.connect.json.JsonConverter",
		"value.converter": "org.apache.kafka.connect.json.JsonConverter", "offset.storage.file.filename": "/tmp/x",
		"connector.client.config.override.policy": "com.example.MyPolicy",
	}
	if _, _, err := config.ParseWorker(props, config.Standalone); err == nil || !strings.Contains(err.Error(), "connector.client.config.override.policy") {
		t.Errorf("got %v, want the policy refused by name", err)
	}
}

// What the task's Kafka clients would refuse is a validation error on the connector's key: the producer's,
// the admin client's (topic creation) and the schema history's.
func TestValidationRefusesClientSecurityByKey(t *testing.T) {
	w := newPolicyWorker(t, nil)
	cfg := saslOverrides(pgConfig("pg"))
	cfg["producer.override.sasl.mechanism"] = "GSSAPI"
	cfg["topic.creation.default.partitions"] = "1"
	cfg["topic.creation.default.replication.factor"] = "-1"
	cfg["admin.override.ssl.engine.factory.class"] = "com.example.Engine"
	cfg["schema.history.internal.producer.security.protocol"] = "SASL_SSL"
	cfg["schema.history.internal.producer.sasl.mechanism"] = "AWS_MSK_IAM"
	cfg["schema.history.internal.consumer.fetch.min.bytes"] = "1"
	got := errorsByKey(t, w, cfg)
	for key, want := range map[string]string{
		"producer.override.sasl.mechanism":                  "producer.override.sasl.mechanism: GSSAPI (Kerberos) is not implemented in cdcd",
		"admin.override.ssl.engine.factory.class":           "admin.override.ssl.engine.factory.class: cdcd does not implement it",
		"schema.history.internal.producer.sasl.jaas.config": "is not set; SASL/AWS_MSK_IAM needs it as Kafka does",
		"schema.history.internal.consumer.fetch.min.bytes":  "cdcd does not implement this setting yet",
	} {
		if msgs := got[key]; len(msgs) != 1 || !strings.Contains(msgs[0], want) {
			t.Errorf("%s: got %v, want %q", key, msgs, want)
		}
	}
	if len(got) != 4 {
		t.Errorf("errors %v, want exactly the four keys", got)
	}
	if err := w.CheckConnectorConfig("pg", cfg, slog.New(slog.DiscardHandler)); err == nil ||
		!strings.Contains(err.Error(), "producer.override.sasl.mechanism") || strings.Contains(err.Error(), clientTestSecret) {
		t.Errorf("the start-up check: got %v, want the refusal by key without the secret", err)
	}
}

// A task's admin client has Connect's admin settings: the worker's top-level security keys, its admin.*,
// then the connector's admin.override.*; its producer has only producer.* and producer.override.*.
func TestClientSettingsAsConnectMergesThem(t *testing.T) {
	w := newPolicyWorker(t, map[string]string{
		"security.protocol": "SSL", "ssl.truststore.location": "/top.jks", "ssl.client.auth": "required", // the REST listener's
		"admin.ssl.truststore.location": "/admin.jks",
		"producer.security.protocol":    "SASL_SSL",
	})
	props := map[string]string{"admin.override.ssl.truststore.password": "pw", "producer.override.acks": "all"}
	sc := w.sinkConfig("pg", props)
	wantAdmin := map[string]string{"security.protocol": "SSL", "ssl.truststore.location": "/admin.jks", "ssl.truststore.password": "pw"}
	if !maps.Equal(sc.AdminSettings, wantAdmin) {
		t.Errorf("admin settings %v, want %v", sc.AdminSettings, wantAdmin)
	}
	if want := map[string]string{"security.protocol": "SASL_SSL", "acks": "all"}; !maps.Equal(sc.Settings, want) {
		t.Errorf("producer settings %v, want %v", sc.Settings, want)
	}
}

// The admin client takes only security settings; any other admin.* (worker) or admin.override.*
// (connector) setting is refused by name instead of being dropped.
func TestAdminSettingsOutsideSecurityAreRefused(t *testing.T) {
	_, _, err := config.ParseWorker(map[string]string{
		"bootstrap.servers": "k:9092", "key.converter": "org.apache.kafka.connect.json.JsonConverter",
		"value.converter": "org.apache.kafka.connect.json.JsonConverter", "offset.storage.file.filename": "/tmp/x",
		"admin.request.timeout.ms": "5000", "admin.ssl.truststore.location": "/admin.jks", "admin.listeners": "http://127.0.0.1:0",
	}, config.Standalone)
	if err == nil || !strings.Contains(err.Error(), "admin.request.timeout.ms: cdcd's admin client") || strings.Contains(err.Error(), "admin.ssl.") || strings.Contains(err.Error(), "admin.listeners:") {
		t.Errorf("worker: got %v, want admin.request.timeout.ms refused, and only it", err)
	}
	w := newPolicyWorker(t, nil)
	cfg := pgConfig("pg")
	cfg["admin.override.bootstrap.servers"] = "elsewhere:9092"
	cfg["admin.override.ssl.truststore.location"] = "/admin.jks"
	got := errorsByKey(t, w, cfg)
	if msgs := got["admin.override.bootstrap.servers"]; len(msgs) != 1 || !strings.Contains(msgs[0], "takes only Kafka's security settings") {
		t.Errorf("connector: got %v, want admin.override.bootstrap.servers refused", got)
	}
	if _, refused := got["admin.override.ssl.truststore.location"]; refused {
		t.Errorf("a security setting of the admin client was refused: %v", got)
	}
}

type recordingLogs struct{ specs []source.LogSpec }

func (r *recordingLogs) OpenLog(_ context.Context, spec source.LogSpec) (source.DurableLog, error) {
	r.specs = append(r.specs, spec)
	return nil, context.Canceled
}

// The connector's schema.history.internal.producer.* and .consumer.* settings reach the log opener with
// every spec a reader leaves without client settings.
func TestConnectorLogsCarryTheHistoryClientSettings(t *testing.T) {
	rec := &recordingLogs{}
	logs := connectorLogs{LogOpener: rec, props: map[string]string{
		"schema.history.internal.producer.security.protocol": "SSL",
		"schema.history.internal.consumer.security.protocol": "SASL_SSL",
		"schema.history.internal.kafka.topic":                "h",
	}}
	_, _ = logs.OpenLog(context.Background(), source.LogSpec{Name: "h"})
	own := map[string]string{"security.protocol": "PLAINTEXT"}
	_, _ = logs.OpenLog(context.Background(), source.LogSpec{Name: "h", ProducerSettings: own})
	if got := rec.specs[0]; !maps.Equal(got.ProducerSettings, map[string]string{"security.protocol": "SSL"}) ||
		!maps.Equal(got.ConsumerSettings, map[string]string{"security.protocol": "SASL_SSL"}) {
		t.Errorf("spec %+v, want the connector's history client settings", got)
	}
	if got := rec.specs[1]; !maps.Equal(got.ProducerSettings, own) || got.ConsumerSettings != nil {
		t.Errorf("spec %+v, want the reader's own settings kept", got)
	}
}

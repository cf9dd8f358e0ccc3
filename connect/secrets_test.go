package connect

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/schema/configdef"
	"github.com/cdcd/cdcd/source"
)

// A value resolved by a config provider is never printed back: Kafka's "Invalid value <v> for configuration
// <k>" names the key and [hidden] instead (the reproducer of the issue: a provider secret in slot.name).
func TestValidationNeverEchoesAProviderSecret(t *testing.T) {
	const secret = "Sup3r-Secret-Value"
	t.Setenv("CDCD_TEST_SLOT_SECRET", secret)
	w := newTestStandalone(t, map[string]string{
		"bootstrap.servers":            "127.0.0.1:1",
		"key.converter":                "org.apache.kafka.connect.json.JsonConverter",
		"value.converter":              "org.apache.kafka.connect.json.JsonConverter",
		"offset.storage.file.filename": filepath.Join(t.TempDir(), "offsets.dat"),
		"config.providers":             "env",
		"config.providers.env.class":   "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
	}, slog.New(slog.DiscardHandler))
	cfg := pgConfig("pg")
	cfg["slot.name"] = "${env:CDCD_TEST_SLOT_SECRET}"

	infos, err := w.ValidateConnectorConfig("PostgresConnector", cfg)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(infos)
	if bytes.Contains(body, []byte(secret)) {
		t.Fatalf("validation echoes the resolved secret: %s", body)
	}
	if infos.ErrorCount == 0 || !bytes.Contains(body, []byte("Invalid value ${env:CDCD_TEST_SLOT_SECRET} for configuration slot.name: the value the config provider resolved is not valid here")) {
		t.Fatalf("want slot.name refused with the value hidden, got %s", body)
	}

	_, _, err = w.PutConnectorConfig("pg", cfg, false, "")
	if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "slot.name") {
		t.Fatalf("create: want a refusal naming slot.name without the secret, got %v", err)
	}
	if err := w.CheckConnectorConfig("pg", cfg, slog.New(slog.DiscardHandler)); err == nil || strings.Contains(err.Error(), secret) {
		t.Fatalf("start-up check: want a refusal without the secret, got %v", err)
	}
}

func TestSecretsAreScrubbedFromErrorsAndLogs(t *testing.T) {
	raw := map[string]string{"database.password": "inline-pw", "database.user": "${file:/s:user}", "topic.prefix": "p",
		"producer.override.sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="jaas-pw";`}
	resolved := map[string]string{"database.password": "inline-pw", "database.user": "file-user", "topic.prefix": "p",
		"producer.override.sasl.jaas.config": raw["producer.override.sasl.jaas.config"]}
	hidden := secretsOf(raw, resolved, []configdef.Key{{Name: "database.password", Type: configdef.PasswordType}})

	err := hidden.error(source.Fatal(errors.New("login of file-user with inline-pw failed; topic p")))
	if got, want := err.Error(), "login of [hidden] with [hidden] failed; topic p"; got != want {
		t.Errorf("error: got %q, want %q", got, want)
	}
	if !source.IsFatal(err) {
		t.Error("scrubbing lost the fatal mark")
	}

	var logged bytes.Buffer
	log := hidden.logger(slog.New(slog.NewJSONHandler(&logged, nil))).With("user", "file-user")
	log.Warn("connecting as file-user", "error", errors.New("bad inline-pw"), "list", []string{"file-user"},
		slog.Group("g", "jaas", resolved["producer.override.sasl.jaas.config"]))
	for _, s := range []string{"inline-pw", "file-user", "jaas-pw"} {
		if strings.Contains(logged.String(), s) {
			t.Errorf("log line carries %q: %s", s, logged.String())
		}
	}
	if !strings.Contains(logged.String(), "[hidden]") {
		t.Errorf("log line lost its content: %s", logged.String())
	}
}

// The AvroConverter's credentials are secrets by their key names, with a converter prefix or without;
// where its credentials come from (a credentials source) is not.
func TestConverterCredentialsAreSecrets(t *testing.T) {
	settings := map[string]string{
		"value.converter.basic.auth.user.info":                           "alice:basic-pw",
		"key.converter.schema.registry.basic.auth.user.info":             "alice:legacy-pw",
		"value.converter.bearer.auth.token":                              "static-token-value",
		"value.converter.bearer.auth.client.secret":                      "client-secret-value",
		"value.converter.schema.registry.ssl.truststore.password":        "trust-pw-value",
		"value.converter.schema.registry.ssl.keystore.password":          "store-pw-value",
		"value.converter.schema.registry.ssl.key.password":               "key-pw-value",
		"value.converter.schema.registry.ssl.keystore.key":               "-----BEGIN PRIVATE KEY-----inline",
		"value.converter.bearer.auth.credentials.source":                 "OAUTHBEARER",
		"value.converter.basic.auth.credentials.source":                  "USER_INFO",
		"value.converter.schema.registry.ssl.keystore.certificate.chain": "-----BEGIN CERTIFICATE-----public",
	}
	hidden := secretsOf(settings, settings, nil)
	text := hidden.scrub(strings.Join(slices.Collect(maps.Values(settings)), " "))
	for key, value := range settings {
		secret := !strings.HasSuffix(key, "credentials.source") && !strings.HasSuffix(key, "certificate.chain")
		if hidden.secret(key) != secret {
			t.Errorf("%s: secret %v, want %v", key, hidden.secret(key), secret)
		}
		if secret && strings.Contains(text, value) {
			t.Errorf("%s: the scrubbed text keeps its value: %s", key, text)
		}
	}
	// A credentials source is no secret: scrubbing it would blank a word of every message.
	if !strings.Contains(text, "OAUTHBEARER") || !strings.Contains(text, "USER_INFO") {
		t.Errorf("the scrubbed text lost a credentials source: %s", text)
	}
}

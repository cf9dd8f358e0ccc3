package connect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/connect/config"
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

// seededSecret has what parsers trim, split, quote or escape: quotes, spaces, list and map separators, a
// backslash and, as `echo pw > f` writes a secret file, a trailing newline.
const seededSecret = "Qx7\"Zk; Wv,Jq=Pf:Hy\\Bn Rt\n"

// secretPieces returns every piece of secret of four bytes or more that text carries, as written or as
// JSON escapes it.
func secretPieces(text, secret string) []string {
	var found []string
	for i := 0; i+4 <= len(secret); i++ {
		piece := secret[i : i+4]
		escaped, _ := json.Marshal(piece)
		if strings.Contains(text, piece) || strings.Contains(text, string(escaped[1:len(escaped)-1])) {
			found = append(found, piece)
		}
	}
	return found
}

// secretWorker is a standalone worker whose file, directory and env providers all resolve seededSecret:
// ${file:<props>:password} (the properties file keeps no trailing newline), ${dir:<dir>:pw} and
// ${env:CDCD_TEST_SEEDED_SECRET} (both with it).
func secretWorker(t *testing.T, log *slog.Logger) (w *Worker, file, dir, env string) {
	dir = t.TempDir()
	file = filepath.Join(dir, "db.properties")
	escaped := strings.NewReplacer(`\`, `\\`, "\n", "").Replace(seededSecret)
	if err := os.WriteFile(file, []byte("password="+escaped+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pw"), []byte(seededSecret), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CDCD_TEST_SEEDED_SECRET", seededSecret)
	w = newTestStandalone(t, map[string]string{
		"bootstrap.servers":            "127.0.0.1:1",
		"key.converter":                "org.apache.kafka.connect.json.JsonConverter",
		"value.converter":              "org.apache.kafka.connect.json.JsonConverter",
		"offset.storage.file.filename": filepath.Join(t.TempDir(), "offsets.dat"),
		"config.providers":             "file,dir,env",
		"config.providers.file.class":  config.FileProviderClass,
		"config.providers.dir.class":   config.DirectoryProviderClass,
		"config.providers.env.class":   config.EnvVarProviderClass,
	}, log)
	return w, "${file:" + file + ":password}", "${dir:" + dir + ":pw}", "${env:CDCD_TEST_SEEDED_SECRET}"
}

// What the parsers refuse of a provider's secret is worded from the key and the reference, however the
// parser quotes it: message.key.columns quotes each entry it splits off, slot.name and heartbeat.action.query
// the trimmed value. The reproducer: "entry \"<the password>\" must look like…".
func TestRefusalsOfProviderSecretsAreWordedFromTheirReferences(t *testing.T) {
	w, file, dir, env := secretWorker(t, slog.New(slog.DiscardHandler))
	cfg := pgConfig("pg")
	cfg["database.password"] = file
	cfg["message.key.columns"] = file + ";x"
	cfg["slot.name"] = dir
	cfg["heartbeat.action.query"] = env
	cfg["heartbeat.interval.ms"] = "0"

	infos, err := w.ValidateConnectorConfig("PostgresConnector", cfg)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(infos)
	if leaked := secretPieces(string(body), seededSecret); len(leaked) > 0 {
		t.Errorf("validation quotes pieces %q of the secret: %s", leaked, configErrors(infos))
	}
	for key, reference := range map[string]string{"message.key.columns": file + ";x", "slot.name": dir, "heartbeat.action.query": env} {
		want := "Invalid value " + reference + " for configuration " + key + ": the value the config provider resolved is not valid here"
		if !slices.ContainsFunc(configErrors(infos)[key], func(m string) bool { return strings.HasPrefix(m, want) }) {
			t.Errorf("%s: errors %q, want one starting %q", key, configErrors(infos)[key], want)
		}
	}

	_, _, err = w.PutConnectorConfig("pg", cfg, false, "")
	if err == nil || len(secretPieces(err.Error(), seededSecret)) > 0 {
		t.Errorf("create: want a refusal without the secret, got %v", err)
	}
	err = w.CheckConnectorConfig("pg", cfg, slog.New(slog.DiscardHandler))
	if err == nil || len(secretPieces(err.Error(), seededSecret)) > 0 || !source.IsFatal(err) {
		t.Errorf("start-up check: want a fatal refusal without the secret, got %v", err)
	}
}

// configErrors is each key's errors in a validation answer.
func configErrors(infos configdef.ConfigInfos) map[string][]string {
	out := map[string][]string{}
	for _, c := range infos.Configs {
		if len(c.Value.Errors) > 0 {
			out[c.Value.Name] = c.Value.Errors
		}
	}
	return out
}

// A refusal keeps its text only when the text is the same without the secrets; otherwise a secret key's is
// worded from its reference, and one that quotes another key's secret, or a piece of it, from the key names.
func TestRefusalsOfOtherKeysNeverQuoteASecret(t *testing.T) {
	raw := map[string]string{"a": "${env:A}", "pw": "inline-password", "b": "plain", "c": "ok", "empty.password": ""}
	resolved := map[string]string{"a": " Secret-Value;xy ", "pw": "inline-password", "b": "plain", "c": "ok", "empty.password": ""}
	hidden := secretsOf(raw, resolved, []configdef.Key{{Name: "pw", Type: configdef.PasswordType}})
	check := func(cfg map[string]string) []keyError {
		return []keyError{
			{"a", "bad value " + cfg["a"]},
			{"a", "a is not allowed by the policy"},
			{"pw", "password " + cfg["pw"] + " is too short"},
			{"b", "b conflicts with " + strings.TrimSpace(cfg["a"])},
			{"c", "c is refused"},
			{"empty.password", fmt.Sprintf("empty.password is required (set: %v)", cfg["empty.password"] != "")},
			{"connector.class", "entry " + strconv.Quote(strings.Split(cfg["a"], ";")[0])},
		}
	}
	got := hidden.refusals(resolved, check)
	want := []keyError{
		{"a", "Invalid value ${env:A} for configuration a: the value the config provider resolved is not valid here (its text is not shown)"},
		{"a", "a is not allowed by the policy"},
		{"pw", "Invalid value [hidden] for configuration pw: the value (a password or credential) is not valid here (its text is not shown)"},
		{"b", "Invalid configuration b: refused together with the value of a, pw, which is secret (resolved by a config provider, or a password or credential); the refusal would quote it, so it is not shown"},
		{"c", "c is refused"},
		{"empty.password", "empty.password is required (set: false)"},
		{"connector.class", "Invalid configuration connector.class: refused together with the value of a, pw, which is secret (resolved by a config provider, or a password or credential); the refusal would quote it, so it is not shown"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("refusals:\n got %q\nwant %q", got, want)
	}
}

// The scrubber, defence in depth for text cdcd does not word, hides a secret's pieces too: trimmed, split
// at separators, and quoted or escaped as %q and JSON write it.
func TestScrubHidesPiecesOfASecret(t *testing.T) {
	const secret = " Alpha9\"Bravo1;Charlie2=Delta3\n"
	hidden := secretsOf(map[string]string{"k": "${file:/s:k}"}, map[string]string{"k": secret}, nil)
	quoted, _ := json.Marshal(secret)
	text := hidden.scrub(strings.Join([]string{
		"entry " + strconv.Quote(strings.TrimSpace(secret)), "body " + string(quoted), "list [Charlie2, x]",
		"map Delta3", "trimmed " + strings.TrimSpace(secret) + ".",
	}, "; "))
	for _, piece := range []string{"Alpha9", "Bravo1", "Charlie2", "Delta3"} {
		if strings.Contains(text, piece) {
			t.Errorf("scrubbed text keeps %q: %s", piece, text)
		}
	}
	if !strings.Contains(text, "entry") || !strings.Contains(text, "list [") {
		t.Errorf("scrubbing blanked more than the secret: %s", text)
	}
}

// A provider that reads whatever the process can is named in one WARN at start, with the fix.
func TestUnrestrictedProvidersAreWarnedAtStart(t *testing.T) {
	for _, restricted := range []bool{false, true} {
		props := map[string]string{
			"bootstrap.servers":            "127.0.0.1:1",
			"key.converter":                "org.apache.kafka.connect.json.JsonConverter",
			"value.converter":              "org.apache.kafka.connect.json.JsonConverter",
			"offset.storage.file.filename": filepath.Join(t.TempDir(), "offsets.dat"),
			"config.providers":             "file",
			"config.providers.file.class":  config.FileProviderClass,
		}
		if restricted {
			props["config.providers.file.param.allowed.paths"] = t.TempDir()
		}
		var logged bytes.Buffer
		newTestStandalone(t, props, slog.New(slog.NewTextHandler(&logged, nil)))
		warned := strings.Contains(logged.String(), "level=WARN") && strings.Contains(logged.String(), "providers=[file]") &&
			strings.Contains(logged.String(), "config.providers.<name>.param.allowed.paths")
		if warned == restricted {
			t.Errorf("allowed.paths set %v: warned %v: %s", restricted, warned, logged.String())
		}
	}
}

package main

import (
	"context"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/sink/kafka"
)

func workerWith(t *testing.T, extra map[string]string) *config.Worker {
	t.Helper()
	props := map[string]string{
		"bootstrap.servers": "127.0.0.1:1", "offset.storage.file.filename": t.TempDir() + "/offsets",
		"key.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
	}
	maps.Copy(props, extra)
	cfg, _, err := config.ParseWorker(props, config.Standalone)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// The worker's one transport has the security of its top-level keys; a security setting of the worker
// file that cdcd cannot honour, for the worker's clients or the tasks', stops the worker, naming the key.
func TestWorkerTransport(t *testing.T) {
	jaas := `org.apache.kafka.common.security.scram.ScramLoginModule required username="cdcd" password="w0rker-s3cret";`
	tr, err := workerTransport(workerWith(t, map[string]string{
		"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": jaas,
		"ssl.client.auth": "required", // the REST listener's, not a Kafka client's
		"client.id":       "w1",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if sec := tr.Security(); sec.Protocol != kafka.SASLSSL || sec.TLS == nil || sec.SASL == nil || tr.ClientID != "w1" {
		t.Errorf("got %s with client id %q, want SASL_SSL with SCRAM as w1", sec, tr.ClientID)
	}
	// Beside PLAINTEXT, top-level ssl.* keys are the REST listener's and are not read.
	if _, err := workerTransport(workerWith(t, map[string]string{"ssl.truststore.location": "/rest/only.pem", "ssl.truststore.type": "PEM"})); err != nil {
		t.Errorf("a PLAINTEXT worker with the REST listener's ssl.* keys: %v", err)
	}

	// AWS_MSK_IAM as the aws-msk-iam-auth README configures it, for the worker's clients and the producer.
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	iam := map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "AWS_MSK_IAM",
		"sasl.jaas.config":                   "software.amazon.msk.auth.iam.IAMLoginModule required;",
		"sasl.client.callback.handler.class": "software.amazon.msk.auth.iam.IAMClientCallbackHandler"}
	for k, v := range maps.Clone(iam) {
		iam["producer."+k] = v
	}
	tr, err = workerTransport(workerWith(t, iam))
	if err != nil {
		t.Fatalf("AWS_MSK_IAM: %v", err)
	}
	if sec := tr.Security(); sec.SASL == nil || sec.SASL.Name() != "AWS_MSK_IAM" || sec.TLS == nil {
		t.Errorf("AWS_MSK_IAM: got %s", sec)
	}

	for want, extra := range map[string]map[string]string{
		"sasl.mechanism: GSSAPI": {"security.protocol": "SASL_SSL", "sasl.mechanism": "GSSAPI", "sasl.jaas.config": jaas},
		"producer.ssl.provider":  {"producer.ssl.provider": "SunJSSE"},
		"producer.sasl.jaas.config: is set, but security.protocol=PLAINTEXT": {"producer.sasl.jaas.config": jaas},
		"ssl.keystore.type BCFKS is not supported":                           {"security.protocol": "SSL", "admin.ssl.keystore.type": "BCFKS", "admin.ssl.keystore.location": "/k"},
		"sasl.jaas.config: option awsMskRegionProvider":                      {"security.protocol": "SASL_SSL", "sasl.mechanism": "AWS_MSK_IAM", "sasl.jaas.config": `software.amazon.msk.auth.iam.IAMLoginModule required awsMskRegionProvider="com.example.Regions";`},
	} {
		_, err := workerTransport(workerWith(t, extra))
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "w0rker-s3cret") {
			t.Errorf("%v: got %v, want a refusal with %q without the password", extra, err, want)
		}
	}
}

// A standalone worker keeps its slot ledger in a file: the distributed ledger topic's key is refused, naming
// the key and the file, not accepted and ignored.
func TestStandaloneRefusesSlotStorageTopic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "worker.properties")
	props := "bootstrap.servers=127.0.0.1:1\noffset.storage.file.filename=" + filepath.Join(dir, "offsets") +
		"\nkey.converter=org.apache.kafka.connect.json.JsonConverter\nvalue.converter=org.apache.kafka.connect.json.JsonConverter\n" +
		"cdcd.slots.storage.topic=slots\n"
	if err := os.WriteFile(path, []byte(props), 0o600); err != nil {
		t.Fatal(err)
	}
	err := standalone(context.Background(), path, nil, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "cdcd.slots.storage.topic") || !strings.Contains(err.Error(), "offsets.slots.json") {
		t.Errorf("got %v, want a refusal naming cdcd.slots.storage.topic and the ledger file", err)
	}
}

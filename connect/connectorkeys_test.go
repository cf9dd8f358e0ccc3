package connect

import (
	"log/slog"
	"strings"
	"testing"
)

// Connect's own connector keys that ask for what cdcd does not do (another plugin version) are refused by
// name at validation and at start; at their defaults, or set to cdcd's own version, they pass.
func TestConnectKeysNotImplementedAreRefused(t *testing.T) {
	w := newPolicyWorker(t, nil)
	atDefault := pgConfig("pg")
	for key, value := range map[string]string{
		"exactly.once.support": "REQUESTED", "transaction.boundary": "poll", "errors.retry.timeout": "0",
		"errors.retry.delay.max.ms": "60000", "connector.plugin.version": pluginVersion(),
		"value.converter.plugin.version": pluginVersion(), "tasks.max.enforce": "false", "config.action.reload": "none",
	} {
		atDefault[key] = value
	}
	if got := errorsByKey(t, w, atDefault); len(got) != 0 {
		t.Errorf("Connect keys at their defaults: errors %v, want none", got)
	}

	refused := map[string]string{
		"connector.plugin.version":     "[3.0,4.0)",
		"key.converter.plugin.version": "7.9.0",
	}
	cfg := pgConfig("pg")
	for key, value := range refused {
		cfg[key] = value
	}
	got := errorsByKey(t, w, cfg)
	for key := range refused {
		if msgs := got[key]; len(msgs) != 1 || !strings.Contains(msgs[0], "cdcd does not implement "+key+" yet; remove it") {
			t.Errorf("%s: got %v, want it refused by name", key, msgs)
		}
	}
	if len(got) != len(refused) {
		t.Errorf("errors %v, want exactly the %d refused keys", got, len(refused))
	}
	err := w.CheckConnectorConfig("pg", cfg, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "key.converter.plugin.version") || !strings.Contains(err.Error(), "(the default is "+pluginVersion()+")") {
		t.Errorf("the start-up check: got %v, want key.converter.plugin.version refused with its default", err)
	}
}

// errors.retry.* change nothing in cdcd (its converters and transforms raise nothing Connect would retry):
// accepted, with one INFO line each at creation saying why.
func TestConnectRetryKeysAreAcceptedWithANote(t *testing.T) {
	var logs strings.Builder
	w := newTestStandalone(t, map[string]string{"bootstrap.servers": "127.0.0.1:1",
		"key.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
		"offset.storage.file.filename": t.TempDir() + "/offsets"}, slog.New(slog.NewTextHandler(&logs, nil)))
	cfg := pgConfig("pg")
	cfg["errors.retry.timeout"], cfg["errors.retry.delay.max.ms"] = "-1", "1000"
	if got := errorsByKey(t, w, cfg); len(got) != 0 {
		t.Fatalf("errors %v, want none", got)
	}
	if _, _, err := w.PutConnectorConfig("pg", cfg, false, "stopped"); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"errors.retry.timeout=-1", "errors.retry.delay.max.ms=1000"} {
		if n := strings.Count(logs.String(), `level=INFO msg="`+key+" changes nothing in cdcd"); n != 1 {
			t.Errorf("%s: %d INFO lines, want 1:\n%s", key, n, logs.String())
		}
	}
}

// exactly.once.support and transaction.boundary are validated as Connect's DistributedHerder does:
// "required" is refused with Connect's message by a worker without exactly-once source support, and
// bad values are refused with ConfigDef's messages.
func TestExactlyOnceConnectorKeys(t *testing.T) {
	w := newPolicyWorker(t, nil)
	cfg := pgConfig("pg")
	cfg["exactly.once.support"] = "Required"
	cfg["transaction.boundary"] = "sometimes"
	cfg["transaction.boundary.interval.ms"] = "-1"
	got := errorsByKey(t, w, cfg)
	want := map[string]string{
		"exactly.once.support":             "This worker does not have exactly-once source support enabled.",
		"transaction.boundary":             "Invalid value sometimes for configuration transaction.boundary: String must be one of (case insensitive): poll, interval, connector",
		"transaction.boundary.interval.ms": "Invalid value -1 for configuration transaction.boundary.interval.ms: Value must be at least 0",
	}
	for key, msg := range want {
		if msgs := got[key]; len(msgs) != 1 || msgs[0] != msg {
			t.Errorf("%s: got %q, want %q", key, msgs, msg)
		}
	}
	required := pgConfig("pg")
	required["exactly.once.support"] = "required"
	if err := w.CheckConnectorConfig("pg", required, slog.New(slog.DiscardHandler)); err == nil ||
		!strings.Contains(err.Error(), "This worker does not have exactly-once source support enabled.") {
		t.Errorf("creating a connector that requires exactly-once on a worker without it: got %v", err)
	}
	w.cfg.ExactlyOnceSource = true
	cfg = pgConfig("pg")
	cfg["exactly.once.support"] = "required"
	cfg["transaction.boundary"] = "connector"
	if got := errorsByKey(t, w, cfg); len(got) != 0 {
		t.Errorf("a worker with exactly-once source support: errors %v, want none", got)
	}
}

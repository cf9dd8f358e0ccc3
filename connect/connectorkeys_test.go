package connect

import (
	"log/slog"
	"strings"
	"testing"
)

// Connect's own connector keys that ask for what cdcd does not do (retries of failed
// conversions, another plugin version) are refused by name at validation and at
// start; at their defaults, or set to cdcd's own version, they pass.
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
		"errors.retry.timeout":         "-1",
		"errors.retry.delay.max.ms":    "1000",
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
	if err == nil || !strings.Contains(err.Error(), "errors.retry.timeout") || !strings.Contains(err.Error(), "(the default is 0)") {
		t.Errorf("the start-up check: got %v, want errors.retry.timeout refused with its default", err)
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

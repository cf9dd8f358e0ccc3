package slotguard

import (
	"strings"
	"testing"
	"time"
)

func TestParseConfigDefaults(t *testing.T) {
	cfg, err := ParseConfig(map[string]string{"bootstrap.servers": "ignored:9092"})
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Enabled || cfg.RefreshInterval != 30*time.Second || cfg.OrphanPolicy != PolicyNone || cfg.DryRun ||
		cfg.OrphanGrace != 15*time.Minute || cfg.RetainedBytes != 1<<30 || cfg.Inactive != 10*time.Minute ||
		cfg.TimeToFull != time.Hour || cfg.WebhookURL != "" || cfg.WALCapacity != 0 || cfg.GrowthPerSecond != 0 {
		t.Errorf("defaults: %+v", cfg)
	}
}

func TestParseConfigValues(t *testing.T) {
	cfg, err := ParseConfig(map[string]string{
		"cdcd.slots.refresh.interval.ms":           "250",
		"cdcd.slots.orphan.policy":                 "drop",
		"cdcd.slots.orphan.grace.ms":               "1000",
		"cdcd.slots.orphan.dry.run":                "TRUE",
		"cdcd.slots.webhook.url":                   "https://hooks.example/slots",
		"cdcd.slots.alert.growth.bytes.per.second": "1.5",
		"cdcd.slots.wal.capacity.bytes":            "1000000",
		"cdcd.slots.servers":                       "postgres://a@h1:5432/db, postgresql://b@h2/db",
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RefreshInterval != 250*time.Millisecond || cfg.OrphanPolicy != PolicyDrop || cfg.OrphanGrace != time.Second || !cfg.DryRun ||
		cfg.WebhookURL != "https://hooks.example/slots" || cfg.GrowthPerSecond != 1.5 || cfg.WALCapacity != 1e6 || len(cfg.Servers) != 2 {
		t.Errorf("parsed: %+v", cfg)
	}
}

func TestParseConfigErrorsNameKeyAndValue(t *testing.T) {
	cases := map[string]string{
		"cdcd.slots.refresh.interval.ms":           "0",
		"cdcd.slots.orphan.grace.ms":               "15m",
		"cdcd.slots.orphan.policy":                 "delete",
		"cdcd.slots.orphan.dry.run":                "yes",
		"cdcd.slots.webhook.url":                   "ftp://x",
		"cdcd.slots.alert.retained.bytes":          "-1",
		"cdcd.slots.alert.growth.bytes.per.second": "NaN",
	}
	for key, value := range cases {
		_, err := ParseConfig(map[string]string{key: value})
		if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), `"`+value+`"`) {
			t.Errorf("%s=%s: error %v, want one naming the key and the value", key, value, err)
		}
	}
	_, err := ParseConfig(map[string]string{"cdcd.slots.orphan.grace": "1000"})
	if err == nil || !strings.Contains(err.Error(), "unknown worker property cdcd.slots.orphan.grace ") {
		t.Errorf("misspelt key: %v", err)
	}
	_, err = ParseConfig(map[string]string{"cdcd.slots.servers": "mysql://root:secret@h/db"})
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("bad server DSN: %v (must not show the password)", err)
	}
}

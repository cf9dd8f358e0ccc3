package postgres_test

import (
	"bytes"
	"errors"
	"log/slog"
	"maps"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/source/postgres"
)

// validProps is the smallest config ParseConfig accepts.
func validProps() map[string]string {
	return map[string]string{
		"database.hostname": "db.example",
		"database.user":     "cdc",
		"database.dbname":   "shop",
		"topic.prefix":      "shop",
		"plugin.name":       "pgoutput",
	}
}

func TestParseConfigAcceptsTheMinimalConfig(t *testing.T) {
	cfg, err := postgres.ParseConfig("c", validProps(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Port != 5432 || cfg.SlotName != "debezium" || cfg.PublicationName != "dbz_publication" || cfg.OffsetMismatch != "fail" {
		t.Errorf("defaults: port %d slot %q publication %q mismatch %q", cfg.Port, cfg.SlotName, cfg.PublicationName, cfg.OffsetMismatch)
	}
}

// TestParseConfigReportsEveryBadValue sets one bad value per key in a single config and expects one
// *ConfigError per key, each naming the key and the refused value, so a user fixes everything in one go.
func TestParseConfigReportsEveryBadValue(t *testing.T) {
	bad := map[string]string{
		"database.port":               "54x32",
		"database.sslmode":            "sometimes",
		"slot.name":                   "Bad-Slot",
		"publication.autocreate.mode": "everything",
		"slot.drop.on.stop":           "yes",
		"status.update.interval.ms":   "-1",
		"heartbeat.interval.ms":       "often",
		"slot.max.retries":            "-3",
		"slot.retry.delay.ms":         "1e3",
		"offset.mismatch.strategy":    "trust_me",
		"schema.include.list":         "public,(unclosed",
		"skipped.operations":          "c,x",
		"tombstones.on.delete":        "maybe",
		"message.key.columns":         "public.orders",
		"decimal.handling.mode":       "float",
		"time.precision.mode":         "seconds",
		"binary.handling.mode":        "base32",
		"hstore.handling.mode":        "list",
		"interval.handling.mode":      "iso",
		"money.fraction.digits":       "101",
		"plugin.name":                 "test_decoding",
		"table.include.list":          "public.a",
		"table.exclude.list":          "public.b", // both lists: refused under the exclude key
		"column.include.list":         "public.a.x",
		"column.exclude.list":         "public.a.y",
		"port_is_not_a_key_x":         "ignored", // unknown keys are Connect's business, not the parser's (a database.* one is refused by name: TestKeyFamilies)
	}
	props := validProps()
	maps.Copy(props, bad)
	_, err := postgres.ParseConfig("c", props, slog.New(slog.DiscardHandler))
	if err == nil {
		t.Fatal("ParseConfig accepted a config full of bad values")
	}
	byKey := configErrors(t, err)
	wantKeys := []string{
		"database.port", "database.sslmode", "slot.name", "publication.autocreate.mode", "slot.drop.on.stop",
		"status.update.interval.ms", "heartbeat.interval.ms", "slot.max.retries", "slot.retry.delay.ms",
		"offset.mismatch.strategy", "schema.include.list", "skipped.operations", "tombstones.on.delete",
		"message.key.columns", "decimal.handling.mode", "time.precision.mode", "binary.handling.mode",
		"hstore.handling.mode", "interval.handling.mode", "money.fraction.digits", "plugin.name",
		"table.exclude.list", "column.exclude.list",
	}
	for _, key := range wantKeys {
		ce, ok := byKey[key]
		if !ok {
			t.Errorf("%s=%q was not reported", key, bad[key])
			continue
		}
		if ce.Value != bad[key] {
			t.Errorf("%s: reported value %q, want the configured %q", key, ce.Value, bad[key])
		}
		msg := ce.Error()
		if !strings.Contains(msg, key) || !strings.Contains(msg, bad[key]) || ce.Reason == "" {
			t.Errorf("%s: message %q does not name the key, the value and the reason", key, msg)
		}
	}
	if len(byKey) != len(wantKeys) {
		t.Errorf("got %d refused keys, want %d: %v", len(byKey), len(wantKeys), err)
	}
}

func TestParseConfigNamesMissingRequiredKeys(t *testing.T) {
	_, err := postgres.ParseConfig("c", map[string]string{"plugin.name": "pgoutput", "database.user": "  "}, slog.New(slog.DiscardHandler))
	byKey := configErrors(t, err)
	for _, key := range []string{"database.hostname", "database.user", "database.dbname", "topic.prefix"} {
		ce, ok := byKey[key]
		if !ok {
			t.Errorf("missing %s was not reported", key)
			continue
		}
		if !strings.Contains(ce.Error(), key) || !strings.Contains(ce.Error(), "required") {
			t.Errorf("%s: message %q does not say the key is required", key, ce.Error())
		}
	}
}

// TestParseConfigReadsOtherPluginsAsPgoutput: Debezium configs often name decoderbufs (Debezium's default)
// or wal2json (removed in Debezium 2.0, whose migration path is pgoutput); cdcd reads them as pgoutput and
// says what to write, and what pgoutput needs.
func TestParseConfigReadsOtherPluginsAsPgoutput(t *testing.T) {
	for _, plugin := range []string{"decoderbufs", "wal2json", "wal2json_rds_streaming"} {
		props := validProps()
		props["plugin.name"] = plugin
		var logs bytes.Buffer
		if _, err := postgres.ParseConfig("plugin-"+plugin, props, slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
			t.Fatalf("plugin.name=%s: %v", plugin, err)
		}
		for _, want := range []string{"plugin.name=" + plugin, "publication", "Write plugin.name=pgoutput instead"} {
			if !strings.Contains(logs.String(), want) {
				t.Errorf("plugin.name=%s: the warning lacks %q:\n%s", plugin, want, logs.String())
			}
		}
	}
}

// TestParseConfigAdvisesWhenPluginNameIsUnset: Debezium's default is decoderbufs, cdcd's is pgoutput; the
// difference is logged, not refused.
func TestParseConfigAdvisesWhenPluginNameIsUnset(t *testing.T) {
	props := validProps()
	delete(props, "plugin.name")
	var logs bytes.Buffer
	if _, err := postgres.ParseConfig("c", props, slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "plugin.name=pgoutput") {
		t.Errorf("no advice logged about plugin.name; log: %s", logs.String())
	}
}

// configErrors unpacks ParseConfig's joined error into one *ConfigError per key; anything else fails t.
func configErrors(t *testing.T, err error) map[string]*postgres.ConfigError {
	t.Helper()
	if err == nil {
		t.Fatal("ParseConfig returned no error")
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		joined = joinedOf{err}
	}
	out := map[string]*postgres.ConfigError{}
	for _, e := range joined.Unwrap() {
		var ce *postgres.ConfigError
		if !errors.As(e, &ce) {
			t.Errorf("error %q is not a *ConfigError", e)
			continue
		}
		if prev, dup := out[ce.Key]; dup {
			t.Errorf("%s reported twice: %q and %q", ce.Key, prev.Error(), ce.Error())
		}
		out[ce.Key] = ce
	}
	return out
}

type joinedOf struct{ err error }

func (j joinedOf) Unwrap() []error { return []error{j.err} }

// database.sslrootcert, sslcert, sslkey and sslpassword reach the driver (the query and the replication
// connection share the DSN); a certificate without its key and a JDBC socket factory are refused by name.
func TestTLSSettingsReachTheConnection(t *testing.T) {
	props := validProps()
	maps.Copy(props, map[string]string{"database.sslmode": "verify-full", "database.sslrootcert": "/etc/ca.pem",
		"database.sslcert": "/etc/client.pem", "database.sslkey": "/etc/client.key", "database.sslpassword": "key-pw"})
	cfg, err := postgres.ParseConfig("c", props, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	dsn := cfg.DSN()
	for _, want := range []string{"sslmode=verify-full", "sslrootcert=%2Fetc%2Fca.pem", "sslcert=%2Fetc%2Fclient.pem", "sslkey=%2Fetc%2Fclient.key", "sslpassword=key-pw"} {
		if !strings.Contains(dsn, want) {
			t.Errorf("DSN %q lacks %s", dsn, want)
		}
	}

	for key, value := range map[string]string{"database.sslcert": "/etc/client.pem", "database.sslfactory": "org.postgresql.ssl.DefaultJavaSSLFactory"} {
		bad := validProps()
		bad[key] = value
		_, err := postgres.ParseConfig("c", bad, slog.New(slog.DiscardHandler))
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s=%s: got %v, want a refusal naming the key", key, value, err)
		}
	}
}

// TestParseConfigStreamParams: slot.stream.params reads Debezium's name=value;name=value, passes origin on and
// refuses, naming the pair, what cdcd sets itself, what changes the messages, unknown names and a pair
// without '='.
func TestParseConfigStreamParams(t *testing.T) {
	props := validProps()
	props["slot.stream.params"] = " origin = NONE ; "
	cfg, err := postgres.ParseConfig("c", props, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if want := []postgres.StreamParam{{Name: "origin", Value: "none"}}; len(cfg.StreamParams) != 1 || cfg.StreamParams[0] != want[0] {
		t.Errorf("StreamParams = %+v, want %+v", cfg.StreamParams, want)
	}
	for text, want := range map[string]string{
		"origin=none;proto_version=2": "sets the pgoutput option proto_version itself",
		"messages=false":              "sets the pgoutput option messages itself",
		"binary=true":                 "binary changes the messages",
		"streaming=on":                "streaming changes the messages",
		"add-tables=public.t":         "add-tables is not a pgoutput option cdcd passes on",
		"origin":                      `"origin" is not name=value`,
		"origin=local":                "origin=local: pgoutput's origin is none",
	} {
		props["slot.stream.params"] = text
		_, err := postgres.ParseConfig("c", props, slog.New(slog.DiscardHandler))
		byKey := configErrors(t, err)
		if e := byKey["slot.stream.params"]; e == nil || !strings.Contains(e.Error(), want) {
			t.Errorf("slot.stream.params=%s: %v, want a refusal saying %q", text, err, want)
		}
	}
}

// TestParseConfigFlushModes: manual and the legacy flush.lsn.source=false never confirm; connector and
// connector_and_driver confirm (cdcd's connector mode already confirms idle keepalive positions).
func TestParseConfigFlushModes(t *testing.T) {
	for settings, manual := range map[[2]string]bool{
		{"lsn.flush.mode", "connector"}: false, {"lsn.flush.mode", "connector_and_driver"}: false,
		{"lsn.flush.mode", "manual"}: true, {"flush.lsn.source", "false"}: true, {"flush.lsn.source", "true"}: false,
	} {
		props := validProps()
		props[settings[0]] = settings[1]
		cfg, err := postgres.ParseConfig("c", props, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatalf("%s=%s: %v", settings[0], settings[1], err)
		}
		if cfg.ManualFlush != manual {
			t.Errorf("%s=%s: ManualFlush = %v, want %v", settings[0], settings[1], cfg.ManualFlush, manual)
		}
	}
}

// The driver reads the TLS files when it connects, without a bound: a device, a directory or a FIFO there
// would hang a validation's connection check, so the parse refuses them, naming the key.
func TestTLSFilesMustBeRegularFiles(t *testing.T) {
	for _, key := range []string{"database.sslrootcert", "database.sslcert", "database.sslkey"} {
		props := validProps()
		props["database.sslcert"], props["database.sslkey"] = "/missing/client.pem", "/missing/client.key" // missing: the driver says so
		props[key] = "/dev/zero"
		_, err := postgres.ParseConfig("c", props, slog.New(slog.DiscardHandler))
		if err == nil || !strings.Contains(err.Error(), "Invalid value /dev/zero for configuration "+key+": not a regular file") ||
			strings.Count(err.Error(), "not a regular file") != 1 {
			t.Errorf("%s=/dev/zero: got %v, want one refusal naming the key", key, err)
		}
	}
}

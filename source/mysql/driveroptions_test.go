package mysql

import (
	"bytes"
	"log/slog"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/source/mysql/types"
)

func driverTestConfig(more map[string]string) map[string]string {
	cfg := map[string]string{"database.hostname": "h", "database.user": "u", "database.server.id": "1", "topic.prefix": "p",
		"schema.history.internal.kafka.topic": "h", "schema.history.internal.kafka.bootstrap.servers": "k:9092"}
	maps.Copy(cfg, more)
	return cfg
}

// The JDBC drivers' TLS switches never make a connection less encrypted than they ask: without
// database.ssl.mode they are read as the flavor's mode that always encrypts, and next to a
// database.ssl.mode that turns TLS off they are refused.
func TestDriverTLSOptionsAreReadAsSSLMode(t *testing.T) {
	tests := []struct {
		flavor types.Flavor
		given  map[string]string
		want   SSLMode
		refuse string
	}{
		{types.MySQL, map[string]string{"database.useSSL": "true"}, SSLRequired, ""},
		{types.MariaDB, map[string]string{"database.useSSL": "true"}, SSLRequired, ""}, // MariaDB's default is disable
		{types.MySQL, map[string]string{"database.useSSL": "true", "database.verifyServerCertificate": "true"}, SSLVerifyCA, ""},
		{types.MySQL, map[string]string{"database.sslMode": "VERIFY_IDENTITY"}, SSLVerifyIdentity, ""},
		{types.MariaDB, map[string]string{"database.sslMode": "verify-full"}, SSLVerifyIdentity, ""},
		{types.MySQL, map[string]string{"database.useSSL": "false"}, SSLPreferred, ""}, // as in Debezium: ssl.mode's default decides
		{types.MySQL, map[string]string{"database.useSSL": "true", "database.ssl.mode": "verify_ca"}, SSLVerifyCA, ""},
		{types.MySQL, map[string]string{"database.useSSL": "true", "database.ssl.mode": "disabled"}, 0, "database.useSSL"},
	}
	for _, tt := range tests {
		var logs bytes.Buffer
		c, err := ParseConfig("tls-options", tt.flavor, driverTestConfig(tt.given), slog.New(slog.NewTextHandler(&logs, nil)))
		if tt.refuse != "" {
			if err == nil || !strings.Contains(err.Error(), tt.refuse) || !strings.Contains(err.Error(), "database.ssl.mode") {
				t.Errorf("%v %v: got %v, want a refusal of %s naming database.ssl.mode", tt.flavor, tt.given, err, tt.refuse)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v %v: %v", tt.flavor, tt.given, err)
			continue
		}
		if c.SSLMode != tt.want {
			t.Errorf("%v %v: ssl mode %s, want %s", tt.flavor, tt.given, sslModeName(tt.flavor, c.SSLMode), sslModeName(tt.flavor, tt.want))
		}
		if !strings.Contains(logs.String(), "level=WARN") && !strings.Contains(logs.String(), "level=INFO") {
			t.Errorf("%v %v: nothing logged about the driver's option:\n%s", tt.flavor, tt.given, logs.String())
		}
	}
}

// Driver options with no effect are accepted with one INFO line each; the time zone option is read as a
// zone to check against the server's; zeroDateTimeBehavior other than Debezium's is refused.
func TestDriverOptions(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	c, err := ParseConfig("driver-options", types.MySQL, driverTestConfig(map[string]string{
		"database.allowPublicKeyRetrieval": "true", "database.characterEncoding": "utf8", "database.connectionTimeZone": "Europe/Berlin",
		"database.zeroDateTimeBehavior": "convertToNull",
	}), log)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseConfig("driver-options", types.MySQL, driverTestConfig(map[string]string{"database.allowPublicKeyRetrieval": "true"}), log); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"database.allowPublicKeyRetrieval=true", "database.characterEncoding=utf8"} {
		if n := strings.Count(logs.String(), "level=INFO msg=\""+key+" is a JDBC driver option with no effect in cdcd"); n != 1 {
			t.Errorf("%s: %d INFO lines, want 1:\n%s", key, n, logs.String())
		}
	}
	if tz := c.DriverTimeZone; tz == nil || tz.Key != "database.connectionTimeZone" || tz.Location.String() != "Europe/Berlin" {
		t.Errorf("time zone %+v, want Europe/Berlin from database.connectionTimeZone", c.DriverTimeZone)
	}
	for key, value := range map[string]string{"database.serverTimezone": "Mars/Olympus", "database.zeroDateTimeBehavior": "EXCEPTION"} {
		_, err := ParseConfig("c", types.MySQL, driverTestConfig(map[string]string{key: value}), slog.New(slog.DiscardHandler))
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s=%s: got %v, want a refusal naming the key", key, value, err)
		}
	}
	if c, err := ParseConfig("c", types.MariaDB, driverTestConfig(map[string]string{"database.timezone": "auto"}), slog.New(slog.DiscardHandler)); err != nil || c.DriverTimeZone == nil || c.DriverTimeZone.Location != nil {
		t.Errorf("MariaDB timezone=auto: %+v, %v; want the server's zone", c, err)
	}
}

func TestDriverTimeZoneOffsets(t *testing.T) {
	for text, want := range map[string]int{"UTC": 0, "+02:00": 7200, "-0530": -19800, "GMT+2": 7200, "Etc/GMT-3": 10800} {
		loc, err := zone(text)
		if err != nil {
			t.Errorf("%s: %v", text, err)
			continue
		}
		if _, got := time.Date(2026, 1, 15, 12, 0, 0, 0, loc).Zone(); got != want {
			t.Errorf("%s: offset %d, want %d", text, got, want)
		}
	}
	for _, bad := range []string{"+25:00", "Nowhere", "+1:2:3"} {
		if _, err := zone(bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	if got := utcOffset(-19800); got != "-05:30" {
		t.Errorf("utcOffset(-19800) = %s", got)
	}
}

package postgres_test

import (
	"bytes"
	"log/slog"
	"maps"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/source/postgres"
)

// pgjdbc's options that published configs carry: those with a pgx equivalent reach the connection string,
// those without one are accepted with one INFO line each saying why, and a socket factory is accepted
// only where it asks for the verification database.sslmode gives.
func TestParseConfigDriverOptions(t *testing.T) {
	props := validProps()
	maps.Copy(props, map[string]string{
		"database.options": "-c search_path=shop", "database.loginTimeout": "7", "database.applicationName": "orders-cdc",
		"database.sslfactory": "org.postgresql.ssl.NonValidatingFactory", "database.sslmode": "require",
		"database.stringtype": "unspecified", "database.prepareThreshold": "0",
	})
	var logs bytes.Buffer
	cfg, err := postgres.ParseConfig("driver-options", props, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	dsn := cfg.DSN()
	for _, want := range []string{"options=-c+search_path%3Dshop", "connect_timeout=7", "application_name=orders-cdc"} {
		if !strings.Contains(dsn, want) {
			t.Errorf("DSN %q lacks %s", dsn, want)
		}
	}
	for _, key := range []string{"database.stringtype=unspecified", "database.prepareThreshold=0"} {
		if n := strings.Count(logs.String(), "level=INFO msg=\""+key+" is a JDBC driver option with no effect in cdcd"); n != 1 {
			t.Errorf("%s: %d INFO lines, want 1:\n%s", key, n, logs.String())
		}
	}

	for factory, mode := range map[string]string{"org.postgresql.ssl.NonValidatingFactory": "verify-full", "com.example.Factory": "require"} {
		bad := maps.Clone(props)
		bad["database.sslfactory"], bad["database.sslmode"] = factory, mode
		_, err := postgres.ParseConfig("c", bad, slog.New(slog.DiscardHandler))
		if err == nil || !strings.Contains(err.Error(), "database.sslfactory") || !strings.Contains(err.Error(), "database.sslmode") {
			t.Errorf("sslfactory=%s with sslmode=%s: got %v, want a refusal naming both keys", factory, mode, err)
		}
	}
}

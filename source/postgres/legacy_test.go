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

func TestMapLegacyKeys(t *testing.T) {
	tests := []struct {
		name string
		in   map[string]string
		want map[string]string
		// warnings and refusals: a substring each message must contain, in order
		warnings []string
		refused  []string // keys
	}{
		{
			name: "current names pass untouched",
			in:   map[string]string{"topic.prefix": "shop", "table.include.list": "public.a", "snapshot.mode": "initial"},
			want: map[string]string{"topic.prefix": "shop", "table.include.list": "public.a", "snapshot.mode": "initial"},
		},
		{
			name:     "database.server.name becomes topic.prefix",
			in:       map[string]string{"database.server.name": "shop"},
			want:     map[string]string{"topic.prefix": "shop"},
			warnings: []string{"write topic.prefix=shop instead"},
		},
		{
			name: "white and black lists become include and exclude lists",
			in: map[string]string{
				"schema.whitelist": "public", "table.blacklist": "public.audit",
				"column.blacklist": "public.users.password", "column.whitelist": "x", "schema.blacklist": "y", "table.whitelist": "z",
			},
			want: map[string]string{
				"schema.include.list": "public", "table.exclude.list": "public.audit",
				"column.exclude.list": "public.users.password", "column.include.list": "x", "schema.exclude.list": "y", "table.include.list": "z",
			},
			warnings: []string{
				"write column.exclude.list=public.users.password", "write column.include.list=x", "write schema.exclude.list=y",
				"write schema.include.list=public", "write table.exclude.list=public.audit", "write table.include.list=z",
			},
		},
		{
			name:     "toasted.value.placeholder becomes unavailable.value.placeholder",
			in:       map[string]string{"toasted.value.placeholder": "__toast"},
			want:     map[string]string{"unavailable.value.placeholder": "__toast"},
			warnings: []string{"write unavailable.value.placeholder=__toast"},
		},
		{
			name:     "1.x schema history keys have no PostgreSQL meaning and are dropped with advice",
			in:       map[string]string{"database.history.kafka.topic": "h", "database.history.producer.security.protocol": "SSL"},
			want:     map[string]string{},
			warnings: []string{"database.history.kafka.topic is a Debezium 1.x schema history key, and has no effect: the PostgreSQL connector keeps no schema history", "database.history.producer.security.protocol is a Debezium"},
		},
		{
			name:     "an old name set alongside the same new value is only redundant",
			in:       map[string]string{"database.server.name": "shop", "topic.prefix": "shop"},
			want:     map[string]string{"topic.prefix": "shop"},
			warnings: []string{"also set to the same value; delete database.server.name"},
		},
		{
			name:     "next to a new name, an old one with another value gives way, as Debezium 2 ignores it",
			in:       map[string]string{"database.server.name": "old", "topic.prefix": "new"},
			want:     map[string]string{"topic.prefix": "new"},
			warnings: []string{"topic.prefix decides (Debezium 2.0 and later no longer read database.server.name); delete database.server.name"},
		},
		{
			name:     "snapshot.mode=never is no_data",
			in:       map[string]string{"snapshot.mode": "never"},
			want:     map[string]string{"snapshot.mode": "no_data"},
			warnings: []string{"write snapshot.mode=no_data"},
		},
		{
			name:     "snapshot.mode=schema_only is no_data",
			in:       map[string]string{"snapshot.mode": "Schema_Only"},
			want:     map[string]string{"snapshot.mode": "no_data"},
			warnings: []string{"snapshot.mode=schema_only is a value Debezium no longer accepts: write snapshot.mode=no_data"},
		},
		{
			name:     "snapshot.mode=exported is initial",
			in:       map[string]string{"snapshot.mode": "exported"},
			want:     map[string]string{"snapshot.mode": "initial"},
			warnings: []string{"write snapshot.mode=initial"},
		},
		{
			name:    "snapshot.mode=schema_only_recovery has no PostgreSQL meaning",
			in:      map[string]string{"snapshot.mode": "schema_only_recovery"},
			want:    map[string]string{},
			refused: []string{"snapshot.mode"},
		},
		{
			name:     "slot.seek.to.known.offset.on.start=true is trust_offset",
			in:       map[string]string{"slot.seek.to.known.offset.on.start": "true"},
			want:     map[string]string{"offset.mismatch.strategy": "trust_offset"},
			warnings: []string{"write offset.mismatch.strategy=trust_offset"},
		},
		{
			name:     "flush.lsn.source=false is lsn.flush.mode=manual",
			in:       map[string]string{"flush.lsn.source": "FALSE"},
			want:     map[string]string{"lsn.flush.mode": "manual"},
			warnings: []string{"write lsn.flush.mode=manual"},
		},
		{
			name:    "a deprecated boolean that is not a boolean is refused",
			in:      map[string]string{"flush.lsn.source": "yes"},
			want:    map[string]string{},
			refused: []string{"flush.lsn.source"},
		},
		{
			name:     "truncate.handling.mode=include emits truncates",
			in:       map[string]string{"truncate.handling.mode": "include"},
			want:     map[string]string{"skipped.operations": "none"},
			warnings: []string{"write skipped.operations=none"},
		},
		{
			name:     "truncate.handling.mode=skip is today's default",
			in:       map[string]string{"truncate.handling.mode": "skip"},
			want:     map[string]string{},
			warnings: []string{"delete the line"},
		},
		{
			name:    "truncate.handling.mode next to skipped.operations is refused",
			in:      map[string]string{"truncate.handling.mode": "include", "skipped.operations": "t"},
			want:    map[string]string{"skipped.operations": "t"},
			refused: []string{"truncate.handling.mode"},
		},
		{
			name:     "sanitize.field.names=false is today's default",
			in:       map[string]string{"sanitize.field.names": "false"},
			want:     map[string]string{},
			warnings: []string{"sanitize.field.names was removed"},
		},
		{
			name:    "sanitize.field.names=true changed meaning and is refused",
			in:      map[string]string{"sanitize.field.names": "true"},
			want:    map[string]string{},
			refused: []string{"sanitize.field.names"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := maps.Clone(tt.in)
			got, warnings, err := postgres.MapLegacyKeys(in)
			if !maps.Equal(in, tt.in) {
				t.Errorf("the input map was modified: %v", in)
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("mapped = %v, want %v", got, tt.want)
			}
			if len(warnings) != len(tt.warnings) {
				t.Fatalf("warnings = %q, want %d containing %q", warnings, len(tt.warnings), tt.warnings)
			}
			for i, w := range tt.warnings {
				if !strings.Contains(warnings[i], w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, warnings[i], w)
				}
			}
			var refused []string
			var joined interface{ Unwrap() []error }
			if errors.As(err, &joined) {
				for _, e := range joined.Unwrap() {
					var ce *postgres.ConfigError
					if !errors.As(e, &ce) {
						t.Fatalf("refusal %v is not a *ConfigError", e)
					}
					refused = append(refused, ce.Key)
				}
			}
			if strings.Join(refused, ",") != strings.Join(tt.refused, ",") {
				t.Errorf("refused %q (err %v), want %q", refused, err, tt.refused)
			}
		})
	}
}

func TestParseConfigReadsLegacyNamesAndWarnsOncePerConnector(t *testing.T) {
	props := validProps()
	delete(props, "topic.prefix")
	props["database.server.name"] = "legacy"
	props["table.whitelist"] = "public.orders"

	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	// A validation-only caller (discard logger) first: it must not use up the connector's warning.
	if _, err := postgres.ParseConfig("legacy-once", props, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	for range 3 { // a validation and two task starts
		cfg, err := postgres.ParseConfig("legacy-once", props, log)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.TopicPrefix != "legacy" || !cfg.Filter.IncludeTable("public", "orders") || cfg.Filter.IncludeTable("public", "other") {
			t.Fatalf("legacy names not honoured: prefix %q filter %+v", cfg.TopicPrefix, cfg.Filter)
		}
	}
	if n := strings.Count(logs.String(), "database.server.name is the Debezium 1.x name"); n != 1 {
		t.Errorf("the database.server.name warning was logged %d times, want once:\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 2 {
		t.Errorf("%d warnings logged, want 2 (one per legacy key):\n%s", n, logs.String())
	}

	logs.Reset()
	if _, err := postgres.ParseConfig("another-connector", props, log); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 2 {
		t.Errorf("another connector got %d warnings, want its own 2:\n%s", n, logs.String())
	}
}

func TestParseConfigRefusesLegacyValuesWhoseMeaningChanged(t *testing.T) {
	props := validProps()
	props["sanitize.field.names"] = "true"
	_, err := postgres.ParseConfig("c", props, slog.New(slog.DiscardHandler))
	var ce *postgres.ConfigError
	if !errors.As(err, &ce) || ce.Key != "sanitize.field.names" || !strings.Contains(ce.Error(), "schema.name.adjustment.mode") {
		t.Fatalf("err = %v, want a refusal of sanitize.field.names naming its replacement", err)
	}
}

func TestValidateConfigChecksLegacyConfigsUnderTodaysNames(t *testing.T) {
	props := validProps()
	delete(props, "topic.prefix")
	props["database.server.name"] = "legacy"
	props["snapshot.mode"] = "never"
	props["sanitize.field.names"] = "true"
	res := postgres.ValidateConfig(props)
	errs := map[string][]string{}
	for _, v := range res.Values {
		if len(v.Errors) > 0 {
			errs[v.Name] = v.Errors
		}
	}
	if len(errs) != 1 || len(errs["sanitize.field.names"]) != 1 {
		t.Errorf("errors = %v, want only the refusal of sanitize.field.names (topic.prefix comes from database.server.name, never is no_data)", errs)
	}
	if v, ok := res.Value("topic.prefix"); !ok || !v.Set {
		t.Errorf("topic.prefix = %+v, want it set from database.server.name", v)
	}
}

package postgres

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/cdcd/cdcd/source/postgres/catalog"
)

// namedTable builds public.t (key column id, column my-col) under the given connector overrides.
func namedTable(t *testing.T, overrides map[string]string) *table {
	t.Helper()
	props := map[string]string{
		"database.hostname": "db", "database.user": "u", "database.dbname": "d",
		"topic.prefix": "my-app", "plugin.name": "pgoutput",
	}
	for k, v := range overrides {
		props[k] = v
	}
	cfg, err := ParseConfig("c", props, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	info := &catalog.Table{Schema: "public", Name: "t", PrimaryKey: []string{"id"}, Columns: []catalog.Column{
		{Name: "id", Position: 1, TypeOID: 23, TypeMod: -1, TypeName: "int4", NotNull: true},
		{Name: "my-col", Position: 2, TypeOID: 25, TypeMod: -1, TypeName: "text"},
	}}
	tbl, err := newTable(cfg, info, catalogColumns(info), nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func TestNewTableAdjustsSchemaAndFieldNames(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		overrides                 map[string]string
		value, envelope, key, col string
	}{
		{"default none", nil, "my-app.public.t.Value", "my-app.public.t.Envelope", "my-app.public.t.Key", "my-col"},
		{"explicit none", map[string]string{"schema.name.adjustment.mode": "none", "field.name.adjustment.mode": "none"},
			"my-app.public.t.Value", "my-app.public.t.Envelope", "my-app.public.t.Key", "my-col"},
		{"avro", map[string]string{"schema.name.adjustment.mode": "avro", "field.name.adjustment.mode": "avro"},
			"my_app.public.t.Value", "my_app.public.t.Envelope", "my_app.public.t.Key", "my_col"},
		{"avro_unicode", map[string]string{"schema.name.adjustment.mode": "avro_unicode", "field.name.adjustment.mode": "avro_unicode"},
			"my_u002dapp.public.t.Value", "my_u002dapp.public.t.Envelope", "my_u002dapp.public.t.Key", "my_u002dcol"},
		{"schema names only", map[string]string{"schema.name.adjustment.mode": "avro"},
			"my_app.public.t.Value", "my_app.public.t.Envelope", "my_app.public.t.Key", "my-col"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tbl := namedTable(t, tc.overrides)
			if tbl.topic != "my-app.public.t" {
				t.Errorf("topic %q: topic names are never adjusted", tbl.topic)
			}
			if got := tbl.rowSchema.Name; got != tc.value {
				t.Errorf("row schema %q, want %q", got, tc.value)
			}
			if got := tbl.envelope.Name; got != tc.envelope {
				t.Errorf("envelope schema %q, want %q", got, tc.envelope)
			}
			if got := tbl.keySchema.Name; got != tc.key {
				t.Errorf("key schema %q, want %q", got, tc.key)
			}
			if got := tbl.rowSchema.Fields[1].Name; got != tc.col {
				t.Errorf("field %q, want %q", got, tc.col)
			}
			if got := tbl.keySchema.Fields[0].Name; got != "id" {
				t.Errorf("key field %q, want id", got)
			}
		})
	}
}

func TestParseConfigRefusesAnUnknownAdjustmentMode(t *testing.T) {
	for _, key := range []string{"schema.name.adjustment.mode", "field.name.adjustment.mode"} {
		props := map[string]string{
			"database.hostname": "db", "database.user": "u", "database.dbname": "d", "topic.prefix": "p",
			"plugin.name": "pgoutput", key: "avro2",
		}
		_, err := ParseConfig("c", props, slog.New(slog.DiscardHandler))
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Key != key {
			t.Errorf("%s=avro2: error %v, want a ConfigError for the key", key, err)
		}
	}
}

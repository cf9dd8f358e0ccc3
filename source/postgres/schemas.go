package postgres

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/postgres/catalog"
)

// CurrentSchemas builds the schemas of every table cfg captures from the catalog as it is now, the way a
// snapshot of the table would: what a schema pre-flight check compares with the registry.
func CurrentSchemas(ctx context.Context, cfg *Config, log *slog.Logger) ([]source.TableSchemas, error) {
	conn, err := cfg.connectSQL(ctx)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", cfg.Server(), err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	infos, err := catalog.LoadAll(ctx, conn, cfg.Filter.IncludeTable)
	if err != nil {
		return nil, fmt.Errorf("reading the catalog: %w", err)
	}
	out := make([]source.TableSchemas, 0, len(infos))
	for _, info := range infos {
		t, err := newTable(cfg, info, catalogColumns(info), nil, log)
		if err != nil {
			return nil, err
		}
		out = append(out, source.TableSchemas{Schema: info.Schema, Table: info.Name, Topic: t.topic, Key: t.keySchema, Value: t.envelope})
	}
	return out, nil
}

package postgres

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/source"
)

// publish.via.partition.root, as Debezium's PostgresReplicationConnection honours it: a publication the
// connector creates (all_tables, filtered, no_tables) is created WITH (publish_via_partition_root = true),
// so pgoutput sends the changes of every partition, present or attached later, as changes of the
// partitioned table at the root: one topic and one key schema per partitioned table, named after the root,
// as the snapshot (which reads the root) already has them.
//
// Debezium leaves an existing publication as it is. cdcd brings it to the setting when it manages the
// publication (every mode but disabled), and refuses a disabled-mode publication that lacks it: otherwise
// the key would be set and the events still carry the partitions' names.

// viaRootClause is the WITH clause of a publication cdcd creates.
func viaRootClause(cfg *Config) string {
	if cfg.PublishViaRoot {
		return " WITH (publish_via_partition_root = true)"
	}
	return ""
}

// ensureViaRoot makes the existing publication publish through partition roots when the key asks for it.
func ensureViaRoot(ctx context.Context, conn *pgx.Conn, cfg *Config, log *slog.Logger) error {
	if !cfg.PublishViaRoot {
		return nil
	}
	viaRoot, err := publishesViaRoot(ctx, conn, cfg.PublicationName)
	if err != nil || viaRoot {
		return err
	}
	pub := pgx.Identifier{cfg.PublicationName}.Sanitize()
	if cfg.PublicationMode == "disabled" {
		return source.Fatal(fmt.Errorf("publish.via.partition.root=true but publication %q publishes partitions under their own names, and publication.autocreate.mode=disabled leaves it to you: ALTER PUBLICATION %s SET (publish_via_partition_root = true)",
			cfg.PublicationName, pub))
	}
	if _, err := conn.Exec(ctx, "ALTER PUBLICATION "+pub+" SET (publish_via_partition_root = true)"); err != nil {
		return wrapCreate(err, cfg, func() {})
	}
	log.Info("publication now publishes partitions through their roots (publish.via.partition.root=true)", "publication", cfg.PublicationName)
	return nil
}

// publishesViaRoot reads publish_via_partition_root of the existing publication name.
func publishesViaRoot(ctx context.Context, conn *pgx.Conn, name string) (bool, error) {
	var viaRoot bool
	if err := conn.QueryRow(ctx, "SELECT pubviaroot FROM pg_publication WHERE pubname = $1", name).Scan(&viaRoot); err != nil {
		return false, fmt.Errorf("reading publish_via_partition_root of publication %q: %w", name, err)
	}
	return viaRoot, nil
}

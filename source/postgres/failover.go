package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/source"
)

// failoverSince is the first server_version_num whose slots can be failover slots (CREATE_REPLICATION_SLOT's
// FAILOVER option, pg_replication_slots.failover), which PostgreSQL 17's slot synchronization copies to
// the standbys that sync_replication_slots runs on.
const failoverSince = 170000

// checkFailover refuses slot.failover=true on a server that cannot make failover slots, naming its version.
// Debezium creates an ordinary slot there without a word; cdcd refuses, because the config asks for a slot
// that survives a promotion and an ordinary one would be lost with the primary.
func checkFailover(versionNum int, cfg *Config) error {
	if !cfg.SlotFailover || versionNum >= failoverSince {
		return nil
	}
	return source.Fatal(fmt.Errorf("slot.failover=true needs PostgreSQL 17 or newer, and the server at %s is PostgreSQL %s: remove slot.failover (an ordinary slot is lost when a standby is promoted)",
		cfg.addr(), versionString(versionNum)))
}

// slotOptions is what CREATE_REPLICATION_SLOT takes after the plugin for a slot whose snapshot is
// snapshot ("export" or "nothing"): the legacy keywords (EXPORT_SNAPSHOT, NOEXPORT_SNAPSHOT) that every
// supported version reads, or, for the connector's own slot with slot.failover, the option list that 17
// needs for FAILOVER (the two forms cannot be mixed). Temporary slots (a re-snapshot's) cannot fail over.
func (c *Config) slotOptions(snapshot string, connectorSlot bool) string {
	if connectorSlot && c.SlotFailover {
		return "(SNAPSHOT '" + snapshot + "', FAILOVER)"
	}
	if snapshot == "export" {
		return "EXPORT_SNAPSHOT"
	}
	return "NOEXPORT_SNAPSHOT"
}

// ensureFailover makes an existing slot of the connector a failover slot when slot.failover asks for one
// and it is not (a slot created before the setting was added): without this the setting would change
// nothing for an existing connector. ALTER_REPLICATION_SLOT is a walsender command of 17.
func (r *Reader) ensureFailover(ctx context.Context, sql *pgx.Conn) error {
	if !r.cfg.SlotFailover {
		return nil
	}
	var failover bool
	if err := sql.QueryRow(ctx, "SELECT failover FROM pg_replication_slots WHERE slot_name = $1", r.cfg.SlotName).Scan(&failover); err != nil {
		return fmt.Errorf("reading whether slot %q fails over: %w", r.cfg.SlotName, err)
	}
	if failover {
		return nil
	}
	conn, err := r.cfg.connectReplication(ctx)
	if err != nil {
		return fmt.Errorf("replication connection to %s: %w", r.cfg.addr(), err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "ALTER_REPLICATION_SLOT "+pgx.Identifier{r.cfg.SlotName}.Sanitize()+" (FAILOVER true)").ReadAll(); err != nil {
		return fmt.Errorf("making replication slot %q a failover slot (slot.failover=true): %w", r.cfg.SlotName, err)
	}
	r.log.Info("made the existing replication slot a failover slot (slot.failover=true)", "slot", r.cfg.SlotName)
	return nil
}

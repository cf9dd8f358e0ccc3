package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

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

// warnSlotSurvival logs what the server lacks for the connector's slot to outlive the events it is made
// for: a promotion, for a failover slot on a primary (failoverWarnings); the primary's vacuum, for a slot on
// a standby (standbyWarnings). Warnings only: the connector streams as it is, and a standby's own settings
// (sync_replication_slots) cannot be seen from the primary.
func (r *Reader) warnSlotSurvival(ctx context.Context, sql *pgx.Conn) {
	check, about := failoverWarnings, "whether the failover slot survives a promotion"
	if r.server.standby {
		check, about = standbyWarnings, "whether the standby keeps its slot"
	} else if !r.cfg.SlotFailover {
		return
	}
	warnings, err := check(ctx, sql)
	if err != nil {
		r.log.Warn("could not check "+about, "slot", r.cfg.SlotName, "error", err)
	}
	for _, w := range warnings {
		r.log.Warn(w, "slot", r.cfg.SlotName, "server", r.cfg.addr())
	}
}

// failoverWarnings names what a primary lacks for a failover slot to carry on after a standby's
// promotion. synchronized_standby_slots makes the primary send cdcd only what those standbys have
// received: without it, cdcd may publish changes that die with the primary, and the synchronized slot on
// the standby would then be behind them.
func failoverWarnings(ctx context.Context, sql *pgx.Conn) ([]string, error) {
	var setting string
	if err := sql.QueryRow(ctx, "SELECT current_setting('synchronized_standby_slots')").Scan(&setting); err != nil {
		return nil, fmt.Errorf("reading synchronized_standby_slots: %w", err)
	}
	if strings.TrimSpace(setting) == "" {
		return []string{"slot.failover=true, but synchronized_standby_slots is empty on the primary: cdcd may publish changes no standby has received, which a promoted standby never had; set synchronized_standby_slots to the physical slot of each standby that synchronizes the slot (sync_replication_slots = on and hot_standby_feedback = on there)"}, nil
	}
	var out []string
	for _, name := range strings.Split(setting, ",") {
		name = strings.Trim(strings.TrimSpace(name), `"`)
		var kind string
		var active, feedback bool
		err := sql.QueryRow(ctx, "SELECT slot_type, active, xmin IS NOT NULL FROM pg_replication_slots WHERE slot_name = $1", name).Scan(&kind, &active, &feedback)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			out = append(out, fmt.Sprintf("synchronized_standby_slots names %q, which is no slot of the primary: the primary holds cdcd's changes back until it exists; create the standby's physical slot (pg_create_physical_replication_slot) or correct the setting", name))
		case err != nil:
			return out, fmt.Errorf("reading slot %q of synchronized_standby_slots: %w", name, err)
		case kind != "physical":
			out = append(out, fmt.Sprintf("synchronized_standby_slots names %q, a %s slot: it must name the physical slots the standbys stream from", name, kind))
		case !active:
			out = append(out, fmt.Sprintf("no standby streams from the physical slot %q (synchronized_standby_slots): the primary holds cdcd's changes back until one does", name))
		case !feedback:
			out = append(out, fmt.Sprintf("the standby streaming from the physical slot %q sends no hot_standby_feedback (the slot has no xmin): the standby cannot synchronize the failover slot; set hot_standby_feedback = on there", name))
		}
	}
	return out, nil
}

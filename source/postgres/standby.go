package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/source"
)

// A connector may be pointed at a hot standby of PostgreSQL 16 or later: the slot is created and decoded
// there, and the primary carries none of the decoding's load. What differs from a primary:
//   - nothing can be written, so the publication must come from the primary with the WAL
//     (checkStandbyPublication), and a failover slot cannot be made (those are the primary's, copied to
//     standbys by sync_replication_slots);
//   - creating the slot waits for the primary to log its running transactions (watchSlotCreation says so);
//   - the slot survives only while the primary keeps the catalog rows it needs, which hot_standby_feedback
//     over a physical slot guarantees (standbyWarnings).

// checkStandby refuses a standby that cannot serve the connector, naming the version or the setting.
func checkStandby(srv serverInfo, cfg *Config) error {
	if !srv.standby {
		return nil
	}
	if srv.versionNum < standbyDecodingSince {
		return source.Fatal(fmt.Errorf("the server at %s is a standby (in recovery) of PostgreSQL %s, and logical decoding on a standby needs PostgreSQL 16 or newer: point database.hostname at the primary",
			cfg.addr(), versionString(srv.versionNum)))
	}
	if cfg.SlotFailover {
		return source.Fatal(fmt.Errorf("slot.failover=true, but the server at %s is a standby, where a failover slot cannot be created (the primary's failover slots are copied to its standbys by sync_replication_slots): point database.hostname at the primary, or remove slot.failover to decode on this standby",
			cfg.addr()))
	}
	return nil
}

// checkStandbyPublication stands for ensurePublication on a standby, which cannot create or alter a
// publication: it must exist, created on the primary, and (publication.autocreate.mode=filtered) hold every
// captured table. The refusal gives the statement to run on the primary.
func checkStandbyPublication(ctx context.Context, conn *pgx.Conn, cfg *Config, exists bool) error {
	pub := pgx.Identifier{cfg.PublicationName}.Sanitize()
	var tables []string
	if cfg.PublicationMode == "filtered" {
		var err error
		if tables, err = capturedTables(ctx, conn, cfg); err != nil {
			return err
		}
	}
	if !exists {
		stmt := "CREATE PUBLICATION " + pub + " FOR TABLE …"
		switch {
		case cfg.PublicationMode == "all_tables":
			stmt = "CREATE PUBLICATION " + pub + " FOR ALL TABLES"
		case len(tables) > 0:
			stmt = "CREATE PUBLICATION " + pub + " FOR TABLE " + strings.Join(tables, ", ")
		}
		return source.Fatal(fmt.Errorf("publication %q does not exist on the standby at %s, which cannot create it (a standby takes no writes): run %s%s on the primary; the standby receives it with the WAL",
			cfg.PublicationName, cfg.addr(), stmt, viaRootClause(cfg)))
	}
	if cfg.PublishViaRoot {
		viaRoot, err := publishesViaRoot(ctx, conn, cfg.PublicationName)
		if err != nil {
			return err
		}
		if !viaRoot {
			return source.Fatal(fmt.Errorf("publish.via.partition.root=true but publication %q publishes partitions under their own names, and the standby at %s cannot alter it: run ALTER PUBLICATION %s SET (publish_via_partition_root = true) on the primary",
				cfg.PublicationName, cfg.addr(), pub))
		}
	}
	if len(tables) == 0 {
		return nil
	}
	rows, err := conn.Query(ctx, `SELECT t FROM unnest($1::text[]) AS t
		WHERE NOT (SELECT puballtables FROM pg_publication WHERE pubname = $2)
		  AND t::regclass NOT IN (SELECT pr.prrelid FROM pg_publication_rel pr JOIN pg_publication p ON p.oid = pr.prpubid WHERE p.pubname = $2)
		ORDER BY 1`, tables, cfg.PublicationName)
	if err != nil {
		return fmt.Errorf("reading the tables of publication %q: %w", cfg.PublicationName, err)
	}
	missing, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("reading the tables of publication %q: %w", cfg.PublicationName, err)
	}
	if len(missing) > 0 {
		return source.Fatal(fmt.Errorf("publication %q on the standby at %s does not publish %s, which the connector captures, and a standby cannot alter it: run ALTER PUBLICATION %s SET TABLE %s on the primary",
			cfg.PublicationName, cfg.addr(), strings.Join(missing, ", "), pub, strings.Join(tables, ", ")))
	}
	return nil
}

// standbyWarnings names what a standby lacks to keep the connector's slot usable: without
// hot_standby_feedback the primary's vacuum removes catalog rows the slot still needs, which invalidates
// it (a new snapshot, or lost changes, follows); without primary_slot_name the feedback lasts only while
// the standby is connected.
func standbyWarnings(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	var feedback, primarySlot string
	if err := conn.QueryRow(ctx, "SELECT current_setting('hot_standby_feedback'), current_setting('primary_slot_name')").Scan(&feedback, &primarySlot); err != nil {
		return nil, fmt.Errorf("reading hot_standby_feedback and primary_slot_name: %w", err)
	}
	var out []string
	if feedback != "on" {
		out = append(out, "hot_standby_feedback is off on this standby: the primary's vacuum may remove catalog rows the slot needs, which invalidates the slot; set hot_standby_feedback = on on the standby")
	}
	if primarySlot == "" {
		out = append(out, "primary_slot_name is empty on this standby: hot_standby_feedback holds the primary's catalog rows only while the standby is connected; give the standby a physical slot on the primary (primary_slot_name)")
	}
	return out, nil
}

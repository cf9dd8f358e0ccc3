package slotguard

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Slot is one row of pg_replication_slots as the server reports it at one moment. Pointer fields are NULL
// on the server: a column the server's version lacks, a physical slot's plugin and database, an LSN a slot
// has not reserved yet, or safe_wal_size while max_slot_wal_keep_size is -1 (unlimited).
type Slot struct {
	Name      string  `json:"slot_name"`
	Type      string  `json:"slot_type"` // logical or physical
	Database  *string `json:"database"`
	Plugin    *string `json:"plugin"`
	Temporary bool    `json:"temporary"`
	Active    bool    `json:"active"`
	ActivePID *int32  `json:"active_pid"`

	RestartLSN        *string `json:"restart_lsn"`
	ConfirmedFlushLSN *string `json:"confirmed_flush_lsn"`
	// RetainedWALBytes is how much WAL the slot keeps: from restart_lsn to the current WAL position (the last
	// received position on a standby). NULL while the slot has no restart_lsn.
	RetainedWALBytes *int64 `json:"retained_wal_bytes"`
	// WALStatus is reserved, extended, unreserved or lost (PostgreSQL 13+).
	WALStatus *string `json:"wal_status"`
	// SafeWALSize is how many more bytes of WAL may be written before the slot is in danger of becoming lost;
	// NULL unless max_slot_wal_keep_size is set (PostgreSQL 13+).
	SafeWALSize *int64 `json:"safe_wal_size"`
	TwoPhase    *bool  `json:"two_phase"` // PostgreSQL 14+
	// PostgreSQL 17+: failover slots synchronised to standbys, and the server's own inactivity clock.
	Failover           *bool      `json:"failover"`
	Synced             *bool      `json:"synced"`
	ServerInactiveAt   *time.Time `json:"server_inactive_since"`
	InvalidationReason *string    `json:"invalidation_reason"`
}

// ServerInfo is what one inspection learns about the server itself.
type ServerInfo struct {
	VersionNum int  `json:"server_version_num"`
	InRecovery bool `json:"in_recovery"` // a standby: retained WAL is measured from the last received position
}

// minVersion is PostgreSQL 10, the first with pg_current_wal_lsn and pg_wal_lsn_diff under those names.
const minVersion = 100000

// inventoryQuery selects every slot with the same columns whatever the server's version: a column the version
// lacks is selected as a typed NULL, so one Scan serves all versions.
func inventoryQuery(versionNum int) string {
	since := func(v int, expr, null string) string {
		if versionNum >= v {
			return expr
		}
		return null
	}
	cols := []string{
		"slot_name", "slot_type", "database", "plugin", "temporary", "active", "active_pid",
		"restart_lsn::text", "confirmed_flush_lsn::text",
		// On a standby pg_current_wal_lsn() raises an error, so the CASE must keep it from being evaluated there;
		// a standby fed only from the archive has no receive position, hence the replay fallback.
		`CASE WHEN pg_is_in_recovery()
			THEN pg_wal_lsn_diff(COALESCE(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn()), restart_lsn)
			ELSE pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn) END::bigint`,
		since(130000, "wal_status", "NULL::text"),
		since(130000, "safe_wal_size", "NULL::bigint"),
		since(140000, "two_phase", "NULL::boolean"),
		since(170000, "failover", "NULL::boolean"),
		since(170000, "synced", "NULL::boolean"),
		since(170000, "inactive_since", "NULL::timestamptz"),
		since(170000, "invalidation_reason", "NULL::text"),
	}
	return "SELECT " + strings.Join(cols, ", ") + " FROM pg_replication_slots ORDER BY slot_name"
}

// Inspect reads every replication slot of the server conn is connected to (slots are server-wide, so any
// database will do). It blocks for the round trips; ctx cancels them.
func Inspect(ctx context.Context, conn *pgx.Conn) (ServerInfo, []Slot, error) {
	var info ServerInfo
	if err := conn.QueryRow(ctx, "SELECT current_setting('server_version_num')::int, pg_is_in_recovery()").Scan(&info.VersionNum, &info.InRecovery); err != nil {
		return info, nil, fmt.Errorf("reading the server version: %w", err)
	}
	if info.VersionNum < minVersion {
		return info, nil, fmt.Errorf("PostgreSQL %d is too old to inspect replication slots: cdcd needs 10 or later", info.VersionNum)
	}
	rows, err := conn.Query(ctx, inventoryQuery(info.VersionNum))
	if err != nil {
		return info, nil, fmt.Errorf("listing replication slots: %w", err)
	}
	slots, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Slot, error) {
		var s Slot
		err := row.Scan(&s.Name, &s.Type, &s.Database, &s.Plugin, &s.Temporary, &s.Active, &s.ActivePID,
			&s.RestartLSN, &s.ConfirmedFlushLSN, &s.RetainedWALBytes, &s.WALStatus, &s.SafeWALSize,
			&s.TwoPhase, &s.Failover, &s.Synced, &s.ServerInactiveAt, &s.InvalidationReason)
		return s, err
	})
	if err != nil {
		return info, nil, fmt.Errorf("reading replication slots: %w", err)
	}
	return info, slots, nil
}

// DropSlot drops slot name unless a consumer is streaming from it. It returns the slot as it was just before,
// ErrSlotNotFound or ErrSlotActive. PostgreSQL itself refuses to drop a slot that became active after the
// check, so a consumer that connects in between is not cut off either.
func DropSlot(ctx context.Context, conn *pgx.Conn, name string) (Slot, error) {
	_, slots, err := Inspect(ctx, conn)
	if err != nil {
		return Slot{}, err
	}
	for _, s := range slots {
		if s.Name != name {
			continue
		}
		if s.Active {
			return s, fmt.Errorf("%w: slot %q is in use by process %s; stop its consumer first", ErrSlotActive, name, pidText(s.ActivePID))
		}
		if _, err := conn.Exec(ctx, "SELECT pg_drop_replication_slot($1)", name); err != nil {
			return s, fmt.Errorf("dropping replication slot %q: %w", name, err)
		}
		return s, nil
	}
	return Slot{}, fmt.Errorf("%w: %q", ErrSlotNotFound, name)
}

func pidText(pid *int32) string {
	if pid == nil {
		return "?"
	}
	return fmt.Sprint(*pid)
}

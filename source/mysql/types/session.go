package types

import (
	"time"

	"github.com/go-mysql-org/go-mysql/replication"
)

// SyncerConfig sets the go-mysql decoding options FromBinlog relies on: temporal values as text
// (ParseTime off, so zero dates and DATETIMEs before 1970 keep one form), TIMESTAMP text in UTC, and
// DECIMAL values as exact text rather than float64, and MySQL's binary JSON rendered with its own key
// order and value types, which FromBinlog turns into Debezium's text.
func SyncerConfig(cfg *replication.BinlogSyncerConfig) {
	cfg.ParseTime = false
	cfg.TimestampStringLocation = time.UTC
	cfg.UseDecimal = false
	cfg.UseFloatWithTrailingZero = false
	cfg.RenderJSONAsMySQLText = true
}

// SnapshotSession lists the statements the snapshot connection runs before its SELECTs: UTF-8 results
// (FromSnapshot reads character columns as UTF-8, whatever their own character set) and TIMESTAMP
// values in UTC, the zone Debezium writes them in.
func SnapshotSession() []string {
	return []string{"SET NAMES utf8mb4", "SET time_zone = '+00:00'"}
}

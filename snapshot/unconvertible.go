package snapshot

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/props"
)

// UnconvertibleRow applies event.processing.failure.handling.mode to one snapshot row holding a value cdcd
// cannot convert, as the stream applies it to a change: warn logs the row and skips it, skip (and its old
// name ignore) skips it with a debug line, and the snapshot goes on with the next row. fail (the default)
// returns a fatal error: the same snapshot would fail on the same row again, so the task stops instead of
// restarting. Either way the row is named by its table, key columns (never their values: they may be
// sensitive) and position, and err names the column.
func UnconvertibleRow(mode string, log *slog.Logger, table string, keyColumns []string, position string, err error) error {
	key := strings.Join(keyColumns, ", ")
	if key == "" {
		key = "none"
	}
	if props.SkipUnprocessable(mode, log, "table", table, "key_columns", key, "position", position, "error", err) {
		return nil
	}
	return source.Fatal(fmt.Errorf("snapshot row of %s (key columns: %s) at %s cannot be converted "+
		"(event.processing.failure.handling.mode=warn or skip would skip the row): %w", table, key, position, err))
}

package postgres_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/source/postgres"
)

// TestSnapshotIsolationMode: the levels that read the slot's exported snapshot (serializable, Debezium's
// default, and repeatable_read, both read in REPEATABLE READ, the only level the export can be imported
// into) are accepted; the weaker ones, which would not line the snapshot up with the stream, are refused
// on the key with the reason.
func TestSnapshotIsolationMode(t *testing.T) {
	for _, mode := range []string{"serializable", "repeatable_read", "REPEATABLE_READ"} {
		props := validProps()
		props["snapshot.isolation.mode"] = mode
		if _, err := postgres.ParseConfig("c", props, slog.New(slog.DiscardHandler)); err != nil {
			t.Errorf("snapshot.isolation.mode=%s refused: %v", mode, err)
		}
	}
	for _, mode := range []string{"read_committed", "read_uncommitted", "snapshot"} {
		props := validProps()
		props["snapshot.isolation.mode"] = mode
		_, err := postgres.ParseConfig("c", props, slog.New(slog.DiscardHandler))
		ce, ok := configErrors(t, err)["snapshot.isolation.mode"]
		if !ok {
			t.Errorf("snapshot.isolation.mode=%s accepted: %v", mode, err)
			continue
		}
		if mode != "snapshot" && !strings.Contains(ce.Error(), "REPEATABLE READ") {
			t.Errorf("snapshot.isolation.mode=%s: message %q does not say why", mode, ce.Error())
		}
	}
}

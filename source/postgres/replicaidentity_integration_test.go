package postgres_test

import (
	"context"
	"testing"

	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/cdcd/cdcd/schema"
)

// TestReplicaIdentityAutosetValues: replica.identity.autoset.values gives the captured tables it names
// their replica identity at start, before the publication is made, so an update's event carries the old
// row as REPLICA IDENTITY FULL makes pgoutput send it; a table it does not name keeps its own.
func TestReplicaIdentityAutosetValues(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	execSQL(t, dsn, "CREATE TABLE orders (id int PRIMARY KEY, note text)", "CREATE TABLE other (id int PRIMARY KEY)",
		"INSERT INTO orders VALUES (1, 'old')")
	cfg := readerConfig(t, dsn, map[string]string{"table.include.list": "public.orders,public.other", "snapshot.mode": "no_data",
		"replica.identity.autoset.values": "public.ORDERS:FULL"})
	out, logs, stop := runReader(t, cfg, nil)
	waitStreaming(t, dsn, cfg.SlotName, logs)
	for table, want := range map[string]string{"orders": "f", "other": "d"} {
		if got := queryValue[string](t, dsn, "SELECT relreplident::text FROM pg_class WHERE oid = $1::regclass", table); got != want {
			t.Errorf("%s: replica identity %q, want %q", table, got, want)
		}
	}
	execSQL(t, dsn, "UPDATE orders SET note = 'new' WHERE id = 1")
	ev := nextEvent(t, out, logs)
	before, _ := ev.Value.(*schema.Struct).Get(schema.EnvelopeBefore).(*schema.Struct)
	if before == nil || before.Get("note") != "old" {
		t.Errorf("the update's before is %v, want the old row (note=old), as REPLICA IDENTITY FULL sends it", before)
	}
	if err := stop(); err != context.Canceled {
		t.Errorf("Run returned %v after cancellation, want context.Canceled", err)
	}
}

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestIdleWALIsReleased writes 64 MB to a table cdcd does not capture, with Debezium's defaults (no
// heartbeat, no action query): the slot must follow the server's WAL anyway, never confirming past the
// durable offset, and a crash afterwards must lose and repeat nothing of the captured table.
func TestIdleWALIsReleased(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	db := connectPostgres(t, ctx, dsn,
		"CREATE TABLE captured (id int PRIMARY KEY)",
		"CREATE TABLE bulk (id int PRIMARY KEY, pad text)")

	dir := t.TempDir()
	offsetFile := filepath.Join(dir, "offsets.dat")
	conn := pgConnector(t, dsn, "idle", prefix, "public.captured")
	files := writeStandalone(t, dir, workerProps(brokers, offsetFile), conn)
	slot := conn["slot.name"]
	offsetKey, err := offsets.Key("idle", map[string]any{"server": prefix})
	if err != nil {
		t.Fatal(err)
	}

	p := files.start()
	waitSlotActive(t, ctx, db, slot, p)
	topic := prefix + ".public.captured"
	for id := 1; id <= 5; id++ {
		execAll(t, ctx, db, fmt.Sprintf("INSERT INTO captured VALUES (%d)", id))
	}
	newEventReader(t, p.log.String, []string{topic}, kgo.SeedBrokers(brokers...)).waitFor(ctx, 5)

	// 64 MB of WAL in 8 transactions that touch the uncaptured table only.
	var before, after pglogrepl.LSN
	before = currentWAL(t, ctx, db)
	for i := range 8 {
		execAll(t, ctx, db, fmt.Sprintf("INSERT INTO bulk SELECT g, repeat(md5(g::text), 32) FROM generate_series(%d, %d) g", i*9000+1, (i+1)*9000))
	}
	after = currentWAL(t, ctx, db)
	if written := uint64(after - before); written < 64<<20 {
		t.Fatalf("the bulk write made %d MB of WAL, want 64", written>>20)
	}
	t.Logf("wrote %d MB of WAL to the uncaptured table; retained by the slot right after: %d MB", uint64(after-before)>>20, retained(t, ctx, db, slot)>>20)

	// The slot follows: what it retains falls near zero (other databases of the shared server write too,
	// so "near" is a few MB), and it never passes the durable offset.
	start := time.Now()
	deadline := start.Add(90 * time.Second)
	for {
		confirmed := slotConfirmed(t, ctx, db, slot)
		if durable := durableLSN(offsetFile, offsetKey); uint64(confirmed) > durable {
			t.Fatalf("confirmed_flush_lsn %s passed the durable offset %s", confirmed, pglogrepl.LSN(durable))
		}
		if confirmed >= after {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("90 s after the bulk write the slot still retains %d MB (confirmed_flush_lsn %s, bulk write ended at %s); log:\n%s",
				retained(t, ctx, db, slot)>>20, confirmed, after, tail(p.log.String(), 4000))
		}
		if p.exited() {
			t.Fatalf("cdcd exited; log:\n%s", tail(p.log.String(), 4000))
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("the slot passed the bulk write %v after it ended; it retains %d MB now", time.Since(start).Round(100*time.Millisecond), retained(t, ctx, db, slot)>>20)

	// A crash now, captured changes while cdcd is down, a restart: every captured row exactly once, and
	// the restart accepts the slot (an offset behind it would be refused by offset.mismatch.strategy=fail).
	p.kill()
	for id := 6; id <= 10; id++ {
		execAll(t, ctx, db, fmt.Sprintf("INSERT INTO captured VALUES (%d)", id))
	}
	p = files.start()
	waitSlotActive(t, ctx, db, slot, p)
	newEventReader(t, p.log.String, []string{topic}, kgo.SeedBrokers(brokers...)).waitFor(ctx, 10)
	execAll(t, ctx, db, "INSERT INTO captured VALUES (11)")
	newEventReader(t, p.log.String, []string{topic}, kgo.SeedBrokers(brokers...)).waitFor(ctx, 11)
	p.stop()

	recs, err := newBroker(t, brokers).Read(ctx, capture.Selection{Topics: []string{topic}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	for _, r := range recs {
		var ev struct {
			Payload struct {
				After struct{ ID int } `json:"after"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(r.Value, &ev); err != nil {
			t.Fatalf("record %d: %v", r.Offset, err)
		}
		ids = append(ids, ev.Payload.After.ID)
	}
	slices.Sort(ids)
	if want := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}; !slices.Equal(ids, want) {
		t.Errorf("the captured table's events carry ids %v, want each of %v once", ids, want)
	}
}

// currentWAL is the server's current WAL insert position.
func currentWAL(t testing.TB, ctx context.Context, db *pgx.Conn) pglogrepl.LSN {
	t.Helper()
	var text string
	if err := db.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&text); err != nil {
		t.Fatal(err)
	}
	lsn, err := pglogrepl.ParseLSN(text)
	if err != nil {
		t.Fatal(err)
	}
	return lsn
}

// slotConfirmed is the slot's confirmed_flush_lsn.
func slotConfirmed(t testing.TB, ctx context.Context, db *pgx.Conn, slot string) pglogrepl.LSN {
	t.Helper()
	var text string
	if err := db.QueryRow(ctx, "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1", slot).Scan(&text); err != nil {
		t.Fatal(err)
	}
	lsn, err := pglogrepl.ParseLSN(text)
	if err != nil {
		t.Fatal(err)
	}
	return lsn
}

// retained is what the slot holds of the WAL: pg_current_wal_lsn() - confirmed_flush_lsn, in bytes.
func retained(t testing.TB, ctx context.Context, db *pgx.Conn, slot string) uint64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(ctx, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint FROM pg_replication_slots WHERE slot_name = $1", slot).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return uint64(max(n, 0))
}

package e2e

import (
	"context"
	"encoding/json"
	"maps"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestFailoverSlotPromotion runs the chaos workload against a primary with a physical standby that
// synchronizes failover slots (PostgreSQL 17+), with slot.failover=true. Under load the primary crashes and
// the standby is promoted; the connector's config is changed to the new primary (PUT …/config, as an
// operator or a DNS change would point it there), and cdcd must go on from the synchronized slot: every row
// the new primary holds is in Kafka as it holds it, no row it lacks (synchronized_standby_slots keeps cdcd
// behind the standby), no new slot and no new snapshot. At start cdcd warns about a primary that does not
// wait for its standbys — which the promoted standby, with no standby of its own, is.
func TestFailoverSlotPromotion(t *testing.T) {
	pair := testenv.NewPostgresPair(t, 17)
	db := pair.NewDB(t, "CREATE TABLE chaos (id int PRIMARY KEY, v bigint NOT NULL)", "ALTER TABLE chaos REPLICA IDENTITY FULL")
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	primary := connectPostgres(t, ctx, pair.PrimaryDSN(db))
	conn := pgConnector(t, pair.PrimaryDSN(db), "failover", prefix, "public.chaos")
	conn["slot.failover"] = "true"
	p := writeStandalone(t, t.TempDir(), workerProps(brokers, filepath.Join(t.TempDir(), "offsets.dat")), conn).start()
	slot := conn["slot.name"]
	waitSlotActive(t, ctx, primary, slot, p)
	const unguarded = "synchronized_standby_slots is empty on the primary"
	if strings.Contains(p.log.String(), unguarded) || strings.Contains(p.log.String(), "synchronized_standby_slots names") {
		t.Errorf("cdcd warned about a primary set up for failover slots; log:\n%s", p.log.String())
	}
	syncedAt := waitSlotSynced(t, ctx, pair, db, slot, "0/0")

	workload := &movingPGDB{pgChaosDB: pgChaosDB{ctx: ctx, dsn: pair.PrimaryDSN(db)}}
	probe := &movingPGDB{pgChaosDB: pgChaosDB{ctx: ctx, dsn: pair.PrimaryDSN(db)}}
	rest := p.restAPI()
	runChaos(t, ctx, chaosRun{
		name: "promotion", faults: 1,
		fault: func() {
			// Promote once the standby has synchronized the slot again under the workload: what cdcd
			// resumes from is a copy made while changes flowed, not the idle one made at the start.
			waitSlotSynced(t, ctx, pair, db, slot, syncedAt)
			pair.Promote(t)
			for _, d := range []*movingPGDB{workload, probe} {
				d.moveTo(pair.StandbyDSN(db))
			}
			_, port, _ := net.SplitHostPort(pair.Standby)
			moved := maps.Clone(conn)
			moved["database.port"] = port
			rest.expect("PUT", "/connectors/failover/config", jsonBody(t, moved), 200)
		},
		workload: workload, probe: probe,
		brokers: brokers, topic: prefix + ".public.chaos", p: p,
		dbRows: func() map[int]int64 {
			return tableRows(t, ctx, pgSession{connectPostgres(t, ctx, pair.StandbyDSN(db))}, chaosTable)
		},
	})

	log := p.log.String()
	if n := strings.Count(log, "created replication slot"); n != 1 {
		t.Errorf("cdcd created a replication slot %d times, want once (before the promotion); log:\n%s", n, tail(log, 6000))
	}
	if n := strings.Count(log, `msg="snapshot started"`); n != 1 {
		t.Errorf("cdcd started %d snapshots, want the initial one only; log:\n%s", n, tail(log, 6000))
	}
	recs, err := newBroker(t, brokers).Read(ctx, capture.Selection{Topics: []string{prefix + ".public.chaos"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		var ev struct {
			Payload struct{ Op string } `json:"payload"`
		}
		if json.Unmarshal(rec.Value, &ev) == nil && ev.Payload.Op == "r" {
			t.Fatalf("a snapshot record at offset %d: the promotion made cdcd snapshot again", rec.Offset)
		}
	}
	if !strings.Contains(log, unguarded) {
		t.Errorf("connected to the promoted standby, which waits for no standby, cdcd did not warn %q; log:\n%s", unguarded, tail(log, 6000))
	}
}

// waitSlotSynced waits until the standby holds slot as a synchronized failover slot confirmed past the
// LSN after, and returns the copy's confirmed_flush_lsn. The slot synchronization worker copies a new slot
// only once it has moved past a running-transactions record on the primary, which pg_log_standby_snapshot
// writes now rather than within 15 s.
func waitSlotSynced(t *testing.T, ctx context.Context, pair testenv.PostgresPair, db, slot, after string) string {
	t.Helper()
	standby := connectPostgres(t, ctx, pair.StandbyDSN(db))
	primary := connectPostgres(t, ctx, pair.PrimaryDSN("postgres"))
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var synced bool
		var confirmed string
		// A slot the standby has only begun to synchronize has no confirmed_flush_lsn yet (null).
		err := standby.QueryRow(ctx, `SELECT coalesce(synced AND NOT temporary AND confirmed_flush_lsn > $2::pg_lsn, false),
			coalesce(confirmed_flush_lsn::text, '') FROM pg_replication_slots WHERE slot_name = $1`, slot, after).Scan(&synced, &confirmed)
		if err == nil && synced {
			return confirmed
		}
		if err != nil && err != pgx.ErrNoRows {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby did not synchronize slot %s past %s within 2 minutes", slot, after)
		}
		if _, err := primary.Exec(ctx, "SELECT pg_log_standby_snapshot()"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// movingPGDB is a pgChaosDB whose server can move: after moveTo the next transaction goes to dsn, on a
// new connection. moveTo may be called while another goroutine runs exec.
type movingPGDB struct {
	pgChaosDB
	to atomic.Pointer[string]
}

func (d *movingPGDB) moveTo(dsn string) { d.to.Store(&dsn) }

func (d *movingPGDB) exec(stmts ...string) error {
	if to := d.to.Load(); to != nil && *to != d.dsn {
		d.dsn = *to
		if d.conn != nil {
			d.conn.Close(context.Background())
			d.conn = nil
		}
	}
	return d.pgChaosDB.exec(stmts...)
}

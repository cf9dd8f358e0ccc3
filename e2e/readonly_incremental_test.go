package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// Read-only incremental snapshots on the real PostgreSQL and Kafka (read.only=true): the connector's user
// may read the table and stream the slot, nothing else; there is no signal table, and the snapshot is
// asked for through the REST API. The windows' watermarks are pg_current_snapshot() before and after each
// chunk query.

// readOnlyBed is a database with table public.ro of rows (id, v), a publication of it made by the
// superuser, and a role that may only log in, replicate and SELECT from public.ro: the read-only
// connector's user.
type readOnlyBed struct {
	dsn, prefix string
	brokers     []string
	db          *pgx.Conn // the superuser's
	conn        map[string]string
}

// newReadOnlyBed seeds public.ro with v = id for each range of ids [from, to] in seeds.
func newReadOnlyBed(t *testing.T, ctx context.Context, chunk int, seeds ...[2]int) *readOnlyBed {
	t.Helper()
	b := &readOnlyBed{dsn: testenv.NewPostgresDB(t), brokers: testenv.Kafka(t), prefix: testenv.NewTopicPrefix(t)}
	b.db = connectPostgres(t, ctx, b.dsn, "CREATE TABLE public.ro (id int PRIMARY KEY, v bigint NOT NULL)")
	for _, r := range seeds {
		execAll(t, ctx, b.db, fmt.Sprintf("INSERT INTO public.ro SELECT g, g FROM generate_series(%d, %d) g", r[0], r[1]))
	}
	role := b.db.Config().Database[:min(len(b.db.Config().Database), 50)] + "_ro"
	ident := pgx.Identifier{role}.Sanitize()
	b.conn = pgConnector(t, b.dsn, "ro", b.prefix, "public.ro")
	execAll(t, ctx, b.db, "CREATE ROLE "+ident+" WITH LOGIN REPLICATION",
		"GRANT USAGE ON SCHEMA public TO "+ident, "GRANT SELECT ON public.ro TO "+ident,
		"CREATE PUBLICATION "+pgx.Identifier{b.conn["publication.name"]}.Sanitize()+" FOR TABLE public.ro")
	t.Cleanup(func() {
		admin, err := pgx.Connect(context.Background(), b.dsn)
		if err != nil {
			t.Errorf("dropping role %s: %v", role, err)
			return
		}
		defer admin.Close(context.Background())
		if _, err := admin.Exec(context.Background(), "DROP OWNED BY "+ident+"; DROP ROLE "+ident); err != nil {
			t.Errorf("dropping role %s: %v", role, err)
		}
	})
	// The role may write nothing, so no watermark can be written anywhere.
	var mayWrite bool
	if err := b.db.QueryRow(ctx, "SELECT has_table_privilege($1, 'public.ro', 'INSERT, UPDATE, DELETE, TRUNCATE') OR has_schema_privilege($1, 'public', 'CREATE')", role).Scan(&mayWrite); err != nil || mayWrite {
		t.Fatalf("role %s may write (%v, %v)", role, mayWrite, err)
	}
	b.conn["database.user"] = role
	b.conn["publication.autocreate.mode"] = "disabled"
	b.conn["snapshot.mode"] = "no_data"
	b.conn["read.only"] = "true"
	b.conn["signal.enabled.channels"] = "rest"
	b.conn["incremental.snapshot.chunk.size"] = fmt.Sprint(chunk)
	return b
}

// start runs cdcd with the bed's connector and waits for it to stream.
func (b *readOnlyBed) start(t *testing.T, ctx context.Context) *cdcdProcess {
	t.Helper()
	p := startStandalone(t, t.TempDir(), workerProps(b.brokers, filepath.Join(t.TempDir(), "offsets.dat")), b.conn)
	waitSlotActive(t, ctx, b.db, b.conn["slot.name"], p)
	return p
}

// TestReadOnlyIncrementalSnapshot runs a read-only incremental snapshot while rows are updated, deleted
// and inserted all along (ids 1 to churned, and new ones above; the rows of negative ids are left alone). No stale chunk row
// overwrote a newer streamed change, which a window opened late would let happen: v only grows, so every
// key's events show v never falling and nothing after its delete, and the table rebuilt from the topic
// equals the database's. Every quiet row was read by the snapshot, once.
func TestReadOnlyIncrementalSnapshot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	// Each window waits for the stream to catch up with the database (DBLog's cost per chunk, as with
	// written watermarks): on a loaded machine that is seconds, hence few chunks and a patient wait.
	// The quiet rows' ids lie below the churned ones: above, the inserts would grow the table as fast as
	// the snapshot reads it.
	const churned, quiet, rows, chunk = 1000, -1000, 1000, 40
	b := newReadOnlyBed(t, ctx, chunk, [2]int{quiet, quiet + rows - 1}, [2]int{1, churned})
	p := b.start(t, ctx)
	stop := make(chan struct{})
	wait, err := churn(ctx, pgSessions(b.dsn), "public.ro", churned, stop)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	p.restAPI().expect("POST", "/connectors/ro/signals", `{"id": "ro-1", "type": "execute-snapshot", "data": {"data-collections": ["public.ro"]}}`, 202)
	waitLogWithin(t, p, "incremental snapshot completed", 4*time.Minute)
	took := time.Since(began)
	close(stop)
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	broker := newBroker(t, b.brokers)
	topic := b.prefix + ".public.ro"
	got := waitTableMatches(t, ctx, broker, topic, tableRows(t, ctx, pgSession{b.db}, "public.ro"), p)
	for id := quiet; id < quiet+rows; id++ {
		if got.snapshot[id] != 1 {
			t.Errorf("row %d, which no change touched, was read by the snapshot %d times", id, got.snapshot[id])
		}
	}
	recs, err := broker.Read(ctx, capture.Selection{Topics: []string{topic}})
	if err != nil {
		t.Fatal(err)
	}
	if bad := historyRegressions(t, recs); len(bad) > 0 {
		t.Fatalf("%d keys' events go back in time (a stale chunk row after a newer change), the first: %s", len(bad), strings.Join(bad[:min(len(bad), 5)], "; "))
	}
	t.Logf("the read-only incremental snapshot of %d rows in chunks of %d took %s under churn and emitted %d rows; the others were superseded by streamed changes",
		churned+rows, chunk, took.Round(time.Millisecond), len(got.snapshot))
}

// historyRegressions lists the keys whose events, in topic order, show v falling or the row coming back
// after its delete: the workload only ever adds to v and never reuses an id.
func historyRegressions(t *testing.T, recs []capture.Record) []string {
	t.Helper()
	last, deleted := map[int]int64{}, map[int]bool{}
	var bad []string
	for _, rec := range recs {
		if rec.Value == nil {
			continue
		}
		var ev struct {
			Payload struct {
				Op     string `json:"op"`
				Before *struct {
					ID int `json:"id"`
				} `json:"before"`
				After *struct {
					ID int   `json:"id"`
					V  int64 `json:"v"`
				} `json:"after"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(rec.Value, &ev); err != nil {
			t.Fatalf("%s offset %d: %v", rec.Topic, rec.Offset, err)
		}
		switch p := ev.Payload; {
		case p.Op == "d" && p.Before != nil:
			deleted[p.Before.ID] = true
		case p.After != nil:
			id, v := p.After.ID, p.After.V
			if deleted[id] {
				bad = append(bad, fmt.Sprintf("id %d: op %s at offset %d after its delete", id, p.Op, rec.Offset))
			} else if prev, seen := last[id]; seen && v < prev {
				bad = append(bad, fmt.Sprintf("id %d: op %s at offset %d has v=%d after v=%d", id, p.Op, rec.Offset, v, prev))
			}
			last[id] = v
		}
	}
	return bad
}

// TestReadOnlyIncrementalSnapshotIdle runs a read-only incremental snapshot on a database where nothing
// changes and no heartbeat is configured: no transaction streams to close the windows, which close once
// the stream's keepalives reach the WAL position of their high watermark. Every row arrives, once.
func TestReadOnlyIncrementalSnapshotIdle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const rows, chunk = 2000, 50
	b := newReadOnlyBed(t, ctx, chunk, [2]int{1, rows})
	p := b.start(t, ctx)
	began := time.Now()
	p.restAPI().expect("POST", "/connectors/ro/signals", `{"id": "ro-idle", "type": "execute-snapshot", "data": {"data-collections": ["public.ro"]}}`, 202)
	waitLog(t, p, "incremental snapshot completed")
	took := time.Since(began)
	broker := newBroker(t, b.brokers)
	waitSnapshotRows(t, ctx, broker, b.prefix+".public.ro", rows, p)
	got := waitTableMatches(t, ctx, broker, b.prefix+".public.ro", tableRows(t, ctx, pgSession{b.db}, "public.ro"), p)
	if len(got.snapshot) != rows {
		t.Fatalf("the idle snapshot emitted %d distinct rows of %d", len(got.snapshot), rows)
	}
	for id, n := range got.snapshot {
		if n != 1 {
			t.Fatalf("row %d was emitted %d times", id, n)
		}
	}
	t.Logf("the idle read-only incremental snapshot of %d rows in %d chunks took %s", rows, rows/chunk, took.Round(time.Millisecond))
}

// waitLogWithin is waitLog with a deadline of its own.
func waitLogWithin(t *testing.T, p *cdcdProcess, text string, within time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(within); !strings.Contains(p.log.String(), text); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) || p.exited() {
			t.Fatalf("cdcd never logged %q; log:\n%s", text, tail(p.log.String(), 4000))
		}
	}
}

package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// slotWaitReport is how often a slot creation that is still waiting says what it waits for. Creating a
// logical slot waits until every transaction that was running when it began has ended (to build its
// consistent point); one long transaction elsewhere holds it back without a word from PostgreSQL.
const slotWaitReport = 10 * time.Second

// standbySlotWait is what a slot creation on a standby waits for.
const standbySlotWait = "creating a replication slot on a standby waits for the primary to log its running transactions, which it does every 15 s while it writes WAL, and for those to end: run SELECT pg_log_standby_snapshot() on the primary to log them now"

// blockersSQL lists the transactions a slot creation may wait for: those of other client backends that
// hold a transaction id or a snapshot, oldest first.
const blockersSQL = `SELECT a.pid, coalesce(a.datname, ''), coalesce(a.usename, ''), coalesce(a.state, ''),
	coalesce(extract(epoch FROM now() - a.xact_start)::bigint, 0), coalesce(a.query_start::text, ''), left(coalesce(a.query, ''), 120)
	FROM pg_stat_activity a
	WHERE a.backend_type = 'client backend' AND a.pid <> pg_backend_pid() AND a.xact_start IS NOT NULL
	  AND (a.backend_xid IS NOT NULL OR a.backend_xmin IS NOT NULL)
	ORDER BY a.xact_start LIMIT 10`

// watchSlotCreation logs, every slotWaitReport while the creation of slot has not returned, which
// transactions it waits for (pid, database, user, state, transaction age, query start, query). It runs on
// its own SQL connection, opened only when the creation has already waited that long. Call the returned
// function when the creation returns; it waits for the watcher to end.
func (r *Reader) watchSlotCreation(ctx context.Context, slot string) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(slotWaitReport)
		defer tick.Stop()
		waited := time.Duration(0)
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			waited += slotWaitReport
			if r.server.standby {
				// The standby's own transactions do not hold a slot creation back; the primary's do, and
				// the standby learns of their end only from the primary's next running-transactions record.
				r.log.Warn(standbySlotWait, "slot", slot, "waited", waited)
				r.waiting(fmt.Sprintf("creating replication slot %s has waited %s: %s", slot, waited, standbySlotWait))
				continue
			}
			blockers, err := r.slotBlockers(ctx)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				r.log.Warn("creating a replication slot is still waiting; the transactions it waits for could not be listed", "slot", slot, "waited", waited, "error", err)
				continue
			}
			r.log.Warn("creating a replication slot waits for these transactions to end: commit or end them, or wait",
				"slot", slot, "waited", waited, "transactions", blockers)
			r.waiting(fmt.Sprintf("creating replication slot %s has waited %s for these transactions to end (commit or end them, or wait): %s",
				slot, waited, strings.Join(blockers, "; ")))
		}
	}()
	return func() {
		cancel()
		<-done
		r.waiting("")
	}
}

// waiting tells the runtime what the reader waits for ("" when nothing).
func (r *Reader) waiting(what string) {
	if r.Waiting != nil {
		r.Waiting(what)
	}
}

// slotBlockers describes the transactions a slot creation may wait for, one line each.
func (r *Reader) slotBlockers(ctx context.Context) ([]string, error) {
	conn, err := r.connectSQL(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, blockersSQL)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var pid int32
		var db, user, state, queryStart, query string
		var age int64
		if err := rows.Scan(&pid, &db, &user, &state, &age, &queryStart, &query); err != nil {
			return nil, err
		}
		out = append(out, fmt.Sprintf("pid %d (database %s, user %s, %s, transaction open %ds, query started %s: %s)",
			pid, db, user, state, age, queryStart, strings.Join(strings.Fields(query), " ")))
	}
	return out, rows.Err()
}

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// workload is the mix of changes the writer commits.
type workload struct {
	Name      string
	InsertPct int // the rest of each transaction is split between updates and deletes
	UpdatePct int
}

var (
	insertWorkload = workload{Name: "insert", InsertPct: 100}
	mixWorkload    = workload{Name: "mix", InsertPct: 50, UpdatePct: 45}
)

// writer commits workloads to one table and remembers every committed change, so Kafka can be checked
// against it. Versions (column k) rise with every change in commit order.
type writer struct {
	db      sourceDB
	table   string
	version int32
	live    []int64 // ids that exist, for updates and deletes to pick from
	rng     *rand.Rand
}

func newWriter(db sourceDB, table string) *writer {
	return &writer{db: db, table: table, rng: rand.New(rand.NewPCG(1, 2))}
}

// populate inserts n rows that exist before capture starts (version 0), for updates and deletes to hit.
func (w *writer) populate(ctx context.Context, n int) error {
	ids, err := w.db.populate(ctx, w.table, n)
	if err != nil {
		return fmt.Errorf("populating %s: %w", w.table, err)
	}
	w.live = append(w.live, ids...)
	return nil
}

// commit writes one transaction of size changes in the workload's proportions and returns them.
func (w *writer) commit(ctx context.Context, wl workload, size int) ([]change, error) {
	inserts := size * wl.InsertPct / 100
	updates := min(size*wl.UpdatePct/100, len(w.live))
	deletes := min(size-inserts-updates, len(w.live)-updates)
	if inserts+updates+deletes == 0 {
		return nil, nil
	}
	// Distinct existing rows for the updates and deletes: each key changes at most once per transaction.
	picked := w.pickLive(updates + deletes)
	tx := plannedTx{insertVersions: make([]int32, inserts), updateIDs: picked[:updates],
		updateVersions: make([]int32, updates), deleteIDs: picked[updates:]}
	for i := range tx.insertVersions {
		tx.insertVersions[i] = w.nextVersion()
	}
	out := make([]change, 0, inserts+updates+deletes)
	for i := range tx.updateVersions {
		tx.updateVersions[i] = w.nextVersion()
		out = append(out, change{ID: tx.updateIDs[i], K: tx.updateVersions[i], Op: 'u'})
	}
	for _, id := range tx.deleteIDs {
		out = append(out, change{ID: id, Op: 'd'})
	}
	inserted, err := w.db.apply(ctx, w.table, tx)
	if err != nil {
		return nil, err
	}
	for _, c := range inserted {
		w.live = append(w.live, c.ID)
	}
	w.forget(tx.deleteIDs)
	return append(out, inserted...), nil
}

func (w *writer) nextVersion() int32 {
	w.version++
	return w.version
}

// pickLive returns n distinct live ids (n <= len(live)) by a partial Fisher-Yates shuffle.
func (w *writer) pickLive(n int) []int64 {
	for i := range n {
		j := i + w.rng.IntN(len(w.live)-i)
		w.live[i], w.live[j] = w.live[j], w.live[i]
	}
	return append([]int64(nil), w.live[:n]...)
}

// forget drops deleted ids from live; pickLive moved them to the front, so they are its first ids.
func (w *writer) forget(deleted []int64) {
	gone := make(map[int64]bool, len(deleted))
	for _, id := range deleted {
		gone[id] = true
	}
	kept := w.live[:0]
	for _, id := range w.live {
		if !gone[id] {
			kept = append(kept, id)
		}
	}
	w.live = kept
}

// backlog commits n changes in transactions of txSize.
func (w *writer) backlog(ctx context.Context, wl workload, n, txSize int) ([]change, error) {
	all := make([]change, 0, n)
	for len(all) < n {
		cs, err := w.commit(ctx, wl, min(txSize, n-len(all)))
		if err != nil {
			return nil, err
		}
		if len(cs) == 0 {
			return nil, fmt.Errorf("workload %s cannot make progress on %s", wl.Name, w.table)
		}
		all = append(all, cs...)
	}
	return all, nil
}

// paced inserts rows at rate per second for d, one transaction every tick, catching up when a
// transaction took longer than a tick. committedMs holds, for each change, when its COMMIT returned.
func (w *writer) paced(ctx context.Context, rate int, d time.Duration) (all []change, committedMs []int64, err error) {
	const tick = 10 * time.Millisecond
	want := int(float64(rate) * d.Seconds())
	all, committedMs = make([]change, 0, want), make([]int64, 0, want)
	start := time.Now()
	t := time.NewTicker(tick)
	defer t.Stop()
	for len(all) < want {
		due := min(int(float64(rate)*time.Since(start).Seconds()), want)
		if n := due - len(all); n > 0 {
			cs, err := w.commit(ctx, insertWorkload, n)
			if err != nil {
				return nil, nil, err
			}
			now := time.Now().UnixMilli()
			for range cs {
				committedMs = append(committedMs, now)
			}
			all = append(all, cs...)
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-t.C:
		}
	}
	return all, committedMs, nil
}

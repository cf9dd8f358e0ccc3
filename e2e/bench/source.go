package main

import (
	"context"
	"time"
)

// sourceDB is the database a run captures from, PostgreSQL or MariaDB. The systems, workloads, Kafka
// topics and checks are the same for both; only what touches the database differs.
type sourceDB interface {
	version(ctx context.Context) string
	// prepare creates c's table (and whatever else must exist before c's connector starts).
	prepare(ctx context.Context, c *capture) error
	// populate inserts n rows of version 0 before capture starts and returns their ids.
	populate(ctx context.Context, table string, n int) ([]int64, error)
	// apply commits one transaction and returns the inserted rows in the order of tx.insertVersions.
	apply(ctx context.Context, table string, tx plannedTx) ([]change, error)
	// connectorConfig is the connector both systems run for c: its one table, no snapshot of rows.
	connectorConfig(c *capture, tuning map[string]string) map[string]string
	dataTopic(prefix, table string) string
	// waitStreaming returns once c's running connector will deliver every change committed from then on.
	waitStreaming(ctx context.Context, c *capture) error
	// waitReleased returns once c's stopped connector has let go of the database.
	waitReleased(ctx context.Context, c *capture) error
	// release removes what c left in the database (table, slot, publication); cleanup logs its error.
	release(ctx context.Context, c *capture) error
	// markCeiling records where a backlog about to be written begins, for a client that reads it raw.
	markCeiling(ctx context.Context, c *capture) (ceilingReader, error)
	// sourceTsIsCommitMs says whether source.ts_ms is the commit time to the millisecond; where it is
	// not (MariaDB's binlog stamps events in whole seconds), latency runs use the writer's clock.
	sourceTsIsCommitMs() bool
	// ceilingName heads the table's column of ceilingReader's throughput.
	ceilingName() string
	close(ctx context.Context) error
}

// ceilingReader reads a backlog from its mark to its end as fast as the server sends it, discarding it:
// what a client that does nothing with the changes achieves.
type ceilingReader interface {
	// markEnd records where the backlog ends; it is called right after the backlog is committed.
	markEnd(ctx context.Context) error
	read(ctx context.Context) (time.Duration, error)
	close(ctx context.Context) error
}

// plannedTx is one workload transaction: rows to insert with their versions, rows to update to new
// versions, rows to delete.
type plannedTx struct {
	insertVersions []int32
	updateIDs      []int64
	updateVersions []int32
	deleteIDs      []int64
}

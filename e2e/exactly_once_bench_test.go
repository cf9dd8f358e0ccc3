package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestMeasureExactlyOnceCost drains the same PostgreSQL backlog (CDCD_MEASURE_EOS rows of about 1 KB, in
// transactions of 100) with a distributed worker at-least-once and with exactly.once.source.support=enabled,
// in two rounds that alternate the order, and reports each drain's rows/s and the ratio (`make bench-eos`;
// CDCD_MEASURE_EOS_BOUNDARY picks the transaction.boundary).
// It asserts nothing about speed. A drain is timed from its first record in Kafka to its last, so the
// group join after the worker's start is not counted.
func TestMeasureExactlyOnceCost(t *testing.T) {
	rows, _ := strconv.Atoi(os.Getenv("CDCD_MEASURE_EOS"))
	if rows <= 0 {
		t.Skip("set CDCD_MEASURE_EOS=<rows> to measure what exactly-once delivery costs")
	}
	brokers := testenv.Kafka(t)
	broker := newBroker(t, brokers)
	drain := func(name string, exactlyOnce bool) float64 {
		var rate float64
		t.Run(name, func(t *testing.T) {
			dsn := testenv.NewPostgresDB(t)
			prefix := testenv.NewTopicPrefix(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
			defer cancel()
			db := connectPostgres(t, ctx, dsn, "CREATE TABLE public.big (id int PRIMARY KEY, v bigint NOT NULL, note text NOT NULL)")
			props := distributedProps(brokers, prefix, clusterTopicsOf(prefix), freePort(t))
			if exactlyOnce {
				props["exactly.once.source.support"] = "enabled"
			}
			w := startCdcdDistributed(t, props)
			cfg := pgConnector(t, dsn, "measure", prefix, "public.big")
			// CDCD_MEASURE_EOS_BOUNDARY: poll (the default), connector, or interval:<ms>.
			if b := os.Getenv("CDCD_MEASURE_EOS_BOUNDARY"); b != "" && exactlyOnce {
				kind, ms, _ := strings.Cut(b, ":")
				cfg["transaction.boundary"] = kind
				if ms != "" {
					cfg["transaction.boundary.interval.ms"] = ms
				}
			}
			createConnector(t, w.url, cfg)
			waitSlotActive(t, ctx, db, cfg["slot.name"], w.cdcdProcess)
			w.stop()
			// The backlog, written while no worker runs.
			for first := 1; first <= rows; first += 100 {
				execAll(t, ctx, db, fmt.Sprintf("INSERT INTO public.big SELECT g, g, repeat('x', 1000) FROM generate_series(%d, %d) g", first, min(first+99, rows)))
			}
			w = startCdcdDistributed(t, props)
			topic := capture.Selection{Topics: []string{prefix + ".public.big"}}
			var first time.Time
			for deadline := time.Now().Add(15 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
				// Count takes end offsets, which also count transaction markers (one per commit and
				// partition, a commit per 2048 records): the drain ends at most a transaction early.
				n, err := broker.Count(ctx, topic)
				if err == nil && n > 0 && first.IsZero() {
					first = time.Now()
				}
				if err == nil && n >= int64(rows) {
					break
				}
				if time.Now().After(deadline) || w.exited() {
					t.Fatalf("%d of %d rows drained; log:\n%s", n, rows, tail(w.log.String(), 4000))
				}
			}
			elapsed := time.Since(first)
			rate = float64(rows) / elapsed.Seconds()
			t.Logf("%s: %d rows in %s, %.0f rows/s", name, rows, elapsed.Round(time.Millisecond), rate)
			w.stop()
		})
		return rate
	}
	var atLeastOnce, exactlyOnce []float64
	for round := range 2 {
		if round%2 == 0 {
			atLeastOnce = append(atLeastOnce, drain(fmt.Sprintf("at-least-once-%d", round+1), false))
			exactlyOnce = append(exactlyOnce, drain(fmt.Sprintf("exactly-once-%d", round+1), true))
		} else {
			exactlyOnce = append(exactlyOnce, drain(fmt.Sprintf("exactly-once-%d", round+1), true))
			atLeastOnce = append(atLeastOnce, drain(fmt.Sprintf("at-least-once-%d", round+1), false))
		}
	}
	mean := func(xs []float64) float64 {
		var s float64
		for _, x := range xs {
			s += x
		}
		return s / float64(len(xs))
	}
	t.Logf("backlog drain of %d rows: at-least-once %.0f rows/s, exactly-once %.0f rows/s: exactly-once runs at %.0f%% of at-least-once",
		rows, mean(atLeastOnce), mean(exactlyOnce), 100*mean(exactlyOnce)/mean(atLeastOnce))
}

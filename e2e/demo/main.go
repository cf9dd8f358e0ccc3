// Command demo shows cdcd at work with nothing installed or running beforehand: it builds cdcd,
// starts a throwaway PostgreSQL with logical decoding and an in-process Kafka-protocol broker,
// runs cdcd on a sample schema under a small live workload, and prints every event as it
// arrives. Ctrl-C (or -duration) stops everything and removes what it made.
//
//	go run ./e2e/demo [-duration 30s] [-keep]
//
// The broker and the consumer live here, never in the cdcd binary.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	// slotWaitTimeout bounds how long cdcd may take to open its replication slot. The workload
	// starts only then: with snapshot.mode=no_data, changes made before the slot exists are not
	// captured.
	slotWaitTimeout = 60 * time.Second
	// workloadInterval is the pause between workload ticks.
	workloadInterval = time.Second
	// drainPeriod is how long events are still printed after cdcd stopped: its last records are
	// in the broker, and the consumer may not have fetched them yet.
	drainPeriod = 2 * time.Second
	// workloadSeed makes every run show the same sequence of changes.
	workloadSeed = 1
	// logTailLines is how much of cdcd's log is shown when it exits on its own.
	logTailLines = 30
)

// errCdcdExited reports that cdcd stopped before the demo asked it to.
var errCdcdExited = errors.New("cdcd exited early")

type options struct {
	duration time.Duration // 0: until a signal
	keep     bool
	cdcdBin  string // "": build one
}

func main() {
	var opts options
	flag.DurationVar(&opts.duration, "duration", 0, "stop by itself once the workload has run this long (0: run until Ctrl-C)")
	flag.BoolVar(&opts.keep, "keep", false, "keep the temp dir (cdcd's config, log and offsets; PostgreSQL's data and log)")
	flag.StringVar(&opts.cdcdBin, "cdcd", "", "run this cdcd binary instead of building bin/cdcd")
	flag.Parse()
	// SIGPIPE is among them so that a closed stdout (`make demo | head`) stops the demo cleanly
	// instead of killing it with PostgreSQL and cdcd left running.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGPIPE)
	defer stop()
	con := &console{w: os.Stdout, color: isTerminal(os.Stdout) && os.Getenv("NO_COLOR") == ""}
	if err := run(ctx, opts, con); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func isTerminal(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// run is the whole demo. Each step that starts something registers how to stop it, and
// everything is stopped in reverse order however run ends: the workload, then cdcd (so it
// records its offsets), then the consumer, the broker and PostgreSQL, then the temp dir goes
// (unless -keep, or run failed).
func run(ctx context.Context, opts options, con *console) (err error) {
	var cleanups []func() error
	defer func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			err = errors.Join(err, cleanups[i]())
		}
	}()

	bin, err := cdcdBinary(ctx, opts.cdcdBin, con)
	if err != nil {
		return err
	}

	tmp, err := os.MkdirTemp("", "cdcd-demo-")
	if err != nil {
		return err
	}
	// The temp dir outlives a failed run: the logs named in the error are in it.
	cleanups = append(cleanups, func() error {
		if opts.keep || err != nil {
			con.note("kept %s", tmp)
			return nil
		}
		return os.RemoveAll(tmp)
	})
	// PostgreSQL runs as another user, who must be able to enter the directory.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	con.note("temp dir   %s", tmp)

	con.note("starting PostgreSQL")
	pg, err := startPostgres(ctx, tmp, con.w)
	if err != nil {
		return err
	}
	cleanups = append(cleanups, func() error {
		con.note("stopping PostgreSQL")
		return pg.stop()
	})
	conn, err := pg.createDatabase(ctx, "demo")
	if err != nil {
		return err
	}
	cleanups = append(cleanups, func() error { return conn.Close(context.Background()) })
	for _, stmt := range schemaSQL {
		con.sql(stmt)
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("creating the sample schema: %w", err)
		}
	}
	con.note("postgres   127.0.0.1:%d, database demo (look around: %s)", pg.port, pg.psqlCommand())

	cluster, broker, err := startBroker()
	if err != nil {
		return err
	}
	cleanups = append(cleanups, func() error { cluster.Close(); return nil })
	con.note("kafka      %s (kfake, in this process)", broker)
	stopConsumer := startConsumer(broker, con)
	cleanups = append(cleanups, stopConsumer)

	cdcd, err := startCdcd(bin, tmp, cdcdConfig{broker: broker, pgPort: pg.port, offsetsFile: filepath.Join(tmp, "offsets.dat")})
	if err != nil {
		return err
	}
	con.note("cdcd log   %s", cdcd.logPath)
	cleanups = append(cleanups, func() error {
		con.note("stopping cdcd")
		if err := cdcd.stop(); err != nil {
			return fmt.Errorf("cdcd: %w; last lines of %s:\n%s", err, cdcd.logPath, tailLines(cdcd.logPath, logTailLines))
		}
		// Only now may the consumer stop: cdcd's last events are in the broker.
		time.Sleep(drainPeriod)
		return nil
	})

	con.note("waiting for cdcd to open its replication slot")
	if err := waitForSlot(ctx, conn, cdcd); err != nil {
		return ignoreCanceled(ctx, err)
	}
	con.note("cdcd is streaming; the workload starts (Ctrl-C to stop)")
	return runWorkload(ctx, opts.duration, newWorkload(pgDatabase{conn}, workloadSeed, con.sql), cdcd)
}

// cdcdBinary returns the cdcd binary to run: the given one, or one built from the repository
// around the working directory.
func cdcdBinary(ctx context.Context, given string, con *console) (string, error) {
	if given != "" {
		return filepath.Abs(given)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	repoRoot, err := findRepoRoot(cwd)
	if err != nil {
		return "", err
	}
	con.note("building cdcd (go build -o bin/cdcd ./cmd/cdcd)")
	return buildCdcd(ctx, repoRoot)
}

// startConsumer prints every demo topic's events until the returned function is called; that
// function waits for the consumer to finish.
func startConsumer(broker string, con *console) func() error {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- consume(ctx, broker, `^demo\.`, con.event, func(err error) { con.note("%v", err) })
	}()
	return func() error {
		cancel()
		return <-done
	}
}

// waitForSlot returns nil once cdcd streams from its replication slot, and an error when cdcd
// exits, ctx ends or slotWaitTimeout passes.
func waitForSlot(ctx context.Context, conn *pgx.Conn, cdcd *cdcdProcess) error {
	deadline := time.After(slotWaitTimeout)
	poll := time.NewTicker(200 * time.Millisecond)
	defer poll.Stop()
	for {
		var active bool
		const query = `SELECT EXISTS (SELECT 1 FROM pg_replication_slots WHERE database = 'demo' AND active)`
		if err := conn.QueryRow(ctx, query).Scan(&active); err != nil {
			return fmt.Errorf("looking for cdcd's replication slot: %w", err)
		}
		if active {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-cdcd.exited:
			return cdcd.exitedEarly()
		case <-deadline:
			return fmt.Errorf("cdcd did not open a replication slot within %s; last lines of %s:\n%s",
				slotWaitTimeout, cdcd.logPath, tailLines(cdcd.logPath, logTailLines))
		case <-poll.C:
		}
	}
}

// runWorkload runs a workload tick every workloadInterval until ctx ends, duration (if not 0)
// has passed, or cdcd exits.
func runWorkload(ctx context.Context, duration time.Duration, w *workload, cdcd *cdcdProcess) error {
	var timeUp <-chan time.Time
	if duration > 0 {
		timeUp = time.After(duration)
	}
	tick := time.NewTicker(workloadInterval)
	defer tick.Stop()
	for {
		if err := w.step(ctx); err != nil {
			return ignoreCanceled(ctx, err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-timeUp:
			return nil
		case <-cdcd.exited:
			return cdcd.exitedEarly()
		case <-tick.C:
		}
	}
}

// exitedEarly describes an exit nobody asked for, with the end of cdcd's log.
func (p *cdcdProcess) exitedEarly() error {
	return fmt.Errorf("%w (%v); last lines of %s:\n%s", errCdcdExited, p.waitErr, p.logPath, tailLines(p.logPath, logTailLines))
}

// ignoreCanceled drops err when it is only the consequence of ctx ending, which is how the
// user stops the demo.
func ignoreCanceled(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

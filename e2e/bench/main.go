// Command bench runs cdcd and Debezium (on a Kafka Connect 4.4 worker) against the same database and
// Kafka, alternating them round by round, and reports throughput, latency, resources and correctness as
// ratios beside the database's ceiling (see /work/shared/spec/benchmark.md): Debezium 3.6.1 and
// pg_recvlogical on PostgreSQL, Debezium 3.5.0 (the newest MariaDB connector served) and a raw binlog
// reader on MariaDB. Each database gets its own run, table and result files.
//
//	go run ./e2e/bench -databases postgres,mariadb -rounds 3 -rows 100000 -out DIR
//
// e2e/bench.sh (make bench) builds cdcd, installs the reference worker and runs this.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

type options struct {
	rounds      int
	rows        int
	warmup      int
	txSize      int
	rate        int
	rateFor     time.Duration
	out         string
	cdcdBin     string
	connect     string
	connectHome string
	recvlogical string
	brokers     string
	pg          pgServer
	mariadb     mariaServer
	databases   []string
	profile     bool
	systems     string
	timeout     time.Duration
}

func parseFlags(args []string) (options, error) {
	var o options
	e2eDir := os.Getenv("CDCD_E2E_DIR")
	if e2eDir == "" {
		e2eDir = "/var/tmp/cdcd-e2e"
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.IntVar(&o.rounds, "rounds", 3, "rounds; each runs every measurement on both systems, alternating which goes first")
	fs.IntVar(&o.rows, "rows", 100000, "changes in each backlog")
	fs.IntVar(&o.warmup, "warmup", 20000, "changes of an uncounted mixed backlog each system drains first (0: none)")
	fs.IntVar(&o.txSize, "tx-rows", 500, "changes per backlog transaction")
	fs.IntVar(&o.rate, "rate", 2000, "offered rows per second in the latency runs (0 skips them)")
	fs.DurationVar(&o.rateFor, "rate-for", 20*time.Second, "how long each latency run offers its load")
	fs.StringVar(&o.out, "out", filepath.Join(e2eDir, "bench", time.Now().UTC().Format("20060102T150405Z")), "results directory")
	fs.StringVar(&o.cdcdBin, "cdcd", "bin/cdcd", "cdcd binary")
	fs.StringVar(&o.connect, "connect", "e2e/debezium/connect.sh", "the reference worker's control script")
	fs.StringVar(&o.connectHome, "connect-home", filepath.Join(e2eDir, "bench", "connect"), "CDCD_E2E_DIR for connect.sh: its debezium/lib and debezium/plugins must be installed (bench.sh links them)")
	fs.StringVar(&o.recvlogical, "pg-recvlogical", "/usr/lib/postgresql/15/bin/pg_recvlogical", "pg_recvlogical binary")
	fs.StringVar(&o.brokers, "brokers", "127.0.0.1:"+envOr("CDCD_KAFKA_PORT", "59092"), "Kafka bootstrap servers, comma separated")
	fs.StringVar(&o.pg.Host, "pg-host", "127.0.0.1", "PostgreSQL host")
	fs.IntVar(&o.pg.Port, "pg-port", atoiOr(envOr("CDCD_PG_PORT", "55432"), 55432), "PostgreSQL port")
	fs.StringVar(&o.pg.User, "pg-user", "postgres", "PostgreSQL superuser (trust auth)")
	fs.StringVar(&o.mariadb.Host, "mariadb-host", "127.0.0.1", "MariaDB host")
	fs.IntVar(&o.mariadb.Port, "mariadb-port", atoiOr(envOr("CDCD_MARIADB_PORT", "53306"), 53306), "MariaDB port")
	fs.StringVar(&o.mariadb.RootPassword, "mariadb-root-password", "cdcd", "MariaDB root password (root writes the workload)")
	fs.StringVar(&o.mariadb.CaptureUser, "mariadb-user", "cdcd", "MariaDB user both systems and the ceiling read the binlog as")
	fs.StringVar(&o.mariadb.CapturePassword, "mariadb-password", "cdcd", "its password")
	databases := fs.String("databases", "postgres,mariadb", "databases to run, one after the other: postgres, mariadb or both")
	fs.StringVar(&o.systems, "systems", "cdcd,cdcd-eos,debezium", "systems to run, comma separated: cdcd (at-least-once), cdcd-eos (exactly-once), debezium")
	fs.BoolVar(&o.profile, "profile", false, "run cdcd with CDCD_CPUPROFILE and CDCD_MEMPROFILE set (profiles land in -out)")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "longest one drain or latency run may take")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.rounds < 1 || o.rows < 1 || o.txSize < 1 || o.rate < 0 {
		return o, errors.New("-rounds, -rows and -tx-rows must be positive, -rate not negative")
	}
	for _, s := range strings.Split(o.systems, ",") {
		if s = strings.TrimSpace(s); s != "cdcd" && s != "cdcd-eos" && s != "debezium" {
			return o, fmt.Errorf("-systems: unknown system %q (cdcd, cdcd-eos or debezium)", s)
		}
	}
	for _, d := range strings.Split(*databases, ",") {
		if d = strings.TrimSpace(d); d != "postgres" && d != "mariadb" {
			return o, fmt.Errorf("-databases: unknown database %q (postgres or mariadb)", d)
		}
		o.databases = append(o.databases, strings.TrimSpace(d))
	}
	return o, nil
}

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	opts, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, opts, log); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// results is the JSON file a later run compares itself with, one per database.
type results struct {
	Database string      `json:"database"`
	Started  time.Time   `json:"started"`
	Seconds  float64     `json:"seconds"`
	Machine  machineInfo `json:"machine"`
	// Load is /proc/loadavg's 1, 5 and 15 minute averages when the run started and ended: the box's
	// cores are shared, and a loaded box slows both systems.
	Load     [2]string         `json:"load_average_start_end"`
	Versions map[string]string `json:"versions"`
	Options  map[string]any    `json:"options"`
	Drains   []drainResult     `json:"drains"`
	Latency  []latencyResult   `json:"latency"`
	Summary  []summaryRow      `json:"summary"`
}

func run(ctx context.Context, o options, log *slog.Logger) (err error) {
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	kafka, err := newBroker(strings.Split(o.brokers, ","))
	if err != nil {
		return err
	}
	defer kafka.close()
	const topicRoot = "cdcdbench-"
	if err := kafka.deleteTopics(ctx, topicRoot); err != nil { // left over from an interrupted run
		return err
	}
	defer func() { err = errors.Join(err, kafka.deleteTopics(context.Background(), topicRoot)) }()
	// The run's own databases, topics and slots: other engineers share the services.
	runID := topicRoot + time.Now().UTC().Format("150405")
	for _, kind := range o.databases {
		if err := runDatabase(ctx, o, kind, kafka, runID+"-"+kind, log); err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
	}
	return nil
}

// runDatabase runs every round on one database and writes its table and results.
func runDatabase(ctx context.Context, o options, kind string, kafka *broker, topicPrefix string, log *slog.Logger) (err error) {
	started := time.Now()
	out := outFiles{dir: o.out, kind: kind}
	connect := connectScript{path: o.connect, home: o.connectHome, instance: kind}
	var db sourceDB
	switch kind {
	case "postgres":
		db, err = openPostgres(ctx, o.pg, "cdcd_bench", o.recvlogical)
	default:
		db, err = openMariaDB(ctx, o.mariadb, "cdcd_bench", kafka)
	}
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, db.close(context.Background())) }()
	res := results{
		Database: kind, Started: started.UTC(), Machine: readMachineInfo(),
		Versions: map[string]string{"debezium": connect.debeziumVersion(), "kafka_connect": "4.4.0", "cdcd": cdcdVersion(o.cdcdBin),
			versionKey(kind): db.version(ctx)},
		Options: map[string]any{"rounds": o.rounds, "rows": o.rows, "warmup": o.warmup, "tx_rows": o.txSize, "rate": o.rate,
			"rate_seconds": o.rateFor.Seconds(), "debezium_tuning": debeziumTuning, "debezium_heap": "-Xmx1g (connect.sh)"},
	}
	res.Load[0] = loadAverage()
	b := &bench{db: db, kafka: kafka, topicPrefix: topicPrefix, txSize: o.txSize, timeout: o.timeout, log: log}

	var systems []*system
	for _, mode := range []cdcdMode{{name: "cdcd"}, {name: "cdcd-eos", exactlyOnce: true, group: topicPrefix + "-eos"}} {
		if !o.runs(mode.name) {
			continue
		}
		var env []string
		if o.profile {
			env = []string{"CDCD_CPUPROFILE=" + out.path(mode.name+".cpu.pprof"), "CDCD_MEMPROFILE=" + out.path(mode.name+".mem.pprof")}
		}
		sys, startErr := startCdcd(ctx, o.cdcdBin, out, kafka.seeds, env, mode)
		if startErr != nil {
			return startErr
		}
		defer func() { err = errors.Join(err, sys.stop()) }()
		systems = append(systems, sys)
	}
	if o.runs("debezium") {
		log.Info("starting the reference Kafka Connect worker", "database", kind, "debezium", res.Versions["debezium"])
		debezium, startErr := startDebezium(ctx, connect, out, kafka.seeds, db)
		if startErr != nil {
			return startErr
		}
		defer func() { err = errors.Join(err, debezium.stop()) }()
		systems = append(systems, debezium)
	}

	// The Connect worker's JIT compiles its hot paths during its first drain; a production worker has
	// long done that, so each system first drains a small backlog that is not counted.
	if o.warmup > 0 {
		for _, sys := range systems {
			if _, err := b.drain(ctx, sys, mixWorkload, 0, o.warmup, false); err != nil {
				return fmt.Errorf("warm-up on %s: %w", sys.name, err)
			}
		}
	}
	for round := 1; round <= o.rounds; round++ {
		// A B, then B A: whoever goes first in a round may find a colder or warmer database.
		order := slices.Clone(systems)
		if round%2 == 0 {
			slices.Reverse(order)
		}
		for _, wl := range []workload{insertWorkload, mixWorkload} {
			for _, sys := range order {
				// The ceilings are read beside the at-least-once drain, the comparison they stand for.
				d, err := b.drain(ctx, sys, wl, round, o.rows, sys.name == "cdcd")
				if err != nil {
					return fmt.Errorf("round %d %s drain on %s: %w", round, wl.Name, sys.name, err)
				}
				res.Drains = append(res.Drains, d)
			}
		}
		if o.rate > 0 {
			for _, sys := range order {
				l, err := b.latency(ctx, sys, round, o.rate, o.rateFor)
				if err != nil {
					return fmt.Errorf("round %d latency on %s: %w", round, sys.name, err)
				}
				res.Latency = append(res.Latency, l)
			}
		}
	}

	res.Load[1] = loadAverage()
	res.Summary = summarize(res.Drains, res.Latency, o.rate)
	res.Seconds = time.Since(started).Seconds()
	heading := tableHeading{Database: databaseNames[kind] + " " + res.Versions[versionKey(kind)], Debezium: res.Versions["debezium"],
		Ceiling: db.ceilingName(), Load: res.Load}
	table := renderTable(heading, res.Summary, res.Machine, res.Seconds)
	fmt.Print(table)
	if err := os.WriteFile(out.path("table.txt"), []byte(table), 0o644); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	path := out.path("results.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		return err
	}
	fmt.Printf("\nraw results: %s\n", path)
	if o.profile {
		fmt.Printf("cdcd profiles (written when cdcd stops): go tool pprof -top %s %s; the heap at its peak: %s\n",
			o.cdcdBin, out.path("cdcd.cpu.pprof"), out.path("cdcd.mem.pprof.peak"))
	}
	return nil
}

var databaseNames = map[string]string{"postgres": "PostgreSQL", "mariadb": "MariaDB"}

// versionKey names the database's version in results.json ("postgresql", as before MariaDB was measured).
func versionKey(kind string) string { return strings.ToLower(databaseNames[kind]) }

// loadAverage is /proc/loadavg's 1, 5 and 15 minute load averages.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func cdcdVersion(bin string) string {
	out, err := execOutput(bin, "version")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(strings.TrimPrefix(out, "cdcd "))
}

// runs says whether -systems names the system.
func (o options) runs(system string) bool {
	for _, s := range strings.Split(o.systems, ",") {
		if strings.TrimSpace(s) == system {
			return true
		}
	}
	return false
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func atoiOr(s string, def int) int {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		return def
	}
	return n
}

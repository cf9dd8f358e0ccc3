// Command cdcd is a change-data-capture daemon that runs Debezium's PostgreSQL connector configs the way
// Kafka Connect runs them:
//
//	cdcd standalone worker.properties connector.properties…
//	cdcd distributed worker.properties
//	cdcd offsets dump FILE
//	cdcd health [WORKER.properties]
//	cdcd version
package main

import (
	"cmp"
	"net"
	"slices"

	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/cdcd/cdcd/sink/kafka"
	"github.com/cdcd/cdcd/source/metrics"
	"github.com/cdcd/cdcd/source/postgres/slotguard"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/cdcd/cdcd/connect"
	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/connect/pipeline"
	"github.com/cdcd/cdcd/connect/rest"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/postgres"
)

const usage = `usage:
  cdcd standalone WORKER.properties CONNECTOR.(properties|json)...
  cdcd distributed WORKER.properties
  cdcd offsets dump FILE
` + slotsUsage + healthUsageLines + `
  cdcd version

Logging: CDCD_LOG_FORMAT=text|json (default text), CDCD_LOG_LEVEL=debug|info|warn|error (default info).
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	log := newLogger(stderr)
	defer startProfiles(log)()
	var err error
	switch args[0] {
	case "version":
		printVersion(stdout)
		return 0
	case "offsets":
		if len(args) != 3 || args[1] != "dump" {
			fmt.Fprint(stderr, usage)
			return 2
		}
		err = offsets.Dump(stdout, args[2])
	case "standalone":
		if len(args) < 2 {
			fmt.Fprint(stderr, usage)
			return 2
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		err = standalone(ctx, args[1], args[2:], log)
	case "distributed":
		if len(args) != 2 {
			fmt.Fprint(stderr, usage)
			return 2
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		err = distributed(ctx, args[1], log)
	case "slots":
		err = slotsCommand(args[1:], os.Stdin, stdout)
	case "health":
		err = healthCommand(args[1:], stdout)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "cdcd: unknown command %q\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "cdcd: %v\n", err)
		return 1
	}
	return 0
}

// standalone runs connect-standalone's job: every connector config is checked before anything starts,
// then the REST API and the connectors run until ctx ends, and a stop records the last acknowledged
// offsets.
func standalone(ctx context.Context, workerPath string, connectorPaths []string, log *slog.Logger) error {
	workerFile, err := config.LoadPropertiesFile(workerPath)
	if err != nil {
		return err
	}
	props := config.PropertiesMap(workerFile)
	cfg, res, err := config.ParseWorker(props, config.Standalone)
	if err != nil {
		return err
	}
	slotCfg, err := slotguard.ParseConfig(props)
	if err != nil {
		return err
	}
	if slotCfg.StorageTopic != "" {
		return fmt.Errorf("%w: %sstorage.topic is read in distributed mode only: a standalone worker keeps its slot ledger in %s; remove the key",
			config.ErrWorkerConfig, slotguard.ConfigPrefix, slotguard.LedgerPath(cfg.OffsetStorageFile))
	}
	ledger, err := slotguard.OpenLedger(slotguard.LedgerPath(cfg.OffsetStorageFile))
	if err != nil {
		return err
	}
	kafkaTransport, err := workerTransport(cfg)
	if err != nil {
		return err
	}
	traffic := kafka.CountTraffic(kafkaTransport) // before the transport's first request
	parts := runtimeParts(cfg, kafkaTransport, ledger, log)
	connect.WarnUnknownWorkerKeys(res, parts, log)
	w, err := connect.NewStandalone(cfg, parts, log)
	if err != nil {
		return err
	}
	var files []config.ConnectorFile
	var errs []error
	for _, path := range connectorPaths {
		cf, err := config.LoadConnectorFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := w.CheckConnectorConfig(cf.Name, cf.Config, log.With("connector", cf.Name)); err != nil {
			errs = append(errs, fmt.Errorf("%s: connector %s: %w", path, cf.Name, err))
			continue
		}
		files = append(files, cf)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}

	ln, err := rest.Listen(w.Config().Listeners, props)
	if err != nil {
		return err
	}
	log.Info("REST API listening", "address", ln.Addr().String())
	warnIfOpen(ln.Addr(), props, log)
	w.SetWorkerID(rest.WorkerID(w.Config(), ln.Addr()))
	api, err := newAPI(w, props, log)
	if err != nil {
		ln.Close()
		return err
	}
	guardian := slotguard.New(slotCfg, slotRegistry{w}, ledger, log)
	api.Handle("GET /slots", guardian.SlotsHandler())
	api.Handle("GET /connectors/{name}/slot", guardian.ConnectorSlotHandler())
	api.Handle("GET /metrics", guardian.MetricsHandler(readerAndWorkerMetrics(connect.NewConnectCollector(w, kafkaTransport.ClientID, traffic.Bytes))...))
	w.SetDeleteHook(dropSlotOnDelete(w.ResolveConnectorConfig, guardian.DropConnectorSlot))
	go guardian.Run(ctx)
	go fetchClusterID(ctx, w.Config().BootstrapServers, kafkaTransport, api, log)
	srv := rest.NewHTTPServer(connect.CountRESTRequests(api))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	// The files' configs are kept as written (placeholders unresolved), as Connect keeps them.
	for _, cf := range files {
		if err := w.AddConnector(cf.Name, cf.Config, cf.InitialState); err != nil {
			errs = append(errs, fmt.Errorf("connector %s: %w", cf.Name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		srv.Close()
		w.Shutdown()
		return err
	}
	api.SetReady()

	select {
	case <-ctx.Done():
	case err := <-served:
		log.Error("REST API stopped", "error", err)
	}
	log.Info("stopping: recording the last acknowledged offsets")
	defer stopWithin(w.Config(), log)()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), restShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		log.Warn("REST API did not stop cleanly", "error", err)
	}
	w.Shutdown()
	return nil
}

// restShutdownTimeout bounds the wait for REST requests in progress when the process stops.
const restShutdownTimeout = 5 * time.Second

// stopWithin bounds the stop that follows a signal, whatever Kafka or a database does: tasks get
// task.shutdown.graceful.timeout.ms to stop (each final offset flush offset.flush.timeout.ms, within it),
// and if the process has still not finished stopping once both and the REST API's bound have passed, it
// exits, saying so. What was not recorded by then is not recorded: it is read again at the next start.
// The returned func disarms it.
func stopWithin(cfg *config.Worker, log *slog.Logger) (disarm func()) {
	bound := shutdownBound(cfg)
	t := time.AfterFunc(bound, func() {
		log.Error("stopping took too long; exiting now: offsets not recorded are read again at the next start",
			"bound", bound, "task.shutdown.graceful.timeout.ms", cfg.TaskShutdownGracefulTimeout, "offset.flush.timeout.ms", cfg.OffsetFlushTimeout)
		os.Exit(1)
	})
	return func() { t.Stop() }
}

// shutdownBound is how long a stop may take at most: the REST API's bound, then the tasks' graceful
// timeout, plus one flush timeout for what follows (leaving the group, closing the topics).
func shutdownBound(cfg *config.Worker) time.Duration {
	orDefault := func(d time.Duration) time.Duration {
		if d > 0 {
			return d
		}
		return 5 * time.Second // Connect's default of both
	}
	return restShutdownTimeout + orDefault(cfg.TaskShutdownGracefulTimeout) + orDefault(cfg.OffsetFlushTimeout)
}

// readerAndWorkerMetrics are what GET /metrics serves in both modes (standalone adds the slot guardian's):
// cdcd's own series; the same facts under the names the JMX exporter gives Debezium's and Connect's MBeans
// (connectMetrics) and the JVM's; the Go runtime's and the process's.
func readerAndWorkerMetrics(connectMetrics *connect.ConnectCollector) []prometheus.Collector {
	return slices.Concat(metrics.Collectors(), postgres.Collectors(), connect.Collectors(), []prometheus.Collector{
		metrics.NewDebeziumCollector(pipeline.QueueLevels), connectMetrics, &connect.JVMCollector{},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	})
}

// warnIfOpen warns when the REST API listens beyond loopback without authentication: anyone who reaches the
// port may then create, change and delete connectors.
func warnIfOpen(addr net.Addr, props map[string]string, log *slog.Logger) {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || tcp.IP.IsLoopback() || rest.AuthConfigured(props) {
		return
	}
	log.Warn("the REST API listens beyond loopback without authentication: set "+rest.CredentialsFileKey+
		" (HTTP basic authentication) or bind listeners to 127.0.0.1", "address", addr.String())
}

// newAPI builds the REST API over a herder, with basic authentication when the worker properties (or Connect's
// BasicAuthSecurityRestExtension with the JAAS file KAFKA_OPTS names) ask for it, and Connect's CORS settings.
func newAPI(h rest.Herder, props map[string]string, log *slog.Logger) (*rest.Server, error) {
	api := rest.NewServer(h, rest.ServerInfo{Version: restAPIVersion, Commit: source.Version}, log)
	auth, err := rest.LoadWorkerAuth(props, os.Getenv("KAFKA_OPTS"))
	if err != nil {
		return nil, err
	}
	if auth != nil {
		api.RequireBasicAuth(auth)
	}
	cors, err := rest.ParseCrossOrigin(props)
	if err != nil {
		return nil, err
	}
	api.AllowCrossOrigin(cors)
	return api, nil
}

// distributed runs connect-distributed's job: the worker joins its group, runs what the group assigns
// it and serves the REST API until ctx ends; then its tasks record their last offsets and it leaves the
// group.
func distributed(ctx context.Context, workerPath string, log *slog.Logger) error {
	workerFile, err := config.LoadPropertiesFile(workerPath)
	if err != nil {
		return err
	}
	props := config.PropertiesMap(workerFile)
	cfg, res, err := config.ParseWorker(props, config.Distributed)
	if err != nil {
		return err
	}
	slotCfg, err := slotguard.ParseConfig(props)
	if err != nil {
		return err
	}
	ledgerTopicName := cmp.Or(slotCfg.StorageTopic, cfg.GroupID+"-cdcd-slots")
	ledgerWriter := &ledgerTopic{}
	ledger := slotguard.NewSharedLedger(ledgerWriter)
	kafkaTransport, err := workerTransport(cfg)
	if err != nil {
		return err
	}
	traffic := kafka.CountTraffic(kafkaTransport) // before the transport's first request
	parts := runtimeParts(cfg, kafkaTransport, ledger, log)
	connect.WarnUnknownWorkerKeys(res, parts, log)
	d, err := connect.NewDistributed(cfg, parts, log)
	if err != nil {
		return err
	}
	ln, err := rest.Listen(d.Config().Listeners, props)
	if err != nil {
		return err
	}
	warnIfOpen(ln.Addr(), props, log)
	id := rest.WorkerID(d.Config(), ln.Addr())
	d.SetWorkerID(id)
	api, err := newAPI(d, props, log)
	if err != nil {
		ln.Close()
		return err
	}
	scheme := "http"
	if rest.HTTPS(d.Config().Listeners) {
		scheme = "https"
		client, err := rest.ForwardClient(props)
		if err != nil {
			ln.Close()
			return err
		}
		api.SetForwardClient(client)
		d.SetHTTPClient(client)
	}
	// The ledger is read to its end before the worker joins: a task started by the first assignment
	// records the slot it creates, and the guardian tells orphans by what the ledger holds.
	ledgerLog, err := openSlotLedger(ctx, cfg, ledgerTopicName, kafkaTransport, ledger, ledgerWriter, log)
	if err != nil {
		ln.Close()
		return err
	}
	defer ledgerLog.Close()
	if err := d.Open(ctx, scheme+"://"+id+"/"); err != nil {
		ln.Close()
		return err
	}
	log.Info("REST API listening", "address", ln.Addr().String(), "worker_id", id)
	// One worker, the group's leader, watches the slots of the whole cluster; every other worker
	// forwards the guardian's requests to it, and exports no slot series of its own.
	guardian := slotguard.New(slotCfg, slotRegistry{d}, ledger, log)
	api.Handle("GET /slots", api.FromLeader(guardian.SlotsHandler(), d.Leads))
	api.Handle("GET /connectors/{name}/slot", api.FromLeader(guardian.ConnectorSlotHandler(), d.Leads))
	api.Handle("GET /metrics", guardian.MetricsHandler(readerAndWorkerMetrics(d.ConnectCollector(kafkaTransport.ClientID, traffic.Bytes))...))
	d.SetDeleteHook(dropSlotOnDelete(d.ResolveConnectorConfig, func(ctx context.Context, server, slot string) error {
		// The task stops on its owner, perhaps another worker, once that worker reads the deletion.
		ctx, cancel := context.WithTimeout(ctx, slotReleaseWait)
		defer cancel()
		if err := guardian.DropReleasedConnectorSlot(ctx, server, slot); err != nil {
			return fmt.Errorf("the connector is deleted, but its slot %s on %s was not dropped (drop it with `cdcd slots drop` once released, or let cdcd.slots.orphan.policy=drop do it): %w", slot, server, err)
		}
		return nil
	}))
	go guardian.RunLeading(ctx, slotLeadership{d})
	go fetchClusterID(ctx, d.Config().BootstrapServers, kafkaTransport, api, log)
	srv := rest.NewHTTPServer(connect.CountRESTRequests(api))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	ran := make(chan error, 1)
	go func() { ran <- d.Run(runCtx) }()
	var runErr error
	ended := false
	select {
	case <-d.Joined():
		api.SetReady()
		select {
		case <-ctx.Done():
		case err := <-served:
			log.Error("REST API stopped", "error", err)
		case runErr = <-ran:
			ended = true
		}
	case runErr = <-ran:
		ended = true
	}
	log.Info("stopping: recording the last acknowledged offsets and leaving the group")
	defer stopWithin(d.Config(), log)()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), restShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		log.Warn("REST API did not stop cleanly", "error", err)
	}
	stopRun()
	if !ended {
		runErr = <-ran
	}
	return runErr
}

// slotReleaseWait bounds how long DELETE /connectors/{name}?dropSlot=true waits in distributed mode for the
// deleted connector's task to stop and release its slot: the owner's graceful stop and more, well within
// the REST request's 90 s.
const slotReleaseWait = 60 * time.Second

// restAPIVersion is the Kafka Connect version whose REST API cdcd serves; GET / reports it as Connect
// reports its own version, so scripts that check it keep working. The commit field carries cdcd's version.
const restAPIVersion = "4.4.0"

// fetchClusterID asks Kafka for its cluster id, which GET / reports, retrying until it answers or ctx ends.
// It goes through the worker's transport, as Connect looks the id up with the worker's settings.
func fetchClusterID(ctx context.Context, brokers []string, transport kafkago.RoundTripper, api *rest.Server, log *slog.Logger) {
	client := &kafkago.Client{Addr: kafkago.TCP(brokers...), Transport: transport, Timeout: 10 * time.Second}
	for delay := time.Second; ; delay = min(2*delay, time.Minute) {
		resp, err := client.Metadata(ctx, &kafkago.MetadataRequest{Topics: []string{}})
		if err == nil {
			api.SetInfo(rest.ServerInfo{Version: restAPIVersion, Commit: source.Version, KafkaClusterID: resp.ClusterID})
			return
		}
		log.Debug("Kafka cluster id not known yet", "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}

func newLogger(w io.Writer) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(os.Getenv("CDCD_LOG_LEVEL"))); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if strings.EqualFold(os.Getenv("CDCD_LOG_FORMAT"), "json") {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// Command cdcd is a change-data-capture daemon that runs Debezium's PostgreSQL connector configs the way
// Kafka Connect runs them:
//
//	cdcd standalone worker.properties connector.properties…
//	cdcd offsets dump FILE
//	cdcd version
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/cdcd/cdcd/connect"
	"github.com/cdcd/cdcd/connect/config"
	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/postgres"
)

const usage = `usage:
  cdcd standalone WORKER.properties CONNECTOR.(properties|json)...
  cdcd offsets dump FILE
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
	var err error
	switch args[0] {
	case "version":
		fmt.Fprintln(stdout, "cdcd", source.Version)
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
// then the connectors run until ctx ends, and a stop records the last acknowledged offsets.
func standalone(ctx context.Context, workerPath string, connectorPaths []string, log *slog.Logger) error {
	workerFile, err := config.LoadPropertiesFile(workerPath)
	if err != nil {
		return err
	}
	w, err := connect.NewStandalone(config.PropertiesMap(workerFile), log)
	if err != nil {
		return err
	}
	type named struct {
		name  string
		props map[string]string
	}
	var conns []named
	var errs []error
	for _, path := range connectorPaths {
		cf, err := config.LoadConnectorFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if cf.Config, err = w.ResolveConnectorConfig(cf.Config); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
			continue
		}
		if class := cf.Config["connector.class"]; class != postgres.ConnectorClass && !strings.HasSuffix(postgres.ConnectorClass, "."+class) {
			errs = append(errs, fmt.Errorf("%s: connector.class %q is not supported; cdcd runs %s", path, class, postgres.ConnectorClass))
			continue
		}
		if _, err := postgres.ParseConfig(cf.Name, cf.Config, log.With("connector", cf.Name)); err != nil {
			errs = append(errs, fmt.Errorf("%s: connector %s: %w", path, cf.Name, err))
			continue
		}
		conns = append(conns, named{cf.Name, cf.Config})
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, c := range conns {
		if err := w.AddConnector(ctx, c.name, c.props); err != nil {
			return err
		}
	}
	<-ctx.Done()
	log.Info("stopping: recording the last acknowledged offsets")
	w.Wait()
	return nil
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

// Command capture writes the records of Kafka topics as a JSONL capture (see package e2e/capture).
//
//	capture -brokers 127.0.0.1:59092 -prefix pg1 [-topics a,b] [-o out.jsonl]
//	        [-wait-for TEXT] [-quiet 3s] [-timeout 2m]
//	capture -brokers … -prefix pg1 -delete       delete the selected topics instead of reading them
//
// -wait-for keeps re-reading until some record's key or value contains TEXT (e.g. an end marker the test
// SQL emits last); -quiet then waits until the topics' end offsets have been still that long.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/cdcd/cdcd/e2e/capture"
)

func main() {
	if err := run(); err != nil {
		slog.Error("capture failed", "err", err)
		os.Exit(1)
	}
}

func run() error {
	brokers := flag.String("brokers", "127.0.0.1:"+envOr("CDCD_KAFKA_PORT", "59092"), "comma-separated bootstrap brokers")
	prefix := flag.String("prefix", "", "select every non-internal topic named PREFIX or PREFIX.*")
	topics := flag.String("topics", "", "comma-separated topics to select as well")
	out := flag.String("o", "-", "output file (- for stdout)")
	waitFor := flag.String("wait-for", "", "re-read until a record key or value contains this text")
	quiet := flag.Duration("quiet", 0, "before reading, wait until the end offsets have not moved for this long")
	timeout := flag.Duration("timeout", 2*time.Minute, "give up after this long")
	deleteTopics := flag.Bool("delete", false, "delete the selected topics and exit")
	flag.Parse()

	sel := capture.Selection{Prefix: *prefix}
	if *topics != "" {
		sel.Topics = strings.Split(*topics, ",")
	}
	if sel.Prefix == "" && len(sel.Topics) == 0 {
		return errors.New("select topics with -prefix and/or -topics")
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	broker, err := capture.NewBroker(strings.Split(*brokers, ","))
	if err != nil {
		return err
	}
	defer broker.Close()

	if *deleteTopics {
		deleted, err := broker.DeleteTopics(ctx, sel)
		if err != nil {
			return err
		}
		slog.Info("deleted topics", "topics", deleted)
		return nil
	}
	records, err := readWhenReady(ctx, broker, sel, *waitFor, *quiet)
	if err != nil {
		return err
	}
	var w io.Writer = os.Stdout
	if *out != "-" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	if err := capture.WriteJSONL(w, records); err != nil {
		return err
	}
	slog.Info("captured", "records", len(records), "output", *out)
	return nil
}

// readWhenReady waits for the marker text and for quiet topics, then reads them.
func readWhenReady(ctx context.Context, broker *capture.Broker, sel capture.Selection, waitFor string, quiet time.Duration) ([]capture.Record, error) {
	for waitFor != "" {
		records, err := broker.Read(ctx, sel)
		if err != nil {
			return nil, err
		}
		if containsText(records, waitFor) {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("no record contains %q: %w", waitFor, ctx.Err())
		case <-time.After(time.Second):
		}
	}
	if quiet > 0 {
		if err := broker.WaitQuiet(ctx, sel, quiet, 500*time.Millisecond); err != nil {
			return nil, err
		}
	}
	return broker.Read(ctx, sel)
}

func containsText(records []capture.Record, text string) bool {
	for _, r := range records {
		if bytes.Contains(r.Key, []byte(text)) || bytes.Contains(r.Value, []byte(text)) {
			return true
		}
	}
	return false
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

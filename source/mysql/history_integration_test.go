package mysql

// Tests against the real MariaDB and Kafka of e2e/services.sh; skipped unless CDCD_E2E is set.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/cdcd/cdcd/schema"
	"github.com/cdcd/cdcd/sink/kafka"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/mysql/types"
)

// TestReaderKeepsItsSchemaHistoryInKafka runs a MariaDB reader with the runtime's Kafka log opener: the
// first run snapshots and writes the structure to the history topic; the table then changes while no
// reader runs, and a second run from the stored offset must rebuild the old structure from the topic to
// read the binlog past the ALTER, which it appends to the topic in turn.
func TestReaderKeepsItsSchemaHistoryInKafka(t *testing.T) {
	dsn, err := testenv.ParseMySQLDSN(testenv.NewMariaDB(t))
	if err != nil {
		t.Fatal(err)
	}
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	conn, err := client.Connect(dsn.Addr, dsn.User, dsn.Password, dsn.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	exec := func(stmt string) {
		t.Helper()
		if _, err := conn.Execute(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	exec("CREATE TABLE items (id INT PRIMARY KEY, v VARCHAR(10))")
	exec("INSERT INTO items VALUES (1, 'a')")

	host, port, _ := strings.Cut(dsn.Addr, ":")
	historyTopic := prefix + "-schema-history"
	cfg, err := ParseConfig("history-test", types.MariaDB, map[string]string{
		"connector.class":                     MariaDBConnectorClass,
		"database.hostname":                   host,
		"database.port":                       port,
		"database.user":                       testenv.MariaDBCaptureUser,
		"database.password":                   testenv.MariaDBCapturePassword,
		"database.server.id":                  fmt.Sprint(200000 + rand.IntN(1000000)),
		"database.include.list":               dsn.DB,
		"topic.prefix":                        prefix,
		"schema.history.internal.kafka.topic": historyTopic,
		"schema.history.internal.kafka.bootstrap.servers": strings.Join(brokers, ","),
	}, discardLog())
	if err != nil {
		t.Fatal(err)
	}
	// The runtime's default servers are wrong on purpose: the history's own servers must be used.
	opener := kafka.NewLogOpener(kafka.LogOpenerConfig{Brokers: []string{"127.0.0.1:1"}, ClientID: "history-test", Log: discardLog()})

	// run starts a reader from start and returns its batches and a stop function returning Run's error.
	run := func(start *Offset) (<-chan source.Batch, func() error) {
		r := NewReader(cfg, start, discardLog())
		r.HistoryLogs = opener
		ctx, cancel := context.WithCancel(t.Context())
		out := make(chan source.Batch, 64)
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx, out) }()
		return out, func() error {
			cancel()
			select {
			case err := <-done:
				if ctx.Err() != nil && err == ctx.Err() {
					return nil
				}
				return err
			case <-time.After(30 * time.Second):
				return fmt.Errorf("Run did not return after its context ended")
			}
		}
	}
	// await returns the after struct of the event for row id and the batch's offset.
	await := func(out <-chan source.Batch, id int32) (*schema.Struct, Offset) {
		t.Helper()
		timeout := time.After(60 * time.Second)
		for {
			select {
			case b := <-out:
				for _, ev := range b.Events {
					value, _ := ev.Value.(*schema.Struct)
					if ev.Topic != prefix+"."+dsn.DB+".items" || value == nil {
						continue
					}
					if after, _ := value.Get("after").(*schema.Struct); after != nil && after.Get("id") == id {
						if b.Offset == nil {
							t.Fatalf("the batch of row %d ends inside a transaction", id)
						}
						return after, b.Position.(binlogPosition).Offset
					}
				}
			case <-timeout:
				t.Fatalf("no event for row %d", id)
			}
		}
	}

	out, stop := run(nil)
	await(out, 1) // the snapshot
	exec("INSERT INTO items VALUES (2, 'b')")
	_, stored := await(out, 2) // streamed
	if err := stop(); err != nil {
		t.Fatalf("first run: %v", err)
	}
	history := readHistory(t, opener, cfg)
	if len(history) == 0 || !strings.Contains(strings.Join(history, "\n"), "CREATE TABLE") {
		t.Fatalf("history topic after the snapshot: %q, want the tables' structure", history)
	}

	exec("ALTER TABLE items ADD COLUMN w INT")
	exec("INSERT INTO items VALUES (3, 'c', 7)")
	out, stop = run(&stored)
	after, _ := await(out, 3)
	if err := stop(); err != nil {
		t.Fatalf("second run: %v", err)
	}
	if got := fmt.Sprint(after.Get("v"), " ", after.Get("w")); got != "c 7" {
		t.Fatalf("row 3 after the ALTER read as v, w = %s, want c 7", got)
	}
	if grown := readHistory(t, opener, cfg); len(grown) <= len(history) || !strings.Contains(grown[len(grown)-1], "ADD COLUMN w INT") {
		t.Fatalf("history after the ALTER ends with %q, want the ALTER appended", grown[len(grown)-1])
	}
}

// readHistory returns the history topic's records as strings, read through opener like the reader does.
func readHistory(t *testing.T, opener source.LogOpener, cfg *Config) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	h, err := openHistory(ctx, cfg, opener)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	recs, err := h.readAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r)
	}
	return out
}

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// kafkaSignalBed is one connector's side of the Kafka signal channel test.
type kafkaSignalBed struct {
	brokers    []string
	prefix     string
	conn       map[string]string // the connector, with a signal table for the incremental snapshot's windows
	table      string            // what the SELECT of the table's rows names
	collection string            // the table as a signal's data-collections names it
	topic      string            // the table's topic
	db         testDB
	dir        string
	streaming  func(p *cdcdProcess) // returns once p streams
}

// TestKafkaSignalChannel: a connector with signal.enabled.channels=source,kafka takes Debezium's documented
// Kafka signal (key topic.prefix, no id) from the default signal topic <topic.prefix>-signal and runs the
// incremental snapshot it asks for; a record keyed for another connector is skipped. After a restart the
// consumer resumes at its group's committed offset: the snapshot signal is not acted on again, and a new
// signal is. PostgreSQL and MariaDB share the channel's code; each runs it end to end.
func TestKafkaSignalChannel(t *testing.T) {
	const rows = 500
	t.Run("postgres", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		dsn := testenv.NewPostgresDB(t)
		prefix := testenv.NewTopicPrefix(t)
		db := connectPostgres(t, ctx, dsn, signalTableDDL,
			"CREATE TABLE public.orders (id int PRIMARY KEY, v bigint NOT NULL)",
			fmt.Sprintf("INSERT INTO public.orders SELECT g, g FROM generate_series(1, %d) g", rows))
		conn := incrementalConnector(t, dsn, prefix, "public.orders", 100)
		kafkaSignalChannel(t, ctx, kafkaSignalBed{
			brokers: testenv.Kafka(t), prefix: prefix, conn: conn, table: "public.orders", collection: "public.orders",
			topic: prefix + ".public.orders", db: pgSession{db}, dir: t.TempDir(),
			streaming: func(p *cdcdProcess) { waitSlotActive(t, ctx, db, conn["slot.name"], p) },
		}, rows)
	})
	t.Run("mariadb", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		b := newMariaDBIncrementalBed(t, ctx, "orders", rows)
		kafkaSignalChannel(t, ctx, kafkaSignalBed{
			brokers: b.brokers, prefix: b.prefix, conn: b.incrementalConnector(100, nil), table: "orders",
			collection: b.dsn.DB + ".orders", topic: b.prefix + "." + b.dsn.DB + ".orders", db: mariadbSession{b.db}, dir: b.dir,
			streaming: func(p *cdcdProcess) { waitLog(t, p, "streaming the binlog") },
		}, rows)
	})
}

func kafkaSignalChannel(t *testing.T, ctx context.Context, b kafkaSignalBed, rows int) {
	conn := b.conn
	conn["signal.enabled.channels"] = "source,kafka"
	conn["signal.kafka.bootstrap.servers"] = strings.Join(b.brokers, ",")
	conn["signal.kafka.groupId"] = b.prefix + "-signals" // the test's own group on the shared broker
	conn["signal.poll.interval.ms"] = "100"
	signalTopic := b.prefix + "-signal" // Debezium's default signal.kafka.topic

	producer, err := kgo.NewClient(kgo.SeedBrokers(b.brokers...), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	send := func(key, value string) {
		t.Helper()
		if err := producer.ProduceSync(ctx, &kgo.Record{Topic: signalTopic, Key: []byte(key), Value: []byte(value)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	snapshotSignal := fmt.Sprintf(`{"type":"execute-snapshot","data": {"data-collections": [%q], "type": "INCREMENTAL"}}`, b.collection)
	// Sent before cdcd starts: the group has no committed offset, so the consumer reads from the start.
	send("someone-else", snapshotSignal)

	files := writeStandalone(t, b.dir, workerProps(b.brokers, filepath.Join(b.dir, "offsets.dat")), conn)
	p := files.start()
	b.streaming(p)
	waitLog(t, p, "its key is not this connector's topic.prefix")

	// Debezium's documented message: the key is topic.prefix, the value has no id.
	send(b.prefix, snapshotSignal)
	waitLog(t, p, "incremental snapshot requested")
	waitLog(t, p, "incremental snapshot completed") // the topic exists from its first window on
	broker := newBroker(t, b.brokers)
	got := waitTableMatches(t, ctx, broker, b.topic, tableRows(t, ctx, b.db, b.table), p)
	if len(got.snapshot) != rows {
		t.Fatalf("the incremental snapshot read %d rows, want %d", len(got.snapshot), rows)
	}
	if n := strings.Count(p.log.String(), "incremental snapshot requested"); n != 1 {
		t.Fatalf("%d snapshots requested, want 1 (the other connector's signal is not ours); log:\n%s", n, tail(p.log.String(), 4000))
	}
	p.stop() // the consumer commits its position as it closes

	// The restart resumes after the signals already taken: only the new one is acted on.
	p = files.start()
	b.streaming(p)
	send(b.prefix, `{"id":"after-restart","type":"log","data":{"message":"kafka signal after the restart"}}`)
	waitLog(t, p, "kafka signal after the restart")
	if strings.Contains(p.log.String(), "incremental snapshot requested") {
		t.Fatalf("the snapshot signal was acted on again after the restart; log:\n%s", tail(p.log.String(), 4000))
	}
	recs, err := broker.Read(ctx, capture.Selection{Topics: []string{b.topic}})
	if err != nil {
		t.Fatal(err)
	}
	if again := rebuildTable(t, recs).snapshot; len(again) != rows || again[1] != 1 {
		t.Fatalf("after the restart the table's snapshot rows are %d (row 1 read %d times), want %d read once", len(again), again[1], rows)
	}
}

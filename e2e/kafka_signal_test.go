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

// TestKafkaSignalChannel: a PostgreSQL connector with signal.enabled.channels=source,kafka takes Debezium's
// documented Kafka signal (key topic.prefix, no id) from the default signal topic <topic.prefix>-signal and
// runs the incremental snapshot it asks for; a record keyed for another connector is skipped. After a
// restart the consumer resumes at its group's committed offset: the snapshot signal is not acted on again,
// and a new signal is.
func TestKafkaSignalChannel(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const rows = 500
	db := connectPostgres(t, ctx, dsn, signalTableDDL,
		"CREATE TABLE public.orders (id int PRIMARY KEY, v bigint NOT NULL)",
		fmt.Sprintf("INSERT INTO public.orders SELECT g, g FROM generate_series(1, %d) g", rows))
	conn := incrementalConnector(t, dsn, prefix, "public.orders", 100)
	conn["signal.enabled.channels"] = "source,kafka"
	conn["signal.kafka.bootstrap.servers"] = strings.Join(brokers, ",")
	conn["signal.kafka.groupId"] = prefix + "-signals" // the test's own group on the shared broker
	conn["signal.poll.interval.ms"] = "100"
	signalTopic := prefix + "-signal" // Debezium's default signal.kafka.topic

	producer, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.AllowAutoTopicCreation())
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
	// Sent before cdcd starts: the group has no committed offset, so the consumer reads from the start.
	send("someone-else", `{"type":"execute-snapshot","data":{"data-collections":["public.orders"],"type":"INCREMENTAL"}}`)

	dir := t.TempDir()
	files := writeStandalone(t, dir, workerProps(brokers, filepath.Join(dir, "offsets.dat")), conn)
	p := files.start()
	waitSlotActive(t, ctx, db, conn["slot.name"], p)
	waitLog(t, p, "its key is not this connector's topic.prefix")

	// Debezium's documented message: the key is topic.prefix, the value has no id.
	send(prefix, `{"type":"execute-snapshot","data": {"data-collections": ["public.orders"], "type": "INCREMENTAL"}}`)
	waitLog(t, p, "incremental snapshot requested")
	waitLog(t, p, "incremental snapshot completed") // the topic exists from its first window on
	broker := newBroker(t, brokers)
	got := waitTableMatches(t, ctx, broker, prefix+".public.orders", tableRows(t, ctx, pgSession{db}, "public.orders"), p)
	if len(got.snapshot) != rows {
		t.Fatalf("the incremental snapshot read %d rows, want %d", len(got.snapshot), rows)
	}
	if n := strings.Count(p.log.String(), "incremental snapshot requested"); n != 1 {
		t.Fatalf("%d snapshots requested, want 1 (the other connector's signal is not ours); log:\n%s", n, tail(p.log.String(), 4000))
	}
	p.stop() // the consumer commits its position as it closes

	// The restart resumes after the signals already taken: only the new one is acted on.
	p = files.start()
	waitSlotActive(t, ctx, db, conn["slot.name"], p)
	send(prefix, `{"id":"after-restart","type":"log","data":{"message":"kafka signal after the restart"}}`)
	waitLog(t, p, "kafka signal after the restart")
	if strings.Contains(p.log.String(), "incremental snapshot requested") {
		t.Fatalf("the snapshot signal was acted on again after the restart; log:\n%s", tail(p.log.String(), 4000))
	}
	recs, err := broker.Read(ctx, capture.Selection{Topics: []string{prefix + ".public.orders"}})
	if err != nil {
		t.Fatal(err)
	}
	if again := rebuildTable(t, recs).snapshot; len(again) != rows || again[1] != 1 {
		t.Fatalf("after the restart the table's snapshot rows are %d (row 1 read %d times), want %d read once", len(again), again[1], rows)
	}
}

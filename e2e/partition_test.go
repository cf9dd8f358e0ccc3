package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestPublishViaPartitionRoot captures a partitioned table by its root name with publish.via.partition.root:
// the publication cdcd creates publishes through the root, so the snapshot's rows and the changes of every
// partition, one created before the start and one after, are events of the root table on its one topic.
func TestPublishViaPartitionRoot(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db := connectPostgres(t, ctx, dsn,
		"CREATE TABLE meas (id int, region text, v int, PRIMARY KEY (id, region)) PARTITION BY LIST (region)",
		"CREATE TABLE meas_eu PARTITION OF meas FOR VALUES IN ('eu')",
		"INSERT INTO meas VALUES (1, 'eu', 0)")

	dir := t.TempDir()
	conn := pgConnector(t, dsn, "viaroot", prefix, "public.meas")
	conn["publish.via.partition.root"] = "true"
	p := startStandalone(t, dir, workerProps(brokers, filepath.Join(dir, "offsets.dat")), conn)
	waitSlotActive(t, ctx, db, conn["slot.name"], p)
	var viaRoot bool
	if err := db.QueryRow(ctx, "SELECT pubviaroot FROM pg_publication WHERE pubname = $1", conn["publication.name"]).Scan(&viaRoot); err != nil || !viaRoot {
		t.Fatalf("publication %s: pubviaroot = %v (%v), want true", conn["publication.name"], viaRoot, err)
	}
	// A slot being created is active before its consistent point: changes wait for the snapshot's row.
	topic := prefix + ".public.meas"
	newEventReader(t, p.log.String, []string{topic}, kgo.SeedBrokers(brokers...)).waitFor(ctx, 1)
	execAll(t, ctx, db,
		"INSERT INTO meas VALUES (2, 'eu', 0)",
		"CREATE TABLE meas_us PARTITION OF meas FOR VALUES IN ('us')",
		"INSERT INTO meas VALUES (3, 'us', 0)",
		"UPDATE meas SET v = 1 WHERE id = 3",
		"DELETE FROM meas WHERE id = 2")
	newEventReader(t, p.log.String, []string{topic}, kgo.SeedBrokers(brokers...)).waitFor(ctx, 3)
	// The delete comes last; wait for the whole sequence.
	var recs []capture.Record
	for deadline := time.Now().Add(time.Minute); ; {
		var err error
		if recs, err = newBroker(t, brokers).Read(ctx, capture.Selection{Topics: []string{topic}}); err != nil {
			t.Fatal(err)
		}
		if len(recs) >= 6 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	var got []string
	for _, r := range recs {
		if r.Value == nil {
			got = append(got, "tombstone")
			continue
		}
		var ev struct {
			Payload struct {
				Op     string `json:"op"`
				Source struct {
					Table string `json:"table"`
				} `json:"source"`
				After  *struct{ ID int } `json:"after"`
				Before *struct{ ID int } `json:"before"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(r.Value, &ev); err != nil {
			t.Fatalf("record %d: %v", r.Offset, err)
		}
		row := ev.Payload.After
		if row == nil {
			row = ev.Payload.Before
		}
		got = append(got, ev.Payload.Op+" "+ev.Payload.Source.Table+" "+string(rune('0'+row.ID)))
	}
	want := []string{"r meas 1", "c meas 2", "c meas 3", "u meas 3", "d meas 2", "tombstone"}
	if !slices.Equal(got, want) {
		t.Errorf("events on %s: %q, want %q", topic, got, want)
	}
	p.stop()
}

package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestLogicalTableRouterMergesShardsAndHeartbeats runs what the goldens cannot show: two shards with the
// same primary key merged into one topic by ByLogicalTableRouter, keys kept apart by the physical table
// identifier, a delete's tombstone routed with them, and heartbeats (which the goldens do not enable)
// routed by a second router whose key rewrite applies to the heartbeat key.
func TestLogicalTableRouterMergesShardsAndHeartbeats(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const prefix = "e2etransforms"

	db := connectPostgres(t, ctx, dsn, "CREATE SCHEMA s1", "CREATE SCHEMA s2",
		"CREATE TABLE s1.orders (id int PRIMARY KEY, note text)", "CREATE TABLE s2.orders (id int PRIMARY KEY, note text)")
	sel := capture.Selection{Prefix: prefix}
	broker := emptyBroker(t, ctx, brokers, sel)

	conn := pgConnector(t, dsn, "transforms-e2e", prefix, "s1.orders,s2.orders")
	for k, v := range map[string]string{
		"heartbeat.interval.ms":                        "200",
		"transforms":                                   "shards,beats",
		"transforms.shards.type":                       "io.debezium.transforms.ByLogicalTableRouter",
		"transforms.shards.topic.regex":                prefix + `\.s[0-9]+\.orders`,
		"transforms.shards.topic.replacement":          prefix + ".orders",
		"transforms.beats.type":                        "io.debezium.transforms.ByLogicalTableRouter",
		"transforms.beats.topic.regex":                 `__debezium-heartbeat\.(.*)`,
		"transforms.beats.topic.replacement":           "$1.beats",
		"transforms.beats.key.enforce.uniqueness":      "false",
		"transforms.beats.schema.name.adjustment.mode": "avro",
	} {
		conn[k] = v
	}
	tmp := t.TempDir()
	p := startStandalone(t, tmp, workerProps(brokers, filepath.Join(tmp, "offsets.dat")), conn)
	waitSlotActive(t, ctx, db, conn["slot.name"], p)

	execAll(t, ctx, db, "INSERT INTO s1.orders VALUES (1, 'first shard')", "INSERT INTO s2.orders VALUES (1, 'second shard')",
		"DELETE FROM s1.orders WHERE id = 1")
	var orders, beats []capture.Record
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && (len(orders) < 4 || len(beats) == 0); time.Sleep(300 * time.Millisecond) {
		recs, err := broker.Read(ctx, sel)
		if err != nil {
			t.Fatal(err)
		}
		orders, beats = byTopic(recs, prefix+".orders"), byTopic(recs, prefix+".beats")
	}
	p.stop()

	type routedKey struct {
		Schema struct {
			Name   string `json:"name"`
			Fields []struct {
				Field string `json:"field"`
			} `json:"fields"`
		} `json:"schema"`
		Payload map[string]any `json:"payload"`
	}
	wantOrders := []struct {
		table, envelope string // envelope "" for the tombstone
	}{
		{prefix + ".s1.orders", prefix + ".orders.Envelope"},
		{prefix + ".s2.orders", prefix + ".orders.Envelope"},
		{prefix + ".s1.orders", prefix + ".orders.Envelope"},
		{prefix + ".s1.orders", ""},
	}
	if len(orders) != len(wantOrders) {
		t.Fatalf("%s has %d records, want %d (2 inserts, a delete and its tombstone)", prefix+".orders", len(orders), len(wantOrders))
	}
	for i, want := range wantOrders {
		var key routedKey
		if err := json.Unmarshal(orders[i].Key, &key); err != nil {
			t.Fatalf("record %d key: %v", i, err)
		}
		if key.Schema.Name != prefix+".orders.Key" || key.Payload["id"] != float64(1) ||
			key.Payload["__dbz__physicalTableIdentifier"] != want.table {
			t.Errorf("record %d key = %s, want %s.orders.Key with id 1 from %s", i, orders[i].Key, prefix, want.table)
		}
		if want.envelope == "" {
			if orders[i].Value != nil {
				t.Errorf("record %d = %s, want the tombstone", i, orders[i].Value)
			}
			continue
		}
		var value struct {
			Schema struct {
				Name string `json:"name"`
			} `json:"schema"`
		}
		if err := json.Unmarshal(orders[i].Value, &value); err != nil || value.Schema.Name != want.envelope {
			t.Errorf("record %d value schema %q (%v), want %q", i, value.Schema.Name, err, want.envelope)
		}
	}

	if len(beats) == 0 {
		t.Fatalf("no heartbeat reached %s.beats", prefix)
	}
	var key routedKey
	if err := json.Unmarshal(beats[0].Key, &key); err != nil {
		t.Fatal(err)
	}
	if key.Schema.Name != prefix+".beats.Key" || len(key.Schema.Fields) != 1 || key.Payload["serverName"] != prefix {
		t.Errorf("heartbeat key = %s, want %s.beats.Key holding only serverName", beats[0].Key, prefix)
	}
}

func byTopic(recs []capture.Record, topic string) []capture.Record {
	var out []capture.Record
	for _, r := range recs {
		if r.Topic == topic {
			out = append(out, r)
		}
	}
	return out
}

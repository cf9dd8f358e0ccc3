package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestSlotsThroughTheBinary checks the guardian's wiring in `cdcd standalone`: GET /slots reports the running
// connector's slot as owned, GET /connectors/{name}/slot finds it, /metrics exports it, and
// DELETE /connectors/{name}?dropSlot=true drops it, while a plain DELETE keeps it (as Connect does).
func TestSlotsThroughTheBinary(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db := connectPostgres(t, ctx, dsn, "CREATE TABLE g (id int PRIMARY KEY)")

	dir := t.TempDir()
	worker := workerProps(brokers, filepath.Join(dir, "offsets.dat"))
	worker["cdcd.slots.refresh.interval.ms"] = "200"
	workerPath := filepath.Join(dir, "worker.properties")
	writeProperties(t, workerPath, worker)
	p := startCdcd(t, workerPath)
	api := restClient{t: t, base: "http://" + listeningAddress(t, p)}

	keep := pgConnector(t, dsn, "keep", testenv.NewTopicPrefix(t)+"k", "public.g")
	drop := pgConnector(t, dsn, "drop", testenv.NewTopicPrefix(t)+"d", "public.g")
	for _, c := range []map[string]string{keep, drop} {
		api.expect("POST", "/connectors", jsonBody(t, map[string]any{"name": c["name"], "config": c}), 201)
		api.waitTaskState(c["name"], "RUNNING")
		waitSlotActive(t, ctx, db, c["slot.name"], p)
	}

	// The guardian refreshes every 200 ms: wait until it has seen both slots.
	var report struct {
		Slots []struct {
			SlotName  string `json:"slot_name"`
			Status    string `json:"status"`
			Connector string `json:"connector"`
		} `json:"slots"`
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := json.Unmarshal([]byte(api.expect("GET", "/slots", "", 200)), &report); err != nil {
			t.Fatal(err)
		}
		owned := 0
		for _, s := range report.Slots {
			if (s.SlotName == keep["slot.name"] || s.SlotName == drop["slot.name"]) && s.Status == "owned" {
				owned++
			}
		}
		if owned == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /slots never reported both connector slots as owned: %+v", report)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if body := api.expect("GET", "/connectors/keep/slot", "", 200); !json.Valid([]byte(body)) {
		t.Fatalf("GET /connectors/keep/slot: %s", body)
	}
	api.expect("GET", "/connectors/nope/slot", "", 404)
	if metrics := api.expect("GET", "/metrics", "", 200); !strings.Contains(metrics, keep["slot.name"]) || !strings.Contains(metrics, "cdcd_slot") {
		t.Fatalf("/metrics does not export the slot:\n%.2000s", metrics)
	}

	api.expect("DELETE", "/connectors/keep", "", 204)
	api.expect("DELETE", "/connectors/drop?dropSlot=true", "", 204)
	if !slotExists(t, ctx, db, keep["slot.name"]) {
		t.Error("a plain DELETE dropped the slot; Connect keeps it")
	}
	if slotExists(t, ctx, db, drop["slot.name"]) {
		t.Error("DELETE ?dropSlot=true left the slot behind")
	}
	p.stop()
}

func slotExists(t testing.TB, ctx context.Context, db *pgx.Conn, slot string) bool {
	t.Helper()
	var n int
	if err := db.QueryRow(ctx, "SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1", slot).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

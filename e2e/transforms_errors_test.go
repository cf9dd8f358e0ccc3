package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestTransformFailureFailsTheTask checks Connect's default errors.tolerance=none end to end: a record
// that a transform cannot take (a Cast of text that is not a number) fails the task for good, the REST
// status names the record's topic and key and the transform, and the records before it were delivered.
func TestTransformFailureFailsTheTask(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const prefix = "e2esmterrors"

	db, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	if _, err := db.Exec(ctx, "CREATE TABLE amounts (id int PRIMARY KEY, amount text)"); err != nil {
		t.Fatal(err)
	}
	broker, err := capture.NewBroker(brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	sel := capture.Selection{Prefix: prefix}
	if _, err := broker.DeleteTopics(ctx, sel); err != nil {
		t.Fatal(err)
	}

	tmp := t.TempDir()
	conn := pgConnector(t, dsn, "smt-errors", prefix, "public.amounts")
	for k, v := range map[string]string{
		"transforms":                  "unwrap,amount",
		"transforms.unwrap.type":      "io.debezium.transforms.ExtractNewRecordState",
		"transforms.amount.type":      "org.apache.kafka.connect.transforms.Cast$Value",
		"transforms.amount.spec":      "amount:int32",
		"transforms.amount.negate":    "false",
		"transforms.amount.predicate": "amounts",
		"predicates":                  "amounts",
		"predicates.amounts.type":     "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
		"predicates.amounts.pattern":  prefix + `\.public\.amounts`,
	} {
		conn[k] = v
	}
	workerPath, connPath := filepath.Join(tmp, "worker.properties"), filepath.Join(tmp, "connector.properties")
	writeProperties(t, workerPath, workerProps(brokers, filepath.Join(tmp, "offsets.dat")))
	writeProperties(t, connPath, conn)
	p := startCdcd(t, workerPath, connPath)
	defer p.stop()
	waitSlotActive(t, ctx, db, conn["slot.name"], p)
	rest := restClient{t: t, base: "http://" + listeningAddress(t, p)}

	for _, sql := range []string{
		"INSERT INTO amounts VALUES (1, '12')",
		"INSERT INTO amounts VALUES (2, 'twelve')",
	} {
		if _, err := db.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}

	var trace string
	for deadline := time.Now().Add(time.Minute); trace == ""; time.Sleep(200 * time.Millisecond) {
		var st struct {
			Tasks []struct{ State, Trace string }
		}
		_ = json.Unmarshal([]byte(rest.do("GET", "/connectors/smt-errors/status", "").body), &st)
		if len(st.Tasks) == 1 && st.Tasks[0].State == "FAILED" {
			trace = st.Tasks[0].Trace
		}
		if time.Now().After(deadline) {
			t.Fatal("the task did not fail on a record the transform cannot take")
		}
	}
	for _, want := range []string{prefix + ".public.amounts", `{"id":2}`, "Cast$Value", `"amount"`, "twelve"} {
		if !strings.Contains(trace, want) {
			t.Errorf("trace %q does not name %s", trace, want)
		}
	}
	recs, err := broker.Read(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	amounts := byTopic(recs, prefix+".public.amounts")
	if len(amounts) != 1 || !strings.Contains(string(amounts[0].Value), `"amount":12`) {
		t.Errorf("delivered %d records (%v), want only the first, its amount cast to a number", len(amounts), amounts)
	}
}

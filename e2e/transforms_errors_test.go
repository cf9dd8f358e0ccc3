package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestTransformFailureFailsTheTask checks Connect's default errors.tolerance=none end to end: a record
// that a transform cannot take (a Cast of text that is not a number) fails the task for good, the REST
// status names the record's topic, key columns and the transform (not the row's data), and the records
// before it were delivered.
func TestTransformFailureFailsTheTask(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const prefix = "e2esmterrors"

	db := connectPostgres(t, ctx, dsn, "CREATE TABLE amounts (id int PRIMARY KEY, amount text)")
	sel := capture.Selection{Prefix: prefix}
	broker := emptyBroker(t, ctx, brokers, sel)

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
	tmp := t.TempDir()
	p := startStandalone(t, tmp, workerProps(brokers, filepath.Join(tmp, "offsets.dat")), conn)
	defer p.stop()
	waitSlotActive(t, ctx, db, conn["slot.name"], p)
	rest := p.restAPI()

	execAll(t, ctx, db, "INSERT INTO amounts VALUES (1, '12')", "INSERT INTO amounts VALUES (2, 'twelve')")

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
	// The trace names the record by topic, key columns and position, never by its key or values: a task's
	// trace is served by /status and /health to every REST client.
	for _, want := range []string{prefix + ".public.amounts", "keyed by columns [id]", "Cast$Value", `"amount"`} {
		if !strings.Contains(trace, want) {
			t.Errorf("trace %q does not name %s", trace, want)
		}
	}
	for _, rowData := range []string{`{"id":2}`, "twelve"} {
		if strings.Contains(trace, rowData) {
			t.Errorf("trace %q quotes the row's data %s", trace, rowData)
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

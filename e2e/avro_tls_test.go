package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestAvroOverTLSRegistry runs cdcd with the AvroConverter against the test bed's HTTPS registry
// (Apicurio behind the test CA's certificate), trusting it through a JKS truststore as a Connect worker
// would (value.converter.schema.registry.ssl.truststore.*): the records arrive in Confluent's wire format
// and decode with the schema the registry holds behind their id.
func TestAvroOverTLSRegistry(t *testing.T) {
	reg := testenv.RegistryTLS(t)
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	topic := prefix + ".public.items"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	db, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	if _, err := db.Exec(ctx, `CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL)`); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	worker := workerProps(brokers, filepath.Join(dir, "offsets.dat"))
	for _, side := range []string{"key", "value"} {
		worker[side+".converter"] = "io.confluent.connect.avro.AvroConverter"
		worker[side+".converter.schema.registry.url"] = reg.URL
		worker[side+".converter.schema.registry.ssl.truststore.location"] = reg.TLS.TruststoreJKS
		worker[side+".converter.schema.registry.ssl.truststore.password"] = reg.TLS.StorePassword
		worker[side+".converter.schema.registry.ssl.truststore.type"] = "JKS"
	}
	workerPath, connPath := filepath.Join(dir, "worker.properties"), filepath.Join(dir, "pg.properties")
	writeProperties(t, workerPath, worker)
	conn := pgConnector(t, dsn, "avrotls", prefix, "public.items")
	writeProperties(t, connPath, conn)

	p := startCdcd(t, workerPath, connPath)
	waitSlotActive(t, ctx, db, conn["slot.name"], p)
	if _, err := db.Exec(ctx, `INSERT INTO items VALUES (1, 'over-tls')`); err != nil {
		t.Fatal(err)
	}

	recs := newTopicReader(t, brokers, topic).read(ctx, 1)
	keyID, valueID := assertWireFormat(t, recs[0])
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: reg.TLS.TLSConfig(t, "")}}
	schemaByID := func(id int) string {
		t.Helper()
		resp, err := client.Get(fmt.Sprintf("%s/schemas/ids/%d", reg.URL, id))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var doc struct{ Schema string }
		if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /schemas/ids/%d: %s, %v", id, resp.Status, err)
		}
		return doc.Schema
	}
	ev := changeEvent{key: decodeAvro(t, schemaByID(keyID), recs[0].Key), value: decodeAvro(t, schemaByID(valueID), recs[0].Value)}
	if ev.key["id"] != 1 || ev.value["op"] != "c" {
		t.Errorf("key %v, op %v; want id 1 created", ev.key, ev.value["op"])
	}
	assertField(t, ev.row(t, "after"), "name", "over-tls")
}

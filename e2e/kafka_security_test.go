package e2e

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestStandaloneWritesToSASLSSLKafka: cdcd standalone writes a PostgreSQL connector's snapshot and
// stream into the test bed's SASL_SSL listener only, with Connect's settings: the top-level keys for the
// worker's own clients and the topic creation admin (SCRAM-SHA-512, JKS truststore), producer.* for the
// task's producer (PLAIN, PEM truststore). No line of cdcd's log carries the password.
func TestStandaloneWritesToSASLSSLKafka(t *testing.T) {
	k := testenv.KafkaSASLSSL(t)
	dsn := testenv.NewPostgresDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db := connectPostgres(t, ctx, dsn, "CREATE TABLE t (id int PRIMARY KEY, v text); INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')")

	dir := t.TempDir()
	prefix := testenv.NewTopicPrefix(t)
	worker := workerProps(k.Brokers, filepath.Join(dir, "offsets.dat"))
	maps.Copy(worker, k.SCRAMProps())
	for key, v := range map[string]string{
		"producer.security.protocol": "SASL_SSL", "producer.sasl.mechanism": "PLAIN",
		"producer.sasl.jaas.config":        fmt.Sprintf(`org.apache.kafka.common.security.plain.PlainLoginModule required username="%s" password="%s";`, k.User, k.Password),
		"producer.ssl.truststore.type":     "PEM",
		"producer.ssl.truststore.location": k.TLS.CA,
	} {
		worker[key] = v
	}
	conn := pgConnector(t, dsn, "secured", prefix, "public.t")
	conn["topic.creation.default.replication.factor"] = "1"
	conn["topic.creation.default.partitions"] = "1"
	p := startStandalone(t, dir, worker, conn)

	topic := prefix + ".public.t"
	events := newEventReader(t, func() string { return tail(p.log.String(), 4000) }, []string{topic}, k.FranzOpts(t)...)
	events.waitFor(ctx, 3)
	if _, err := db.Exec(ctx, "INSERT INTO t VALUES (4, 'd')"); err != nil {
		t.Fatal(err)
	}
	events.waitFor(ctx, 4)
	if ops := events.ops[topic]; ops[1] != "r" || ops[3] != "r" || ops[4] != "c" {
		t.Errorf("events %v, want the snapshot (r) of 1-3 and the insert (c) of 4", ops)
	}
	p.stop()
	if strings.Contains(p.log.String(), k.Password) {
		t.Errorf("cdcd's log carries the SASL password:\n%s", tail(p.log.String(), 4000))
	}
}

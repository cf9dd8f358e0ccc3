package e2e

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestDistributedOverSASLSSLFromTLSDatabases is the deployment a managed Kafka needs, end to end: two
// `cdcd distributed` workers whose group, internal topics and admin calls use only the SASL_SSL listener
// (SCRAM-SHA-512, JKS truststore), a PostgreSQL connector reading the TLS-only cluster with
// sslmode=verify-full, and a MariaDB connector reading the TLS-only MariaDB with ssl.mode=verify_identity
// whose schema history is on the SASL_SSL listener too. Each connector's snapshot and a streamed insert
// arrive; the worker running the tasks is stopped and the other takes them over and streams the next
// inserts. No worker's log carries a password.
func TestDistributedOverSASLSSLFromTLSDatabases(t *testing.T) {
	k := testenv.KafkaSASLSSL(t)
	pgDSN := testenv.NewPostgresTLSDB(t)
	maria := testenv.MariaDBTLS(t)
	mariaRoot, err := testenv.ParseMySQLDSN(testenv.NewMariaDBTLS(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	pg := connectPostgres(t, ctx, pgDSN, "CREATE TABLE t (id int PRIMARY KEY, v text); INSERT INTO t VALUES (1, 'a'), (2, 'b')")
	my, err := testenv.ConnectMariaDB(ctx, mariaRoot, maria.TLS.TLSConfig(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer my.Close()
	mariaExec := func(stmt string) {
		t.Helper()
		if _, err := my.Execute(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	mariaExec("CREATE TABLE t (id INT PRIMARY KEY, v TEXT)")
	mariaExec("INSERT INTO t VALUES (1, 'a'), (2, 'b')")

	security := k.SCRAMProps()
	prefix := testenv.NewTopicPrefix(t)
	topics := clusterTopicsOf(prefix)
	worker := func() map[string]string {
		props := distributedProps(k.Brokers, prefix+"-group", topics, freePort(t))
		for key, v := range security {
			props[key] = v
			props["producer."+key] = v
			props["admin."+key] = v
		}
		return props
	}
	first := startCdcdDistributed(t, worker())
	second := startCdcdDistributed(t, worker())

	pgConn := pgConnector(t, pgDSN, "pg-tls", prefix+"pg", "public.t")
	pgConn["database.sslmode"], pgConn["database.sslrootcert"] = "verify-full", k.TLS.CA // the test bed's one CA
	host, port, _ := strings.Cut(maria.Addr, ":")
	mariaConn := map[string]string{
		"name":                                "maria-tls",
		"connector.class":                     "io.debezium.connector.mariadb.MariaDbConnector",
		"database.hostname":                   host,
		"database.port":                       port,
		"database.user":                       maria.User,
		"database.password":                   maria.Password,
		"database.server.id":                  fmt.Sprint(300000 + time.Now().UnixNano()%100000),
		"database.include.list":               mariaRoot.DB,
		"database.ssl.mode":                   "verify-full",
		"database.ssl.truststore":             maria.TLS.TruststoreJKS,
		"database.ssl.truststore.password":    maria.TLS.StorePassword,
		"topic.prefix":                        prefix + "maria",
		"schema.history.internal.kafka.topic": prefix + "-schema-history",
		"schema.history.internal.kafka.bootstrap.servers": strings.Join(k.Brokers, ","),
	}
	for key, v := range security {
		mariaConn["schema.history.internal.producer."+key] = v
		mariaConn["schema.history.internal.consumer."+key] = v
	}
	for _, cfg := range []map[string]string{pgConn, mariaConn} {
		cfg["topic.creation.default.replication.factor"] = "1"
		cfg["topic.creation.default.partitions"] = "1"
		createConnector(t, first.url, cfg)
	}

	pgTopic, mariaTopic := prefix+"pg.public.t", prefix+"maria."+mariaRoot.DB+".t"
	logs := func() string { return tail(first.log.String(), 3000) + "\n---\n" + tail(second.log.String(), 3000) }
	events := newEventReader(t, logs, []string{pgTopic, mariaTopic}, append(k.FranzOpts(t), kgo.MetadataMinAge(250*time.Millisecond))...)
	insert := func(id int) {
		t.Helper()
		if _, err := pg.Exec(ctx, fmt.Sprintf("INSERT INTO t VALUES (%d, 'x')", id)); err != nil {
			t.Fatal(err)
		}
		mariaExec(fmt.Sprintf("INSERT INTO t VALUES (%d, 'x')", id))
	}

	events.waitFor(ctx, 2)
	insert(3)
	events.waitFor(ctx, 3)

	// Stop the worker that runs the PostgreSQL task: the other must run both tasks, through the group on
	// SASL_SSL, and stream what follows.
	victim, survivor := first, second
	if taskOwner(t, first.url, "pg-tls") == second.id {
		victim, survivor = second, first
	}
	victim.stop()
	for _, name := range []string{"pg-tls", "maria-tls"} {
		taskOwner(t, survivor.url, name, victim.id)
	}
	insert(4)
	events.waitFor(ctx, 4)
	for topic, got := range events.ops {
		want := map[int]string{1: "r", 2: "r", 3: "c", 4: "c"}
		if !maps.Equal(got, want) {
			t.Errorf("%s: events %v, want %v", topic, got, want)
		}
	}
	for _, secret := range []string{k.Password, maria.Password, k.TLS.StorePassword} {
		if strings.Contains(first.log.String()+second.log.String(), secret) {
			t.Errorf("a worker's log carries a secret (%d characters):\n%s", len(secret), logs())
		}
	}
}

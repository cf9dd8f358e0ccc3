package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/capture"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestMariaDBOverVerifiedTLS runs a MariaDB connector against the TLS-only MariaDB (require_secure_transport,
// a user that REQUIRE SSL) with database.ssl.mode=verify-full and a JKS truststore: the snapshot and a
// row inserted while streaming arrive in Kafka, so both the query and the binlog connection are up over
// verified TLS (the server takes no other). No line of cdcd's log, at debug level, carries a password.
func TestMariaDBOverVerifiedTLS(t *testing.T) {
	m := testenv.MariaDBTLS(t)
	dsn, err := testenv.ParseMySQLDSN(testenv.NewMariaDBTLS(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db, err := testenv.ConnectMariaDB(ctx, dsn, m.TLS.TLSConfig(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec := func(sql string) {
		t.Helper()
		if _, err := db.Execute(sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")
	exec("INSERT INTO t VALUES (1, 'snapshot')")

	brokers := testenv.Kafka(t)
	broker := newBroker(t, brokers)
	prefix := testenv.NewTopicPrefix(t)
	dir := t.TempDir()
	conn := mariadbConnector(t, dsn, brokers, "mdb-tls", prefix)
	for k, v := range map[string]string{
		"database.user": m.User, "database.password": m.Password,
		"database.ssl.mode": "verify-full", "database.ssl.truststore": m.TLS.TruststoreJKS,
		"database.ssl.truststore.password": m.TLS.StorePassword,
	} {
		conn[k] = v
	}
	workerPath, connPath := filepath.Join(dir, "worker.properties"), filepath.Join(dir, "mariadb.properties")
	writeProperties(t, workerPath, workerProps(brokers, filepath.Join(dir, "offsets.dat")))
	writeProperties(t, connPath, conn)
	p := startCdcd(t, workerPath, connPath)

	topic := capture.Selection{Topics: []string{prefix + "." + dsn.DB + ".t"}}
	waitFor(t, ctx, broker, topic, `"after":{"id":1,"v":"snapshot"}`)
	// Streaming starts at the snapshot's position, so this insert is read from the binlog, whenever the
	// binlog connection comes up.
	exec("INSERT INTO t VALUES (2, 'streamed')")
	waitFor(t, ctx, broker, topic, `"after":{"id":2,"v":"streamed"}`)
	if recs, err := broker.Read(ctx, topic); err != nil || !strings.Contains(string(recs[len(recs)-1].Value), `"snapshot":"false"`) {
		t.Errorf("the last record is not a streamed one (err %v)", err)
	}
	p.stop()
	log := p.log.String()
	for _, secret := range []string{m.Password, m.TLS.StorePassword} {
		if strings.Contains(log, secret) {
			t.Errorf("cdcd's log carries a password:\n%s", tail(log, 3000))
		}
	}
}

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestDistributedRESTConformance is TestRESTConformance in distributed mode: the same REST calls go to a
// Kafka Connect distributed worker running Debezium and to the follower of two cdcd distributed workers
// (so cdcd's answers to leader-only requests come back through forwarding), each group on its own
// internal topics, and the answers are compared the same way.
//
// Differences beyond those of TestRESTConformance:
//   - POST /connectors/{name}/restart?includeTasks=true on a STOPPED connector: Connect's distributed
//     herder writes RESTARTING to the status topic, and as the connector is stopped nothing replaces it,
//     so a later restart?onlyFailed=true answers RESTARTING; cdcd keeps STOPPED. Compared by code only.
func TestDistributedRESTConformance(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	connectInstall(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE public.items (id int PRIMARY KEY, v text)`); err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("dconf%d", time.Now().UnixNano()%1e9)
	topicsOf := func(side string) clusterTopics {
		return clusterTopics{configs: prefix + side + "-configs", offsets: prefix + side + "-offsets", status: prefix + side + "-status"}
	}

	port := freePort(t)
	refProps := distributedProps(brokers, prefix+"connect", topicsOf("connect"), port)
	refProps["rest.advertised.host.name"], refProps["rest.advertised.port"] = "127.0.0.1", fmt.Sprint(port)
	ref := restClient{t: t, base: startConnectDistributed(t, refProps)}

	// The first worker to join leads the group; requests go to the second.
	startCdcdDistributed(t, distributedProps(brokers, prefix+"cdcd", topicsOf("cdcd"), freePort(t)))
	follower := startCdcdDistributed(t, distributedProps(brokers, prefix+"cdcd", topicsOf("cdcd"), freePort(t)))
	compareREST(t, dsn, prefix, ref, restClient{t: t, base: follower.url}, true)
}

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

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
	execPostgres(t, context.Background(), dsn, `CREATE TABLE public.items (id int PRIMARY KEY, v text)`)
	prefix := fmt.Sprintf("dconf%d", time.Now().UnixNano()%1e9)

	port := freePort(t)
	refProps := distributedProps(brokers, prefix+"connect", clusterTopicsOf(prefix+"connect"), port)
	refProps["rest.advertised.host.name"], refProps["rest.advertised.port"] = "127.0.0.1", fmt.Sprint(port)
	ref := restClient{t: t, base: startConnectDistributed(t, refProps)}

	// The first worker to join leads the group; requests go to the second.
	startCdcdDistributed(t, distributedProps(brokers, prefix+"cdcd", clusterTopicsOf(prefix+"cdcd"), freePort(t)))
	follower := startCdcdDistributed(t, distributedProps(brokers, prefix+"cdcd", clusterTopicsOf(prefix+"cdcd"), freePort(t)))
	compareREST(t, dsn, prefix, ref, restClient{t: t, base: follower.url}, true)
}

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/connect/cluster"
	"github.com/cdcd/cdcd/e2e/testenv"
)

// TestMixedGroupSignsInterWorkerRequests runs a cdcd worker and a Kafka Connect 4.4 worker side by side in
// one group, with exactly-once source support and the inter.worker.* defaults, and two connectors that
// require exactly-once, spread so that each worker runs one connector and one task:
//
//  1. cdcd leads (it joined first and wrote the session key): Connect, following, sends cdcd its task
//     configs and its fencing request, signed with cdcd's key, and cdcd accepts them;
//  2. cdcd stops and starts again, so Connect leads, keeping cdcd's key: cdcd, following, sends Connect its
//     task configs (both connectors' configs are changed, so both owners publish a new generation) and its
//     fencing request, and Connect accepts them.
//
// Each step ends with a change of each table delivered in a committed transaction: a task whose owner's
// request had been refused would not run, and a refused task config would not be stored.
func TestMixedGroupSignsInterWorkerRequests(t *testing.T) {
	java, lib, plugins := connectInstall(t)
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	names := []string{"mixed_a", "mixed_b"}
	execPostgres(t, ctx, dsn, `CREATE TABLE mixed_a (id int PRIMARY KEY); CREATE TABLE mixed_b (id int PRIMARY KEY)`)
	topics := clusterTopicsOf(prefix)
	workerProps := func() map[string]string {
		props := distributedProps(brokers, prefix, topics, freePort(t))
		props["exactly.once.source.support"] = "enabled"
		return props
	}
	configs, _, _ := openClusterStores(t, ctx, brokers, topics)
	deliver := func(id int) {
		t.Helper()
		for _, name := range names {
			execPostgres(t, ctx, dsn, fmt.Sprintf(`INSERT INTO %s VALUES (%d)`, name, id))
			readRecords(t, brokers, prefix+"-"+name+".public."+name, id)
		}
	}

	// 1. cdcd leads; Connect follows.
	cdcd := startCdcdDistributed(t, workerProps())
	key := sessionKey(t, ctx, configs)
	props := workerProps()
	port := strings.TrimPrefix(props["listeners"], "http://127.0.0.1:")
	props["plugin.path"] = plugins
	props["rest.advertised.host.name"], props["rest.advertised.port"] = "127.0.0.1", port
	dir := t.TempDir()
	path := filepath.Join(dir, "connect.properties")
	writeProperties(t, path, props)
	java1 := startConnectMain(t, java, lib, filepath.Join(dir, "connect.log"), dir, "org.apache.kafka.connect.cli.ConnectDistributed", path)
	connectURL, connectID := props["listeners"], "127.0.0.1:"+port
	waitHealthy(t, connectURL, java1.exited)
	for _, name := range names {
		cfg := pgConnector(t, dsn, name, prefix+"-"+name, "public."+name) // a slot and topics of its own
		cfg["exactly.once.support"] = "required"
		createConnector(t, cdcd.url, cfg)
	}
	spread := waitSpread(t, cdcd.url, "", "", names)
	t.Logf("cdcd (%s) leads, Connect (%s) follows: %v", cdcd.id, connectID, spread)
	deliver(1)

	// 2. Connect leads; cdcd follows.
	cdcd.stop()
	gone := cdcd.id
	waitSpread(t, connectURL, "", "", names[:1], gone) // Connect took the work over
	cdcd = startCdcdDistributed(t, workerProps())
	spread = waitSpread(t, connectURL, "", "", names, gone)
	t.Logf("Connect (%s) leads, cdcd (%s) follows: %v", connectID, cdcd.id, spread)
	for _, name := range names {
		cfg := pgConnector(t, dsn, name, prefix+"-"+name, "public."+name)
		cfg["exactly.once.support"] = "required"
		cfg["tombstones.on.delete"] = "true" // the same behaviour, a new task generation
		if code, body := restCall(t, "PUT", connectURL+"/connectors/"+name+"/config", cfg); code != 200 {
			t.Fatalf("PUT %s config: %d %s", name, code, body)
		}
	}
	waitTaskConfig(t, ctx, configs, names, "tombstones.on.delete", "true")
	spread = waitSpread(t, connectURL, "", "", names, gone)
	t.Logf("after the config change: %v", spread)
	deliver(2)

	// One key served both leaders: Connect read cdcd's record, kept it, and verified with it.
	if now := sessionKey(t, ctx, configs); !bytes.Equal(now.Key, key.Key) || !now.Created.Equal(key.Created) {
		t.Errorf("the session key changed (%s created %v → %s created %v); Connect should have kept cdcd's", key.Algorithm, key.Created, now.Algorithm, now.Created)
	}
	if code, _ := restCall(t, "GET", connectURL+"/connectors", nil); code != http.StatusOK {
		t.Errorf("Connect stopped answering: %d", code)
	}
}

// waitTaskConfig waits until the committed task config of each connector sets key to value.
func waitTaskConfig(t *testing.T, ctx context.Context, configs *cluster.ConfigStore, names []string, key, value string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if err := configs.ReadToEnd(ctx); err != nil {
			t.Fatal(err)
		}
		snap := configs.Snapshot()
		done := true
		for _, name := range names {
			if tasks := snap.Tasks[name]; len(tasks) != 1 || tasks[0][key] != value {
				done = false
			}
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task configs of %v do not set %s=%s: %v", names, key, value, snap.Tasks)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

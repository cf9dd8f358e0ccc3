package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/testenv"
)

// guardianSlot is one slot of GET /slots, as far as these tests read it.
type guardianSlot struct {
	SlotName      string `json:"slot_name"`
	Status        string `json:"status"`
	Connector     string `json:"connector"`
	CreatedByCDCD bool   `json:"created_by_cdcd"`
}

// clusterSlots is GET /slots on base, by slot name; ok is false while base cannot answer (no leader).
func clusterSlots(t *testing.T, base string) (slots map[string]guardianSlot, ok bool) {
	t.Helper()
	code, body, err := httpGet(base + "/slots")
	if err != nil || code != http.StatusOK {
		return nil, false
	}
	var report struct {
		Slots []guardianSlot `json:"slots"`
	}
	if err := json.Unmarshal(body, &report); err != nil {
		t.Fatalf("GET %s/slots: %v: %s", base, err, body)
	}
	slots = map[string]guardianSlot{}
	for _, s := range report.Slots {
		slots[s.SlotName] = s
	}
	return slots, true
}

// waitClusterSlots waits until GET /slots on every worker of ws says what want says of each slot named
// there (want's Status and CreatedByCDCD; a zero guardianSlot means the slot is not listed).
func waitClusterSlots(t *testing.T, ws []*cdcdWorker, want map[string]guardianSlot) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for _, w := range ws {
		var last map[string]guardianSlot
		for {
			got, ok := clusterSlots(t, w.url)
			matches := ok
			for name, s := range want {
				g, listed := got[name]
				if s == (guardianSlot{}) {
					matches = matches && !listed
				} else {
					matches = matches && listed && g.Status == s.Status && g.CreatedByCDCD == s.CreatedByCDCD && g.Connector == s.Connector
				}
			}
			if matches {
				break
			}
			if ok {
				last = got
			}
			if time.Now().After(deadline) {
				t.Fatalf("GET %s/slots never showed %+v; last: %+v", w.url, want, last)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// leaderOf is the worker of ws whose guardian leads, by its log's last word on it.
func leaderOf(t *testing.T, ws []*cdcdWorker) *cdcdWorker {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		var leaders []*cdcdWorker
		for _, w := range ws {
			log := w.log.String()
			if lead := strings.LastIndex(log, "this worker leads the cluster"); lead >= 0 && lead > strings.LastIndex(log, "another worker leads the cluster") {
				leaders = append(leaders, w)
			}
		}
		if len(leaders) == 1 {
			return leaders[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d workers say their guardian leads", len(leaders))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestDistributedSlotGuardian runs the slot guardian in a three-worker cluster: the record of the slots cdcd
// created lives in the cluster's ledger topic, so a slot a task created on any worker is created_by_cdcd on
// the leader; GET /slots answers the same on every worker (the followers forward it); only the leader
// exports slot metrics; DELETE ?dropSlot=true through a follower drops a slot whose task ran elsewhere once
// the task released it; and after the leader is killed with SIGKILL, a connector deleted on a survivor has
// its slot reported orphaned by the new leader, which drops it after the grace period, while the slot of a
// connector that still exists is kept throughout.
func TestDistributedSlotGuardian(t *testing.T) {
	dsn := testenv.NewPostgresDB(t)
	brokers := testenv.Kafka(t)
	prefix := testenv.NewTopicPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	db := connectPostgres(t, ctx, dsn, "CREATE TABLE guarded (id int PRIMARY KEY)")

	topics := clusterTopicsOf(prefix)
	var workers []*cdcdWorker
	for range 3 {
		props := distributedProps(brokers, prefix, topics, freePort(t))
		props["cdcd.slots.refresh.interval.ms"] = "200"
		props["cdcd.slots.orphan.policy"] = "drop"
		props["cdcd.slots.orphan.grace.ms"] = "3000"
		workers = append(workers, startCdcdDistributed(t, props))
	}
	cfgs := map[string]map[string]string{}
	for i, name := range []string{"keep", "orphan", "dropme"} {
		cfg := pgConnector(t, dsn, name, fmt.Sprintf("%s-%s", prefix, name), "public.guarded")
		createConnector(t, workers[i].url, cfg)
		cfgs[name] = cfg
	}
	owners := map[string]string{}
	for name, cfg := range cfgs {
		owners[name] = taskOwner(t, workers[0].url, name)
		waitSlotActive(t, ctx, db, cfg["slot.name"], nil)
	}
	slot := func(name string) string { return cfgs[name]["slot.name"] }
	owned := func(name string) guardianSlot {
		return guardianSlot{SlotName: slot(name), Status: "owned", Connector: name, CreatedByCDCD: true}
	}
	waitClusterSlots(t, workers, map[string]guardianSlot{slot("keep"): owned("keep"), slot("orphan"): owned("orphan"), slot("dropme"): owned("dropme")})

	leader := leaderOf(t, workers)
	var followers []*cdcdWorker
	for _, w := range workers {
		if w != leader {
			followers = append(followers, w)
		}
	}
	// created_by_cdcd on the leader for a slot created elsewhere can only come from the ledger topic.
	if !slices.ContainsFunc([]string{"keep", "orphan", "dropme"}, func(name string) bool { return owners[name] != leader.id }) {
		t.Logf("every task ran on the leader %s: the ledger topic carried no slot between workers", leader.id)
	}
	for _, w := range workers {
		body := scrape(t, w.url)
		exports := strings.Contains(body, `cdcd_slot_active{server=`) && strings.Contains(body, slot("keep"))
		if exports != (w == leader) {
			t.Errorf("worker %s (leader %v) exports slot metrics: %v", w.id, w == leader, exports)
		}
	}

	// A follower forwards the delete to the leader, which waits until the task, wherever it ran, released
	// the slot, and drops it.
	dropVia := followers[0]
	if owners["dropme"] == dropVia.id {
		dropVia = followers[1]
	}
	if code, body := restCall(t, http.MethodDelete, dropVia.url+"/connectors/dropme?dropSlot=true", nil); code != http.StatusNoContent {
		t.Fatalf("DELETE ?dropSlot=true through %s: %d %s", dropVia.id, code, body)
	}
	if slotExists(t, ctx, db, slot("dropme")) {
		t.Fatal("DELETE ?dropSlot=true answered 204 and left the slot")
	}
	if !strings.Contains(leader.log.String(), "AUDIT dropped replication slot") {
		t.Error("the leader did not audit the drop")
	}

	leader.kill()
	survivors := followers
	// Until the group notices the death (session.timeout.ms), the survivors forward to the dead leader and
	// answer 500, as Connect's workers do.
	deleteDeadline := time.Now().Add(90 * time.Second)
	for {
		code, body := restCall(t, http.MethodDelete, survivors[0].url+"/connectors/orphan", nil)
		if code == http.StatusNoContent {
			break
		}
		if code != http.StatusInternalServerError || !strings.Contains(string(body), "IO Error trying to forward") || time.Now().After(deleteDeadline) {
			t.Fatalf("DELETE through %s: %d %s", survivors[0].id, code, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The new leader, which never saw the slot created, knows it from the ledger topic: orphaned, not foreign.
	orphaned := owned("orphan")
	orphaned.Status = "orphaned"
	waitClusterSlots(t, survivors, map[string]guardianSlot{slot("keep"): owned("keep"), slot("orphan"): orphaned})
	newLeader := leaderOf(t, survivors)
	deadline := time.Now().Add(90 * time.Second)
	for slotExists(t, ctx, db, slot("orphan")) {
		if time.Now().After(deadline) {
			t.Fatalf("the new leader never dropped the orphaned slot; its log:\n%s", tail(newLeader.log.String(), 4000))
		}
		time.Sleep(200 * time.Millisecond)
	}
	waitClusterSlots(t, survivors, map[string]guardianSlot{slot("keep"): owned("keep"), slot("orphan"): {}})
	if !slotExists(t, ctx, db, slot("keep")) {
		t.Error("the slot of a connector that exists was dropped")
	}
	for _, w := range survivors {
		for _, line := range strings.Split(w.log.String(), "\n") {
			if strings.Contains(line, "audit=slot_dropped") && strings.Contains(line, "slot="+slot("keep")+" ") {
				t.Errorf("worker %s dropped the kept slot: %s", w.id, line)
			}
		}
		w.stop()
	}
}

package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/testenv"
	kafkago "github.com/segmentio/kafka-go"
)

// cuttable is a transport that can lose its way to Kafka for good, as a worker whose network fails:
// once cut, every request fails at once.
type cuttable struct {
	kafkago.RoundTripper
	cut atomic.Bool
}

var errCut = errors.New("test: cut off from Kafka")

func (c *cuttable) RoundTrip(ctx context.Context, addr net.Addr, req kafkago.Request) (kafkago.Response, error) {
	if c.cut.Load() {
		return nil, errCut
	}
	return c.RoundTripper.RoundTrip(ctx, addr, req)
}

// ownership records who holds each item, as members report it through OnAssignment, and every
// moment an item was given to a member while another still held it.
type ownership struct {
	mu         sync.Mutex
	owner      map[Item]string
	gens       map[string][]int32 // generations each member was told about, in order
	gotAt      map[Item]int32     // generation in which each item was last handed out
	violations []string
}

func newOwnership() *ownership {
	return &ownership{owner: map[Item]string{}, gens: map[string][]int32{}, gotAt: map[Item]int32{}}
}

func (o *ownership) callback(worker string) func(Assignment) {
	return func(a Assignment) {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.gens[worker] = append(o.gens[worker], a.Generation)
		for _, it := range a.Revoked {
			if o.owner[it] == worker {
				delete(o.owner, it)
			}
		}
		for _, it := range a.Assigned {
			if prev, ok := o.owner[it]; ok && prev != worker {
				o.violations = append(o.violations, fmt.Sprintf("%s given to %s while %s holds it", it, worker, prev))
			}
			o.owner[it] = worker
			o.gotAt[it] = a.Generation
		}
	}
}

// byWorker returns each worker's items.
func (o *ownership) byWorker() map[string][]Item {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string][]Item{}
	for it, w := range o.owner {
		out[w] = append(out[w], it)
	}
	return out
}

func (o *ownership) check(t *testing.T) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, v := range o.violations {
		t.Error(v)
	}
}

func waitUntil(t *testing.T, what string, o *ownership, cond func(map[string][]Item) bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		if cond(o.byWorker()) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out waiting until %s; holdings: %v", what, o.byWorker())
}

// groupFixture is a config topic with connectors and one member per worker name.
type groupFixture struct {
	brokers []string
	group   string
	configs *ConfigStore
	own     *ownership
	members map[string]*Member
	links   map[string]*cuttable // each member's transport
	stops   map[string]context.CancelFunc
	done    sync.WaitGroup
}

func newGroupFixture(t *testing.T, connectors, tasksEach int) *groupFixture {
	brokers := testBrokers(t)
	prefix := testenv.NewTopicPrefix(t)
	ctx := testContext(t)
	f := &groupFixture{brokers: brokers, group: prefix + "-group", own: newOwnership(), members: map[string]*Member{}, links: map[string]*cuttable{}, stops: map[string]context.CancelFunc{}}
	var err error
	f.configs, err = OpenConfigStore(ctx, ConfigStoreConfig{
		Log: logConfig(brokers, ConfigTopic(prefix+"-configs", 1)),
		OnChange: func(string) {
			for _, m := range f.memberList() {
				m.RequestRejoin()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, stop := range f.stops {
			stop()
		}
		f.done.Wait()
		for _, link := range f.links {
			link.RoundTripper.(*kafkago.Transport).CloseIdleConnections()
		}
		f.configs.Close()
		f.own.check(t)
	})
	for c := range connectors {
		f.addConnector(t, fmt.Sprintf("conn-%d", c), tasksEach)
	}
	return f
}

func (f *groupFixture) memberList() []*Member {
	var out []*Member
	for _, m := range f.members {
		out = append(out, m)
	}
	return out
}

func (f *groupFixture) addConnector(t *testing.T, name string, tasks int) {
	t.Helper()
	ctx := testContext(t)
	if err := f.configs.PutConnectorConfig(ctx, name, map[string]string{"connector.class": "X"}, nil); err != nil {
		t.Fatal(err)
	}
	cfgs := make([]map[string]string, tasks)
	for i := range cfgs {
		cfgs[i] = map[string]string{"task.class": "T"}
	}
	if err := f.configs.PutTaskConfigs(ctx, name, cfgs); err != nil {
		t.Fatal(err)
	}
}

func (f *groupFixture) start(t *testing.T, worker string, maxDelay time.Duration) {
	t.Helper()
	link := &cuttable{RoundTripper: &kafkago.Transport{ClientID: worker}}
	m, err := NewMember(MemberConfig{
		Brokers: f.brokers, Transport: link, GroupID: f.group, URL: "http://" + worker + ":8083/",
		SessionTimeout: 6 * time.Second, HeartbeatInterval: time.Second, RebalanceTimeout: 20 * time.Second,
		ScheduledRebalanceMaxDelay: maxDelay,
		Configs:                    f.configs, OnAssignment: f.own.callback(worker),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	f.members[worker], f.links[worker], f.stops[worker] = m, link, stop
	f.done.Add(1)
	go func() {
		defer f.done.Done()
		_ = m.Run(ctx)
	}()
}

// balanced says whether the workers hold total items between them, none more than one above another.
// The assignor balances connectors and tasks separately, so choose counts where that balances totals.
func balanced(workers []string, total int) func(map[string][]Item) bool {
	return func(h map[string][]Item) bool {
		n := 0
		for _, w := range workers {
			if len(h[w]) < total/len(workers) || len(h[w]) > (total+len(workers)-1)/len(workers) {
				return false
			}
			n += len(h[w])
		}
		return n == total
	}
}

func TestMembersShareWorkAndACrashedMembersWorkMovesAfterTheDelay(t *testing.T) {
	f := newGroupFixture(t, 3, 2) // 3 connectors + 6 tasks
	for _, w := range []string{"w1", "w2", "w3"} {
		f.start(t, w, 4*time.Second)
	}
	waitUntil(t, "9 items are spread over 3 workers", f.own, balanced([]string{"w1", "w2", "w3"}, 9))

	// The leader knows its own URL and every member agrees on it.
	leaders := 0
	for _, m := range f.members {
		if m.IsLeader() {
			leaders++
		}
		if u := m.LeaderURL(); u == "" {
			t.Errorf("a member does not know the leader's URL")
		}
	}
	if leaders != 1 {
		t.Fatalf("%d members think they lead", leaders)
	}

	// w3 loses its connection to Kafka: it must stop its work by itself (fencing) before the others
	// take it, and the others take it only in a rebalance after the first one without w3.
	victim := "w3"
	if f.members[victim].IsLeader() {
		victim = "w2"
	}
	lostItems := f.own.byWorker()[victim]
	f.own.mu.Lock()
	seenBefore := len(f.own.gens["w1"])
	f.own.mu.Unlock()
	f.links[victim].cut.Store(true)
	var survivors []string
	for _, w := range []string{"w1", "w2", "w3"} {
		if w != victim {
			survivors = append(survivors, w)
		}
	}
	waitUntil(t, "the survivors hold all 9 items", f.own, balanced(survivors, 9))

	f.own.mu.Lock()
	defer f.own.mu.Unlock()
	firstAfterCrash := f.own.gens["w1"][seenBefore]
	for _, it := range lostItems {
		if got := f.own.gotAt[it]; got <= firstAfterCrash {
			t.Errorf("%s moved in generation %d, the first after the crash: it should have been held back", it, got)
		}
	}
	t.Logf("%s's items %v moved in generation %d; w1 saw generations %v", victim, lostItems, f.own.gotAt[lostItems[0]], f.own.gens["w1"])
}

func TestNewConnectorIsAssignedAfterItsCommit(t *testing.T) {
	f := newGroupFixture(t, 2, 1)
	f.start(t, "w1", time.Minute)
	f.start(t, "w2", time.Minute)
	waitUntil(t, "4 items spread over 2 workers", f.own, balanced([]string{"w1", "w2"}, 4))
	f.addConnector(t, "late", 2)
	waitUntil(t, "7 items spread over 2 workers", f.own, balanced([]string{"w1", "w2"}, 7))
}

func TestACutOffMemberStopsItsWorkBeforeItsSessionExpires(t *testing.T) {
	// No delay: the survivor is given the work in the first rebalance after the broker expires the
	// cut-off member's session, so only fencing within session.timeout.ms keeps one owner per item.
	f := newGroupFixture(t, 2, 1)
	f.start(t, "w1", 0)
	f.start(t, "w2", 0)
	waitUntil(t, "4 items spread over 2 workers", f.own, balanced([]string{"w1", "w2"}, 4))
	victim, survivor := "w2", "w1"
	if f.members[victim].IsLeader() {
		victim, survivor = survivor, victim
	}
	f.links[victim].cut.Store(true)
	waitUntil(t, "the survivor holds all 4 items", f.own, balanced([]string{survivor}, 4))
}

package kafka

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestParseTopicCreation(t *testing.T) {
	connector := map[string]string{
		"topic.creation.default.replication.factor": "-1",
		"topic.creation.default.partitions":         "3",
		"topic.creation.default.cleanup.policy":     "compact",
		"topic.creation.default.include":            "ignored",
		"topic.creation.groups":                     "history, default, big",
		"topic.creation.history.include":            `dbserver1\.history.*`,
		"topic.creation.history.partitions":         "1",
		"topic.creation.history.retention.ms":       "-1",
		"topic.creation.big.include":                `dbserver1\.inventory\..*, other`,
		"topic.creation.big.exclude":                `.*\.small`,
		"topic.creation.big.replication.factor":     "1",
	}
	tc, err := ParseTopicCreation(map[string]string{}, connector)
	if err != nil {
		t.Fatal(err)
	}
	for topic, want := range map[string]string{
		"dbserver1.history":           "history 1 -1 map[retention.ms:-1]",
		"dbserver1.inventory.orders":  "big 3 1 map[]",
		"other":                       "big 3 1 map[]",
		"dbserver1.inventory.small":   "default 3 -1 map[cleanup.policy:compact]",
		"xother":                      "default 3 -1 map[cleanup.policy:compact]",
		"dbserver1.historyx.sub":      "history 1 -1 map[retention.ms:-1]",
		"prefix.dbserver1.history.db": "default 3 -1 map[cleanup.policy:compact]",
	} {
		g := tc.groupFor(topic)
		if got := strings.Join([]string{g.Name, itoa(g.Partitions), itoa(g.ReplicationFactor), fmtMap(g.Configs)}, " "); got != want {
			t.Errorf("%s: got %q, want %q", topic, got, want)
		}
	}

	for name, c := range map[string]struct{ worker, connector map[string]string }{
		"disabled by the worker": {map[string]string{"topic.creation.enable": "false"}, connector},
		"no topic.creation keys": {nil, map[string]string{"name": "x"}},
	} {
		if tc, err := ParseTopicCreation(c.worker, c.connector); err != nil || tc.Enabled() {
			t.Errorf("%s: enabled = %v, err = %v", name, tc.Enabled(), err)
		}
	}
	for name, c := range map[string]map[string]string{
		"default partitions missing": {"topic.creation.default.replication.factor": "1"},
		"zero partitions":            {"topic.creation.default.replication.factor": "1", "topic.creation.default.partitions": "0"},
		"bad regex": {"topic.creation.default.replication.factor": "1", "topic.creation.default.partitions": "1",
			"topic.creation.groups": "g", "topic.creation.g.include": "(?=x)"},
	} {
		if _, err := ParseTopicCreation(nil, c); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestTopicCreationCreatesMissingTopicsBeforeTheirFirstRecord runs against a broker without
// auto-creation, so a record can only land if the writer created its topic.
func TestTopicCreationCreatesMissingTopicsBeforeTheirFirstRecord(t *testing.T) {
	c := newFakeCluster(t) // no AllowAutoTopicCreation
	tc, err := ParseTopicCreation(nil, map[string]string{
		"topic.creation.default.replication.factor": "1",
		"topic.creation.default.partitions":         "2",
		"topic.creation.groups":                     "compacted",
		"topic.creation.compacted.include":          "state.*",
		"topic.creation.compacted.partitions":       "5",
		"topic.creation.compacted.cleanup.policy":   "compact",
	})
	if err != nil {
		t.Fatal(err)
	}
	w := newTestWriter(t, Config{Brokers: c.ListenAddrs(), TopicCreation: tc})
	res := newResult()
	send(t, w, append(keyedRecords("events", "k", "e", 3), keyedRecords("state.a", "k", "s", 3)...), res.done(t, 0))
	send(t, w, keyedRecords("events", "k", "f", 1), res.done(t, 1)) // a known topic: no second creation
	for i, err := range res.wait(t) {
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	if n := len(w.topics.known); n != 2 {
		t.Fatalf("known topics = %d, want 2", n)
	}
	assertTopic(t, c.ListenAddrs(), "events", 2, "delete")
	assertTopic(t, c.ListenAddrs(), "state.a", 5, "compact")
}

// assertTopic checks a topic's partition count and cleanup.policy through an independent client.
func assertTopic(t *testing.T, brokers []string, topic string, partitions int, cleanupPolicy string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()

	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	meta.Topics = append(meta.Topics, mt)
	mresp, err := meta.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(mresp.Topics[0].Partitions); mresp.Topics[0].ErrorCode != 0 || got != partitions {
		t.Errorf("topic %s: %d partitions (error code %d), want %d", topic, got, mresp.Topics[0].ErrorCode, partitions)
	}

	describe := kmsg.NewPtrDescribeConfigsRequest()
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, topic
	res.ConfigNames = []string{"cleanup.policy"}
	describe.Resources = append(describe.Resources, res)
	dresp, err := describe.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	got := "<none>"
	for _, r := range dresp.Resources {
		for _, cfg := range r.Configs {
			if cfg.Name == "cleanup.policy" && cfg.Value != nil {
				got = *cfg.Value
			}
		}
	}
	if got != cleanupPolicy {
		t.Errorf("topic %s: cleanup.policy = %s, want %s", topic, got, cleanupPolicy)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func fmtMap(m map[string]string) string { return fmt.Sprint(m) }

package capture

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// newCluster starts an in-process Kafka with pg1.a (2 partitions), pg1.b, pg10.c and other topics.
func newCluster(t *testing.T) (*kfake.Cluster, *kgo.Client) {
	t.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "pg1.a"), kfake.SeedTopics(1, "pg1.b", "pg10.c", "other"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	producer, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(producer.Close)
	return cluster, producer
}

func produce(t *testing.T, producer *kgo.Client, records ...*kgo.Record) {
	t.Helper()
	if err := producer.ProduceSync(context.Background(), records...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func TestBrokerReadSelectsAndOrders(t *testing.T) {
	cluster, producer := newCluster(t)
	produce(t, producer,
		&kgo.Record{Topic: "pg1.a", Partition: 1, Key: []byte("k2"), Value: []byte("v2")},
		&kgo.Record{Topic: "pg1.a", Partition: 0, Key: nil, Value: []byte("v0"), Headers: []kgo.RecordHeader{{Key: "h", Value: []byte{0xff}}}},
		&kgo.Record{Topic: "pg1.a", Partition: 0, Key: []byte("k1"), Value: nil},
		&kgo.Record{Topic: "pg1.b", Value: []byte("b")},
		&kgo.Record{Topic: "pg10.c", Value: []byte("not selected: another prefix")},
		&kgo.Record{Topic: "other", Value: []byte("selected by name")},
	)
	broker, err := NewBroker(cluster.ListenAddrs())
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	records, err := broker.Read(context.Background(), Selection{Prefix: "pg1", Topics: []string{"other"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range records {
		got = append(got, r.Topic+"/"+string(rune('0'+r.Partition))+" "+string(r.Key)+"="+string(r.Value))
	}
	want := []string{"other/0 =selected by name", "pg1.a/0 =v0", "pg1.a/0 k1=", "pg1.a/1 k2=v2", "pg1.b/0 =b"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("record %d: got %q, want %q", i, got[i], want[i])
		}
	}
	if records[1].Key != nil || records[2].Value != nil {
		t.Error("null key/value must stay nil")
	}
	if len(records[1].Headers) != 1 || string(records[1].Headers[0].Value) != "\xff" {
		t.Errorf("headers lost: %+v", records[1].Headers)
	}
}

func TestBrokerReadMissingTopic(t *testing.T) {
	cluster, _ := newCluster(t)
	broker, err := NewBroker(cluster.ListenAddrs())
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	if _, err := broker.Read(context.Background(), Selection{Topics: []string{"absent"}}); err == nil {
		t.Error("reading a topic that does not exist must fail")
	}
}

func TestBrokerWaitQuietAndDelete(t *testing.T) {
	cluster, producer := newCluster(t)
	produce(t, producer, &kgo.Record{Topic: "pg1.b", Value: []byte("x")})
	broker, err := NewBroker(cluster.ListenAddrs())
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := broker.WaitQuiet(ctx, Selection{Prefix: "pg1"}, 50*time.Millisecond, 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	deleted, err := broker.DeleteTopics(ctx, Selection{Prefix: "pg1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(deleted) != 2 || deleted[0] != "pg1.a" || deleted[1] != "pg1.b" {
		t.Errorf("deleted %v, want [pg1.a pg1.b]", deleted)
	}
	left, err := broker.Topics(ctx, Selection{Prefix: "pg1", Topics: []string{"pg10.c"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0] != "pg10.c" {
		t.Errorf("topics left %v, want [pg10.c]", left)
	}
}

package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cdcd/cdcd/sink"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestSendKeepsOrderPerKeyAndJavaPlacement sends interleaved keys over many calls and checks
// each key's records arrive in order, in the partition franz-go's independent Java-compatible
// hasher picks, with headers and tombstones intact.
func TestSendKeepsOrderPerKeyAndJavaPlacement(t *testing.T) {
	const topic, partitions, keys, calls, perCall = "orders", 6, 13, 40, 25
	c := newFakeCluster(t, kfake.SeedTopics(partitions, topic))
	w := newTestWriter(t, Config{Brokers: c.ListenAddrs()})

	res := newResult()
	seq := 0
	for call := range calls {
		recs := make([]sink.Record, perCall)
		for i := range recs {
			key := fmt.Sprintf("key-%d", seq%keys)
			recs[i] = sink.Record{Topic: topic, Key: []byte(key), Value: []byte(strconv.Itoa(seq)),
				Headers: []sink.Header{{Key: "seq", Value: []byte(strconv.Itoa(seq))}}}
			if seq%17 == 0 {
				recs[i].Value = nil // tombstone
			}
			seq++
		}
		send(t, w, recs, res.done(t, call))
	}
	for call, err := range res.wait(t) {
		if err != nil {
			t.Fatalf("send %d: %v", call, err)
		}
	}

	javaPartitioner := kgo.StickyKeyPartitioner(nil).ForTopic(topic)
	last := map[string]int{}
	for _, r := range readTopic(t, c.ListenAddrs(), topic, seq) {
		n, _ := strconv.Atoi(string(r.Headers[0].Value))
		if (n%17 == 0) != (r.Value == nil) {
			t.Fatalf("record %d: tombstone = %v", n, r.Value == nil)
		}
		if prev, ok := last[string(r.Key)]; ok && n <= prev {
			t.Fatalf("key %s: record %d after %d", r.Key, n, prev)
		}
		last[string(r.Key)] = n
		if want := javaPartitioner.Partition(r, partitions); int(r.Partition) != want {
			t.Fatalf("key %s in partition %d, Java places it in %d", r.Key, r.Partition, want)
		}
	}
	if len(last) != keys {
		t.Fatalf("got %d keys, want %d", len(last), keys)
	}
}

func TestSendWithNoRecordsCallsDone(t *testing.T) {
	c := newFakeCluster(t)
	w := newTestWriter(t, Config{Brokers: c.ListenAddrs()})
	res := newResult()
	send(t, w, nil, res.done(t, 0))
	if err := res.wait(t)[0]; err != nil {
		t.Fatal(err)
	}
}

func TestSendRejectsRecordLargerThanMaxRequestSize(t *testing.T) {
	c := newFakeCluster(t, kfake.SeedTopics(1, "t"))
	w := newTestWriter(t, Config{Brokers: c.ListenAddrs(), Producer: map[string]string{"max.request.size": "1000"}})
	err := w.Send(t.Context(), []sink.Record{{Topic: "t", Value: make([]byte, 2000)}}, func(error) { t.Error("done called") })
	if !errors.Is(err, kafkago.MessageSizeTooLarge) {
		t.Fatalf("err = %v, want a message-too-large error", err)
	}
	if got := w.InFlightBytes(); got != 0 {
		t.Fatalf("in-flight bytes = %d after a rejected send", got)
	}
}

func TestUnreachableBrokerIsReportedWithTheBrokerList(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens here now

	w := newTestWriter(t, Config{Brokers: []string{addr}})
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	for name, err := range map[string]error{
		"ping": w.Ping(ctx),
		"send": w.Send(ctx, keyedRecords("t", "k", "v", 1), func(error) { t.Error("done called") }),
	} {
		if err == nil || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "advertised.listeners") {
			t.Errorf("%s: err = %v, want the broker list and what to check", name, err)
		}
	}
	if got := w.InFlightBytes(); got != 0 {
		t.Fatalf("in-flight bytes = %d after failed sends", got)
	}
}

// TestProduceRequestsCarryTheConfiguredAcks looks at the requests themselves: Kafka 4.4 accepts
// acks=all even when min.insync.replicas exceeds a topic's replication factor, so the real broker
// cannot tell acks=all from acks=1 for us.
func TestProduceRequestsCarryTheConfiguredAcks(t *testing.T) {
	for setting, want := range map[string]int16{"": -1, "all": -1, "-1": -1, "1": 1} {
		c := newFakeCluster(t, kfake.SeedTopics(1, "acks"))
		seen := make(chan int16, 1)
		c.ControlKey(kmsg.Produce.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
			c.DropControl()
			seen <- req.(*kmsg.ProduceRequest).Acks
			return nil, nil, false
		})
		producer := map[string]string{}
		if setting != "" {
			producer["acks"] = setting
		}
		w := newTestWriter(t, Config{Brokers: c.ListenAddrs(), Producer: producer})
		res := newResult()
		send(t, w, keyedRecords("acks", "k", "v", 1), res.done(t, 0))
		if err := res.wait(t)[0]; err != nil {
			t.Fatal(err)
		}
		if got := <-seen; got != want {
			t.Errorf("acks setting %q: request acks = %d, want %d", setting, got, want)
		}
	}
}

// A record's Time is its Kafka timestamp (the outbox EventRouter sets it); without one the producer
// stamps it.
func TestSendCarriesRecordTime(t *testing.T) {
	const topic = "stamped"
	c := newFakeCluster(t, kfake.SeedTopics(1, topic))
	w := newTestWriter(t, Config{Brokers: c.ListenAddrs()})
	at := time.UnixMilli(1600000000001)
	res := newResult()
	send(t, w, []sink.Record{{Topic: topic, Value: []byte("a"), Time: at}, {Topic: topic, Value: []byte("b")}}, res.done(t, 0))
	if err := res.wait(t)[0]; err != nil {
		t.Fatal(err)
	}
	got := readTopic(t, c.ListenAddrs(), topic, 2)
	if !got[0].Timestamp.Equal(at) {
		t.Errorf("timestamp %v, want %v", got[0].Timestamp, at)
	}
	if got[1].Timestamp.Equal(at) || got[1].Timestamp.IsZero() {
		t.Errorf("timestamp %v of an unstamped record, want the producer's", got[1].Timestamp)
	}
}

// SourceIdle sends what waits for linger.ms at once when linger.ms is the default; set by the user, the
// wait is honoured as Java's.
func TestSourceIdleSendsWhatLingers(t *testing.T) {
	c := newFakeCluster(t, kfake.SeedTopics(1, "t"))
	for _, set := range []bool{false, true} {
		t.Run(fmt.Sprintf("linger.ms set=%v", set), func(t *testing.T) {
			w := newTestWriter(t, Config{Brokers: c.ListenAddrs()})
			// An hour's linger: only SourceIdle can send the record before the test's timeout.
			w.producer.settings.linger, w.producer.settings.lingerSet = time.Hour, set
			res := newResult()
			send(t, w, []sink.Record{{Topic: "t", Key: []byte("k"), Value: []byte("v")}}, res.done(t, 0))
			w.SourceIdle()
			if set {
				w.producer.mu.Lock()
				ps := w.producer.parts[topicPartition{"t", 0}]
				lingering := ps != nil && ps.open != nil
				w.producer.mu.Unlock()
				if !lingering {
					t.Fatal("the record was sent before the linger.ms the user set")
				}
				return
			}
			if err := res.wait(t)[0]; err != nil {
				t.Fatal(err)
			}
		})
	}
}

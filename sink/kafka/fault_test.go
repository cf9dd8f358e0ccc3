package kafka

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// holdNextProduce makes the broker hold the next Produce request until release is closed, then
// answer it with errCode, or process it normally if errCode is 0. held is closed once the request
// is being held, i.e. once the producer has sent the batch.
func holdNextProduce(c *kfake.Cluster, errCode int16, release <-chan struct{}) (held <-chan struct{}) {
	heldCh := make(chan struct{})
	c.ControlKey(kmsg.Produce.Int16(), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.DropControl() // one request only, whether handled or not
		close(heldCh)
		c.SleepControl(func() { <-release })
		if errCode == 0 {
			return nil, nil, false
		}
		req := kreq.(*kmsg.ProduceRequest)
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewProduceResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, errCode
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	return heldCh
}

// TestAHeldBatchKeepsItsPlace holds one batch at the broker while later Sends go out behind it
// (pipelined on the same connection), then lets it succeed late, fail once with a retriable error, or
// fail for good. The later batches must land after it (or after the gap it leaves, under the next
// epoch), never before, and never twice.
func TestAHeldBatchKeepsItsPlace(t *testing.T) {
	for _, tc := range []struct {
		name      string
		errCode   int16
		wantSends []string // the Sends whose records the partition must hold, in this order
		wantErr   bool     // whether send "b" fails
	}{
		{"slow batch", 0, []string{"a", "b", "c", "d"}, false},
		{"retried batch", kerr.NotLeaderForPartition.Code, []string{"a", "b", "c", "d"}, false},
		{"failed batch", kerr.InvalidRecord.Code, []string{"a", "c", "d"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const topic = "faults"
			c := newFakeCluster(t, kfake.SeedTopics(1, topic))
			// Fast retries; the retry must still wait for nothing but the backoff.
			w := newTestWriter(t, Config{Brokers: c.ListenAddrs(), Producer: map[string]string{"retry.backoff.ms": "1"}})

			first := newResult()
			send(t, w, keyedRecords(topic, "k", "a", 5), first.done(t, 0))
			if err := first.wait(t)[0]; err != nil {
				t.Fatal(err)
			}

			release := make(chan struct{})
			held := holdNextProduce(c, tc.errCode, release)
			res := newResult()
			send(t, w, keyedRecords(topic, "k", "b", 5), res.done(t, 1))
			<-held
			send(t, w, keyedRecords(topic, "k", "c", 5), res.done(t, 2))
			send(t, w, keyedRecords(topic, "k", "d", 5), res.done(t, 3))
			close(release)
			errs := res.wait(t)

			var derr *DeliveryError
			switch {
			case !tc.wantErr && errs[1] != nil:
				t.Fatalf("send b: %v", errs[1])
			case tc.wantErr && !errors.As(errs[1], &derr):
				t.Fatalf("send b: err = %v, want a DeliveryError", errs[1])
			case tc.wantErr && (derr.Topic != topic || derr.Partition != 0 || !errors.Is(derr, kafkago.InvalidRecord)):
				t.Fatalf("send b: err = %#v, want topic %s partition 0 and the broker's error", derr, topic)
			}
			for _, i := range []int{2, 3} {
				if errs[i] != nil {
					t.Fatalf("send %d: %v", i, errs[i])
				}
			}

			var want []string
			for _, s := range tc.wantSends {
				for i := range 5 {
					want = append(want, fmt.Sprintf("%s-%d", s, i))
				}
			}
			var got []string
			for _, r := range readTopic(t, c.ListenAddrs(), topic, len(want)) {
				got = append(got, string(r.Value))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("partition holds\n%v\nwant\n%v", got, want)
			}

			err := w.Send(t.Context(), keyedRecords(topic, "k", "e", 1), func(error) {})
			if tc.wantErr != errors.Is(err, ErrWriterFailed) {
				t.Fatalf("send after the batches: err = %v, want ErrWriterFailed: %v", err, tc.wantErr)
			}
		})
	}
}

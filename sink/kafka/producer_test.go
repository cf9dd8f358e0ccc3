package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/cdcd/cdcd/sink"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// wireWatch sees a Writer's produce connections at the Kafka frame level: requests written, responses
// read, the most outstanding on one connection at once. It can drop a connection as a response arrives,
// after the broker acted on the request and before the producer learns the outcome.
type wireWatch struct {
	mu             sync.Mutex
	dials          int
	maxOutstanding int
	// drop, if set, is asked for each response frame read: the connection's index (in dial order) and
	// the frame's (1 is the ApiVersions answer). True closes the connection instead of delivering it.
	drop func(conn, frame int) bool
}

// watchWire installs a wireWatch on w's produce connections; call it before w's first Send.
func watchWire(w *Writer) *wireWatch {
	ww := &wireWatch{}
	w.producer.dialer.wrapConn = func(c net.Conn) net.Conn {
		ww.mu.Lock()
		defer ww.mu.Unlock()
		ww.dials++
		return &watchedConn{Conn: c, w: ww, index: ww.dials - 1}
	}
	return ww
}

func (ww *wireWatch) stats() (dials, maxOutstanding int) {
	ww.mu.Lock()
	defer ww.mu.Unlock()
	return ww.dials, ww.maxOutstanding
}

type watchedConn struct {
	net.Conn
	w           *wireWatch
	index       int
	out, in     frameCounter
	outstanding int
	frames      int
}

func (c *watchedConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.w.mu.Lock()
	c.outstanding += c.out.feed(p[:n])
	c.w.maxOutstanding = max(c.w.maxOutstanding, c.outstanding)
	c.w.mu.Unlock()
	return n, err
}

func (c *watchedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	for range c.in.feed(p[:n]) {
		c.outstanding--
		c.frames++
		if c.w.drop != nil && c.w.drop(c.index, c.frames) {
			c.Conn.Close()
			return 0, io.ErrUnexpectedEOF
		}
	}
	return n, err
}

// frameCounter follows a stream of Kafka frames (a 4-byte length, then that many bytes).
type frameCounter struct {
	header [4]byte
	have   int // header bytes seen of the current frame
	remain int // body bytes left of the current frame
}

// feed consumes p and returns how many frames it completed.
func (f *frameCounter) feed(p []byte) (completed int) {
	for len(p) > 0 {
		if f.have < 4 {
			k := copy(f.header[f.have:], p)
			f.have += k
			p = p[k:]
			if f.have == 4 {
				f.remain = int(uint32(f.header[0])<<24 | uint32(f.header[1])<<16 | uint32(f.header[2])<<8 | uint32(f.header[3]))
				if f.remain == 0 {
					f.have, completed = 0, completed+1
				}
			}
			continue
		}
		k := min(len(p), f.remain)
		f.remain -= k
		p = p[k:]
		if f.remain == 0 {
			f.have, completed = 0, completed+1
		}
	}
	return completed
}

// orderedSends sends n records with key "k" and values "0".."n-1", perSend to a call, and returns what
// the done callbacks said, in the order they were called.
func orderedSends(t *testing.T, w *Writer, topic string, n, perSend int) (errs []error, order []int) {
	t.Helper()
	var mu sync.Mutex
	res := newResult()
	for call := 0; call*perSend < n; call++ {
		recs := make([]sink.Record, 0, perSend)
		for i := call * perSend; i < min(n, (call+1)*perSend); i++ {
			recs = append(recs, sink.Record{Topic: topic, Key: []byte("k"), Value: []byte(strconv.Itoa(i))})
		}
		done := res.done(t, call)
		send(t, w, recs, func(err error) {
			mu.Lock()
			order = append(order, call)
			errs = append(errs, err)
			mu.Unlock()
			done(err)
		})
	}
	res.wait(t)
	return errs, order
}

// assertOnceInOrder reads topic back and checks it holds "0".."n-1", each once, in order.
func assertOnceInOrder(t *testing.T, brokers []string, topic string, n int) {
	t.Helper()
	got := readTopic(t, brokers, topic, n)
	for i, r := range got {
		if string(r.Value) != strconv.Itoa(i) {
			var values []string
			for _, r := range got {
				values = append(values, string(r.Value))
			}
			t.Fatalf("record %d is %q, want %d: the partition holds %v", i, r.Value, i, values)
		}
	}
}

// producedBatch is what a produce request carried for one partition.
type producedBatch struct {
	producerID int64
	epoch      int16
	firstSeq   int32
	records    int32
}

// recordProduces makes c note every produce request's batches; it keeps its control function, so it
// must be installed before the fault it observes.
func recordProduces(c *kfake.Cluster) func() []producedBatch {
	var mu sync.Mutex
	var seen []producedBatch
	c.ControlKey(kmsg.Produce.Int16(), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		for _, rt := range kreq.(*kmsg.ProduceRequest).Topics {
			for _, rp := range rt.Partitions {
				var b kmsg.RecordBatch
				if err := b.ReadFrom(rp.Records); err == nil {
					mu.Lock()
					seen = append(seen, producedBatch{b.ProducerID, b.ProducerEpoch, b.FirstSequence, b.NumRecords})
					mu.Unlock()
				}
			}
		}
		return nil, nil, false
	})
	return func() []producedBatch {
		mu.Lock()
		defer mu.Unlock()
		return append([]producedBatch(nil), seen...)
	}
}

// failProduce makes the broker answer the nth produce request from now (1-based) with code for every
// partition, without appending anything. The function returned reports whether it did.
func failProduce(c *kfake.Cluster, nth int, code int16) (fired func() bool) {
	var mu sync.Mutex
	n := 0
	fired = func() bool { mu.Lock(); defer mu.Unlock(); return n >= nth }
	c.ControlKey(kmsg.Produce.Int16(), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mu.Lock()
		n++
		this := n
		mu.Unlock()
		if this != nth {
			return nil, nil, false
		}
		c.DropControl()
		req := kreq.(*kmsg.ProduceRequest)
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewProduceResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	return fired
}

// Several produce requests are in flight on one connection (a partition's batches, one per request),
// never more than max.in.flight.requests.per.connection; held back at the broker, one does not stop the
// next four from being written, and all land in order. Until the broker acknowledged a partition's
// first batch, that batch goes alone (partitionState.confirmed).
func TestProducerPipelinesRequestsOnOneConnection(t *testing.T) {
	const topic = "pipelined"
	c := newFakeCluster(t, kfake.SeedTopics(1, topic))
	w := newTestWriter(t, Config{Brokers: c.ListenAddrs(), Producer: map[string]string{"linger.ms": "0", "batch.size": "100"}})
	watch := watchWire(w)
	release := make(chan struct{})
	held := holdNextProduce(c, 0, release)

	first := newResult()
	send(t, w, keyedRecords(topic, "k", "0", 1), first.done(t, 0))
	send(t, w, keyedRecords(topic, "k", "1", 1), first.done(t, 1))
	<-held
	if _, most := watch.stats(); most != 1 {
		t.Fatalf("%d requests in flight before the partition's first batch was acknowledged, want 1", most)
	}
	close(release)
	first.wait(t)

	release = make(chan struct{})
	held = holdNextProduce(c, 0, release)
	res := newResult()
	send(t, w, keyedRecords(topic, "k", "2", 1), res.done(t, 2))
	<-held
	for i := 3; i < 13; i++ {
		send(t, w, keyedRecords(topic, "k", strconv.Itoa(i), 1), res.done(t, i))
	}
	waitFor(t, "five produce requests on the wire", func() bool { _, most := watch.stats(); return most == 5 })
	close(release)
	for i, err := range res.wait(t) {
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	if dials, most := watch.stats(); dials != 1 || most != 5 {
		t.Fatalf("%d connections, at most %d requests outstanding; want 1 and 5", dials, most)
	}
	for i, r := range readTopic(t, c.ListenAddrs(), topic, 13) {
		if want := fmt.Sprintf("%d-0", i); string(r.Value) != want {
			t.Fatalf("record %d is %q, want %q", i, r.Value, want)
		}
	}
}

// Faults with five requests in flight on a partition: each record lands once, in order, and the done
// callbacks run in Send order.
func TestIdempotentRetriesNeitherDuplicateNorReorder(t *testing.T) {
	const records, perSend = 200, 4
	for _, tc := range []struct {
		name string
		// fault sets up the fault and returns whether it happened; checks, if set, looks at what was
		// produced.
		fault  func(c *kfake.Cluster, watch *wireWatch) (fired func() bool)
		checks func(t *testing.T, produced []producedBatch)
	}{
		{name: "answers lost after the broker appended", fault: func(c *kfake.Cluster, watch *wireWatch) func() bool {
			watch.drop = func(conn, frame int) bool { return conn < 3 && frame == 4 }
			return func() bool { dials, _ := watch.stats(); return dials == 4 }
		}},
		{name: "NOT_LEADER_OR_FOLLOWER for the partition's first batch", fault: func(c *kfake.Cluster, _ *wireWatch) func() bool {
			return failProduce(c, 1, kerr.NotLeaderForPartition.Code)
		}},
		{name: "NOT_LEADER_OR_FOLLOWER ahead of requests in flight", fault: func(c *kfake.Cluster, _ *wireWatch) func() bool {
			return failProduce(c, 3, kerr.NotLeaderForPartition.Code)
		}},
		{name: "OUT_OF_ORDER_SEQUENCE_NUMBER ahead of requests in flight", fault: func(c *kfake.Cluster, _ *wireWatch) func() bool {
			return failProduce(c, 3, kerr.OutOfOrderSequenceNumber.Code)
		}, checks: wantEpochBump},
		{name: "UNKNOWN_PRODUCER_ID", fault: func(c *kfake.Cluster, _ *wireWatch) func() bool {
			return failProduce(c, 3, kerr.UnknownProducerID.Code)
		}, checks: wantEpochBump},
		{name: "a request timed out, then appended", fault: func(c *kfake.Cluster, watch *wireWatch) func() bool {
			// The broker holds the third request past request.timeout.ms; the producer gives up on
			// the connection and sends again on a new one. Only then does the broker append the held
			// request, whose batch the retry already wrote.
			redialled := func() bool { dials, _ := watch.stats(); return dials >= 2 }
			var n atomic.Int32
			var fired atomic.Bool
			c.ControlKey(kmsg.Produce.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
				c.KeepControl()
				if n.Add(1) == 3 {
					c.DropControl()
					c.SleepControl(func() { waitFor(t, "the producer to reconnect", redialled) })
					fired.Store(true)
				}
				return nil, nil, false
			})
			return fired.Load
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const topic = "faults"
			c := newFakeCluster(t, kfake.SeedTopics(1, topic))
			produced := recordProduces(c)
			w := newTestWriter(t, Config{Brokers: c.ListenAddrs(), Producer: map[string]string{
				"linger.ms": "0", "batch.size": "120", "retry.backoff.ms": "1", "retry.backoff.max.ms": "10", "request.timeout.ms": "500"}})
			watch := watchWire(w)
			fired := tc.fault(c, watch)
			errs, order := orderedSends(t, w, topic, records, perSend)
			for i, err := range errs {
				if err != nil {
					t.Fatalf("done %d: %v", i, err)
				}
			}
			for i := range order {
				if order[i] != i {
					t.Fatalf("done callbacks ran in the order %v", order)
				}
			}
			assertOnceInOrder(t, c.ListenAddrs(), topic, records)
			if !fired() {
				t.Fatal("the fault did not happen")
			}
			if _, most := watch.stats(); most < 2 {
				t.Fatalf("at most %d requests were in flight: the fault was not tested under pipelining", most)
			}
			if tc.checks != nil {
				tc.checks(t, produced())
			}
		})
	}
}

// wantEpochBump checks that batches after the fault came under the next epoch, sequences from 0.
func wantEpochBump(t *testing.T, produced []producedBatch) {
	t.Helper()
	for _, b := range produced {
		if b.epoch == produced[0].epoch+1 && b.firstSeq == 0 && b.producerID == produced[0].producerID {
			return
		}
	}
	t.Fatalf("no batch of the next epoch starting at sequence 0 among %+v", produced)
}

// The same lost answers without idempotence (one request in flight): the retries duplicate records,
// which is what the test above would see if the producer did not stamp its batches.
func TestLostAnswersDuplicateWithoutIdempotence(t *testing.T) {
	const topic = "duplicates"
	c := newFakeCluster(t, kfake.SeedTopics(1, topic))
	w := newTestWriter(t, Config{Brokers: c.ListenAddrs(), Producer: map[string]string{
		"enable.idempotence": "false", "linger.ms": "0", "batch.size": "120", "retry.backoff.ms": "1"}})
	watch := watchWire(w)
	watch.drop = func(conn, frame int) bool { return conn < 3 && frame == 4 }
	errs, _ := orderedSends(t, w, topic, 40, 4)
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	got := readTopic(t, c.ListenAddrs(), topic, 41) // at least one duplicate
	if len(got) <= 40 {
		t.Fatalf("read %d records, want duplicates", len(got))
	}
}

// A batch given up when its retries ran out (every attempt refused as NOT_LEADER_OR_FOLLOWER) fails its
// Send with a DeliveryError; the batches sent behind it, which the broker refuses as out of order
// meanwhile, go on under the next epoch and land in order; later Sends are refused.
func TestRetriesRunOutThenTheBatchesBehindLand(t *testing.T) {
	const topic = "exhausted"
	c := newFakeCluster(t, kfake.SeedTopics(1, topic))
	w := newTestWriter(t, Config{Brokers: c.ListenAddrs(), Producer: map[string]string{
		"retries": "2", "retry.backoff.ms": "1", "linger.ms": "0", "batch.size": "100"}})
	first := newResult()
	send(t, w, keyedRecords(topic, "k", "a", 1), first.done(t, 0))
	if err := first.wait(t)[0]; err != nil {
		t.Fatal(err)
	}

	// Refuse every attempt at the batch with sequence 1 of epoch 0: "b".
	var refused atomic.Int32
	c.ControlKey(kmsg.Produce.Int16(), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.ProduceRequest)
		var b kmsg.RecordBatch
		if err := b.ReadFrom(req.Topics[0].Partitions[0].Records); err != nil || b.ProducerEpoch != 0 || b.FirstSequence != 1 {
			return nil, nil, false
		}
		refused.Add(1)
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		st := kmsg.NewProduceResponseTopic()
		st.Topic = req.Topics[0].Topic
		sp := kmsg.NewProduceResponseTopicPartition()
		sp.Partition, sp.ErrorCode = req.Topics[0].Partitions[0].Partition, kerr.NotLeaderForPartition.Code
		st.Partitions = append(st.Partitions, sp)
		resp.Topics = append(resp.Topics, st)
		return resp, nil, true
	})
	res := newResult()
	for i, v := range []string{"b", "c", "d"} {
		send(t, w, keyedRecords(topic, "k", v, 1), res.done(t, i))
	}
	errs := res.wait(t)
	var derr *DeliveryError
	if !errors.As(errs[0], &derr) || !errors.Is(derr, kerr.NotLeaderForPartition) && !strings.Contains(derr.Error(), "Not Leader") {
		t.Fatalf("send b: err = %v, want a DeliveryError with the broker's refusal", errs[0])
	}
	if errs[1] != nil || errs[2] != nil {
		t.Fatalf("sends c and d: %v, %v", errs[1], errs[2])
	}
	if n := refused.Load(); n != 3 {
		t.Fatalf("b was tried %d times, want 3 (retries=2)", n)
	}
	var got []string
	for _, r := range readTopic(t, c.ListenAddrs(), topic, 3) {
		got = append(got, string(r.Value))
	}
	if strings.Join(got, ",") != "a-0,c-0,d-0" {
		t.Fatalf("the partition holds %v, want a-0, c-0, d-0", got)
	}
	if err := w.Send(t.Context(), keyedRecords(topic, "k", "e", 1), func(error) {}); !errors.Is(err, ErrWriterFailed) {
		t.Fatalf("send after the failure: err = %v, want ErrWriterFailed", err)
	}
}

// TestProducerReportsAStall: batches that wait with no produce call sent or answered make the producer
// log what it waits for, here a producer id that InitProducerId keeps refusing with a retriable error.
func TestProducerReportsAStall(t *testing.T) {
	defer func(d time.Duration) { stallReport = d }(stallReport)
	stallReport = 200 * time.Millisecond
	const topic = "stalled"
	c := newFakeCluster(t, kfake.SeedTopics(1, topic))
	c.ControlKey(kmsg.InitProducerID.Int16(), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		resp := kreq.ResponseKind().(*kmsg.InitProducerIDResponse)
		resp.ErrorCode = kerr.CoordinatorLoadInProgress.Code
		return resp, nil, true
	})
	logs := &testenv.LogBuffer{}
	w, err := NewWriter(Config{Brokers: c.ListenAddrs(), Producer: map[string]string{"retry.backoff.ms": "10", "delivery.timeout.ms": "60000"}},
		slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second) // the batch cannot land
		defer cancel()
		w.Close(ctx)
	}()
	send(t, w, keyedRecords(topic, "k", "a", 1), func(error) {})
	deadline := time.Now().Add(testTimeout)
	for !strings.Contains(logs.String(), "kafka producer holds batches") {
		if time.Now().After(deadline) {
			t.Fatalf("no stall report; log:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, want := range []string{"producer_id=-1", "stalled-0: 1 queued, head in flight false"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the stall report lacks %q:\n%s", want, logs.String())
		}
	}
}

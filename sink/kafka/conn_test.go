package kafka

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	metadataAPI "github.com/segmentio/kafka-go/protocol/metadata"
)

// TestSyncConnTimeoutClosesSafely: a request the broker never answers times out, and the read deadline and
// the context's AfterFunc fire at the same moment; roundTrip then closes the connection while the
// AfterFunc may still run. The AfterFunc must not reach the connection through the syncConn, whose pc is
// nil by then: that was a nil dereference that killed the process during a Kafka partition
// (TestChaosPartitionKafka, on a loaded machine). The race needs the AfterFunc's goroutine to be scheduled
// late, so this loop exercises the path but does not catch the old code every run.
func TestSyncConnTimeoutClosesSafely(t *testing.T) {
	c := newFakeCluster(t)
	addrs := c.ListenAddrs()
	d := &dialer{clientID: "t", timeout: 5 * time.Second, wrapConn: func(nc net.Conn) net.Conn { return &silencedConn{Conn: nc} }}
	sc := &syncConn{dialer: d, addrs: func() []string { return addrs }}
	defer sc.close()
	for range 300 {
		if _, err := sc.roundTrip(context.Background(), &metadataAPI.Request{}, time.Millisecond); err == nil {
			t.Fatal("a request the broker never received was answered")
		}
	}
}

// silencedConn passes the dial's ApiVersions request on and swallows every later write, so the broker
// never answers a request: a partition after the handshake.
type silencedConn struct {
	net.Conn
	writes atomic.Int32
}

func (c *silencedConn) Write(p []byte) (int, error) {
	if c.writes.Add(1) > 1 {
		return len(p), nil
	}
	return c.Conn.Write(p)
}

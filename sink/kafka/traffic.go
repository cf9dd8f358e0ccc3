package kafka

import (
	"context"
	"net"
	"sync/atomic"
	"time"
)

// Traffic counts the bytes a transport's connections read from and write to the brokers: what Kafka's
// network selector measures as incoming-byte and outgoing-byte (TLS records included, as on the wire).
type Traffic struct {
	in, out atomic.Uint64
}

// CountTraffic makes t's connections count their bytes into the Traffic it returns. Call it before t's
// first request; it replaces t's Dial (none of cdcd's transports sets one), dialling as kafka-go's
// default dialer does.
func CountTraffic(t *Transport) *Traffic {
	tr := &Traffic{}
	d := &net.Dialer{Timeout: 3 * time.Second}
	t.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: c, t: tr}, nil
	}
	return tr
}

// Bytes returns the bytes read and written so far.
func (t *Traffic) Bytes() (in, out uint64) { return t.in.Load(), t.out.Load() }

type countingConn struct {
	net.Conn
	t *Traffic
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.t.in.Add(uint64(n))
	return n, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.t.out.Add(uint64(n))
	return n, err
}

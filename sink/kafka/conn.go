package kafka

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/apiversions"
	"github.com/segmentio/kafka-go/protocol/produce"
	"github.com/segmentio/kafka-go/protocol/rawproduce"
	"github.com/segmentio/kafka-go/protocol/saslauthenticate"
	"github.com/segmentio/kafka-go/protocol/saslhandshake"
	"github.com/segmentio/kafka-go/sasl"
)

// This file is the producer's own connections to the brokers. kafka-go's Transport runs one request at a
// time on a connection (its conn.run loop writes a request, then reads its response, before it takes the
// next), and protocol.Conn.RoundTrip does the same, so neither can pipeline. Kafka answers the requests of
// one connection in the order they were sent, which is what lets several produce requests be in flight on
// one connection while the batches of each partition stay in order on the wire. So the producer dials its
// own connections — TLS and SASL as Transport does them, from the same ClientSecurity — and writes and
// reads kafka-go's protocol messages on them with protocol.WriteRequest and protocol.ReadResponse.

// dialer opens authenticated connections to brokers for one client.
type dialer struct {
	security ClientSecurity
	clientID string
	timeout  time.Duration // the whole dial: TCP, TLS, ApiVersions and SASL
	// wrapConn, when set, wraps each TCP connection before anything is sent on it: the tests' way to
	// count requests on the wire and to drop connections. Nil in the daemon.
	wrapConn func(net.Conn) net.Conn
}

// dial connects to addr (host:port), shakes hands in TLS when the protocol says so, negotiates API
// versions and authenticates with SASL. It blocks until done, ctx ends or d.timeout passes. Its errors
// are explained in terms of the settings (ClientSecurity.explain) and wrap ErrSecurity when a setting
// must change.
func (d *dialer) dial(ctx context.Context, addr string) (*wire, error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	w, err := d.connect(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("connecting to broker %s: %w", addr, d.security.explain(err))
	}
	return w, nil
}

// wire is a connection ready for requests, with the API versions negotiated on it.
type wire struct {
	*protocol.Conn
	versions map[protocol.ApiKey]int16
}

// version returns the version of key negotiated with the broker, or an error when the broker offers
// only versions older than min.
func (w *wire) version(key protocol.ApiKey, min int16) (int16, error) {
	v, ok := w.versions[key]
	if !ok || v < min {
		return 0, fmt.Errorf("the broker does not support %s v%d or later", key, min)
	}
	return v, nil
}

func (d *dialer) connect(ctx context.Context, addr string) (_ *wire, err error) {
	var nd net.Dialer
	nc, err := nd.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if d.wrapConn != nil {
		nc = d.wrapConn(nc)
	}
	defer func() {
		if err != nil {
			nc.Close()
		}
	}()
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if cfg := d.security.TLS; cfg != nil {
		if cfg.ServerName == "" {
			cfg = cfg.Clone()
			cfg.ServerName = host // verified unless the settings turned verification off
		}
		tc := tls.Client(nc, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, err
		}
		nc = tc
	}
	deadline, _ := ctx.Deadline()
	if err := nc.SetDeadline(deadline); err != nil {
		return nil, err
	}
	// ctx may end before the deadline (Close abandoning the producer): unblock the exchange then.
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Now()) })
	defer stop()

	pc := protocol.NewConn(nc, d.clientID)
	msg, err := pc.RoundTrip(new(apiversions.Request))
	if err != nil {
		return nil, err
	}
	res := msg.(*apiversions.Response)
	if res.ErrorCode != 0 {
		return nil, fmt.Errorf("negotiating API versions: %w", kafkago.Error(res.ErrorCode))
	}
	versions := make(map[protocol.ApiKey]int16, len(res.ApiKeys))
	for _, k := range res.ApiKeys {
		key := protocol.ApiKey(k.ApiKey)
		versions[key] = key.SelectVersion(k.MinVersion, k.MaxVersion)
	}
	pc.SetVersions(versions)
	if d.security.SASL != nil {
		port, _ := strconv.Atoi(portText)
		if err := authenticate(sasl.WithMetadata(ctx, &sasl.Metadata{Host: host, Port: port}), pc, d.security.SASL); err != nil {
			return nil, err
		}
	}
	if err := nc.SetDeadline(time.Time{}); err != nil {
		return nil, err
	}
	return &wire{Conn: pc, versions: versions}, nil
}

// authenticate runs SASL's handshake and exchange (KIP-152) on a connection no other request uses yet.
func authenticate(ctx context.Context, pc *protocol.Conn, mech sasl.Mechanism) error {
	msg, err := pc.RoundTrip(&saslhandshake.Request{Mechanism: mech.Name()})
	if err != nil {
		return err
	}
	if code := msg.(*saslhandshake.Response).ErrorCode; code != 0 {
		return kafkago.Error(code)
	}
	session, state, err := mech.Start(ctx)
	if err != nil {
		return err
	}
	for done := false; !done; {
		msg, err := pc.RoundTrip(&saslauthenticate.Request{AuthBytes: state})
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			// Brokers may end a failed exchange by closing the connection (kafka-go reads it so too).
			return kafkago.SASLAuthenticationFailed
		}
		if err != nil {
			return err
		}
		res := msg.(*saslauthenticate.Response)
		if res.ErrorCode != 0 {
			if res.ErrorMessage != "" {
				return fmt.Errorf("%w: %s", kafkago.Error(res.ErrorCode), res.ErrorMessage)
			}
			return kafkago.Error(res.ErrorCode)
		}
		if done, state, err = session.Next(ctx, res.AuthBytes); err != nil {
			return err
		}
	}
	return nil
}

// syncConn is a connection for the producer's occasional requests (metadata, producer ids): one request at
// a time, redialled after any error. It is safe for concurrent use; callers wait for each other.
type syncConn struct {
	dialer *dialer
	addrs  func() []string // where to connect: the known brokers, else the bootstrap servers

	mu   sync.Mutex
	pc   *wire
	next int // which of addrs to try first, rotated after a failure
}

// roundTrip sends req and returns its response. It blocks until the broker answered, ctx ended or
// timeout passed; the error then closes the connection, which the next call redials.
func (c *syncConn) roundTrip(ctx context.Context, req protocol.Message, timeout time.Duration) (protocol.Message, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pc == nil {
		addrs := c.addrs()
		if len(addrs) == 0 {
			return nil, errors.New("no broker address known")
		}
		var errs []error
		for i := range addrs {
			addr := addrs[(c.next+i)%len(addrs)]
			pc, err := c.dialer.dial(ctx, addr)
			if err == nil {
				c.pc = pc
				break
			}
			if errors.Is(err, ErrSecurity) {
				return nil, err // every broker would refuse it the same way
			}
			errs = append(errs, err)
		}
		if c.pc == nil {
			c.next++
			return nil, errors.Join(errs...)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	deadline, _ := ctx.Deadline()
	pc := c.pc
	_ = pc.SetDeadline(deadline)
	// The function gets pc, not c.pc: once it has started, stop no longer waits for it, and closeLocked
	// below may already have set c.pc to nil.
	stop := context.AfterFunc(ctx, func() { _ = pc.SetDeadline(time.Now()) })
	resp, err := pc.RoundTrip(req)
	stop()
	if err != nil {
		c.closeLocked()
		c.next++
		return nil, c.dialer.security.explain(err)
	}
	_ = pc.SetDeadline(time.Time{})
	return resp, nil
}

func (c *syncConn) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeLocked()
}

func (c *syncConn) closeLocked() {
	if c.pc != nil {
		c.pc.Close()
		c.pc = nil
	}
}

// produceCall is one produce request on a brokerConn and, once it is reported, its outcome: resp, or err
// when the connection failed before the answer arrived (the batches' fate is then unknown).
type produceCall struct {
	conn    *brokerConn
	req     *rawproduce.Request
	batches []*batch
	corr    int32
	version int16
	sent    time.Time
	resp    *produce.Response
	err     error
}

// brokerConn is one pipelined connection to a broker. The sender loop hands it calls on outgoing; its
// writer goroutine dials, then writes each call and queues it on pending; its reader goroutine — the only
// reader of the connection — reads the answers in order (Kafka answers a connection's requests in the
// order it received them) and reports each call on results. Every call handed over is reported exactly
// once, whatever fails.
//
// Neither goroutine blocks the sender loop: the loop keeps at most cap(outgoing) calls unreported per
// connection (inflight), so outgoing and pending never fill. A write or read past request.timeout.ms, or
// any I/O error, fails the connection: it is closed, and every call not yet answered is reported with the
// error. The loop then retires it (closes outgoing) and dials a new one for the next request.
type brokerConn struct {
	id      int32
	addr    string
	dialer  *dialer
	timeout time.Duration // request.timeout.ms: how long a request may go unanswered
	acks    int16

	outgoing chan *produceCall // closed by the loop (retire)
	pending  chan *produceCall // written, awaiting an answer; closed by the writer goroutine
	results  chan<- *produceCall
	inflight int       // owned by the sender loop: calls handed over and not yet reported
	retired  bool      // owned by the sender loop
	lastUsed time.Time // owned by the sender loop: when a call was last handed over

	mu  sync.Mutex
	w   *wire
	err error // the first failure; set once
}

func newBrokerConn(ctx context.Context, id int32, addr string, d *dialer, timeout time.Duration, acks int16, maxInFlight int, results chan<- *produceCall) *brokerConn {
	c := &brokerConn{
		id: id, addr: addr, dialer: d, timeout: timeout, acks: acks, results: results,
		outgoing: make(chan *produceCall, maxInFlight),
		pending:  make(chan *produceCall, maxInFlight),
	}
	go c.writeLoop(ctx)
	go c.readLoop()
	return c
}

// send hands call over. Only the sender loop calls it, and only while inflight < cap(outgoing).
func (c *brokerConn) send(call *produceCall) {
	call.conn = c
	c.inflight++
	c.outgoing <- call
}

// usable reports whether the loop may hand the connection another call.
func (c *brokerConn) usable() bool {
	return !c.retired && c.inflight < cap(c.outgoing) && c.failure() == nil
}

// retire stops the connection taking calls; those handed over are still reported. Only the loop calls it.
func (c *brokerConn) retire(err error) {
	if !c.retired {
		c.retired = true
		c.fail(err)
		close(c.outgoing)
	}
}

func (c *brokerConn) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = fmt.Errorf("broker %d (%s): %w", c.id, c.addr, c.dialer.security.explain(err))
		if c.w != nil {
			c.w.Close() // unblocks the other goroutine's read or write
		}
	}
}

func (c *brokerConn) failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *brokerConn) writeLoop(ctx context.Context) {
	defer close(c.pending)
	w, err := c.dialer.dial(ctx, c.addr)
	if err != nil {
		c.fail(err)
	} else {
		c.mu.Lock()
		if c.err != nil {
			w.Close() // retired while dialling
		} else {
			c.w = w
		}
		c.mu.Unlock()
	}
	var (
		bw      *bufio.Writer
		version int16
		corr    int32
	)
	if err == nil {
		bw = bufio.NewWriterSize(w, 64<<10)
		// Produce v3 is the first with record batches (magic 2), which carry the producer id.
		if version, err = w.version(protocol.Produce, 3); err != nil {
			c.fail(err)
		}
	}
	for call := range c.outgoing {
		if err := c.failure(); err != nil {
			call.err = err
			c.results <- call
			continue
		}
		corr++
		call.corr, call.version, call.sent = corr, version, time.Now()
		_ = w.SetWriteDeadline(call.sent.Add(c.timeout))
		err := protocol.WriteRequest(bw, version, corr, c.dialer.clientID, call.req)
		// Requests queued behind this one go out in the same write; the last one flushes.
		if err == nil && (len(c.outgoing) == 0 || c.acks == 0) {
			err = bw.Flush()
		}
		if err != nil {
			c.fail(err)
			call.err = c.failure()
			c.results <- call
			continue
		}
		if c.acks == 0 {
			c.results <- call // acks=0: the broker does not answer; written is all there is to know
			continue
		}
		c.pending <- call
	}
}

func (c *brokerConn) readLoop() {
	for call := range c.pending {
		if err := c.failure(); err != nil {
			call.err = err
			c.results <- call
			continue
		}
		// pending only holds calls written on c.w, which was set before the first of them.
		c.mu.Lock()
		w := c.w
		c.mu.Unlock()
		_ = w.SetReadDeadline(call.sent.Add(c.timeout))
		corr, msg, err := protocol.ReadResponse(w, protocol.Produce, call.version)
		if err == nil && corr != call.corr {
			err = fmt.Errorf("answer %d to request %d: the connection is out of step", corr, call.corr)
		}
		if err == nil {
			resp, ok := msg.(*produce.Response)
			if !ok {
				err = fmt.Errorf("a %T answered a produce request", msg)
			}
			call.resp = resp
		}
		if err != nil {
			c.fail(err)
			call.err = c.failure()
		}
		c.results <- call
	}
}

package rest

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// The REST server's bounds, none of them configurable: every one is far beyond what Connect's clients, a
// Prometheus scrape, a probe or another worker need, and each keeps a client that sends too much, too slowly or
// too often from holding the worker's memory or connections.
const (
	// maxBody bounds a request body. Connect's bodies are connector configs, offsets and signals of a few KiB;
	// a connector config must also fit in one record of the config topic, which the broker's default
	// message.max.bytes (1 MiB) bounds. A larger body is refused with a 413 before it is decoded.
	maxBody = 1 << 20
	// maxHeaderBytes bounds the request line and headers (Go adds 4 KiB of slack); Jetty, under Connect,
	// refuses more than 8 KiB.
	maxHeaderBytes = 16 << 10
	// readHeaderTimeout bounds the wait for a request's line and headers.
	readHeaderTimeout = 10 * time.Second
	// bodyReadTimeout bounds reading a request, its body included: a body trickled in is cut off there.
	bodyReadTimeout = 30 * time.Second
	// writeTimeout bounds a request's handling and answer from the end of its headers: above Connect's 90 s
	// request timeout (forwardTimeout), which the longest handlers (a forwarded request, DELETE with
	// dropSlot, a restart) stay within.
	writeTimeout = forwardTimeout + 30*time.Second
	// idleTimeout closes a keep-alive connection idle this long, as Jetty's default idle timeout does.
	idleTimeout = 30 * time.Second
	// maxConnections bounds the connections open at once; more wait in the listen backlog until one closes.
	maxConnections = 256
)

// NewHTTPServer is the http.Server that serves h (the REST API) with the bounds above. Its ReadTimeout covers
// a request's body; net/http lifts that deadline once the body is read (or when there is none), so a long
// handler runs on.
func NewHTTPServer(h http.Handler) *http.Server { return httpServer(h, bodyReadTimeout) }

// httpServer is NewHTTPServer with the given read timeout (tests shorten it).
func httpServer(h http.Handler, readTimeout time.Duration) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: min(readHeaderTimeout, readTimeout),
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
	}
}

// limitListener accepts at most max connections at once: Accept waits while that many are open.
type limitListener struct {
	net.Listener
	slots     chan struct{}
	closed    chan struct{}
	closeOnce sync.Once
}

func limitConnections(ln net.Listener, max int) net.Listener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, max), closed: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.closed:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, release: sync.OnceFunc(func() { <-l.slots })}, nil
}

// Close stops the listener, and an Accept waiting for a slot.
func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// limitedConn gives its slot back when closed (once, however often it is closed).
type limitedConn struct {
	net.Conn
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}

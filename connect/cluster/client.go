package cluster

import (
	"context"
	"errors"
	"time"

	kafkago "github.com/segmentio/kafka-go"
)

// requestTimeout bounds each request that does not wait on purpose (long-polling fetches and the
// group's JoinGroup and SyncGroup do), as request.timeout.ms does in Java's clients. kafka-go derives the
// broker-side timeouts of Produce and CreateTopics from it: half of it, or of what is left of ctx.
const requestTimeout = 30 * time.Second

// retryBackoff is the pause before a failed request is sent again; the group's rebalance retries
// start from it and double.
const retryBackoff = 250 * time.Millisecond

// client is a kafka-go client together with how to release it. kafka-go's transport does not
// retry and does not keep connections per client: every loop of this package that must survive a
// broker's hiccup retries by itself (see retriable), and closing means closing the transport's
// connections, which only a transport of the client's own may do.
type client struct {
	*kafkago.Client
	own *kafkago.Transport // the transport made for this client when the caller gave none; else nil
}

// newClient returns a client for brokers over transport, the caller's and shared (TLS, SASL), or,
// when transport is nil, over a kafka-go Transport with its defaults of the client's own. That one
// carries clientID, because kafka-go sends client.id from the transport and not per request, and
// keeps the cluster metadata of metadataTopics only (empty: brokers only), where kafka-go's default
// is all topics, refreshed every few seconds.
func newClient(brokers []string, transport kafkago.RoundTripper, clientID string, metadataTopics []string) client {
	c := client{Client: &kafkago.Client{Addr: kafkago.TCP(brokers...), Transport: transport, Timeout: requestTimeout}}
	if transport == nil {
		c.own = &kafkago.Transport{ClientID: clientID, MetadataTopics: metadataTopics}
		c.Transport = c.own
	}
	return c
}

// roundTrip sends one request of kafka-go's protocol packages, for what its typed methods cannot
// say (Connect's raw group metadata, fetches of several partitions). The transport picks the highest
// version both sides speak, answers metadata requests from its cache, sends requests that name
// partitions (protocol.BrokerMessage) to their leader and group requests (protocol.GroupMessage) to
// the group's coordinator, which it looks up before each one. Unlike the typed methods, it does not
// apply the client's Timeout: the caller says how long the request may take.
func (c client) roundTrip(ctx context.Context, timeout time.Duration, req kafkago.Request) (kafkago.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return c.Transport.RoundTrip(ctx, c.Addr, req)
}

// close releases the connections of the client's own transport; a caller's transport stays open.
func (c client) close() {
	if c.own != nil {
		c.own.CloseIdleConnections()
	}
}

// kafkaError is the error a response's error code stands for, nil for none.
func kafkaError(code int16) error {
	if code == 0 {
		return nil
	}
	return kafkago.Error(code)
}

// retriable says whether a failed request may succeed when sent again: the broker answered with an
// error code kafka-go deems temporary (a leader or coordinator moving, a topic not visible yet), or
// it was not reached at all (a broken connection, a leader missing from the transport's metadata).
// A context error is final: the caller's ctx ended.
func retriable(err error) bool {
	var code kafkago.Error
	switch {
	case errors.As(err, &code):
		// kafka-go's transport answers BROKER_NOT_AVAILABLE itself when a request's broker is not
		// in its metadata, as for a partition whose newly elected leader it has not seen yet.
		return code.Temporary() || code == kafkago.BrokerNotAvailable
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	default:
		return true
	}
}

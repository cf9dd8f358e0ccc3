package rest

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/cdcd/cdcd/connect/config"
)

// Listen opens the first of the worker's listeners (Connect's `listeners`, e.g. http://:8083 or
// https://:8443). An https listener serves TLS from the worker's ssl.* settings (see ServerTLS). It accepts at
// most maxConnections connections at once; serve it with NewHTTPServer.
func Listen(listeners []string, props map[string]string) (net.Listener, error) {
	if len(listeners) == 0 {
		return nil, fmt.Errorf("listeners: no URL given")
	}
	u, err := url.Parse(strings.TrimSpace(listeners[0]))
	if err != nil {
		return nil, fmt.Errorf("listeners: %w", err)
	}
	var tlsConfig *tls.Config
	switch strings.ToLower(u.Scheme) {
	case "http":
	case "https":
		if tlsConfig, err = ServerTLS(props); err != nil {
			return nil, fmt.Errorf("listeners: %s: %w", listeners[0], err)
		}
	default:
		return nil, fmt.Errorf("listeners: %s: cdcd serves http and https only", listeners[0])
	}
	ln, err := net.Listen("tcp", u.Host)
	if err != nil {
		return nil, fmt.Errorf("listeners: %w", err)
	}
	ln = limitConnections(ln, maxConnections)
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	return ln, nil
}

// WorkerID is the worker id Connect shows in statuses: the advertised REST host:port — the
// rest.advertised.* settings, else the listener's host (the machine's name when it has none) and the
// bound port.
func WorkerID(cfg *config.Worker, bound net.Addr) string {
	host, port := cfg.RestAdvertisedHostName, ""
	if cfg.RestAdvertisedPort != 0 {
		port = strconv.Itoa(cfg.RestAdvertisedPort)
	}
	if len(cfg.Listeners) > 0 {
		if u, err := url.Parse(strings.TrimSpace(cfg.Listeners[0])); err == nil && host == "" {
			host = u.Hostname()
		}
	}
	if host == "" {
		host, _ = os.Hostname()
	}
	if port == "" {
		if tcp, ok := bound.(*net.TCPAddr); ok {
			port = strconv.Itoa(tcp.Port)
		}
	}
	return net.JoinHostPort(host, port)
}

package rest

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cdcd/cdcd/connect/interworker"
)

const (
	// forwardTimeout is Connect's REST request timeout, for a request forwarded to another worker.
	forwardTimeout = 90 * time.Second
)

type bodyKey struct{}

// SetForwardClient replaces the client used to forward requests to other workers (e.g. one that trusts
// the cluster's TLS certificates).
func (s *Server) SetForwardClient(c *http.Client) { s.forwarder = c }

// forward sends a request this worker cannot serve to target, the base URL of the worker that can, with
// Connect's ?forward= rule: a request from a client (no forward parameter) may be forwarded twice (it is
// sent on with forward=true), one already forwarded once only once more (forward=false), and one that
// reaches a third worker is refused, since the group must have rebalanced meanwhile. Only the
// Authorization header goes along, as in Connect, and an internal request's signature, which the
// unchanged body keeps valid (Connect drops it, and its leader then refuses the request unsigned).
func (s *Server) forward(w http.ResponseWriter, r *http.Request, target string) {
	query := r.URL.Query()
	_, forwarded := query["forward"]
	if forwarded && !strings.EqualFold(query.Get("forward"), "true") {
		s.log.Error("a request could not find the worker that serves it within two hops", "method", r.Method, "path", r.URL.Path)
		writeError(w, http.StatusConflict, "Cannot complete request because of a conflicting operation (e.g. worker rebalance)")
		return
	}
	if target == "" {
		writeError(w, http.StatusConflict, "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway.")
		return
	}
	query.Set("forward", strconv.FormatBool(!forwarded))
	u, err := url.Parse(target)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "Invalid URL of the worker to forward to: "+err.Error())
		return
	}
	// The path goes on as the client escaped it: a connector name holding '/' (%2F) stays one segment.
	base := strings.TrimSuffix(u.EscapedPath(), "/")
	u.Path = strings.TrimSuffix(u.Path, "/") + r.URL.Path
	u.RawPath = base + r.URL.EscapedPath()
	u.RawQuery = query.Encode()
	var body []byte
	if kept, ok := r.Context().Value(bodyKey{}).(*keptBody); ok {
		body = kept.data
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if len(body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range []string{"Authorization", interworker.SignatureHeader, interworker.AlgorithmHeader} {
		if v := r.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	s.log.Debug("forwarding request", "method", r.Method, "url", u.String())
	resp, err := s.forwarder.Do(req)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "IO Error trying to forward REST request: "+err.Error())
		return
	}
	defer resp.Body.Close()
	if v := resp.Header.Get("Content-Type"); v != "" {
		w.Header().Set("Content-Type", v)
	}
	// Connect builds a Location relative to the worker the client asked.
	if loc, err := url.Parse(resp.Header.Get("Location")); err == nil && loc.Path != "" {
		w.Header().Set("Location", requestBase(r)+loc.EscapedPath())
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// FromLeader serves h on the group's leader and forwards the request to the leader on every other worker
// (with the forward rule above), for what only the leader knows: the slot guardian's inventory. leads
// reports whether this worker leads and the leader's URL.
func (s *Server) FromLeader(h http.Handler, leads func() (bool, string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if leader, url := leads(); !leader {
			s.forward(w, r, url)
			return
		}
		h.ServeHTTP(w, r)
	})
}

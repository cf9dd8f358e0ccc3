package rest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/cdcd/cdcd/connect"
	"github.com/cdcd/cdcd/connect/interworker"
)

// This file serves Connect's internal endpoints, which workers of a distributed group call on each other
// (InternalClusterResource): POST /connectors/{name}/tasks (a follower hands the leader task configs) and
// PUT /connectors/{name}/fence (a follower asks the leader for a round of zombie fencing). They are
// authenticated as Connect authenticates them (KIP-507): by a signature over the body with the group's
// session key, which stands in for a user's credentials. A request without one needs credentials when
// basic authentication is on, and is refused anyway while the group requires signatures. A standalone
// worker has no such endpoints: 404 before a byte of the body is read.

// The internal endpoints' routes.
const (
	taskConfigsRoute = "POST /connectors/{name}/tasks"
	fenceRoute       = "PUT /connectors/{name}/fence"
)

// maxInternalBody bounds an internal request's body: task configs of Debezium's one task are far smaller.
const maxInternalBody = 1 << 20

// InterWorker is a herder of a distributed worker (*connect.Distributed), which serves the internal
// endpoints. Every method may be called concurrently.
type InterWorker interface {
	// SignaturesRequired says whether an unsigned internal request is refused (the group's protocol is
	// Connect's "sessioned").
	SignaturesRequired() bool
	// VerifyInternalRequest checks a signed request's signature over its body; a refusal is a
	// *connect.RequestError with Connect's status and words.
	VerifyInternalRequest(sig interworker.Signature, body []byte) error
	// PutTaskConfigs stores a connector's task configs (the leader; others answer NotLeader).
	PutTaskConfigs(name string, tasks []map[string]string) error
	// FenceZombies runs a round of zombie fencing for a connector (the leader; others answer NotLeader);
	// it blocks until the round ends or ctx does.
	FenceZombies(ctx context.Context, name string) error
}

var _ InterWorker = (*connect.Distributed)(nil)

// internalRoute says whether r goes to an internal endpoint: ServeHTTP leaves its authentication and
// its body to internalRequest.
func (s *Server) internalRoute(r *http.Request) bool {
	_, pattern := s.mux.Handler(r)
	return pattern == taskConfigsRoute || pattern == fenceRoute
}

// internalRequest authenticates an internal request and reads its body (at most maxInternalBody), which
// it keeps for forwarding and hands on in the returned request; on refusal it has answered. The
// signature headers are checked before the body is read: an unsigned request costs no read.
func (s *Server) internalRequest(w http.ResponseWriter, r *http.Request) (InterWorker, *http.Request, bool) {
	iw, ok := s.herder.(InterWorker)
	if !ok {
		writeError(w, http.StatusNotFound, "HTTP 404 Not Found")
		return nil, nil, false
	}
	sig, sigErr := interworker.FromHeaders(r.Header)
	switch {
	case errors.Is(sigErr, interworker.ErrUnsigned):
		if s.auth != nil && (!s.auth.allow(w, r) || !s.auth.mayChange(w, r)) {
			return nil, nil, false
		}
		if iw.SignaturesRequired() {
			writeError(w, http.StatusBadRequest, sigErr.Error())
			return nil, nil, false
		}
	case sigErr != nil:
		writeError(w, http.StatusBadRequest, sigErr.Error())
		return nil, nil, false
	}
	r = r.WithContext(context.WithValue(r.Context(), bodyKey{}, &keptBody{}))
	body, ok := readBounded(w, r, maxInternalBody)
	if !ok {
		return nil, nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body)) // for the handler to decode
	if sigErr == nil {
		if err := iw.VerifyInternalRequest(sig, body); err != nil {
			s.fail(w, r, err)
			return nil, nil, false
		}
	}
	return iw, r, true
}

// putTaskConfigs is Connect's internal endpoint: a follower hands the leader a connector's task configs.
func (s *Server) putTaskConfigs(w http.ResponseWriter, r *http.Request) {
	iw, r, ok := s.internalRequest(w, r)
	if !ok {
		return
	}
	var tasks []map[string]string
	if !s.readBody(w, r, &tasks) {
		return
	}
	if err := iw.PutTaskConfigs(r.PathValue("name"), tasks); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// putFence is Connect's PUT /connectors/{name}/fence: 204 once the leader's round of zombie fencing is done
// (a worker that does not lead answers NotLeader, and the request is forwarded). Workers call it on the
// leader before an exactly-once task starts.
func (s *Server) putFence(w http.ResponseWriter, r *http.Request) {
	iw, r, ok := s.internalRequest(w, r)
	if !ok {
		return
	}
	if err := iw.FenceZombies(r.Context(), r.PathValue("name")); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

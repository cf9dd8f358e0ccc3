package avro

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/riferrei/srclient"
)

// registryClient speaks Confluent's Schema Registry REST API through srclient, and adds what
// AvroConverter's client does on top: failover to the next URL when one cannot be reached, and bounded
// retries with doubling waits for requests that could not be delivered or got a transient status.
//
// srclient talks to a single URL, builds its requests without a context and keeps only the body of an
// error answer, not its status. So every request to a URL gets a srclient client of its own, over an
// HTTP client whose transport binds the request's context, signs it and records the registry's answer
// (see conn). A client that lives for one request also keeps srclient's caches from ever serving a
// stale "latest" version: the converter caches the ids it obtains itself.
type registryClient struct {
	endpoints []endpoint
	// http carries every round trip, with schema.registry.ssl.*'s TLS; its connections are reused
	// across requests.
	http      http.RoundTripper
	bearer    *Bearer // nil: no bearer auth
	urls      string  // for error messages; carries no user info
	normalize bool
	retries   int
	wait      time.Duration
	maxWait   time.Duration
	// sleep waits between attempts; tests replace it to run without a clock.
	sleep func(context.Context, time.Duration) error
}

// endpoint is one registry URL and the credentials sent to it.
type endpoint struct {
	base string        // srclient appends paths to it as they are, so it has no trailing slash
	host string        // the credentials go to this host only, not to one a redirect leads to
	user *url.Userinfo // nil: no basic auth
}

// requestTimeout bounds one request to one URL; a stalled registry is then retried like an unreachable
// one.
const requestTimeout = 30 * time.Second

const (
	userAgent   = "cdcd"
	contentType = "application/vnd.schemaregistry.v1+json"
	// maxErrorBody caps what is kept of a refusal's body: a proxy in front of the registry may answer
	// with a whole HTML page.
	maxErrorBody = 64 << 10
)

func newRegistryClient(c Config) (*registryClient, error) {
	if len(c.URLs) == 0 {
		return nil, fmt.Errorf("%w: no schema registry URL", ErrConfig)
	}
	endpoints := make([]endpoint, len(c.URLs))
	for i, raw := range c.URLs {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("%w: %q is not a schema registry URL", ErrConfig, raw)
		}
		user := c.UserInfo
		if user == nil {
			user = c.Credentials[u.Host]
		}
		endpoints[i] = endpoint{base: strings.TrimSuffix(raw, "/"), host: u.Host, user: user}
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.TLSClientConfig = c.TLS
	return &registryClient{
		endpoints: endpoints, http: base, bearer: c.Bearer, urls: strings.Join(c.URLs, ","), normalize: c.Normalize,
		retries: c.MaxRetries, wait: c.RetryWait, maxWait: c.RetryMaxWait, sleep: sleepCtx,
	}, nil
}

// register is POST /subjects/{subject}/versions: it returns the schema's id, registering it as the
// subject's next version unless the subject already has it. (srclient then reads the schema back, GET
// /schemas/ids/{id}, within the same request.)
func (r *registryClient) register(ctx context.Context, subject, text string) (int, error) {
	var id int
	err := r.retry(ctx, "registering a schema under", subject, func(cn conn) error {
		s, err := cn.sr.CreateSchema(subject, text, srclient.Avro)
		if err != nil {
			return cn.failure(err)
		}
		id = s.ID()
		return nil
	})
	return id, err
}

// lookup is POST /subjects/{subject}: the id of a schema the subject already has.
func (r *registryClient) lookup(ctx context.Context, subject, text string) (int, error) {
	var id int
	err := r.retry(ctx, "looking up the schema in", subject, func(cn conn) error {
		s, err := cn.sr.LookupSchema(subject, text, srclient.Avro)
		if err != nil {
			return cn.failure(err)
		}
		id = s.ID()
		return nil
	})
	return id, err
}

// latest is GET /subjects/{subject}/versions/latest. cdcd writes values with its own schema, so it uses
// the latest version only when that version has the same Parsing Canonical Form (same names, types,
// field order and union branches: the same binary encoding).
func (r *registryClient) latest(ctx context.Context, subject, text string) (int, error) {
	var s *srclient.Schema
	err := r.retry(ctx, "reading the latest version of", subject, func(cn conn) error {
		var err error
		if s, err = cn.sr.GetLatestSchema(subject); err != nil {
			return cn.failure(err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	same, err := sameCanonicalForm(s.Schema(), text)
	if err != nil {
		return 0, fmt.Errorf("%w %s: latest version %d of subject %q (id %d) is not a schema cdcd can read; register a valid one, or set auto.register.schemas=true: %w", ErrRegistry, r.urls, s.Version(), subject, s.ID(), err)
	}
	if !same {
		return 0, fmt.Errorf("%w %s: latest version of subject %q (id %d) is not the record's schema; "+
			"cdcd writes only with its own schema (set auto.register.schemas=true, or register it)", ErrRegistry, r.urls, subject, s.ID())
	}
	return s.ID(), nil
}

// sameCanonicalForm reports whether the registry's schema text a and cdcd's own b have the same Parsing
// Canonical Form. An error is about a.
func sameCanonicalForm(a, b string) (bool, error) {
	sa, err := parseSchema(a)
	if err != nil {
		return false, err
	}
	sb, err := parseSchema(b)
	if err != nil {
		return false, fmt.Errorf("cdcd's own schema: %w", err)
	}
	return sa.Fingerprint() == sb.Fingerprint(), nil
}

// parseSchema parses Avro schema text, as the registry may return anything. hamba/avro panics on some
// invalid schemas (a union without branches given a default indexes its first branch); such a panic is
// returned as an error, so that a registry's answer cannot take the process down.
func parseSchema(text string) (s avro.Schema, err error) {
	defer func() {
		if v := recover(); v != nil {
			s, err = nil, fmt.Errorf("not a valid Avro schema (the Avro parser failed: %v)", v)
		}
	}()
	return avro.ParseWithCache(text, "", &avro.SchemaCache{})
}

// retry runs call until it succeeds, fails for good, or has been tried 1+retries times. The error names
// the registry URLs and the subject; a 409 is ErrIncompatible with the registry's own message.
func (r *registryClient) retry(ctx context.Context, what, subject string, call func(conn) error) error {
	wait := r.wait
	for attempt := 1; ; attempt++ {
		err := r.attempt(ctx, call)
		if err == nil {
			return nil
		}
		var resp *responseError
		isResp := errors.As(err, &resp)
		switch tlsErr := explainTLS(err); {
		case tlsErr != nil:
			return fatalError{fmt.Errorf("%w %s: %s subject %q: %w", ErrRegistry, r.urls, what, subject, tlsErr)}
		case isResp && resp.status == http.StatusConflict:
			return fatalError{fmt.Errorf("%w %s: %w: subject %q: HTTP 409: %s", ErrRegistry, r.urls, ErrIncompatible, subject, resp.Error())}
		case isResp && !transientStatus(resp.status):
			return fmt.Errorf("%w %s: %s subject %q: HTTP %d, error code %d: %s", ErrRegistry, r.urls, what, subject, resp.status, resp.code, resp.Error())
		case attempt > r.retries:
			return fmt.Errorf("%w %s: %s subject %q failed after %d attempts: %w", ErrRegistry, r.urls, what, subject, attempt, err)
		}
		if err := r.sleep(ctx, wait); err != nil {
			return fmt.Errorf("%w %s: %s subject %q: %w", ErrRegistry, r.urls, what, subject, err)
		}
		wait = min(2*wait, r.maxWait)
	}
}

// attempt sends call to the URLs in turn until one answers, and returns that URL's outcome (or the last
// URL's error when none answers). The URLs front one registry: a request it answered, even with a
// refusal, is not sent to the next URL (retry repeats it when the refusal is transient).
func (r *registryClient) attempt(ctx context.Context, call func(conn) error) error {
	var err error
	for i := range r.endpoints {
		var answered bool
		if answered, err = r.send(ctx, &r.endpoints[i], call); answered || ctx.Err() != nil {
			break
		}
	}
	return err
}

// send runs call against one URL, within requestTimeout.
func (r *registryClient) send(ctx context.Context, ep *endpoint, call func(conn) error) (answered bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	tr := &transport{ctx: ctx, base: r.http, endpoint: ep, bearer: r.bearer, normalize: r.normalize}
	hc := &http.Client{Transport: tr}
	err = call(conn{sr: srclient.NewSchemaRegistryClient(ep.base, srclient.WithClient(hc)), hc: hc, base: ep.base, tr: tr})
	return tr.answered, err
}

// conn is one request to one registry URL: srclient for the endpoints it has, and the HTTP client and
// base URL for the one it lacks (see compatibility).
type conn struct {
	sr   *srclient.SchemaRegistryClient
	hc   *http.Client
	base string
	tr   *transport
}

// failure is the error of a failed request: the registry's answer when there was one, with its status,
// which srclient's own error lacks.
func (c conn) failure(err error) error {
	if c.tr.refusal != nil {
		return c.tr.refusal
	}
	return err
}

// transport carries the HTTP round trips of one request to one URL. It gives them what srclient does
// not: the request's context, basic or bearer auth (to the URL's host only, not to one a redirect leads
// to), the user agent, normalize=true when normalize.schemas is set (on every request, as the registry
// ignores it where it does not apply), and a record of the answer. One request's round trips run one
// after the other, so the record needs no lock.
type transport struct {
	ctx       context.Context
	base      http.RoundTripper
	endpoint  *endpoint
	bearer    *Bearer
	normalize bool
	answered  bool           // some round trip got an answer: the URL can be reached
	refusal   *responseError // the last answer, when it was not a success
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(t.ctx) // a RoundTripper must not modify the request it is given
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", contentType)
	if req.URL.Host == t.endpoint.host {
		if err := t.authorize(req); err != nil {
			return nil, err
		}
	}
	if t.normalize {
		q := req.URL.Query()
		q.Set("normalize", "true")
		req.URL.RawQuery = q.Encode()
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	t.answered, t.refusal = true, nil
	// The statuses srclient fails on, so that conn.failure finds the answer behind each such failure.
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// The body only explains the status: a body that cannot be read leaves the status standing.
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		t.refusal = newResponseError(resp.StatusCode, body)
	}
	return resp, nil
}

// authorize sets the request's credentials: the endpoint's basic auth, or the bearer token and
// Confluent's headers. Obtaining an OAuth token may block until the token endpoint answers.
func (t *transport) authorize(req *http.Request) error {
	if t.endpoint.user != nil {
		pass, _ := t.endpoint.user.Password()
		req.SetBasicAuth(t.endpoint.user.Username(), pass)
	}
	if t.bearer == nil {
		return nil
	}
	token, err := t.bearer.token(t.ctx)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if t.bearer.LogicalCluster != "" {
		req.Header.Set(headerLogicalCluster, t.bearer.LogicalCluster)
	}
	if t.bearer.IdentityPoolID != "" {
		req.Header.Set(headerIdentityPool, t.bearer.IdentityPoolID)
	}
	return nil
}

// responseError is a registry answer that is not a success.
type responseError struct {
	status  int
	code    int    // Confluent's error_code (40401: subject not found, …); 0 when the body has none
	message string // the registry's message, else the body as it came
}

func newResponseError(status int, body []byte) *responseError {
	var doc struct {
		Code    int    `json:"error_code"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(body, &doc) // a body that is not Confluent's error document is kept as it came
	e := &responseError{status: status, code: doc.Code, message: doc.Message}
	if e.message == "" {
		e.message = string(bytes.TrimSpace(body))
	}
	if e.message == "" {
		e.message = http.StatusText(status)
	}
	return e
}

func (e *responseError) Error() string { return e.message }

// transientStatus is a status worth another attempt: the registry or a proxy in front of it is busy,
// restarting or electing a leader.
func transientStatus(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

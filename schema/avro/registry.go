package avro

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"
)

// registryClient speaks Confluent's Schema Registry REST API through franz-go's client, which fails over
// to the next URL when one cannot be reached. It adds what AvroConverter's client does on top: bounded
// retries with doubling waits for requests that could not be delivered or got a transient status.
type registryClient struct {
	cl        *sr.Client
	urls      string // for error messages; carries no user info
	normalize bool
	retries   int
	wait      time.Duration
	maxWait   time.Duration
	// sleep waits between attempts; tests replace it to run without a clock.
	sleep func(context.Context, time.Duration) error
}

// requestTimeout bounds one HTTP request; a stalled registry is then retried like an unreachable one.
const requestTimeout = 30 * time.Second

func newRegistryClient(c Config) (*registryClient, error) {
	opts := []sr.ClientOpt{
		sr.URLs(c.URLs...),
		sr.HTTPClient(&http.Client{Timeout: requestTimeout}),
		sr.UserAgent("cdcd"),
	}
	switch {
	case c.UserInfo != nil:
		pass, _ := c.UserInfo.Password()
		opts = append(opts, sr.BasicAuth(c.UserInfo.Username(), pass))
	case len(c.Credentials) > 0:
		creds := c.Credentials
		opts = append(opts, sr.PreReq(func(req *http.Request) error {
			if ui, ok := creds[req.URL.Host]; ok {
				pass, _ := ui.Password()
				req.SetBasicAuth(ui.Username(), pass)
			}
			return nil
		}))
	}
	cl, err := sr.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return &registryClient{
		cl: cl, urls: strings.Join(c.URLs, ","), normalize: c.Normalize,
		retries: c.MaxRetries, wait: c.RetryWait, maxWait: c.RetryMaxWait, sleep: sleepCtx,
	}, nil
}

// register is POST /subjects/{subject}/versions: it returns the schema's id, registering it as the
// subject's next version unless the subject already has it.
func (r *registryClient) register(ctx context.Context, subject, text string) (int, error) {
	var id int
	err := r.retry(ctx, "registering a schema under", subject, func(ctx context.Context) error {
		var err error
		id, err = r.cl.RegisterSchema(ctx, subject, sr.Schema{Schema: text}, -1, -1)
		return err
	})
	return id, err
}

// lookup is POST /subjects/{subject}: the id of a schema the subject already has.
func (r *registryClient) lookup(ctx context.Context, subject, text string) (int, error) {
	var id int
	err := r.retry(ctx, "looking up the schema in", subject, func(ctx context.Context) error {
		ss, err := r.cl.LookupSchema(ctx, subject, sr.Schema{Schema: text})
		id = ss.ID
		return err
	})
	return id, err
}

// latest is GET /subjects/{subject}/versions/latest. cdcd writes values with its own schema, so it uses
// the latest version only when that version has the same Parsing Canonical Form (same names, types,
// field order and union branches: the same binary encoding).
func (r *registryClient) latest(ctx context.Context, subject, text string) (int, error) {
	var ss sr.SubjectSchema
	err := r.retry(ctx, "reading the latest version of", subject, func(ctx context.Context) error {
		var err error
		ss, err = r.cl.SchemaByVersion(ctx, subject, -1)
		return err
	})
	if err != nil {
		return 0, err
	}
	same, err := sameCanonicalForm(ss.Schema.Schema, text)
	if err != nil {
		return 0, fmt.Errorf("%w %s: latest version of subject %q (id %d): %w", ErrRegistry, r.urls, subject, ss.ID, err)
	}
	if !same {
		return 0, fmt.Errorf("%w %s: latest version of subject %q (id %d) is not the record's schema; "+
			"cdcd writes only with its own schema (set auto.register.schemas=true, or register it)", ErrRegistry, r.urls, subject, ss.ID)
	}
	return ss.ID, nil
}

func sameCanonicalForm(a, b string) (bool, error) {
	sa, err := avro.ParseWithCache(a, "", &avro.SchemaCache{})
	if err != nil {
		return false, err
	}
	sb, err := avro.ParseWithCache(b, "", &avro.SchemaCache{})
	if err != nil {
		return false, err
	}
	return sa.Fingerprint() == sb.Fingerprint(), nil
}

// retry runs call until it succeeds, fails for good, or has been tried 1+retries times. The error names
// the registry URLs and the subject; a 409 is ErrIncompatible with the registry's own message.
func (r *registryClient) retry(ctx context.Context, what, subject string, call func(context.Context) error) error {
	if r.normalize {
		ctx = sr.WithParams(ctx, sr.Normalize)
	}
	wait := r.wait
	for attempt := 1; ; attempt++ {
		err := call(ctx)
		if err == nil {
			return nil
		}
		var resp *sr.ResponseError
		isResp := errors.As(err, &resp)
		switch {
		case isResp && resp.StatusCode == http.StatusConflict:
			return fatalError{fmt.Errorf("%w %s: %w: subject %q: HTTP 409: %s", ErrRegistry, r.urls, ErrIncompatible, subject, resp.Error())}
		case isResp && !transientStatus(resp.StatusCode):
			return fmt.Errorf("%w %s: %s subject %q: HTTP %d, error code %d: %s", ErrRegistry, r.urls, what, subject, resp.StatusCode, resp.ErrorCode, resp.Error())
		case attempt > r.retries:
			return fmt.Errorf("%w %s: %s subject %q failed after %d attempts: %w", ErrRegistry, r.urls, what, subject, attempt, err)
		}
		if err := r.sleep(ctx, wait); err != nil {
			return fmt.Errorf("%w %s: %s subject %q: %w", ErrRegistry, r.urls, what, subject, err)
		}
		wait = min(2*wait, r.maxWait)
	}
}

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

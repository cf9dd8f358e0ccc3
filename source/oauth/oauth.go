// Package oauth is the OAuth 2 client-credentials login that Kafka's OIDC login
// (OAuthBearerLoginCallbackHandler, KIP-768) and Confluent's schema registry client
// (bearer.auth.credentials.source=OAUTHBEARER) share: a token is fetched from the token endpoint with
// the client's id and secret (or read from a file), checked as Kafka's client checks it (a JWT with a
// numeric exp and a subject claim), and cached until its refresh time.
//
// The callers name their own settings: errors name the keys of Keys, never the secret or the token.
package oauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// Keys are the caller's names of the settings an error may point at.
type Keys struct {
	Endpoint   string // the token endpoint URL (sasl.oauthbearer.token.endpoint.url, bearer.auth.issuer.endpoint.url)
	SubClaim   string // the subject claim's name
	ScopeClaim string // the scope claim's name
}

// RefreshPolicy is when a cached token is replaced, as Kafka's ExpiringCredentialRefreshingLogin
// decides it (sasl.login.refresh.*; Confluent's OauthTokenCache is the same rule with Factor 0.8, no
// jitter, no minimum period and bearer.auth.cache.expiry.buffer.seconds as Buffer), and how failed
// requests are retried (sasl.login.retry.backoff.ms and .max.ms).
type RefreshPolicy struct {
	Factor, Jitter      float64
	MinPeriod, Buffer   time.Duration
	Backoff, BackoffMax time.Duration
}

// RefreshTime is when a token obtained at now that expires at expires is refreshed: after Factor (plus
// Jitter×r) of its lifetime, but not within Buffer of its expiry nor sooner than MinPeriod; when the
// lifetime cannot hold both, just after that fraction of it.
func (p RefreshPolicy) RefreshTime(now, expires time.Time, r float64) time.Time {
	pct := p.Factor + p.Jitter*r
	life := expires.Sub(now)
	if life <= 0 {
		return now
	}
	if now.Add(p.MinPeriod + p.Buffer).After(expires) {
		return now.Add(time.Duration(float64(life) * pct))
	}
	proposed := now.Add(time.Duration(float64(life) * pct))
	if end := expires.Add(-p.Buffer); proposed.After(end) {
		return end
	}
	if earliest := now.Add(p.MinPeriod); proposed.Before(earliest) {
		return earliest
	}
	return proposed
}

// ClientCredentials fetches and caches one client's token. Its fields are set before the first Token
// and not changed after; Token is safe for concurrent use (callers share one cache).
type ClientCredentials struct {
	// Endpoint is the token endpoint (http or https), or a file: URL of a file holding the token.
	Endpoint *url.URL
	// Client sends the token requests; nil for a file: Endpoint.
	Client       *http.Client
	ClientID     string
	ClientSecret string
	Scope        string // "" sends no scope
	// URLEncode URL-encodes the id and secret before the basic authentication (sasl.oauthbearer.header.urlencode).
	URLEncode bool
	// SubClaim and ScopeClaim are the claims checked in the token ("sub" and "scope" when empty).
	SubClaim, ScopeClaim string
	Policy               RefreshPolicy
	Keys                 Keys
	// Now is the clock; nil is time.Now. Tests set it.
	Now func() time.Time

	mu        sync.Mutex
	value     string
	expires   time.Time
	refreshAt time.Time
}

func (s *ClientCredentials) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Token returns the cached token until its refresh time, then a new one. It blocks while a token is
// fetched (other callers wait for that fetch), and the fetch ends when ctx does. When a refresh fails
// while the cached token has not expired, the cached one is returned, as Kafka's login keeps its
// credential until a refresh succeeds. The error names the endpoint and the client id.
func (s *ClientCredentials) Token(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.value != "" && now.Before(s.refreshAt) {
		return s.value, nil
	}
	value, expires, err := s.fetch(ctx)
	if err != nil {
		if s.value != "" && now.Before(s.expires) {
			return s.value, nil
		}
		return "", err
	}
	s.value, s.expires = value, expires
	s.refreshAt = s.Policy.RefreshTime(s.now(), expires, rand.Float64())
	return value, nil
}

// fetch gets a token and checks it, retrying what may heal (network errors, 5xx, 408, 429) with the
// policy's backoff for at most BackoffMax, as Kafka's Retry does.
func (s *ClientCredentials) fetch(ctx context.Context) (string, time.Time, error) {
	if s.Endpoint.Scheme == "file" {
		data, err := os.ReadFile(s.Endpoint.Path)
		if err != nil {
			return "", time.Time{}, fmt.Errorf("reading the token (%s): %w", s.Keys.Endpoint, err)
		}
		return s.check(strings.TrimSpace(string(data)))
	}
	deadline := s.now().Add(s.Policy.BackoffMax)
	backoff := s.Policy.Backoff
	for attempt := 1; ; attempt++ {
		token, retry, err := s.post(ctx)
		if err == nil {
			return s.check(token)
		}
		wait := min(backoff, deadline.Sub(s.now()))
		if !retry || wait <= 0 {
			return "", time.Time{}, fmt.Errorf("fetching a token from %s (attempt %d): %w", s.Endpoint.Redacted(), attempt, err)
		}
		select {
		case <-ctx.Done():
			return "", time.Time{}, fmt.Errorf("fetching a token from %s: %w (last error: %w)", s.Endpoint.Redacted(), ctx.Err(), err)
		case <-time.After(wait):
		}
		backoff *= 2
	}
}

// post sends one client-credentials request: HTTP basic authentication with the client id and secret
// (URL-encoded first with URLEncode), grant_type and scope in the form body.
func (s *ClientCredentials) post(ctx context.Context) (token string, retry bool, err error) {
	form := "grant_type=client_credentials"
	if scope := strings.TrimSpace(s.Scope); scope != "" {
		form += "&scope=" + url.QueryEscape(scope)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Endpoint.String(), strings.NewReader(form))
	if err != nil {
		return "", false, errors.New("the token endpoint URL does not make a request")
	}
	id, secret := s.ClientID, s.ClientSecret
	if s.URLEncode {
		id, secret = url.QueryEscape(id), url.QueryEscape(secret)
	}
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(id+":"+secret)))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := s.Client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // its message repeats the URL, which may carry user info
		}
		return "", true, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", true, err
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		retry := resp.StatusCode >= 500 || resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusTooManyRequests
		return "", retry, fmt.Errorf("the token endpoint answered %s for client id %q%s", resp.Status, s.ClientID, errorText(body))
	}
	var answer struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(body, &answer); err != nil || answer.AccessToken == "" {
		return "", false, errors.New("the token endpoint's answer has no access_token")
	}
	return answer.AccessToken, false, nil
}

// errorText is RFC 6749's error and error_description of an error answer; nothing else of the body is
// shown.
func errorText(body []byte) string {
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error == "" {
		return ""
	}
	if e.Description != "" {
		return fmt.Sprintf(": %s (%s)", e.Error, e.Description)
	}
	return ": " + e.Error
}

// check reads the token as Kafka's client validator does (LoginAccessTokenValidator, ClientJwtValidator):
// a JWT of three parts whose payload has a numeric exp, a non-empty subject claim and, if it has a scope
// claim, one of a string or a list of strings. It returns the token's expiry.
func (s *ClientCredentials) check(token string) (string, time.Time, error) {
	subClaim, scopeClaim := s.SubClaim, s.ScopeClaim
	if subClaim == "" {
		subClaim = "sub"
	}
	if scopeClaim == "" {
		scopeClaim = "scope"
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", time.Time{}, errors.New("the token is not a JWT (three sections: header, payload, signature)")
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return "", time.Time{}, errors.New("the token's payload is not base64url")
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		return "", time.Time{}, errors.New("the token's payload is not a JSON object")
	}
	exp, ok := claims["exp"].(float64)
	if !ok {
		return "", time.Time{}, errors.New("the token has no numeric exp claim")
	}
	if sub, _ := claims[subClaim].(string); strings.TrimSpace(sub) == "" {
		return "", time.Time{}, fmt.Errorf("the token has no %s claim (%s)", subClaim, s.Keys.SubClaim)
	}
	switch scope := claims[scopeClaim].(type) {
	case nil, string:
	case []any:
		for _, v := range scope {
			if _, ok := v.(string); !ok {
				return "", time.Time{}, fmt.Errorf("the token's %s claim is not a list of strings (%s)", scopeClaim, s.Keys.ScopeClaim)
			}
		}
	default:
		return "", time.Time{}, fmt.Errorf("the token's %s claim is neither a string nor a list (%s)", scopeClaim, s.Keys.ScopeClaim)
	}
	return token, time.UnixMilli(int64(exp * 1000)), nil
}

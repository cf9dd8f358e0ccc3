package connect

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"

	"github.com/cdcd/cdcd/schema/configdef"
)

// secrets are the values of one connector config that must never leave the process — in a REST response, a
// task's status trace or a log line: every value a config provider resolved (${env:…}, ${file:…}), every value
// of a PASSWORD-typed key, and every value of a key that names a credential (passwords, JAAS lines, inline
// private keys, client secrets). Messages that quote a value (Kafka's "Invalid value <v> for configuration
// <k>") are scrubbed by replacing each secret with [hidden], so no message format can leak one.
type secrets []string

// credentialKey matches keys whose values are credentials whatever their declared type: among them the
// AvroConverter's basic.auth.user.info (user:password), bearer.auth.token, bearer.auth.client.secret and
// schema.registry.ssl.keystore.key. A credentials source (basic.auth.credentials.source=USER_INFO,
// bearer.auth.credentials.source=OAUTHBEARER) only names where the credentials are: it is no secret,
// and scrubbing it would blank words like OAUTHBEARER in every message (see credentialSource).
var credentialKey = regexp.MustCompile(`(?i)(password|passwd|secret|jaas\.config|keystore\.key|token|credentials|user\.info)`)

// credentialSource matches the keys credentialKey matches that name a source of credentials, not one.
var credentialSource = regexp.MustCompile(`(?i)credentials\.source$`)

// minScrubbedLen is the shortest value scrubbed from free text. A shorter one would blank ordinary words in
// every message (a password "cdcd" would hide the product's name from its own log lines); a value quoted as a
// value still prints as [hidden] when its key is password-typed, because configdef formats it so.
const minScrubbedLen = 6

// secretsOf collects the secrets of a connector config: raw as submitted, resolved as the task sees it, defs
// the keys with their types.
func secretsOf(raw, resolved map[string]string, defs []configdef.Key) secrets {
	passwordKeys := map[string]bool{}
	for _, d := range defs {
		if d.Type == configdef.PasswordType {
			passwordKeys[d.Name] = true
		}
	}
	var out secrets
	for key, value := range resolved {
		if len(value) < minScrubbedLen {
			continue
		}
		if value != raw[key] || passwordKeys[key] || credentialKey.MatchString(key) && !credentialSource.MatchString(key) {
			out = append(out, value)
		}
	}
	// Longest first, so a secret that contains another is hidden whole.
	slices.SortFunc(out, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return slices.Compact(out)
}

// scrub returns text with every secret replaced by [hidden].
func (s secrets) scrub(text string) string {
	for _, v := range s {
		text = strings.ReplaceAll(text, v, configdef.Hidden)
	}
	return text
}

// error returns err with a scrubbed message; errors.Is and errors.As still see what err wraps.
func (s secrets) error(err error) error {
	if err == nil || len(s) == 0 {
		return err
	}
	text := s.scrub(err.Error())
	if text == err.Error() {
		return err
	}
	return scrubbedError{err: err, text: text}
}

type scrubbedError struct {
	err  error
	text string
}

func (e scrubbedError) Error() string { return e.text }
func (e scrubbedError) Unwrap() error { return e.err }

// logger returns log with every message and attribute value scrubbed: a task's reader and sink log through
// it, so what they quote from their config cannot leak.
func (s secrets) logger(log *slog.Logger) *slog.Logger {
	if len(s) == 0 {
		return log
	}
	return slog.New(scrubHandler{next: log.Handler(), secrets: s})
}

type scrubHandler struct {
	next    slog.Handler
	secrets secrets
}

func (h scrubHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h scrubHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.secrets.scrub(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h scrubHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	scrubbed := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		scrubbed[i] = h.attr(a)
	}
	return scrubHandler{next: h.next.WithAttrs(scrubbed), secrets: h.secrets}
}

func (h scrubHandler) WithGroup(name string) slog.Handler {
	return scrubHandler{next: h.next.WithGroup(name), secrets: h.secrets}
}

// attr scrubs one attribute: strings, errors and anything printed through its String method; groups
// attribute by attribute.
func (h scrubHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.secrets.scrub(v.String()))
	case slog.KindGroup:
		group := v.Group()
		scrubbed := make([]any, len(group))
		for i, g := range group {
			scrubbed[i] = h.attr(g)
		}
		return slog.Group(a.Key, scrubbed...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, h.secrets.scrub(x.Error()))
		case interface{ String() string }:
			return slog.String(a.Key, h.secrets.scrub(x.String()))
		default:
			// A slice or map may hold a secret too; keep the value as it is unless its text does.
			if text := fmt.Sprint(x); h.secrets.scrub(text) != text {
				return slog.String(a.Key, h.secrets.scrub(text))
			}
			return slog.Any(a.Key, x)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

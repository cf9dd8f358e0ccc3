package connect

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cdcd/cdcd/schema/configdef"
	"github.com/cdcd/cdcd/schema/javacompat"
	"github.com/cdcd/cdcd/source"
)

// secrets are what one connector config holds that must never leave the process — in a REST response, a
// task's status trace or a log line: every value a config provider resolved (${env:…}, ${file:…}), every
// value of a PASSWORD-typed key, and every value of a key that names a credential (passwords, JAAS lines,
// inline private keys, client secrets).
//
// Secrets stay out by construction where cdcd itself words the text: what a parse or a check refuses is
// run on the resolved config, but its message is one of (see refusals):
//   - the refusal's own text, only when the same check, run on the config with every secret replaced by
//     its reference, words the same refusal identically: that text was then built without any secret, so it
//     cannot hold a piece of one, however the parser trims, splits or quotes (a policy's refusal of
//     producer.override.sasl.jaas.config keeps Connect's words);
//   - otherwise, for a secret key, a message built from the key and its unresolved reference
//     ("Invalid value ${file:/run/db.properties:password} for configuration message.key.columns: …"),
//     never from the refused value;
//   - otherwise a message naming the key and the secret keys it was refused together with.
//
// Text worded elsewhere — a database server's or a Kafka broker's error, a task's runtime failure, a log
// line of a reader — cannot be built from the unresolved config. There the scrubber applies (scrub, error,
// logger): it replaces each secret and each piece of one (trimmed, split at separators, quoted or escaped)
// that is long enough not to blank ordinary words. The readers keep their passwords as configdef.Password,
// which formats as [hidden] whatever the verb, so a config printed whole shows none.
type secrets struct {
	// shown maps each secret key to what stands for its value in a message: the value as submitted (its
	// ${provider:path:key} reference) for a key a provider resolved, [hidden] for a password or credential.
	shown map[string]string
	// texts are the secret values and their pieces, longest first: what scrub replaces.
	texts []string
}

// credentialKey matches keys whose values are credentials whatever their declared type: among them the
// AvroConverter's basic.auth.user.info (user:password), bearer.auth.token, bearer.auth.client.secret and
// schema.registry.ssl.keystore.key. A credentials source (basic.auth.credentials.source=USER_INFO,
// bearer.auth.credentials.source=OAUTHBEARER) only names where the credentials are: it is no secret,
// and scrubbing it would blank words like OAUTHBEARER in every message (see credentialSource).
var credentialKey = regexp.MustCompile(`(?i)(password|passwd|secret|jaas\.config|keystore\.key|token|credentials|user\.info)`)

// credentialSource matches the keys credentialKey matches that name a source of credentials, not one.
var credentialSource = regexp.MustCompile(`(?i)credentials\.source$`)

// minScrubbedLen is the shortest text scrubbed from free text. A shorter one would blank ordinary words in
// every message (a password "cdcd" would hide the product's name from its own log lines); the messages cdcd
// words itself never quote a secret of any length (see refusals).
const minScrubbedLen = 6

// pieceSeparators split a secret into the pieces a parser may quote on their own: list and map separators,
// whitespace, quotes and escapes.
var pieceSeparators = regexp.MustCompile(`[\s;,=:"'\\/|&]+`)

// secretsOf collects the secrets of a connector config: raw as submitted, resolved as the task sees it, defs
// the keys with their types.
func secretsOf(raw, resolved map[string]string, defs []configdef.Key) secrets {
	passwordKeys := map[string]bool{}
	for _, d := range defs {
		if d.Type == configdef.PasswordType {
			passwordKeys[d.Name] = true
		}
	}
	s := secrets{shown: map[string]string{}}
	for key, value := range resolved {
		resolvedByProvider := value != raw[key]
		credential := passwordKeys[key] || credentialKey.MatchString(key) && !credentialSource.MatchString(key)
		if !resolvedByProvider && !credential || value == "" {
			continue // an empty value hides nothing; masking it would change what a check sees
		}
		s.shown[key] = configdef.Hidden
		if resolvedByProvider && !credential {
			s.shown[key] = raw[key]
		}
		s.texts = append(s.texts, pieces(value)...)
	}
	// Longest first, so a secret that contains another is hidden whole.
	slices.SortFunc(s.texts, func(a, b string) int { return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b)) })
	s.texts = slices.Compact(s.texts)
	return s
}

// pieces are the forms of a secret value a message may carry: the value, trimmed as Java and Go trim it,
// escaped as %q and JSON escape it, and each of those split at every separator, and at each separator
// alone (a list parser splits at ',' and quotes the rest as it is), trimmed; those of at least
// minScrubbedLen bytes.
func pieces(value string) []string {
	quoted := strconv.Quote(value)
	jsonQuoted, _ := json.Marshal(value)
	forms := []string{value, javacompat.Trim(value), strings.TrimSpace(value),
		quoted[1 : len(quoted)-1], string(jsonQuoted[1 : len(jsonQuoted)-1])}
	var out []string
	for _, f := range forms {
		out = append(out, f)
		out = append(out, pieceSeparators.Split(f, -1)...)
		for _, sep := range slices.Compact(slices.Sorted(slices.Values(pieceSeparators.FindAllString(f, -1)))) {
			for _, p := range strings.Split(f, sep) {
				out = append(out, p, strings.TrimSpace(p))
			}
		}
	}
	return slices.DeleteFunc(out, func(p string) bool { return len(p) < minScrubbedLen })
}

// secret reports whether key's value is a secret.
func (s secrets) secret(key string) bool {
	_, ok := s.shown[key]
	return ok
}

// masked returns cfg with each secret replaced by what stands for it in messages.
func (s secrets) masked(cfg map[string]string) map[string]string {
	out := maps.Clone(cfg)
	for key, shown := range s.shown {
		if _, ok := out[key]; ok {
			out[key] = shown
		}
	}
	return out
}

// refusals returns what check refuses of resolved, each refusal worded without any secret (see secrets):
// a refusal keeps its text only when check words it identically for the config with every secret masked;
// otherwise a refusal of a secret key is worded from the key and its reference, one of another key from the
// key names. check must not depend on anything but its argument (it runs twice).
func (s secrets) refusals(resolved map[string]string, check func(map[string]string) []keyError) []keyError {
	found := check(resolved)
	if len(found) == 0 || len(s.shown) == 0 {
		return found
	}
	unmasked := map[keyError]int{}
	for _, e := range check(s.masked(resolved)) {
		unmasked[e]++
	}
	var out []keyError
	for _, e := range found {
		var worded keyError
		switch {
		case unmasked[e] > 0:
			unmasked[e]--
			worded = keyError{e.key, s.scrub(e.msg)} // scrubbed all the same: defence in depth
		case s.secret(e.key):
			worded = keyError{e.key, s.invalidSecret(e.key)}
		default:
			worded = keyError{e.key, s.refusedTogether(e.key)}
		}
		if !slices.Contains(out, worded) {
			out = append(out, worded)
		}
	}
	return out
}

// invalidSecret is the refusal of a secret key's value, worded from the key and its reference.
func (s secrets) invalidSecret(key string) string {
	what := "the value the config provider resolved"
	if s.shown[key] == configdef.Hidden {
		what = "the value (a password or credential)"
	}
	return fmt.Sprintf("Invalid value %s for configuration %s: %s is not valid here (its text is not shown)", s.shown[key], key, what)
}

// refusedTogether is the refusal of a key whose message depends on a secret of another key.
func (s secrets) refusedTogether(key string) string {
	return fmt.Sprintf("Invalid configuration %s: refused together with the value of %s, which is secret (resolved by a "+
		"config provider, or a password or credential); the refusal would quote it, so it is not shown",
		key, strings.Join(slices.Sorted(maps.Keys(s.shown)), ", "))
}

// taskRefusals is what building a task of c from a config refuses, key by key (connector.class for a
// refusal that names no key).
func taskRefusals(c source.Connector, name string) func(map[string]string) []keyError {
	return func(cfg map[string]string) []keyError {
		_, err := c.NewTask(name, cfg, slog.New(slog.DiscardHandler))
		if err == nil {
			return nil
		}
		return keyErrorsOf(err, nil, "connector.class")
	}
}

// refusalError joins refusals into one error, fatal when fatal is: a refusal that a restart cannot fix.
func refusalError(refusals []keyError, fatal bool) error {
	errs := make([]error, len(refusals))
	for i, r := range refusals {
		errs[i] = errors.New(r.String())
	}
	err := errors.Join(errs...)
	if fatal {
		return source.Fatal(err)
	}
	return err
}

// scrub returns text with every secret, and every piece of one, replaced by [hidden].
func (s secrets) scrub(text string) string {
	for _, v := range s.texts {
		text = strings.ReplaceAll(text, v, configdef.Hidden)
	}
	return text
}

// error returns err with a scrubbed message; errors.Is and errors.As still see what err wraps.
func (s secrets) error(err error) error {
	if err == nil || len(s.texts) == 0 {
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
	if len(s.texts) == 0 {
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

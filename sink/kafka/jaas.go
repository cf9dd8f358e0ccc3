package kafka

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// jaasEntry is the one login module of a sasl.jaas.config value.
type jaasEntry struct {
	module  string
	flag    string // REQUIRED, REQUISITE, SUFFICIENT or OPTIONAL
	options map[string]string
}

// parseJAAS reads a sasl.jaas.config value as Kafka's JaasConfig does, with java.io.StreamTokenizer's
// rules: `<LoginModule> <flag> (<option>=<value>)* ;`, where a value is a word (letters, digits, '.', '-',
// '_', '$') or a string in double or single quotes with Java's escapes; `//` and `/* */` are comments,
// and a lone '/' comments out the rest of its line. A value that starts like a number (a digit, '.', or '-'
// and a digit) is a number to StreamTokenizer and has no string value, so Kafka refuses it unquoted, as
// this does. A client's config holds exactly one login module (JaasContext.loadClientContext).
//
// Errors name the option, never a value: values are credentials.
func parseJAAS(text string) (jaasEntry, error) {
	tz := &jaasTokenizer{s: text}
	var entries []jaasEntry
	for {
		tok, err := tz.next()
		if err != nil {
			return jaasEntry{}, err
		}
		if tok.kind == tokEOF {
			break
		}
		e, err := parseJAASEntry(tz, tok)
		if err != nil {
			return jaasEntry{}, err
		}
		entries = append(entries, e)
	}
	switch len(entries) {
	case 0:
		return jaasEntry{}, errors.New("login module not specified in JAAS config")
	case 1:
		return entries[0], nil
	default:
		return jaasEntry{}, fmt.Errorf("the JAAS config holds %d login modules; a client takes exactly one", len(entries))
	}
}

func parseJAASEntry(tz *jaasTokenizer, first jaasToken) (jaasEntry, error) {
	if first.kind != tokWord && first.kind != tokString {
		return jaasEntry{}, errors.New("the JAAS config does not start with a login module class")
	}
	e := jaasEntry{module: first.text, options: map[string]string{}}
	tok, err := tz.next()
	if err != nil {
		return jaasEntry{}, err
	}
	if tok.kind == tokEOF {
		return jaasEntry{}, errors.New("login module control flag not specified in JAAS config")
	}
	switch flag := strings.ToUpper(tok.text); flag {
	case "REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL":
		e.flag = flag
	default:
		return jaasEntry{}, errors.New("invalid login module control flag in JAAS config (want required, requisite, sufficient or optional)")
	}
	for {
		tok, err := tz.next()
		if err != nil {
			return jaasEntry{}, err
		}
		if tok.kind == tokEOF {
			return jaasEntry{}, errors.New("JAAS config entry not terminated by semi-colon")
		}
		if tok.kind == tokOrdinary && tok.text == ";" {
			return e, nil
		}
		key := tok.text
		if tok.kind != tokWord && tok.kind != tokString {
			key = ""
		}
		eq, err := tz.next()
		if err != nil {
			return jaasEntry{}, err
		}
		value, err := tz.next()
		if err != nil {
			return jaasEntry{}, err
		}
		if eq.kind != tokOrdinary || eq.text != "=" || (value.kind != tokWord && value.kind != tokString) {
			return jaasEntry{}, fmt.Errorf("value not specified for key '%s' in JAAS config (quote values that start with a digit or hold characters other than letters, digits and .-_$)", key)
		}
		e.options[key] = value.text
	}
}

type tokenKind int

const (
	tokEOF tokenKind = iota
	tokWord
	tokString
	tokNumber
	tokOrdinary
)

type jaasToken struct {
	kind tokenKind
	text string
}

// jaasTokenizer is java.io.StreamTokenizer as JaasConfig sets it up: the default syntax (letters and
// the characters from 160 up are word characters, digits '.' and '-' numeric, '"' and '\” quotes, '/' a
// comment character, up to ' ' white space) plus '-', '_' and '$' as word characters and both comment
// styles.
type jaasTokenizer struct {
	s   string
	pos int
}

func isJAASSpace(r rune) bool { return r <= ' ' }
func isJAASDigit(r rune) bool { return r >= '0' && r <= '9' || r == '.' || r == '-' }
func isJAASAlpha(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= 160 || r == '-' || r == '_' || r == '$'
}

func (t *jaasTokenizer) peek() (rune, int) {
	if t.pos >= len(t.s) {
		return -1, 0
	}
	return utf8.DecodeRuneInString(t.s[t.pos:])
}

func (t *jaasTokenizer) next() (jaasToken, error) {
	for {
		r, n := t.peek()
		switch {
		case r < 0:
			return jaasToken{kind: tokEOF}, nil
		case isJAASSpace(r):
			t.pos += n
		case r == '/':
			t.pos += n
			switch r2, n2 := t.peek(); r2 {
			case '*':
				end := strings.Index(t.s[t.pos+n2:], "*/")
				if end < 0 {
					t.pos = len(t.s)
				} else {
					t.pos += n2 + end + 2
				}
			default: // "//" and a lone '/' both comment out the rest of the line
				t.skipLine()
			}
		case isJAASDigit(r):
			// Numeric characters come before word characters in StreamTokenizer: '-' is both.
			if tok, ok := t.number(); ok {
				return tok, nil
			}
			t.pos += n
			return jaasToken{kind: tokOrdinary, text: "-"}, nil
		case isJAASAlpha(r):
			start := t.pos
			for r, n := t.peek(); r >= 0 && (isJAASAlpha(r) || isJAASDigit(r)); r, n = t.peek() {
				t.pos += n
			}
			return jaasToken{kind: tokWord, text: t.s[start:t.pos]}, nil
		case r == '"' || r == '\'':
			t.pos += n
			return jaasToken{kind: tokString, text: t.quoted(r)}, nil
		default:
			t.pos += n
			return jaasToken{kind: tokOrdinary, text: string(r)}, nil
		}
	}
}

func (t *jaasTokenizer) skipLine() {
	if i := strings.IndexAny(t.s[t.pos:], "\r\n"); i >= 0 {
		t.pos += i
	} else {
		t.pos = len(t.s)
	}
}

// number consumes StreamTokenizer's number: an optional '-', digits and at most one '.'. A '-' that no
// digit or '.' follows is an ordinary character (ok false, nothing consumed).
func (t *jaasTokenizer) number() (jaasToken, bool) {
	start := t.pos
	if t.s[t.pos] == '-' {
		if t.pos+1 >= len(t.s) || !(t.s[t.pos+1] >= '0' && t.s[t.pos+1] <= '9' || t.s[t.pos+1] == '.') {
			return jaasToken{}, false
		}
		t.pos++
	}
	dot := false
	for t.pos < len(t.s) {
		c := t.s[t.pos]
		if c == '.' && !dot {
			dot = true
		} else if c < '0' || c > '9' {
			break
		}
		t.pos++
	}
	return jaasToken{kind: tokNumber, text: t.s[start:t.pos]}, true
}

// quoted reads a quoted string after its opening quote q, with StreamTokenizer's escapes: \a \b \f \n
// \r \t \v, octal \ooo, and a backslash before any other character stands for that character. The
// string ends at q, at the end of a line or at the end of the text.
func (t *jaasTokenizer) quoted(q rune) string {
	var b strings.Builder
	for {
		r, n := t.peek()
		if r < 0 || r == '\n' || r == '\r' {
			return b.String()
		}
		t.pos += n
		if r == q {
			return b.String()
		}
		if r != '\\' {
			b.WriteRune(r)
			continue
		}
		r, n = t.peek()
		if r < 0 {
			return b.String()
		}
		t.pos += n
		switch r {
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		default:
			if r >= '0' && r <= '7' {
				// Up to three octal digits, the first at most '3' for three.
				v, max := int(r-'0'), 2
				if r > '3' {
					max = 1
				}
				for i := 0; i < max && t.pos < len(t.s) && t.s[t.pos] >= '0' && t.s[t.pos] <= '7'; i++ {
					v = v*8 + int(t.s[t.pos]-'0')
					t.pos++
				}
				b.WriteRune(rune(v))
			} else {
				b.WriteRune(r)
			}
		}
	}
}

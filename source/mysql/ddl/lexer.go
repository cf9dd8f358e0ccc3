package ddl

import "strings"

// tokenKind classifies the tokens of lex. The TiDB parser decides what a statement means; these tokens keep
// what it forgets and Debezium records: the spelling of a type (INTEGER, BOOLEAN, DOUBLE PRECISION), the raw
// text of a default or an ENUM member, and the exact text of a statement's parts.
type tokenKind int

const (
	tokWord   tokenKind = iota // unquoted identifier or keyword
	tokQuoted                  // `quoted identifier`
	tokString                  // 'string' or "string", quotes and escapes as written
	tokNumber                  // 12, 1.5, .5, 1e3
	tokBits                    // b'1010'
	tokHex                     // x'ff' or 0xff
	tokPunct                   // any other single character: ( ) , ; = . - + …
)

type token struct {
	kind       tokenKind
	text       string // as written
	start, end int    // byte offsets in the statement
}

// is reports whether t is the unquoted word w, in any case.
func (t token) is(w string) bool { return t.kind == tokWord && strings.EqualFold(t.text, w) }

// isPunct reports whether t is the punctuation character c.
func (t token) isPunct(c byte) bool { return t.kind == tokPunct && t.text[0] == c }

// name is the identifier t stands for: a word as written, a quoted identifier without its quotes.
func (t token) name() string {
	if t.kind == tokQuoted {
		return strings.ReplaceAll(t.text[1:len(t.text)-1], "``", "`")
	}
	return t.text
}

// isIdent reports whether t can name a column or a table.
func (t token) isIdent() bool { return t.kind == tokWord || t.kind == tokQuoted }

// lex splits a statement into tokens, dropping whitespace and comments. The content of an executable comment
// (/*! … */, /*M! … */) is lexed as code, as the server does.
func lex(s string) []token {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '#' || (c == '-' && strings.HasPrefix(s[i:], "-- ")) || (c == '-' && strings.HasPrefix(s[i:], "--\n")):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && strings.HasPrefix(s[i:], "/*!"), c == '/' && strings.HasPrefix(s[i:], "/*M!"):
			i += strings.IndexByte(s[i:], '!') + 1
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case c == '/' && strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				i = len(s)
			} else {
				i += end + 4
			}
		case c == '*' && strings.HasPrefix(s[i:], "*/"):
			i += 2 // the end of an executable comment
		case c == '`':
			end := quoteEnd(s, i, '`')
			toks = append(toks, token{tokQuoted, s[i:end], i, end})
			i = end
		case c == '\'' || c == '"':
			end := quoteEnd(s, i, c)
			toks = append(toks, token{tokString, s[i:end], i, end})
			i = end
		case (c == 'b' || c == 'B' || c == 'x' || c == 'X') && i+1 < len(s) && s[i+1] == '\'':
			end := quoteEnd(s, i+1, '\'')
			kind := tokBits
			if c == 'x' || c == 'X' {
				kind = tokHex
			}
			toks = append(toks, token{kind, s[i:end], i, end})
			i = end
		case c == '0' && i+1 < len(s) && (s[i+1] == 'x' || s[i+1] == 'X'):
			end := i + 2
			for end < len(s) && isHexDigit(s[end]) {
				end++
			}
			toks = append(toks, token{tokHex, s[i:end], i, end})
			i = end
		case isDigit(c) || (c == '.' && i+1 < len(s) && isDigit(s[i+1]) && !precededByWord(toks, i)):
			end := numberEnd(s, i)
			if end < len(s) && isWordByte(s[end]) && !isDigit(s[end]) {
				// an identifier that starts with digits, like 1st_column
				end = wordEnd(s, end)
				toks = append(toks, token{tokWord, s[i:end], i, end})
			} else {
				toks = append(toks, token{tokNumber, s[i:end], i, end})
			}
			i = end
		case isWordByte(c):
			end := wordEnd(s, i)
			toks = append(toks, token{tokWord, s[i:end], i, end})
			i = end
		default:
			toks = append(toks, token{tokPunct, s[i : i+1], i, i + 1})
			i++
		}
	}
	return toks
}

// quoteEnd returns the offset just after the quoted run that opens at s[i] with quote q: a doubled quote
// and (for strings) a backslash escape stay inside it. An unterminated run ends with s.
func quoteEnd(s string, i int, q byte) int {
	for j := i + 1; j < len(s); j++ {
		switch {
		case s[j] == '\\' && q != '`':
			j++
		case s[j] == q && j+1 < len(s) && s[j+1] == q:
			j++
		case s[j] == q:
			return j + 1
		}
	}
	return len(s)
}

func numberEnd(s string, i int) int {
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	if j < len(s) && s[j] == '.' {
		j++
		for j < len(s) && isDigit(s[j]) {
			j++
		}
	}
	if j+1 < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if s[k] == '+' || s[k] == '-' {
			k++
		}
		if k < len(s) && isDigit(s[k]) {
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			j = k
		}
	}
	return j
}

func wordEnd(s string, i int) int {
	for i < len(s) && isWordByte(s[i]) {
		i++
	}
	return i
}

// precededByWord tells a qualifying dot (db.t, t.col) from the start of a number like .5.
func precededByWord(toks []token, i int) bool {
	if len(toks) == 0 {
		return false
	}
	last := toks[len(toks)-1]
	return last.end == i && last.isIdent()
}

func isDigit(c byte) bool    { return c >= '0' && c <= '9' }
func isHexDigit(c byte) bool { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }

// isWordByte accepts the bytes of unquoted identifiers: letters, digits, _, $ and any non-ASCII byte.
func isWordByte(c byte) bool {
	return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z') || c == '_' || c == '$' || c >= 0x80
}

// unquote strips one pair of enclosing quotes, leaving escapes as written: Debezium records a default or a
// comment with the text between the quotes, not the string's value.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

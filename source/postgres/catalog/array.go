package catalog

import (
	"fmt"
	"strings"
)

// decodeArray reads a one-dimensional PostgreSQL array literal ("{1,NULL,\"a b\"}", optionally with
// "[lo:hi]=" bounds) the way pgjdbc's ArrayDecoding.buildArrayList does, and decodes each element.
// NULL elements are nil. In a multi-dimensional array every element is itself an array, which
// Debezium's element converters cannot read: each becomes nil.
func decodeArray(s string, decode decodeFunc) (any, error) {
	if strings.HasPrefix(s, "[") {
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			return nil, fmt.Errorf("invalid array %q", truncate(s))
		}
		s = s[eq+1:]
	}
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, fmt.Errorf("invalid array %q", truncate(s))
	}
	out := []any{}
	body := s[1 : len(s)-1]
	for i := skipArraySpace(body, 0); i < len(body); {
		var elem string
		var quoted, sub bool
		var err error
		switch body[i] {
		case '{':
			sub = true
			i, err = skipSubArray(body, i)
		case '"':
			quoted = true
			elem, i, err = quotedElement(body, i)
		default:
			elem, i = bareElement(body, i)
		}
		if err != nil {
			return nil, fmt.Errorf("invalid array %q: %w", truncate(s), err)
		}
		if i = skipArraySpace(body, i); i < len(body) {
			if body[i] != ',' {
				return nil, fmt.Errorf("invalid array %q", truncate(s))
			}
			i = skipArraySpace(body, i+1)
		}
		switch {
		case sub, !quoted && elem == "NULL":
			out = append(out, nil)
		default:
			v, err := decode(elem)
			if err != nil {
				return nil, fmt.Errorf("array element: %w", err)
			}
			out = append(out, v)
		}
	}
	return out, nil
}

// quotedElement reads the double-quoted element at start, undoing backslash escapes.
func quotedElement(s string, start int) (string, int, error) {
	var sb strings.Builder
	for j := start + 1; j < len(s); j++ {
		switch s[j] {
		case '"':
			return sb.String(), j + 1, nil
		case '\\':
			if j++; j >= len(s) {
				return "", 0, fmt.Errorf("dangling escape")
			}
		}
		sb.WriteByte(s[j])
	}
	return "", 0, fmt.Errorf("unterminated quote")
}

// bareElement reads an unquoted element up to the next comma; like pgjdbc it drops white space.
func bareElement(s string, start int) (string, int) {
	var sb strings.Builder
	j := start
	for ; j < len(s) && s[j] != ','; j++ {
		switch {
		case s[j] == '\\' && j+1 < len(s):
			j++
		case isArraySpace(s[j]):
			continue
		}
		sb.WriteByte(s[j])
	}
	return sb.String(), j
}

func skipArraySpace(s string, i int) int {
	for i < len(s) && isArraySpace(s[i]) {
		i++
	}
	return i
}

func isArraySpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// skipSubArray returns the index just after the '}' that closes the '{' at start.
func skipSubArray(s string, start int) (int, error) {
	depth, quoted := 0, false
	for i := start; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '{':
			depth++
		case c == '}':
			if depth--; depth == 0 {
				return i + 1, nil
			}
		}
	}
	return 0, fmt.Errorf("invalid array %q: unbalanced braces", truncate(s))
}

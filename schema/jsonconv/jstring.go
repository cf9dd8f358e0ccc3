package jsonconv

import (
	"unicode/utf8"
)

const upperHex = "0123456789ABCDEF"

// shortEscape maps the ASCII bytes Jackson escapes to the letter of their two-character escape, or to 'u'
// for the \u00XX form; 0 means the byte is written as it is. Jackson escapes only the control characters
// below 0x20, '"' and '\\': '/' and DEL (0x7F) are written unescaped.
var shortEscape = func() [utf8.RuneSelf]byte {
	var t [utf8.RuneSelf]byte
	for c := range 0x20 {
		t[c] = 'u'
	}
	t['\b'], t['\t'], t['\n'], t['\f'], t['\r'] = 'b', 't', 'n', 'f', 'r'
	t['"'], t['\\'] = '"', '\\'
	return t
}()

// appendJSONString appends s as a quoted JSON string, byte for byte as Jackson's UTF8JsonGenerator writes
// the same Java string:
//   - control characters: \b \t \n \f \r, the rest as \u00XX with upper-case hex;
//   - characters of the Basic Multilingual Plane: raw UTF-8;
//   - characters beyond it (emoji, …): the escaped UTF-16 surrogate pair, \uD83D\uDE00, because Jackson
//     escapes every surrogate char it meets instead of combining pairs into 4-byte UTF-8.
//
// s should be valid UTF-8. A Java string cannot hold invalid UTF-8 (a decoder has already replaced it),
// so each invalid byte is written as U+FFFD, which is what Java's decoder does for most malformed input.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0 // s[start:i] is pending raw output
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if shortEscape[c] == 0 {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			if esc := shortEscape[c]; esc == 'u' {
				dst = append(dst, '\\', 'u', '0', '0', upperHex[c>>4], upperHex[c&0xF])
			} else {
				dst = append(dst, '\\', esc)
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
		case r >= 0x10000:
			dst = append(dst, s[start:i]...)
			r -= 0x10000
			dst = appendUnicodeEscape(dst, 0xD800+(r>>10))
			dst = appendUnicodeEscape(dst, 0xDC00+(r&0x3FF))
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func appendUnicodeEscape(dst []byte, u rune) []byte {
	return append(dst, '\\', 'u', upperHex[u>>12&0xF], upperHex[u>>8&0xF], upperHex[u>>4&0xF], upperHex[u&0xF])
}

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
		// Row text is mostly plain ASCII: skip 8 such bytes at a time (a third of cdcd's encoding time
		// went to this loop when it looked at one byte per iteration).
		for i+8 <= len(s) && plainASCII8(load8(s[i:i+8])) {
			i += 8
		}
		if i == len(s) {
			break
		}
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

const (
	ones8  = 0x0101010101010101
	highs8 = 0x8080808080808080
)

// plainASCII8 reports whether all 8 bytes of w are ASCII that Jackson writes unescaped: none is a control
// character, '"', '\\' or a byte of a multi-byte character. It tests the 8 bytes at once (SWAR): with
// every byte below 0x80, (x - 0x01…) &^ x has a byte's high bit set where x's byte is zero, and
// (w - 0x20…) &^ w where w's byte is below 0x20. Borrows can set a bit wrongly only above a byte whose
// bit is set rightly, so "some bit set" is exact.
func plainASCII8(w uint64) bool {
	quote := w ^ '"'*ones8
	backslash := w ^ '\\'*ones8
	flags := w | (w-0x20*ones8)&^w | (quote-ones8)&^quote | (backslash-ones8)&^backslash
	return flags&highs8 == 0
}

// load8 reads 8 bytes of s as a little-endian word; the compiler turns it into one load.
func load8(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func appendUnicodeEscape(dst []byte, u rune) []byte {
	return append(dst, '\\', 'u', upperHex[u>>12&0xF], upperHex[u>>8&0xF], upperHex[u>>4&0xF], upperHex[u&0xF])
}

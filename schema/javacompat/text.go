package javacompat

import "strings"

// Trim is String.trim: it strips every character up to U+0020 at both ends, control characters
// included, and no other white space (not U+00A0, not U+3000), unlike strings.TrimSpace.
func Trim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// TrimIsEmpty is s.trim().isEmpty(), how Debezium tells blank text (Strings.isNullOrBlank, the parts
// its topic names skip). It is not Java 11's String.isBlank, which tests Character.isWhitespace: U+2003
// is blank to isBlank but not to trim, U+0001 the other way round.
func TrimIsEmpty(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] > ' ' {
			return false
		}
	}
	return true
}

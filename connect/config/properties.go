package config

import (
	"errors"
	"fmt"
	"os"
	"unicode/utf16"
)

// Property is one key=value assignment of a .properties file. Line is the
// physical line (1-based) where its logical line starts, kept so that
// messages about a setting can point at the file.
type Property struct {
	Key   string
	Value string
	Line  int
}

// ParseProperties reads text the way java.util.Properties.load(Reader) does:
// '#'/'!' comments, '=', ':' or whitespace separators, continuation lines
// ending in an odd number of backslashes, and the escapes \t \n \r \f \uXXXX
// (any other \x is x). It returns every assignment in file order, duplicates
// included; PropertiesMap applies Java's last-one-wins rule.
//
// The only error is Java's: a \u escape without four hex digits inside its
// key or value.
func ParseProperties(text string) ([]Property, error) {
	p := lineParser{src: []rune(text), line: 1}
	var props []Property
	for {
		logical, startLine, ok := p.next()
		if !ok {
			return props, nil
		}
		key, value, err := splitLogicalLine(logical)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", startLine, err)
		}
		props = append(props, Property{Key: key, Value: value, Line: startLine})
	}
}

// LoadPropertiesFile reads a worker or connector .properties file the way
// Connect does (Utils.loadProps → Properties.load(InputStream)): every byte
// is one ISO-8859-1 character, so non-ASCII text must be written as \uXXXX
// escapes, exactly as with connect-standalone.
func LoadPropertiesFile(path string) ([]Property, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read properties file: %w", err)
	}
	props, err := ParseProperties(DecodeLatin1(data))
	if err != nil {
		return nil, fmt.Errorf("properties file %s: %w", path, err)
	}
	return props, nil
}

// DecodeLatin1 maps each byte to the character with the same code, which is
// what Properties.load(InputStream) does.
func DecodeLatin1(data []byte) string {
	runes := make([]rune, len(data))
	for i, b := range data {
		runes[i] = rune(b)
	}
	return string(runes)
}

// PropertiesMap collapses assignments into a map; a later duplicate replaces
// an earlier one, as in java.util.Properties.
func PropertiesMap(props []Property) map[string]string {
	m := make(map[string]string, len(props))
	for _, p := range props {
		m[p.Key] = p.Value
	}
	return m
}

// lineParser yields logical lines: comments and blank lines dropped, leading
// whitespace skipped, continuations joined. It mirrors Properties.LineReader,
// including its corner cases (a continuation followed by a blank line ends
// the logical line; a line made of just "\" continues into the next, and if
// that one starts with '#' it is a comment).
type lineParser struct {
	src  []rune
	pos  int
	line int
}

func isPropsBlank(c rune) bool { return c == ' ' || c == '\t' || c == '\f' }

func (p *lineParser) next() (logical []rune, startLine int, ok bool) {
	var buf []rune
	skipWhite := true
	appendedLineBegin := false
	precedingBackslash := false
	startLine = p.line
	for p.pos < len(p.src) {
		c := p.read()
		if skipWhite {
			if isPropsBlank(c) {
				continue
			}
			if !appendedLineBegin && (c == '\r' || c == '\n') {
				startLine = p.line
				continue
			}
			skipWhite = false
			appendedLineBegin = false
		}
		if len(buf) == 0 && (c == '#' || c == '!') {
			if !p.skipComment() {
				return nil, 0, false
			}
			skipWhite = true
			startLine = p.line
			continue
		}
		if c != '\n' && c != '\r' {
			buf = append(buf, c)
			precedingBackslash = c == '\\' && !precedingBackslash
			continue
		}
		if len(buf) == 0 {
			skipWhite = true
			startLine = p.line
			continue
		}
		if p.pos >= len(p.src) || !precedingBackslash {
			return dropContinuation(buf, precedingBackslash), startLine, true
		}
		// A backslash at the end of the line joins the next physical line.
		buf = buf[:len(buf)-1]
		skipWhite = true
		appendedLineBegin = true
		precedingBackslash = false
		if c == '\r' && p.src[p.pos] == '\n' {
			p.read()
		}
	}
	if len(buf) == 0 {
		return nil, 0, false
	}
	// At the end of input Java drops a trailing continuation backslash; what
	// is left may be empty, which still yields the entry "" = "".
	return dropContinuation(buf, precedingBackslash), startLine, true
}

func dropContinuation(buf []rune, precedingBackslash bool) []rune {
	if precedingBackslash {
		return buf[:len(buf)-1]
	}
	return buf
}

// read returns the next character and keeps the physical line count, where
// "\r\n", "\r" and "\n" each end one line.
func (p *lineParser) read() rune {
	c := p.src[p.pos]
	p.pos++
	if c == '\n' || (c == '\r' && (p.pos >= len(p.src) || p.src[p.pos] != '\n')) {
		p.line++
	}
	return c
}

// skipComment consumes the rest of a comment line. It reports false when the
// input ended inside the comment.
func (p *lineParser) skipComment() bool {
	for p.pos < len(p.src) {
		if c := p.read(); c == '\r' || c == '\n' {
			return true
		}
	}
	return false
}

// splitLogicalLine finds the key/value separator (the first unescaped '=',
// ':' or blank, then blanks and at most one '=' or ':') and unescapes both
// halves, as Properties.load0 does.
func splitLogicalLine(line []rune) (key, value string, err error) {
	keyLen := 0
	valueStart := len(line)
	hasSep := false
	precedingBackslash := false
	for keyLen < len(line) {
		c := line[keyLen]
		if (c == '=' || c == ':') && !precedingBackslash {
			valueStart = keyLen + 1
			hasSep = true
			break
		}
		if isPropsBlank(c) && !precedingBackslash {
			valueStart = keyLen + 1
			break
		}
		precedingBackslash = c == '\\' && !precedingBackslash
		keyLen++
	}
	for valueStart < len(line) {
		c := line[valueStart]
		if !isPropsBlank(c) {
			if hasSep || (c != '=' && c != ':') {
				break
			}
			hasSep = true
		}
		valueStart++
	}
	if key, err = unescapeProperty(line[:keyLen]); err != nil {
		return "", "", err
	}
	if value, err = unescapeProperty(line[valueStart:]); err != nil {
		return "", "", err
	}
	return key, value, nil
}

// errMalformedUnicode carries Java's IllegalArgumentException text.
//
//lint:ignore ST1005 Java's text, to the letter
var errMalformedUnicode = errors.New(`Malformed \uxxxx encoding.`)

// unescapeProperty applies Properties.loadConvert. \u escapes are UTF-16
// code units: a surrogate pair written as two escapes becomes one character,
// a lone surrogate becomes U+FFFD (Java would keep it and later encode '?').
func unescapeProperty(in []rune) (string, error) {
	units := make([]uint16, 0, len(in))
	for i := 0; i < len(in); i++ {
		c := in[i]
		if c != '\\' || i+1 >= len(in) {
			// A trailing lone backslash cannot reach here from the line
			// parser; keeping it is the safe reading for direct callers.
			units = utf16.AppendRune(units, c)
			continue
		}
		i++
		c = in[i]
		switch c {
		case 'u':
			if i+5 > len(in) {
				return "", errMalformedUnicode
			}
			var v uint16
			for _, h := range in[i+1 : i+5] {
				d, ok := hexDigit(h)
				if !ok {
					return "", errMalformedUnicode
				}
				v = v<<4 | d
			}
			units = append(units, v)
			i += 4
			continue
		case 't':
			c = '\t'
		case 'r':
			c = '\r'
		case 'n':
			c = '\n'
		case 'f':
			c = '\f'
		}
		units = utf16.AppendRune(units, c)
	}
	return string(utf16.Decode(units)), nil
}

func hexDigit(r rune) (uint16, bool) {
	switch {
	case r >= '0' && r <= '9':
		return uint16(r - '0'), true
	case r >= 'a' && r <= 'f':
		return uint16(r-'a') + 10, true
	case r >= 'A' && r <= 'F':
		return uint16(r-'A') + 10, true
	}
	return 0, false
}

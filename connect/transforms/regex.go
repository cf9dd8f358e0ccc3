package transforms

import (
	"fmt"
	"regexp"
	"strings"
)

// javaPattern is a java.util.regex Pattern as Kafka's and Debezium's routers use one: Matcher.matches()
// decides, then Matcher.replaceFirst rewrites. Go's RE2 syntax covers the Java syntax such configs use, and
// its leftmost-first matching prefers alternatives in the order Java's backtracking does; constructs RE2
// lacks (backreferences, lookaround, possessive quantifiers) are rejected when the config is read.
type javaPattern struct {
	whole *regexp.Regexp // the pattern anchored at both ends: matches()
	first *regexp.Regexp // the pattern as written: the find() that replaceFirst starts with
}

// requiredPattern compiles a required, non-empty regex setting.
func requiredPattern(s settings, name string) (javaPattern, error) {
	pattern, err := s.required(name)
	if err != nil {
		return javaPattern{}, err
	}
	if pattern == "" {
		return javaPattern{}, &ConfigError{Key: s.key(name), Problem: "must not be empty"}
	}
	return compilePattern(s, name, pattern)
}

// compilePattern compiles both forms of pattern. The pattern as written is compiled first: the anchored
// form alone can hide an unbalanced one ("a)|(b" anchors to the valid "^(?:a)|(b)$").
func compilePattern(s settings, name, pattern string) (javaPattern, error) {
	var p javaPattern
	var err error
	if p.first, err = regexp.Compile(pattern); err == nil {
		p.whole, err = regexp.Compile(`^(?:` + pattern + `)$`)
	}
	if err != nil {
		return javaPattern{}, &ConfigError{Key: s.key(name), Value: pattern,
			Problem: "not a regular expression cdcd can run (Java features without an RE2 equivalent are unsupported): " + err.Error()}
	}
	return p, nil
}

// replacementSetting reads a required replacement for re, expanding it once against a match of nothing so
// that a malformed one is rejected before the connector starts rather than on its first record.
func replacementSetting(s settings, name string, re javaPattern) (string, error) {
	replacement, err := s.required(name)
	if err != nil {
		return "", err
	}
	if _, err := expandJavaReplacement(re.first, replacement, make([]string, re.first.NumSubexp()+1)); err != nil {
		return "", &ConfigError{Key: s.key(name), Value: replacement, Problem: err.Error()}
	}
	return replacement, nil
}

func (p javaPattern) matches(s string) bool { return p.whole.MatchString(s) }

// replaceIfMatches is `if (m.matches()) m.replaceFirst(replacement)`: ok reports the whole-input match. The
// replaced span is the first match found from the start, which can be shorter than the input: with
// "a|ab", "ab" matches as a whole but "a" is what gets replaced.
func (p javaPattern) replaceIfMatches(s, replacement string) (result string, ok bool, err error) {
	if !p.matches(s) {
		return "", false, nil
	}
	loc := p.first.FindStringSubmatchIndex(s)
	groups := make([]string, len(loc)/2)
	for i := range groups {
		if loc[2*i] >= 0 {
			groups[i] = s[loc[2*i]:loc[2*i+1]]
		}
	}
	expanded, err := expandJavaReplacement(p.first, replacement, groups)
	if err != nil {
		return "", false, err
	}
	return s[:loc[0]] + expanded + s[loc[1]:], true, nil
}

// expandJavaReplacement expands a java.util.regex replacement string: a backslash quotes the next
// character, ${name} is a named group, and $ followed by digits is a numbered group, taking as many digits as
// still name an existing group (Matcher.appendReplacement's rules). An unmatched group expands to nothing.
func expandJavaReplacement(re *regexp.Regexp, replacement string, groups []string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(replacement); i++ {
		c := replacement[i]
		switch {
		case c == '\\':
			i++
			if i == len(replacement) {
				return "", fmt.Errorf("character to be escaped is missing at the end of the replacement")
			}
			b.WriteByte(replacement[i])
		case c != '$':
			b.WriteByte(c)
		case i+1 == len(replacement):
			return "", fmt.Errorf("illegal group reference: group index is missing")
		case replacement[i+1] == '{':
			end := strings.IndexByte(replacement[i+2:], '}')
			if end < 0 {
				return "", fmt.Errorf("named capturing group is missing trailing '}'")
			}
			name := replacement[i+2 : i+2+end]
			idx := re.SubexpIndex(name)
			if idx < 0 {
				return "", fmt.Errorf("no group with name {%s}", name)
			}
			b.WriteString(groups[idx])
			i += 2 + end
		case replacement[i+1] >= '0' && replacement[i+1] <= '9':
			i++
			ref := int(replacement[i] - '0')
			if ref > re.NumSubexp() {
				return "", fmt.Errorf("no group %d", ref)
			}
			for i+1 < len(replacement) && replacement[i+1] >= '0' && replacement[i+1] <= '9' {
				next := ref*10 + int(replacement[i+1]-'0')
				if next > re.NumSubexp() {
					break
				}
				ref = next
				i++
			}
			b.WriteString(groups[ref])
		default:
			return "", fmt.Errorf("illegal group reference in the replacement")
		}
	}
	return b.String(), nil
}

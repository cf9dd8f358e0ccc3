package configdef

import (
	"github.com/cdcd/cdcd/schema/jsonconv"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
)

// javaTrim is String.trim(): it strips every character <= ' ' at both ends,
// not Unicode spaces.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// javaString renders a parsed value as Java's toString does, which is what
// Kafka puts in its messages and in ConfigInfos.
func javaString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case Password:
		return Hidden
	case bool:
		return strconv.FormatBool(x)
	case int16:
		return strconv.FormatInt(int64(x), 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		return javaDouble(x)
	case []string:
		return "[" + strings.Join(x, ", ") + "]"
	}
	return ""
}

// javaDouble is Double.toString.
func javaDouble(d float64) string { return string(jsonconv.AppendJavaDouble(nil, d, 64)) }

// javaHashSetOrder returns distinct items in the order a java.util.HashSet
// built from them iterates: by bucket of the spread String.hashCode, then
// by insertion. Kafka prints some sets in messages, so the order shows.
func javaHashSetOrder(items []string) []string {
	var distinct []string
	for _, it := range items {
		if !contains(distinct, it) {
			distinct = append(distinct, it)
		}
	}
	capacity := 16
	for float64(len(distinct)) > 0.75*float64(capacity) {
		capacity *= 2
	}
	bucket := func(s string) int {
		var h int32
		for _, u := range utf16.Encode([]rune(s)) {
			h = 31*h + int32(u)
		}
		spread := uint32(h) ^ (uint32(h) >> 16)
		return int(spread & uint32(capacity-1))
	}
	sort.SliceStable(distinct, func(i, j int) bool { return bucket(distinct[i]) < bucket(distinct[j]) })
	return distinct
}

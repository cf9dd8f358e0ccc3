package offsets

import (
	"slices"
	"unicode/utf16"
)

// javaHashMapCapacity is the table length of a java.util.HashMap created with
// new HashMap<>() after n puts of distinct keys: 16, doubled whenever the size
// exceeds three quarters of the table (the default load factor).
func javaHashMapCapacity(n int) int {
	capacity := 16
	for n > capacity/4*3 {
		capacity *= 2
	}
	return capacity
}

// javaStringHash is java.lang.String.hashCode: s[0]*31^(n-1) + ... + s[n-1]
// over the UTF-16 code units of s, in 32-bit wrapping arithmetic.
func javaStringHash(s string) uint32 {
	var h uint32
	for _, r := range s {
		if r > 0xFFFF {
			hi, lo := utf16.EncodeRune(r)
			h = 31*h + uint32(hi)
			h = 31*h + uint32(lo)
			continue
		}
		h = 31*h + uint32(r)
	}
	return h
}

// JavaHashMapOrder returns keys in the order a java.util.HashMap<String,?>
// iterates them after they were put, in the given order, into a
// new HashMap<>() (Java 8 and later; checked against Java 17 and 25).
//
// Iteration walks the table by bucket index (h ^ h>>>16) & (capacity-1), and
// within a bucket follows insertion order: every resize splits a chain into a
// low and a high chain that both keep their relative order, so keys that share
// a bucket in the final table were in one chain all along. The final order
// therefore depends only on the final capacity, and insertion order matters
// only between keys that share a bucket.
//
// Repeated keys keep their first position, as a put of an existing key does.
// The emulation ignores treeification (a chain of 8 or more keys in one bucket,
// which Java resolves by growing the table or building a tree); offset maps
// never come near it.
func JavaHashMapOrder(keys []string) []string {
	unique := make([]string, 0, len(keys))
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			unique = append(unique, k)
		}
	}
	mask := uint32(javaHashMapCapacity(len(unique)) - 1)
	bucket := func(k string) uint32 {
		h := javaStringHash(k)
		return (h ^ h>>16) & mask
	}
	slices.SortStableFunc(unique, func(a, b string) int {
		return int(bucket(a)) - int(bucket(b))
	})
	return unique
}

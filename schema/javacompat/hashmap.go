package javacompat

import (
	"slices"
	"unicode/utf16"
)

// HashMapCapacity is the table length of a java.util.HashMap created with new HashMap<>() after n puts
// of distinct keys: 16, doubled whenever the size exceeds three quarters of the table (the default load
// factor). A map made by new HashMap<>(otherMap), putAll into an empty map or new HashSet<>(collection)
// is presized instead and may have another table (HashMapCopyCapacity).
func HashMapCapacity(n int) int {
	capacity := 16
	for n > capacity/4*3 {
		capacity *= 2
	}
	return capacity
}

// HashMapCopyCapacity is the table length of new HashMap<>(m) for a map m of n entries, after extra more
// distinct keys are put into the copy: tableSizeFor(n/0.75 + 1), doubled whenever the size then exceeds
// three quarters of it. (Debezium's notifications copy a Map.of this way and add connector_name.)
func HashMapCopyCapacity(n, extra int) int {
	capacity := 1
	for want := int(float32(n)/0.75 + 1); capacity < want; {
		capacity *= 2
	}
	for n+extra > capacity/4*3 {
		capacity *= 2
	}
	return capacity
}

// StringHash is java.lang.String.hashCode: s[0]*31^(n-1) + ... + s[n-1] over the UTF-16 code units of s,
// in 32-bit wrapping arithmetic. Invalid UTF-8 counts as U+FFFD, the character a Java decoder puts in
// its place.
func StringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r > 0xFFFF {
			hi, lo := utf16.EncodeRune(r)
			h = 31*h + hi
			h = 31*h + lo
			continue
		}
		h = 31*h + r
	}
	return h
}

// HashMapOrder returns keys in the order a java.util.HashMap<String,?> iterates them after they were
// put, in the given order, into a new HashMap<>(), or the order a new HashSet<>() iterates them after
// they were added (a HashSet is a HashMap's key set). See HashMapOrderFunc.
func HashMapOrder(keys []string) []string {
	return HashMapOrderFunc(keys, func(k string) string { return k })
}

// HashMapOrderFunc returns entries, put in the given order into a new HashMap<>() under the keys key
// gives them, in the order the map iterates them (Java 8 and later; checked against Java 17 and 25).
// An entry whose key repeats an earlier one takes that earlier entry's position, as HashMap.put of an
// existing key replaces the value in place. entries is not modified.
//
// Iteration walks the table by bucket index (h ^ h>>>16) & (capacity-1), and within a bucket follows
// insertion order: every resize splits a chain into a low and a high chain that both keep their
// relative order, so keys that share a bucket in the final table were in one chain all along. The
// final order therefore depends only on the final capacity, and insertion order matters only between
// keys that share a bucket.
//
// The emulation ignores treeification (a chain of 8 or more keys in one bucket, which Java resolves by
// growing the table or building a tree); the maps cdcd emulates never come near it.
func HashMapOrderFunc[E any](entries []E, key func(E) string) []E {
	return hashMapOrder(entries, key, HashMapCapacity)
}

// HashMapOrderWithCapacity is HashMapOrder for a map whose table length capacity gives for its number
// of distinct keys (HashMapCopyCapacity for a copied map).
func HashMapOrderWithCapacity(keys []string, capacity func(n int) int) []string {
	return hashMapOrder(keys, func(k string) string { return k }, capacity)
}

func hashMapOrder[E any](entries []E, key func(E) string, capacity func(n int) int) []E {
	unique := make([]E, 0, len(entries))
	position := make(map[string]int, len(entries))
	for _, e := range entries {
		k := key(e)
		if i, seen := position[k]; seen {
			unique[i] = e
			continue
		}
		position[k] = len(unique)
		unique = append(unique, e)
	}
	mask := uint32(capacity(len(unique)) - 1)
	bucket := func(e E) int {
		h := uint32(StringHash(key(e)))
		return int((h ^ h>>16) & mask)
	}
	slices.SortStableFunc(unique, func(a, b E) int { return bucket(a) - bucket(b) })
	return unique
}

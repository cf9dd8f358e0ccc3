package main

import (
	"fmt"
	"math"
	"slices"
)

// median returns the middle value of xs (the mean of the two middle values for an even count), NaN for
// none. xs is not modified.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	mid := len(s) / 2
	if len(s)%2 == 1 {
		return s[mid]
	}
	return (s[mid-1] + s[mid]) / 2
}

// percentile returns the nearest-rank p-th percentile (0 < p <= 100) of xs: the smallest value at least
// p % of the values are at or below. Nearest rank reports a value that was measured, never an
// interpolation between two. NaN for no values.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 || p <= 0 || p > 100 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[max(rank, 1)-1]
}

// spread is a median with the range it came from.
type spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

// spreadOf summarizes xs; no values (a system that did not run) give N == 0, printed as n/a. Values that
// are not numbers are left out, so the result always encodes as JSON.
func spreadOf(xs []float64) spread {
	xs = slices.DeleteFunc(slices.Clone(xs), func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) })
	if len(xs) == 0 {
		return spread{}
	}
	return spread{Median: median(xs), Min: slices.Min(xs), Max: slices.Max(xs), N: len(xs)}
}

// formatRatio prints a ratio spread as "3.2× (2.9–3.5)"; a single round prints no range and an unknown
// ratio prints "n/a".
func formatRatio(s spread) string {
	if s.N == 0 {
		return "n/a"
	}
	if s.N == 1 || s.Min == s.Max {
		return fmt.Sprintf("%s×", sig(s.Median))
	}
	return fmt.Sprintf("%s× (%s–%s)", sig(s.Median), sig(s.Min), sig(s.Max))
}

// formatValue prints a measured spread with its unit: "41,200 (39,800–43,000)".
func formatValue(s spread) string {
	if s.N == 0 {
		return "n/a"
	}
	if s.N == 1 || s.Min == s.Max {
		return sig(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", sig(s.Median), sig(s.Min), sig(s.Max))
}

// sig prints x with about three significant digits and thousands separators: 0.0123, 1.23, 12.3, 123,
// 12,300.
func sig(x float64) string {
	switch a := math.Abs(x); {
	case a == 0:
		return "0"
	case a < 0.1:
		return fmt.Sprintf("%.3g", x)
	case a < 10:
		return fmt.Sprintf("%.2f", x)
	case a < 100:
		return fmt.Sprintf("%.1f", x)
	}
	return thousands(int64(math.Round(x)))
}

func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// ratios divides num by den round by round (pairs with a zero or missing denominator are left out).
func ratios(num, den []float64) []float64 {
	var out []float64
	for i := range min(len(num), len(den)) {
		if den[i] != 0 && !math.IsNaN(num[i]) && !math.IsNaN(den[i]) {
			out = append(out, num[i]/den[i])
		}
	}
	return out
}

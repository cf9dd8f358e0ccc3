package main

import (
	"encoding/json"
	"math"
	"testing"
)

func TestMedian(t *testing.T) {
	cases := []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	}
	for _, c := range cases {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if !math.IsNaN(median(nil)) {
		t.Error("median of nothing is not NaN")
	}
	in := []float64{3, 1, 2}
	median(in)
	if in[0] != 3 || in[1] != 1 {
		t.Errorf("median reordered its input: %v", in)
	}
}

func TestPercentileNearestRank(t *testing.T) {
	xs := make([]float64, 0, 100)
	for i := 100; i >= 1; i-- {
		xs = append(xs, float64(i))
	}
	for _, c := range []struct{ p, want float64 }{{50, 50}, {99, 99}, {100, 100}, {0.5, 1}, {99.5, 100}} {
		if got := percentile(xs, c.p); got != c.want {
			t.Errorf("p%v = %v, want %v", c.p, got, c.want)
		}
	}
	if got := percentile([]float64{7, 3}, 50); got != 3 {
		t.Errorf("p50 of {7,3} = %v, want 3 (a measured value)", got)
	}
	for _, p := range []float64{0, -1, 101} {
		if !math.IsNaN(percentile(xs, p)) {
			t.Errorf("p%v is not NaN", p)
		}
	}
	if !math.IsNaN(percentile(nil, 50)) {
		t.Error("percentile of nothing is not NaN")
	}
}

func TestFormatRatio(t *testing.T) {
	cases := []struct {
		in   []float64
		want string
	}{
		{[]float64{3.21, 2.9, 3.5}, "3.21× (2.90–3.50)"},
		{[]float64{12.34}, "12.3×"},
		{[]float64{0.5, 0.5}, "0.50×"},
		{nil, "n/a"},
		{[]float64{math.Inf(1)}, "n/a"},
	}
	for _, c := range cases {
		if got := formatRatio(spreadOf(c.in)); got != c.want {
			t.Errorf("formatRatio(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestFormatValue(t *testing.T) {
	if got := formatValue(spreadOf([]float64{41234, 39800.4, 43000})); got != "41,234 (39,800–43,000)" {
		t.Errorf("got %q", got)
	}
	if got := formatValue(spreadOf([]float64{0.0123})); got != "0.0123" {
		t.Errorf("got %q", got)
	}
	if got := formatValue(spread{}); got != "n/a" {
		t.Errorf("got %q", got)
	}
	if got := sig(-1234567); got != "-1,234,567" {
		t.Errorf("sig = %q", got)
	}
}

func TestSpreadOfSkipsNonNumbersSoItEncodesAsJSON(t *testing.T) {
	if got := spreadOf([]float64{math.NaN(), 2, math.Inf(1)}); got != (spread{Median: 2, Min: 2, Max: 2, N: 1}) {
		t.Errorf("got %+v", got)
	}
	if got := spreadOf(nil); got != (spread{}) {
		t.Errorf("no values: got %+v, want the zero spread", got)
	}
	if _, err := json.Marshal(spreadOf([]float64{math.NaN()})); err != nil {
		t.Error(err)
	}
}

func TestRatiosPairRounds(t *testing.T) {
	got := ratios([]float64{10, 20, 30}, []float64{5, 0, 10, 99})
	if len(got) != 2 || got[0] != 2 || got[1] != 3 {
		t.Errorf("ratios = %v, want [2 3] (zero denominator and unpaired rounds left out)", got)
	}
}

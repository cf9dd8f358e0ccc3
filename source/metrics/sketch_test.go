package metrics

import (
	"math"
	"testing"
)

// TestSketchQuantiles: quantiles within the sketch's 1% of the exact ones.
func TestSketchQuantiles(t *testing.T) {
	var s sketch
	if _, ok := s.quantile(0.5); ok {
		t.Fatal("an empty sketch has a quantile")
	}
	for v := 1; v <= 1000; v++ {
		s.add(float64(v))
	}
	for q, want := range map[float64]float64{0.5: 500.5, 0.95: 950.05, 0.99: 990.01, 0: 1, 1: 1000} {
		got, _ := s.quantile(q)
		if math.Abs(got-want) > want*0.011 {
			t.Errorf("quantile(%v) = %v, want %v ± 1%%", q, got, want)
		}
	}
	var mixed sketch
	for _, v := range []float64{-50, 0, 0, 10} {
		mixed.add(v)
	}
	if got, _ := mixed.quantile(0); math.Abs(got+50) > 0.5 {
		t.Errorf("quantile(0) of -50, 0, 0, 10 = %v, want -50", got)
	}
	if got, _ := mixed.quantile(0.5); got != 0 {
		t.Errorf("median of -50, 0, 0, 10 = %v, want 0", got)
	}
}

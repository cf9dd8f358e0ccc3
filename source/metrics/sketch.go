package metrics

import (
	"math"
	"slices"
)

// sketch is a DDSketch of relative accuracy 1%, as Debezium keeps of MilliSecondsBehindSource
// (LongDDSketchStatistics: DDSketches.unboundedDense(0.01)) for its P50, P95 and P99 attributes: values fall
// into logarithmic buckets of ratio gamma, so a quantile is off by at most 1% of its value, in memory
// logarithmic in the values' range (about 1,100 buckets from 1 ms to 11 days). Not safe for concurrent
// use: connectorState.mu guards it.
type sketch struct {
	pos, neg map[int]int64 // bucket index → count, for values > 0 and, by magnitude, < 0
	zero     int64
	count    int64
}

const sketchAccuracy = 0.01

var sketchGamma = (1 + sketchAccuracy) / (1 - sketchAccuracy)

// index is the bucket of v > 0: the i with gamma^(i-1) < v ≤ gamma^i.
func sketchIndex(v float64) int { return int(math.Ceil(math.Log(v) / math.Log(sketchGamma))) }

// sketchValue is the value a bucket stands for: within 1% of everything in it.
func sketchValue(i int) float64 { return 2 * math.Pow(sketchGamma, float64(i)) / (1 + sketchGamma) }

func (s *sketch) add(v float64) {
	if s.pos == nil {
		s.pos, s.neg = map[int]int64{}, map[int]int64{}
	}
	s.count++
	switch {
	case v > 0:
		s.pos[sketchIndex(v)]++
	case v < 0:
		s.neg[sketchIndex(-v)]++
	default:
		s.zero++
	}
}

// quantile is the value at quantile q (0 ≤ q ≤ 1), as DDSketch's getValueAtQuantile ranks it; ok is false
// while the sketch is empty.
func (s *sketch) quantile(q float64) (v float64, ok bool) {
	if s.count == 0 {
		return 0, false
	}
	rank := q * float64(s.count-1)
	n := int64(0)
	negs := sortedKeys(s.neg)
	for _, i := range slices.Backward(negs) { // the most negative first
		if n += s.neg[i]; float64(n) > rank {
			return -sketchValue(i), true
		}
	}
	if n += s.zero; float64(n) > rank {
		return 0, true
	}
	pos := sortedKeys(s.pos)
	for _, i := range pos {
		if n += s.pos[i]; float64(n) > rank {
			return sketchValue(i), true
		}
	}
	return sketchValue(pos[len(pos)-1]), true
}

func sortedKeys(m map[int]int64) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

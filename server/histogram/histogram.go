// Package histogram estimates quantiles of latency histograms with fixed
// bucket bounds, as Prometheus does: the live dashboard's (livestats) and
// the adaptive controller's health signal (adapt) share it.
package histogram

import (
	"math"
	"time"
)

// Bucket returns the index of took's bucket among bounds (ascending upper
// bounds), len(bounds) for the last, unbounded one.
func Bucket(bounds []time.Duration, took time.Duration) int {
	for i, b := range bounds {
		if took <= b {
			return i
		}
	}
	return len(bounds)
}

// Quantile estimates the q-quantile (0 < q ≤ 1) of counts, a histogram
// with len(bounds)+1 buckets (the last counts everything above the last
// bound), interpolating linearly inside the bucket that holds it; a
// quantile in the last, unbounded bucket is its lower bound. It is 0 for
// an empty histogram.
func Quantile(bounds []time.Duration, counts []int64, q float64) time.Duration {
	var total int64
	for _, n := range counts {
		total += n
	}
	if total == 0 || len(bounds) == 0 {
		return 0
	}
	rank := q * float64(total)
	var below int64
	for i, n := range counts {
		if n == 0 || float64(below+n) < rank {
			below += n
			continue
		}
		if i >= len(bounds) {
			return bounds[len(bounds)-1]
		}
		lo := time.Duration(0)
		if i > 0 {
			lo = bounds[i-1]
		}
		frac := (rank - float64(below)) / float64(n)
		return lo + time.Duration(math.Round(frac*float64(bounds[i]-lo)))
	}
	return bounds[len(bounds)-1]
}

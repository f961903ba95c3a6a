package histogram

import (
	"testing"
	"time"
)

func TestBucketAndQuantile(t *testing.T) {
	ms := time.Millisecond
	bounds := []time.Duration{10 * ms, 20 * ms, 50 * ms}
	for took, want := range map[time.Duration]int{0: 0, 10 * ms: 0, 10*ms + 1: 1, 50 * ms: 2, time.Second: 3} {
		if got := Bucket(bounds, took); got != want {
			t.Errorf("Bucket(%v) = %d, want %d", took, got, want)
		}
	}
	for _, tc := range []struct {
		name   string
		counts []int64
		q      float64
		want   time.Duration
	}{
		{"empty", []int64{0, 0, 0, 0}, 0.95, 0},
		{"all in the first bucket", []int64{10, 0, 0, 0}, 0.5, 5 * ms},
		{"interpolated in (20, 50]", []int64{0, 0, 10, 0}, 0.5, 35 * ms},
		{"p95 past the last bound is the last bound", []int64{90, 0, 0, 10}, 0.95, 50 * ms},
		{"p95 of 95 fast and 5 slow", []int64{95, 0, 0, 5}, 0.95, 10 * ms},
	} {
		if got := Quantile(bounds, tc.counts, tc.q); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := Quantile(nil, []int64{3}, 0.5); got != 0 {
		t.Errorf("no bounds: %v, want 0", got)
	}
}

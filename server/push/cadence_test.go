package push

import (
	"math"
	"testing"
	"time"
)

func TestFront(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		want int64
	}{
		{0, FrontMin},
		{-3, FrontMin},
		{math.NaN(), FrontMin},
		{math.Inf(1), FrontMin},
		{5, FrontMin},
		{10, FrontMin},
		{10.01, 101},
		{50, 500},
		{1e12, 1e10},
	} {
		if got := Front(tc.rate); got != tc.want {
			t.Errorf("Front(%v) = %d, want %d", tc.rate, got, tc.want)
		}
	}
}

func TestEvery(t *testing.T) {
	for _, tc := range []struct {
		rank, front, want int64
	}{
		{0, 100, 1},
		{99, 100, 1},
		{100, 100, 2},
		{199, 100, 2},
		{200, 100, 3},
		{5_900, 100, 60},
		{1_000_000, 100, MaxEvery},
		{7, 0, 1},
	} {
		if got := Every(tc.rank, tc.front); got != tc.want {
			t.Errorf("Every(%d, %d) = %d, want %d", tc.rank, tc.front, got, tc.want)
		}
	}
}

func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		name       string
		rank       int64
		rate, fall float64
		tick       time.Duration
		want       Countdown
	}{
		{"front", 50, 5, 5, time.Second, Countdown{Every: 1}},
		{"just past the front: the ticks count", 150, 5, 5, time.Second, Countdown{Every: 2}},
		{"paused: hold", 5_000, 0, 0, time.Second, Countdown{Every: 51, After: 3 * time.Second, Span: 48 * time.Second}},
		{"far back", 5_000, 5, 5, time.Second, Countdown{Every: 51, Pace: 4.5, After: 3 * time.Second, Span: 48 * time.Second}},
		{"held: no fall", 5_000, 5, 0, time.Second, Countdown{Every: 51, After: 3 * time.Second, Span: 48 * time.Second}},
		{"random: a share of the rate", 5_000, 5, 2.5, time.Second, Countdown{Every: 51, Pace: 2.25, After: 3 * time.Second, Span: 48 * time.Second}},
		{"pace rounds down", 5_000, 3.33, 3.33, time.Second, Countdown{Every: 51, Pace: 2.99, After: 3 * time.Second, Span: 48 * time.Second}},
		{"short ticks", 5_000, 50, 50, 100 * time.Millisecond, Countdown{Every: 11, Pace: 45, After: 300 * time.Millisecond, Span: 800 * time.Millisecond}},
	} {
		if got := Plan(tc.rank, tc.rate, tc.fall, tc.tick); got != tc.want {
			t.Errorf("%s: Plan(%d, %v, %v, %v) = %+v, want %+v", tc.name, tc.rank, tc.rate, tc.fall, tc.tick, got, tc.want)
		}
	}
}

func TestShown(t *testing.T) {
	cd := Countdown{Every: 11, Pace: 4.5, After: 2 * time.Second, Span: 9 * time.Second}
	for _, tc := range []struct {
		rank    int64
		elapsed time.Duration
		want    int64
	}{
		{1000, 0, 1000},
		{1000, 2 * time.Second, 1000},
		{1000, 2*time.Second + 200*time.Millisecond, 1000},
		{1000, 2*time.Second + 230*time.Millisecond, 999},
		{1000, 4 * time.Second, 991},
		{1000, 11 * time.Second, 960},
		{1000, time.Hour, 960}, // the countdown stops at its span
		{10, time.Hour, 0},
	} {
		if got := cd.Shown(tc.rank, tc.elapsed); got != tc.want {
			t.Errorf("Shown(%d, %v) = %d, want %d", tc.rank, tc.elapsed, got, tc.want)
		}
	}
	if got := (Countdown{Every: 1}).Shown(500, time.Hour); got != 500 {
		t.Errorf("a countdown without pace moved: %d", got)
	}
}

// TestCadenceWritesPerTick: over a line of n admitted at rate, the events
// a tick grow with the log of n, and are at least 10 times fewer than one
// per visitor at the soak's 15,000 and at 100,000.
func TestCadenceWritesPerTick(t *testing.T) {
	for _, tc := range []struct {
		n       int64
		rate    float64
		atMost  float64
		atLeast float64
	}{
		{15_000, 5, 1_500, 300},
		{100_000, 5, 10_000, 300},
		{15_000, 50, 2_500, 1_500}, // a fast room's front is large: about 7.5x, not 10x
		{500, 5, 500, 100},
	} {
		front := Front(tc.rate)
		var perTick float64
		for rank := range tc.n {
			perTick += 1 / float64(Every(rank, front))
		}
		if perTick > tc.atMost || perTick < tc.atLeast {
			t.Errorf("n=%d rate %v: %.0f events a tick, want %v..%v", tc.n, tc.rate, perTick, tc.atLeast, tc.atMost)
		}
	}
}

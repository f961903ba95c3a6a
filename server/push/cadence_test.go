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
	const quiet = 18 * time.Second // a heartbeat of 15 s
	for _, tc := range []struct {
		name        string
		rank        int64
		rate, fall  float64
		tick, quiet time.Duration
		want        Countdown
	}{
		{"front", 50, 5, 5, time.Second, quiet, Countdown{Every: 1}},
		{"just past the front: the ticks count", 150, 5, 5, time.Second, quiet, Countdown{Every: 2}},
		{"paused: hold", 5_000, 0, 0, time.Second, quiet, Countdown{Every: 51, After: 21 * time.Second, Span: 30 * time.Second, Quiet: quiet}},
		{"far back", 5_000, 5, 5, time.Second, quiet, Countdown{Every: 51, Pace: 4.5, After: 21 * time.Second, Span: 30 * time.Second, Quiet: quiet}},
		{"held: no fall", 5_000, 5, 0, time.Second, quiet, Countdown{Every: 51, After: 21 * time.Second, Span: 30 * time.Second, Quiet: quiet}},
		{"random: a share of the rate", 5_000, 5, 2.5, time.Second, quiet, Countdown{Every: 51, Pace: 2.25, After: 21 * time.Second, Span: 30 * time.Second, Quiet: quiet}},
		{"pace rounds down", 5_000, 3.33, 3.33, time.Second, quiet, Countdown{Every: 51, Pace: 2.99, After: 21 * time.Second, Span: 30 * time.Second, Quiet: quiet}},
		{"a gap shorter than the hold: no count", 1_500, 5, 5, time.Second, quiet, Countdown{Every: 16, After: 21 * time.Second, Quiet: quiet}},
		{"short ticks", 5_000, 50, 50, 100 * time.Millisecond, 600 * time.Millisecond, Countdown{Every: 11, Pace: 45, After: 900 * time.Millisecond, Span: 200 * time.Millisecond, Quiet: 600 * time.Millisecond}},
	} {
		if got := Plan(tc.rank, tc.rate, tc.fall, tc.tick, tc.quiet); got != tc.want {
			t.Errorf("%s: Plan(%d, %v, %v, %v, %v) = %+v, want %+v", tc.name, tc.rank, tc.rate, tc.fall, tc.tick, tc.quiet, got, tc.want)
		}
	}
}

// TestFrozenServerNeverAhead: whenever every instance freezes, a page
// that stops counting Quiet after the last byte it heard (a beat at most
// a heartbeat before the freeze) never shows a better rank than the
// frozen line, which fell in steps at the rate until the freeze.
func TestFrozenServerNeverAhead(t *testing.T) {
	for _, tc := range []struct {
		name      string
		tick      time.Duration
		heartbeat time.Duration
		rate      float64
	}{
		{"one-second ticks", time.Second, 15 * time.Second, 5},
		{"fast line", time.Second, 15 * time.Second, 200},
		{"short ticks", 250 * time.Millisecond, time.Second, 20},
	} {
		quiet := Quiet(tc.heartbeat)
		const rank = 1_000_000
		cd := Plan(rank, tc.rate, tc.rate, tc.tick, quiet)
		if cd.Pace == 0 {
			t.Fatalf("%s: the page does not count: %+v", tc.name, cd)
		}
		gap := time.Duration(cd.Every) * tc.tick
		step := tc.tick / 10
		for f := time.Duration(0); f <= gap; f += step { // the freeze, after the event
			// The line's truth at the freeze: a tick's admissions at each
			// tick the event did not yet count.
			truth := rank - int64(math.Round(tc.rate*tc.tick.Seconds()))*int64(f/tc.tick)
			// The last byte: the event itself, or a beat up to the freeze.
			for heard := time.Duration(0); heard <= f; heard += step {
				if got := cd.Shown(rank, heard+quiet); got < truth {
					t.Fatalf("%s: frozen %v after the event, last byte at %v: the page shows %d, the line stands at %d", tc.name, f, heard, got, truth)
				}
			}
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

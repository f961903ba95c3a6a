package queue

import (
	"math"
	"testing"
	"time"

	"waitingroom/server/room"
)

func TestPollingInterval(t *testing.T) {
	tests := []struct {
		rank     int64
		tier     int
		min, max int
	}{
		{0, 1, 1, 1},
		{99, 1, 1, 1},
		{100, 3, 3, 4},
		{999, 3, 3, 4},
		{1000, 5, 5, 7},
		{1 << 40, 5, 5, 7},
	}
	for _, tt := range tests {
		if got := PollingTier(tt.rank); got != tt.tier {
			t.Errorf("PollingTier(%d) = %d, want %d", tt.rank, got, tt.tier)
		}
		seen := map[int]bool{}
		for range 500 {
			got := PollingInterval(tt.rank)
			if got < tt.min || got > tt.max {
				t.Fatalf("PollingInterval(%d) = %d, want %d..%d", tt.rank, got, tt.min, tt.max)
			}
			seen[got] = true
		}
		if len(seen) != tt.max-tt.min+1 {
			t.Errorf("PollingInterval(%d) took %d distinct values, want jitter over %d..%d", tt.rank, len(seen), tt.min, tt.max)
		}
	}
}

func TestEstimatedWait(t *testing.T) {
	tests := []struct {
		rank int64
		rate float64
		want int64
	}{
		{0, 50, 1},
		{49, 50, 1},
		{50, 50, 2},
		{999, 50, 20},
		{9, 0.5, 20},
		{5, 0, 0},
		{5, -1, 0},
		// A deep line at the floor rate: clamped, never an overflow.
		{1 << 62, room.MinRate, MaxEstimatedWait},
		{math.MaxInt64, room.MinRate, MaxEstimatedWait},
		{1 << 40, room.MinRate, MaxEstimatedWait},
		{1000000, room.MinRate, 100000100},
		{-5, 50, 1},
	}
	for _, tt := range tests {
		if got := EstimatedWait(tt.rank, tt.rate); got != tt.want {
			t.Errorf("EstimatedWait(%d, %v) = %d, want %d", tt.rank, tt.rate, got, tt.want)
		}
	}
}

func TestSlotsWait(t *testing.T) {
	wave := &Slots{Rate: 10, MaxActive: 4, Hold: 20, Free: []int64{5000, 5000, 6000, 6000}}
	tests := []struct {
		name  string
		slots *Slots
		rank  int64
		want  float64
		ok    bool
	}{
		{"first of a wave", wave, 0, 5, true},
		{"second wave of the first cycle", wave, 2, 6, true},
		{"next cycle", wave, 5, 25, true},
		{"the rate binds", &Slots{Rate: 1, MaxActive: 4, Hold: 20, Free: []int64{0, 0, 0, 0}}, 3, 4, true},
		{"sampled: between two samples", &Slots{Rate: 1000, MaxActive: 64, Hold: 10, Free: []int64{0, 2000}}, 16, 1, true},
		{"sampled: past the last sample", &Slots{Rate: 1000, MaxActive: 4, Hold: 10, Free: []int64{0, 2000}}, 3, 6, true},
		{"no schedule", nil, 3, 0, false},
		{"no hold", &Slots{Rate: 1, MaxActive: 4, Free: []int64{0}}, 3, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.slots.Wait(tt.rank)
			if ok != tt.ok || math.Abs(got-tt.want) > 1e-9 {
				t.Fatalf("Wait(%d) = %v, %v; want %v, %v", tt.rank, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestEstimatedWaitAgainstTheTicks holds the ETA of ranks 0..400 against
// a simulated issuer: ticks every second admit the credit accrued at the
// rate (fractions carried), and a position is read at every tenth of the
// second between two ticks. The mean relative error |ETA - real| / real
// stays within 15% over ranks 10-400 and near the front, and the ETA is
// not one tick long: its mean error is within ±0.15 s. At rate 50 the
// ranks under 50 are admitted within the second, where the ETA says its
// floor of 1 s (whole seconds cannot be 15% right there): the rows start
// at 50.
func TestEstimatedWaitAgainstTheTicks(t *testing.T) {
	const tick = time.Second
	tests := []struct {
		rate         float64
		from, to     int64 // ranks
		maxRel, bias float64
	}{
		{10, 10, 400, 0.15, 0.15},
		{10, 10, 39, 0.15, 0.15},
		{50, 50, 400, 0.15, 0.15},
		{50, 50, 199, 0.15, 0.15},
	}
	for _, tt := range tests {
		// admittedAt[k]: the tick, in seconds after the last one, that
		// admits rank k.
		admittedAt := make([]float64, tt.to+1)
		credit, k := 0.0, int64(0)
		for at := 1; k <= tt.to; at++ {
			credit += tt.rate * tick.Seconds()
			for ; credit >= 1-1e-9 && k <= tt.to; k++ {
				credit--
				admittedAt[k] = float64(at) * tick.Seconds()
			}
		}
		var rel, signed float64
		n := 0
		for rank := tt.from; rank <= tt.to; rank++ {
			for tenth := range 10 {
				since := time.Duration(tenth) * tick / 10
				real := admittedAt[rank] - since.Seconds()
				eta := float64(EstimatedWaitAt(rank, tt.rate, TickPhase{Since: since, Tick: tick}))
				rel += math.Abs(eta-real) / real
				signed += eta - real
				n++
			}
		}
		rel, signed = rel/float64(n), signed/float64(n)
		t.Logf("rate %v, ranks %d-%d: mean relative error %.1f%%, mean error %+.2f s", tt.rate, tt.from, tt.to, 100*rel, signed)
		if rel > tt.maxRel || math.Abs(signed) > tt.bias {
			t.Errorf("rate %v, ranks %d-%d: mean relative error %.1f%% (want at most %.0f%%), mean error %+.2f s (want within ±%.2f s)",
				tt.rate, tt.from, tt.to, 100*rel, 100*tt.maxRel, signed, tt.bias)
		}
	}
}

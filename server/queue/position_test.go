package queue

import (
	"math"
	"testing"

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

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

package admin

import (
	"testing"
	"time"

	"waitingroom/server/room"
)

// TestOpenNow: a room sells when it is not closed, not paused, past its
// opening and before its closing.
func TestOpenNow(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	past, future := now.Add(-time.Minute), now.Add(time.Minute)
	for _, tc := range []struct {
		name string
		mut  func(*room.Settings)
		want bool
	}{
		{"no schedule", func(*room.Settings) {}, true},
		{"opened", func(s *room.Settings) { s.OpensAt = &past }, true},
		{"opens at now", func(s *room.Settings) { s.OpensAt = &now }, true},
		{"opens later", func(s *room.Settings) { s.OpensAt = &future }, false},
		{"pre-queue only", func(s *room.Settings) { s.PrequeueAt, s.OpensAt = &past, &future }, false},
		{"closed by schedule", func(s *room.Settings) { s.ClosesAt = &past }, false},
		{"closes later", func(s *room.Settings) { s.ClosesAt = &future }, true},
		{"mode closed", func(s *room.Settings) { s.Mode = room.ModeClosed }, false},
		{"paused", func(s *room.Settings) { s.Paused = true }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := room.Defaults("r")
			tc.mut(&s)
			if got := OpenNow(s, now); got != tc.want {
				t.Fatalf("OpenNow %v, want %v", got, tc.want)
			}
		})
	}
}

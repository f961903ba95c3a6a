package room

import (
	"testing"
	"time"
)

func TestPhaseAt(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	past, future, later := now.Add(-time.Minute), now.Add(time.Minute), now.Add(time.Hour)
	for _, tc := range []struct {
		name string
		mut  func(*Settings)
		want string
	}{
		{"no schedule", func(*Settings) {}, PhaseOpen},
		{"paused is still open", func(s *Settings) { s.Paused = true }, PhaseOpen},
		{"opens later", func(s *Settings) { s.OpensAt = &future }, PhaseScheduled},
		{"pre-queue later", func(s *Settings) { s.PrequeueAt, s.OpensAt = &future, &later }, PhaseScheduled},
		{"pre-queue open", func(s *Settings) { s.PrequeueAt, s.OpensAt = &past, &future }, PhasePrequeue},
		{"pre-queue opens now", func(s *Settings) { s.PrequeueAt, s.OpensAt = &now, &future }, PhasePrequeue},
		{"opened", func(s *Settings) { s.PrequeueAt, s.OpensAt = &past, &past }, PhaseOpen},
		{"opens now", func(s *Settings) { s.OpensAt = &now }, PhaseOpen},
		{"closes later", func(s *Settings) { s.ClosesAt = &future }, PhaseOpen},
		{"closes now", func(s *Settings) { s.ClosesAt = &now }, PhaseClosed},
		{"closed by schedule", func(s *Settings) { s.ClosesAt = &past }, PhaseClosed},
		{"mode closed", func(s *Settings) { s.OpensAt, s.Mode = &future, ModeClosed }, PhaseClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Defaults("r")
			tc.mut(&s)
			if got := PhaseAt(s, now); got != tc.want {
				t.Fatalf("%s, want %s", got, tc.want)
			}
		})
	}
}

// TestSchedulePhase: the phase of a schedule alone, with the mode's
// closing given apart (the widget keeps only these).
func TestSchedulePhase(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	past, soon, later := now.Add(-time.Minute), now.Add(time.Minute), now.Add(time.Hour)
	for _, tc := range []struct {
		name   string
		sc     Schedule
		closed bool
		want   string
	}{
		{"no schedule", Schedule{}, false, PhaseOpen},
		{"before opening", Schedule{OpensAt: &soon}, false, PhaseScheduled},
		{"before the pre-queue", Schedule{PrequeueAt: &soon, OpensAt: &later}, false, PhaseScheduled},
		{"in the pre-queue", Schedule{PrequeueAt: &past, OpensAt: &soon}, false, PhasePrequeue},
		{"closed by schedule", Schedule{ClosesAt: &past}, false, PhaseClosed},
		{"mode closed", Schedule{}, true, PhaseClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SchedulePhase(tc.sc, tc.closed, now); got != tc.want {
				t.Fatalf("%q, want %q", got, tc.want)
			}
		})
	}
}

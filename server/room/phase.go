package room

import "time"

// The phases of a room's schedule. The admission tick computes them in
// Redis (lib.lua's phase), where a room past its opening whose pre-queue
// is still being drawn is "drawing"; PhaseAt is the same rule without the
// draw, for the pages that show a room's phase before or between ticks.
const (
	// PhaseScheduled: before prequeueAt (or opensAt): nobody can join yet.
	PhaseScheduled = "scheduled"
	// PhasePrequeue: from prequeueAt until the draw at opensAt is done.
	PhasePrequeue = "prequeue"
	// PhaseOpen: joins go to the line and admission runs.
	PhaseOpen = "open"
	// PhaseClosed: after closesAt, or in mode closed: nobody joins.
	PhaseClosed = "closed"
)

// SchedulePhase is the phase of schedule sc at now; closed says the
// room's mode is closed. A pause does not change the phase.
func SchedulePhase(sc Schedule, closed bool, now time.Time) string {
	switch {
	case closed, sc.ClosesAt != nil && !now.Before(*sc.ClosesAt):
		return PhaseClosed
	case sc.OpensAt != nil && now.Before(*sc.OpensAt):
		if sc.PrequeueAt != nil && !now.Before(*sc.PrequeueAt) {
			return PhasePrequeue
		}
		return PhaseScheduled
	}
	return PhaseOpen
}

// PhaseAt is the phase of a room with settings s at now.
func PhaseAt(s Settings, now time.Time) string {
	return SchedulePhase(s.Schedule, s.Mode == ModeClosed, now)
}

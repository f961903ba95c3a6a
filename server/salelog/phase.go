package salelog

import (
	"context"

	"waitingroom/server/queue"
	"waitingroom/server/room"
)

// RoomReader reads a room's settings; the Counters of a Log that is one
// (the queue engine) tell PhaseChanged a close by the schedule from one by
// an operator.
type RoomReader interface {
	Room(ctx context.Context, name string) (room.Settings, error)
}

// PhaseChanged logs the schedule's transitions of room, as the issuer
// sees them once across instances (see issuer.PhaseWatcher): the
// pre-queue opening, the sale opening, and its closing at closesAt. The
// changes an operator makes are told by the console, not here: a reopening
// and a close in mode closed.
func (l *Log) PhaseChanged(ctx context.Context, name, old, phase string) {
	before := old == queue.PhaseScheduled || old == queue.PhasePrequeue
	switch {
	case phase == queue.PhasePrequeue && old == queue.PhaseScheduled:
		l.Event(name, PrequeueOpened, "by", "schedule")
	case phase == queue.PhaseOpen && before:
		l.Event(name, Opened, "by", "schedule")
	case phase == queue.PhaseClosed && (before || old == queue.PhaseOpen):
		if r, ok := l.counters.(RoomReader); ok {
			s, err := r.Room(ctx, name)
			if err != nil || s.Mode == room.ModeClosed {
				return // deleted, or closed by an operator, who told it
			}
		}
		l.Event(name, Closed, "by", "schedule")
	}
}

// Package push keeps each room's rank state in process, fed by the room's
// admission events over one Redis subscription per process, so that the
// position of every connected visitor is computed without asking Redis.
//
// For a waiting ticket t: rank = t − head − 1 − |departed ∩ (head, t)|.
// Every ticket at or below the head was admitted or has departed, and every
// ticket above it that is not waiting has departed. The head only grows and
// the departed set only gains members above it, so ranks never go up.
//
// In a room with lines each line has its own tickets, head and departed
// set, and a rank counts its own line (see queue.LineTicket).
package push

import (
	"slices"
	"time"

	"waitingroom/server/queue"
)

// State is one room's rank state. It is not safe for concurrent use.
type State struct {
	SoldOut    bool
	Paused     bool         // ABSENCE: admissions stopped, no ETA
	Random     bool         // mode random, from the newest event (CADENCE)
	Slots      *queue.Slots // ABSENCE: when maxActive's slots free up (read only)
	Tick       int64
	Head       int64
	Waiting    int64
	Rate       float64
	TimeMicros int64
	// Epoch counts the times the room started again (see Reset and
	// Apply): positions computed in an older epoch mean nothing now.
	Epoch int64
	// Born is when the room this state follows was created, in unix ms
	// (0: unknown): a position of another Born is another room's.
	Born     int64
	departed []int64 // sorted, all above Head
	synced   bool
	// DRAW: the room's phase and schedule, from the newest event (unset
	// until the first event).
	Phase                         string
	PrequeueAt, OpensAt, ClosesAt int64
	// ReadySpread is the room's own readySpreadMs, from the newest event or
	// snapshot: how long the turns of one tick's admitted are spread over
	// (0: told at once). Nil follows the server's default; Spread reads it.
	ReadySpread *time.Duration
	// lines are the lines of a room with lines (none without): the first
	// line's head and departures are Head and departed.
	lines []lineState
}

// lineState is one line's part of a State.
type lineState struct {
	head     int64
	departed []int64 // sorted, all above head
	waiting  int64
	rate     float64
}

// Spread returns how long the turns of one tick's admitted are spread
// over in this room: its own ReadySpread, or def, the server's default,
// when it has none.
func (s *State) Spread(def time.Duration) time.Duration {
	if s.ReadySpread != nil {
		return *s.ReadySpread
	}
	return def
}

// spreadOf is a readySpreadMs (nil: the server's default) as a duration.
func spreadOf(ms *int) *time.Duration {
	if ms == nil {
		return nil
	}
	d := time.Duration(*ms) * time.Millisecond
	return &d
}

// Reset replaces the state with a snapshot read from Redis. Events already
// applied that are newer than the snapshot keep their effect: the head is
// a maximum and departures are a union. A snapshot of a room created at
// another time, or at a tick the state has reached whose head is lower,
// belongs to a room that started again (deleted and created, or restored
// after Redis lost its data): it replaces the state whole.
func (s *State) Reset(snap queue.Snapshot) {
	if AnotherRoom(s.Born, snap.Born) || snap.Tick >= s.Tick && snap.Head < s.Head {
		s.startAgain()
	}
	if snap.Born != 0 {
		s.Born = snap.Born
	}
	s.synced = true
	if snap.Tick >= s.Tick {
		s.Tick, s.Waiting, s.Rate, s.SoldOut = snap.Tick, snap.Waiting, snap.Rate, snap.SoldOut
		s.Paused, s.Slots = snap.Paused, snap.Slots
		s.ReadySpread = spreadOf(snap.ReadySpreadMs)
	}
	s.departed = addDepartures(s.Head, s.departed, snap.Departed)
	s.Head, s.departed = advance(s.Head, s.departed, snap.Head)
	s.applyLines(snap.Lines, snap.Tick >= s.Tick)
}

// Synced reports whether the state has been reset from a snapshot since it
// was created or since a gap was detected.
func (s *State) Synced() bool { return s.synced }

// Apply folds one event into the state. It reports false when ticks were
// missed (the subscription dropped them), in which case the caller should
// Reset from a fresh snapshot; the event is applied all the same. One
// subscription receives a room's events in the order they were published,
// so a tick below the state's, or an event of a room created at another
// time, means the room started again (deleted and created, or restored
// after Redis lost its data): the state starts over from that event and
// asks for a snapshot.
func (s *State) Apply(e queue.Event) bool {
	if e.Tick < s.Tick || AnotherRoom(s.Born, e.Born) {
		s.startAgain()
		s.Apply(e)
		s.synced = false
		return false
	}
	complete := s.Tick == 0 || e.Tick <= s.Tick+1
	if e.Born != 0 {
		s.Born = e.Born
	}
	newer := e.Tick > s.Tick
	if newer {
		s.Tick, s.Waiting, s.Rate, s.TimeMicros, s.SoldOut = e.Tick, e.Waiting, e.Rate, e.TimeMicros, bool(e.SoldOut)
		s.Paused, s.Slots, s.Random = bool(e.Paused), e.Slots, bool(e.Random)
		s.Phase, s.PrequeueAt, s.OpensAt, s.ClosesAt = e.Phase, e.PrequeueAt, e.OpensAt, e.ClosesAt
		s.ReadySpread = spreadOf(e.ReadySpreadMs)
	}
	s.departed = addDepartures(s.Head, s.departed, e.Departed)
	s.Head, s.departed = advance(s.Head, s.departed, e.Head)
	s.applyLines(e.Lines, newer)
	if !complete {
		s.synced = false
	}
	return complete
}

// AnotherRoom reports whether two creation times, either of them 0 when
// unknown, are of two rooms of one name.
func AnotherRoom(a, b int64) bool { return a != 0 && b != 0 && a != b }

// startAgain empties the state for a room that started again, in a new
// epoch.
func (s *State) startAgain() {
	*s = State{Epoch: s.Epoch + 1}
}

// applyLines folds the lines of an event or snapshot into the state:
// their heads and departures always (a maximum and a union), their
// waiting counts and rates when newer. A newer event without lines
// belongs to a room that has none now.
func (s *State) applyLines(ls []queue.LineState, newer bool) {
	if len(ls) == 0 || !newer && len(s.lines) == 0 {
		// An older event or snapshot with lines does not bring back the
		// lines a newer one dropped.
		if newer {
			s.lines = nil
		}
		return
	}
	for len(s.lines) < len(ls) {
		s.lines = append(s.lines, lineState{})
	}
	for i, l := range ls {
		x := &s.lines[i]
		if newer {
			x.waiting, x.rate = l.Waiting, l.Rate
		}
		if i > 0 {
			x.departed = addDepartures(x.head, x.departed, l.Departed)
			x.head, x.departed = advance(x.head, x.departed, l.Head)
		}
	}
}

// addDepartures returns departed, sorted, with the tickets of ts above
// head added.
func addDepartures(head int64, departed, ts []int64) []int64 {
	for _, t := range ts {
		if t <= head {
			continue
		}
		if i, found := slices.BinarySearch(departed, t); !found {
			departed = slices.Insert(departed, i, t)
		}
	}
	return departed
}

// advance moves head up to to, if higher, and drops the departures it
// passed.
func advance(head int64, departed []int64, to int64) (int64, []int64) {
	if to <= head {
		return head, departed
	}
	i, found := slices.BinarySearch(departed, to)
	if found {
		i++
	}
	return to, slices.Delete(departed, 0, i)
}

// Rank returns the number of people ahead of ticket, a ticket of its
// line as queue.LineTicket makes it. passed is true when the head has
// reached the ticket, or the ticket itself departed (in mode random the
// admitted depart above the head): its visitor was admitted or departed,
// and only Redis knows which. A ticket of a line the state does not know
// is passed too.
func (s *State) Rank(ticket int64) (rank int64, passed bool) {
	line, t := queue.SplitLineTicket(ticket)
	head, departed := s.Head, s.departed
	if line > 0 {
		if line >= len(s.lines) {
			return 0, true
		}
		head, departed = s.lines[line].head, s.lines[line].departed
	}
	if t <= head {
		return 0, true
	}
	below, found := slices.BinarySearch(departed, t)
	if found {
		return 0, true
	}
	return t - head - 1 - int64(below), false
}

// RateOf returns the throughput that ticket's line can count on: the
// room's Rate, or in a room with lines the line's part of it.
func (s *State) RateOf(ticket int64) float64 {
	if line, _ := queue.SplitLineTicket(ticket); line < len(s.lines) {
		return s.lines[line].rate
	}
	return s.Rate
}

// WaitingOf returns how many wait in ticket's line: Waiting, or in a room
// with lines the line's count.
func (s *State) WaitingOf(ticket int64) int64 {
	if line, _ := queue.SplitLineTicket(ticket); line < len(s.lines) {
		return s.lines[line].waiting
	}
	return s.Waiting
}

// ShareOf returns the part of the room's throughput that ticket's line
// gets (1 in a room without lines).
func (s *State) ShareOf(ticket int64) float64 {
	if line, _ := queue.SplitLineTicket(ticket); line < len(s.lines) && s.Rate > 0 {
		return min(s.lines[line].rate/s.Rate, 1)
	}
	return 1
}

// Departed returns how many departed tickets above the head the state
// holds.
func (s *State) Departed() int { return len(s.departed) }

// Clone returns a copy that shares nothing with s.
func (s *State) Clone() State {
	c := *s
	c.departed = slices.Clone(s.departed)
	c.lines = slices.Clone(s.lines)
	for i := range c.lines {
		c.lines[i].departed = slices.Clone(s.lines[i].departed)
	}
	return c
}

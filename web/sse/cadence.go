package sse

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"waitingroom/server/push"
	"waitingroom/server/queue"
)

// dueEvent is one event a tick's pass writes: to c, at rank, with the
// countdown its page is told.
type dueEvent struct {
	c      *conn
	rank   int64
	reason string
	cd     push.Countdown
}

// passPlan is what a pass's scan found: the events due, in the order they
// are written, and the tickets to mark as seen.
type passPlan struct {
	due  []dueEvent
	seen []int64
}

// broadcast is what every waiting page must hear of at once when it
// changes: the pause and the schedule. So must every page after the
// room's pages were told to hold or of an outage (Room.stale).
type broadcast struct {
	paused, soldOut               bool
	phase                         string
	prequeueAt, opensAt, closesAt int64
}

// generation returns the room's broadcast generation for st: it grows
// each time what every page must hear of changes. Only the room's
// fan-out calls it, one pass at a time.
func (r *Room) generation(st *push.State) uint32 {
	b := broadcast{st.Paused, st.SoldOut, st.Phase, st.PrequeueAt, st.OpensAt, st.ClosesAt}
	// A stale room (its pages were told to hold, or of an outage) tells
	// everyone too.
	if r.stale.Swap(false) || b != r.broadcast {
		r.broadcast = b
		r.gen++
	}
	return r.gen
}

// scan goes over conns once, without writing: it starts the resolution of
// every visitor the head has passed (their ready events need a Redis round
// trip, so they start first), and lists the position events due this tick
// (see server/push/cadence.go), the front of the line first,
// nearest first.
func (h *Hub) scan(r *Room, st *push.State, conns []*conn, now time.Time) passPlan {
	var plan passPlan
	var front []dueEvent
	gen := r.generation(st)
	rateGen := r.rateGeneration(st)
	clock := now.Sub(h.born).Nanoseconds()
	// How fast a waiting rank falls: at the rate (the event's r is 0 when
	// admissions are gated). Where admissions come in waves, as slots
	// free up under maxActive, the pages hold between events instead:
	// a countdown would outrun the waves and be corrected every few ticks.
	gated := st.Paused || st.Slots != nil
	// The page's countdown is checked as far ahead as it holds its rank
	// first: until the next pass has surely looked again, or the stall
	// watch has told it to hold.
	horizon := push.CountAfter * h.opt.Tick
	// A page stops counting when its stream says nothing for quiet: the
	// heartbeats keep it from doing so while the hub runs.
	quiet := push.Quiet(h.opt.Heartbeat)
	spread := min(st.Spread(h.opt.ReadySpread), h.opt.Tick)
	counting := false
	for _, c := range conns {
		if c.done.Load() {
			continue
		}
		if c.epoch != st.Epoch {
			// The room started again (deleted and created, or restored):
			// the old ticket means nothing; Redis says where the visitor
			// stands now.
			c.epoch, c.lastTick, c.lastRank, c.nextAt, c.cdPace = st.Epoch, 0, math.MaxInt64, 0, 0
			h.resolve(r, c, st.TimeMicros, spread)
			continue
		}
		if push.AnotherRoom(c.born.Load(), st.Born) {
			// The ticket and the state are of two rooms of one name (the
			// room started again): this state's ranks mean nothing to it.
			// Redis says where the visitor stands; the state catches up
			// with the new room within a tick or two.
			h.resolve(r, c, st.TimeMicros, spread)
			continue
		}
		if st.Tick <= c.lastTick {
			continue // already sent; this pass catches up someone else
		}
		rebound := c.rebound.Swap(false)
		if c.prequeued.Load() {
			// A pre-queued buyer has no rank until the draw; once a
			// tick says it is done, Redis gives their place.
			if st.Phase != "" && st.Phase != queue.PhasePrequeue {
				h.resolve(r, c, st.TimeMicros, spread)
			}
			continue
		}
		ticket := c.ticket.Load()
		rank, passed := st.Rank(ticket)
		// The rate this visitor's line moves at: the room's, or in a room
		// with lines the line's part of it.
		rate := st.RateOf(ticket)
		frontRanks := push.Front(rate)
		fall := rate
		if gated {
			fall = 0
		}
		if passed {
			h.resolve(r, c, st.TimeMicros, spread)
			continue
		}
		if !now.Before(c.nextSeen) {
			// Marked as seen whether or not it is written to this tick:
			// the heartbeat's writes drop a stream whose peer has gone.
			c.nextSeen = now.Add(h.opt.SeenEvery)
			plan.seen = append(plan.seen, ticket)
		}
		if st.SoldOut {
			// Sold out for now: the page is told once, and keeps its place
			// and its stream. When the room reopens (a restock), the
			// broadcast's generation moves, and every page hears its
			// position at that pass; the head's next moves bring the
			// admitted their ready events as ever.
			if c.gen != gen {
				c.gen, c.lastTick = gen, st.Tick
				plan.due = append(plan.due, dueEvent{c: c, rank: rank})
			}
			continue
		}
		// A rank that goes up is shown at once, with why.
		reason := ""
		if rank > c.lastRank {
			reason = queue.RankUpRecount
			if rebound {
				reason = queue.RankUpReturned // re-entered: a new place in line
			}
		}
		told := push.Timing(int64(c.cdEvery), h.opt.Tick, quiet)
		told.Pace = push.PaceOf(c.cdPace)
		ahead := told.Shown(c.lastRank, time.Duration(clock-c.sentAt)+horizon) < rank
		if c.rateGen != rateGen {
			// The rate moved: the wait this page shows is off, so its next
			// event comes within a few ticks, spread, not in one burst.
			c.rateGen = rateGen
			c.nextAt = min(c.nextAt, clock+rand.Int64N(int64(rateSpreadTicks*h.opt.Tick)))
		}
		if rank >= frontRanks && reason == "" && !rebound && c.gen == gen && clock < c.nextAt {
			if !ahead {
				continue // not due: the page counts down on its own
			}
			// A correction: the line moves slower than the rate says (a
			// rate cut the pages were not told of, visitors passed over).
			// This page counts at half the pace from now on, down to an
			// eighth, so that it is not corrected again and again.
			h.metrics.Corrections.Inc()
			c.slow = min(c.slow+1, 3)
		} else if !ahead && c.slow > 0 {
			c.slow-- // on schedule and not ahead: back towards the full pace
		}
		myFall := fall / float64(int(1)<<c.slow)
		if waiting := st.WaitingOf(ticket); st.Random && waiting > 0 {
			// Mode random: the people ahead leave at their share of the
			// rate, not at the rate.
			myFall *= float64(min(rank, waiting)) / float64(waiting)
		}
		cd := push.Plan(rank, rate, myFall, h.opt.Tick, quiet)
		c.lastRank, c.lastTick, c.sentAt, c.gen = rank, st.Tick, clock, gen
		c.cdEvery, c.cdPace = int32(cd.Every), 0
		if cd.Pace > 0 {
			c.cdPace = push.PaceHundredths(myFall)
			counting = true
		}
		// The next scheduled event: Every periods of TICK on, less up to a
		// quarter, so that visitors who joined in the same second drift
		// apart. It is counted in time, not in tick ids: each instance
		// ticks the room once a TICK, so with n instances the ids advance
		// n times a TICK (and the front hears each of them).
		c.nextAt = clock + (cd.Every-rand.Int64N(cd.Every/4+1))*int64(h.opt.Tick)
		d := dueEvent{c: c, rank: rank, reason: reason, cd: cd}
		if rank < frontRanks {
			front = append(front, d)
		} else {
			plan.due = append(plan.due, d)
		}
	}
	slices.SortFunc(front, func(a, b dueEvent) int { return cmp.Compare(a.rank, b.rank) })
	plan.due = append(front, plan.due...)
	if counting {
		r.counting.Store(true)
	}
	return plan
}

// rateSpreadTicks is how many ticks the events that a rate change makes
// due are spread over.
const rateSpreadTicks = 5

// rateGeneration returns the room's rate generation for st: it grows when
// the rate moves by more than rateMoved from the rate it last grew at.
// Only the room's fan-out calls it.
func (r *Room) rateGeneration(st *push.State) uint32 {
	const rateMoved = 0.15
	if st.Rate > 0 && math.Abs(st.Rate-r.rateRef) > rateMoved*r.rateRef {
		r.rateRef = st.Rate
		r.rateGen++
	}
	return r.rateGen
}

// stalled reports, at now, whether the room's ticks stopped arriving while
// some page may be counting down: the last event is older than half of
// CountAfter's ticks past its due time. Such pages must be told to hold
// (see watchStalls) before the hub's last check of them runs out. It
// clears the room's counting mark and marks it stale, so that the first
// pass after the ticks come back sends every page its position.
func (r *Room) stalled(now time.Time, tick time.Duration) bool {
	if !r.counting.Load() {
		return false
	}
	r.mu.Lock()
	quiet := now.Sub(r.lastEvent)
	empty := r.state.Waiting == 0
	r.mu.Unlock()
	if empty {
		// Nobody is left to count down: a room whose line ran out sleeps
		// (see queue.Admission's Asleep), and its ticks stop.
		r.counting.Store(false)
		return false
	}
	if quiet < tick+tick*push.CountAfter/4 {
		return false
	}
	r.counting.Store(false)
	r.stale.Store(true)
	return true
}

// appendCountdownEvent appends a position event whose JSON also tells the
// page its cadence: "every" (ticks to the next scheduled event) and, far
// back, "after", "span" and "quiet" (ms) and, while the line moves, "pace"
// (ranks a second): the countdown between events. See push.Countdown.
func appendCountdownEvent(b []byte, id int64, p queue.Position, tickMicros int64, cd push.Countdown) []byte {
	b = appendEvent(b, id, "position", p, tickMicros)
	// appendEvent ended with "}\n\n": reopen the object.
	b = b[:len(b)-3]
	b = append(b, `,"every":`...)
	b = strconv.AppendInt(b, cd.Every, 10)
	if cd.Pace > 0 {
		b = append(b, `,"pace":`...)
		b = strconv.AppendFloat(b, cd.Pace, 'f', 2, 64)
	}
	if cd.After > 0 {
		b = append(b, `,"after":`...)
		b = strconv.AppendInt(b, cd.After.Milliseconds(), 10)
		b = append(b, `,"span":`...)
		b = strconv.AppendInt(b, cd.Span.Milliseconds(), 10)
		b = append(b, `,"quiet":`...)
		b = strconv.AppendInt(b, cd.Quiet.Milliseconds(), 10)
	}
	return append(b, "}\n\n"...)
}

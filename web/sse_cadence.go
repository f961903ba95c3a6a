package web

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
	c      *sseConn
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
// changes: the pause and the schedule.
type broadcast struct {
	paused                        bool
	phase                         string
	prequeueAt, opensAt, closesAt int64
}

// generation returns the room's broadcast generation for st: it grows
// each time what every page must hear of changes. Only the room's
// fan-out calls it, one pass at a time.
func (r *hubRoom) generation(st *push.State) uint32 {
	b := broadcast{st.Paused, st.Phase, st.PrequeueAt, st.OpensAt, st.ClosesAt}
	if b != r.broadcast {
		r.broadcast = b
		r.gen++
	}
	return r.gen
}

// scan goes over conns once, without writing: it starts the resolution of
// every visitor the head has passed (their ready events need a Redis round
// trip, so they start first), and lists the position events due this tick
// (CADENCE, see server/push/cadence.go), the front of the line first,
// nearest first.
func (h *Hub) scan(r *hubRoom, st *push.State, conns []*sseConn, now time.Time) passPlan {
	var plan passPlan
	var front []dueEvent
	frontRanks := push.Front(st.Rate)
	gen := r.generation(st)
	clock := now.Sub(h.born).Nanoseconds()
	paceRate := st.Rate
	if st.Paused || (st.Phase != "" && st.Phase != queue.PhaseOpen) {
		paceRate = 0
	}
	horizon := 2 * h.opt.Tick // until the next pass has surely looked again
	spread := min(st.Spread(h.opt.ReadySpread), h.opt.Tick)
	for _, c := range conns {
		if c.done.Load() {
			continue
		}
		if c.epoch != st.Epoch {
			// The room started again (deleted and created, or restored):
			// the old ticket means nothing; Redis says where the visitor
			// stands now.
			c.epoch, c.lastTick, c.lastRank, c.nextTick, c.cdPace = st.Epoch, 0, math.MaxInt64, 0, 0
			h.resolve(r, c, st.TimeMicros, spread)
			continue
		}
		if st.Tick <= c.lastTick {
			continue // already sent; this pass catches up someone else
		}
		if st.SoldOut {
			c.done.Store(true)
			plan.due = append(plan.due, dueEvent{c: c})
			continue
		}
		rebound := c.rebound.Swap(false)
		if c.prequeued.Load() {
			// DRAW: a pre-queued buyer has no rank until the draw; once a
			// tick says it is done, Redis gives their place.
			if st.Phase != "" && st.Phase != queue.PhasePrequeue {
				h.resolve(r, c, st.TimeMicros, spread)
			}
			continue
		}
		ticket := c.ticket.Load()
		rank, passed := st.Rank(ticket)
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
		// ABSENCE: a rank that goes up is shown at once, with why.
		reason := ""
		if rank > c.lastRank {
			reason = queue.RankUpRecount
			if rebound {
				reason = queue.RankUpReturned // re-entered: a new place in line
			}
		}
		told := push.Countdown{Every: int64(c.cdEvery), Pace: push.PaceOf(c.cdPace)}
		if told.Pace > 0 {
			told.After, told.Span = push.CountAfter*h.opt.Tick, time.Duration(told.Every-push.CountAfter)*h.opt.Tick
		}
		ahead := told.Shown(c.lastRank, time.Duration(clock-c.sentAt)+horizon) < rank
		if rank >= frontRanks && reason == "" && !rebound && c.gen == gen && st.Tick < c.nextTick {
			if !ahead {
				continue // not due: the page counts down on its own
			}
			h.metrics.SSECorrections.Inc()
		}
		cd := push.Plan(rank, paceRate, h.opt.Tick)
		c.lastRank, c.lastTick, c.sentAt, c.gen = rank, st.Tick, clock, gen
		c.cdEvery, c.cdPace = int32(cd.Every), push.PaceHundredths(paceRate)
		if cd.Pace == 0 {
			c.cdPace = 0
		}
		// The next scheduled event: Every ticks on, less up to a quarter,
		// so that visitors who joined in the same second drift apart.
		c.nextTick = st.Tick + cd.Every - rand.Int64N(cd.Every/4+1)
		d := dueEvent{c: c, rank: rank, reason: reason, cd: cd}
		if rank < frontRanks {
			front = append(front, d)
		} else {
			plan.due = append(plan.due, d)
		}
	}
	slices.SortFunc(front, func(a, b dueEvent) int { return cmp.Compare(a.rank, b.rank) })
	plan.due = append(front, plan.due...)
	return plan
}

// appendCountdownEvent appends a position event whose JSON also tells the
// page its cadence: "every" (ticks to the next scheduled event) and, far
// back, "after" and "span" (ms) and, while the line moves, "pace" (ranks a
// second): the countdown between events. See push.Countdown.
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
	if cd.Span > 0 {
		b = append(b, `,"after":`...)
		b = strconv.AppendInt(b, cd.After.Milliseconds(), 10)
		b = append(b, `,"span":`...)
		b = strconv.AppendInt(b, cd.Span.Milliseconds(), 10)
	}
	return append(b, "}\n\n"...)
}

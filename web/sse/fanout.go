package sse

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"waitingroom/server/push"
	"waitingroom/server/queue"
)

// fanOut pushes the room's newest state to every connection, again and
// again while events keep arriving during a pass.
func (h *Hub) fanOut(r *Room) {
	for {
		r.mu.Lock()
		st := r.state.Clone()
		conns := append([]*conn(nil), r.conns...)
		widgets := append([]*conn(nil), r.widgets...)
		r.pending = false
		r.mu.Unlock()

		start := time.Now()
		seen := h.push(r, st, conns)
		h.pushWidgets(r, st, widgets) // after the buyers' positions
		h.metrics.FanoutDuration.Observe(time.Since(start).Seconds())
		if len(seen) > 0 {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if err := h.src.MarkSeen(ctx, r.name, seen); err != nil {
					h.log.Warn("sse: mark seen", "room", r.name, "err", err)
				}
			}()
		}

		r.mu.Lock()
		if !r.pending {
			r.running = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
	}
}

// push brings conns up to st: it resolves the visitors the head has
// passed (their ready events go first), then writes the position events
// due this tick, the front of the line first, over a few workers. It
// returns the tickets of the visitors due to be marked as seen.
func (h *Hub) push(r *Room, st push.State, conns []*conn) []int64 {
	if len(conns) == 0 {
		return nil
	}
	now := h.now()
	plan := h.scan(r, &st, conns, now)
	var next atomic.Int64
	const batch = 16 // each worker takes the next few, so the order holds
	workers := min(runtime.GOMAXPROCS(0)*2, (len(plan.due)+255)/256)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			buf := make([]byte, 0, 512)
			for {
				i := int(next.Add(batch)) - batch
				if i >= len(plan.due) {
					return
				}
				for _, d := range plan.due[i:min(i+batch, len(plan.due))] {
					buf = h.writeDue(buf[:0], &st, d)
				}
			}
		})
	}
	wg.Wait()
	return plan.seen
}

// writeDue writes one due event: sold out, or the visitor's position with
// the countdown the scan planned for it.
func (h *Hub) writeDue(buf []byte, st *push.State, d dueEvent) []byte {
	c := d.c
	ticket := c.ticket.Load()
	if st.SoldOut {
		// Nothing left to sell for now: every waiting page is told once;
		// it keeps its place in line.
		p := queue.Position{Status: queue.StatusWaiting, Rank: d.rank, Ticket: c.shown.Load(), Waiting: st.WaitingOf(ticket), SoldOut: true,
			LineName:               c.line(ticket),
			PollingIntervalSeconds: queue.PollingInterval(d.rank)}
		p = withSchedule(p, st)
		buf = appendChunk(buf, func(b []byte) []byte { return appendEvent(b, st.Tick, "soldout", p, st.TimeMicros) })
		if err := c.writeFramed(buf); err != nil {
			h.drop(c, err)
		}
		return buf
	}
	p := queue.Position{Status: queue.StatusWaiting, Rank: d.rank, Ticket: c.shown.Load(), Waiting: st.WaitingOf(ticket),
		EstimatedWaitSeconds:   queue.ETA(queue.LineRank(d.rank, st.ShareOf(ticket)), st.Rate, st.Slots, st.Paused),
		LineName:               c.line(ticket),
		Paused:                 st.Paused,
		RankUpReason:           d.reason,
		PollingIntervalSeconds: queue.PollingInterval(d.rank)}
	p = withSchedule(p, st)
	buf = appendChunk(buf, func(b []byte) []byte {
		return appendCountdownEvent(b, st.Tick, p, st.TimeMicros, d.cd)
	})
	if err := c.writeFramed(buf); err != nil {
		h.drop(c, err)
		return buf
	}
	h.metrics.Events.Inc()
	return buf
}

// resolve asks Redis what became of a visitor the head has passed: an
// admission (the ready event, with the token, to this connection alone) or
// a departure. It costs one round trip per admitted local visitor, not per
// connection.
//
// spread is the room's ready spread (see Options.ReadySpread): the
// fetch waits a random part of it first.
func (h *Hub) resolve(r *Room, c *conn, tickMicros int64, spread time.Duration) {
	if !c.resolving.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer c.resolving.Store(false)
		if spread > 0 {
			select {
			case <-h.stop:
				return
			case <-time.After(rand.N(spread)):
			}
		}
		h.resolveSem <- struct{}{}
		defer func() { <-h.resolveSem }()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p, err := h.src.Position(ctx, r.name, c.visitor)
		if err != nil {
			h.log.Warn("sse: resolve", "room", r.name, "err", err)
			return // the next tick tries again
		}
		h.sendResolved(c, p, tickMicros)
	}()
}

// sendResolved sends a settled position: READY with its token, or
// NOT_ENTERED. A WAITING answer (the visitor came back with a new ticket)
// rebinds the connection to that ticket.
func (h *Hub) sendResolved(c *conn, p queue.Position, tickMicros int64) {
	var buf []byte
	switch p.Status {
	case queue.StatusWaiting:
		c.born.Store(p.Born)
		c.ticket.Store(lineOf(p))
		c.setLine(p.LineIndex, p.LineName)
		c.shown.Store(p.Ticket)
		c.prequeued.Store(false)
		c.rebound.Store(true)
		return
	case queue.StatusPrequeued:
		c.born.Store(p.Born)
		return // the draw is not done yet: the next tick asks again
	case queue.StatusReady:
		buf = appendEvent(nil, 0, "ready", p, tickMicros)
	default:
		buf = appendEvent(nil, 0, "position", p, tickMicros)
	}
	c.done.Store(true)
	if err := c.write(buf); err != nil {
		h.drop(c, err)
		return
	}
	h.metrics.Events.Inc()
}

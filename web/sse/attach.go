package sse

import (
	"errors"
	"math"
	"math/rand/v2"
	"time"

	"waitingroom/server/push"
	"waitingroom/server/queue"
)

// unknownEpoch marks a connection whose room state may be another room's
// (see attach): no state has it, so the next pass resolves the connection.
const unknownEpoch = -1

// attach registers a handshaken connection with its room and brings it up
// to the room's newest state if a tick went by since its position was read.
// A visitor's stream past MaxStreamsPerVisitor closes their oldest one.
func (h *Hub) attach(r *Room, c *conn, p queue.Position) bool {
	ok, evict := h.attachLocked(r, c, p)
	if evict != nil {
		h.drop(evict, nil)
	}
	// Lost sets lost before it lists the streams to tell: a stream listed
	// too late for it reads lost here (it may be told twice).
	if ok && h.lost.Load() && !c.done.Load() {
		if err := c.writeFramed(outageFrame); err != nil {
			h.drop(c, err)
		}
	}
	return ok
}

func (h *Hub) attachLocked(r *Room, c *conn, p queue.Position) (ok bool, evict *conn) {
	// Hold the hub's lock until the connection is listed, so that Close
	// cannot run in between and miss it.
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false, nil
	}
	c.room = r
	c.born.Store(p.Born)
	c.ticket.Store(lineOf(p))
	c.setLine(p.LineIndex, p.LineName)
	c.shown.Store(p.Ticket)
	c.prequeued.Store(p.Status == queue.StatusPrequeued)
	c.lastRank, c.lastTick = p.Rank, p.Tick
	if p.Status == queue.StatusPrequeued {
		c.lastRank = math.MaxInt64 // no rank shown yet: the first one is no step back
	}
	c.nextSeen = h.now().Add(rand.N(h.opt.SeenEvery) + time.Second)
	if p.Status != queue.StatusWaiting && p.Status != queue.StatusPrequeued {
		c.done.Store(true)
	}
	r.mu.Lock()
	c.epoch = r.state.Epoch
	if p.Tick == 0 && r.state.Tick > 0 || push.AnotherRoom(p.Born, r.state.Born) {
		// The position is of a room created at another time than the one
		// this process follows, or the room had not ticked when the
		// position was read, yet this process saw it tick: either its first
		// tick landed during the handshake, or it started again (deleted
		// and created, or restored) and the new room's first tick has not
		// arrived. The state may be the old room's: the next tick's pass
		// asks Redis (no state has this epoch) and follows the connection
		// once the state is of its room. It schedules no pass of its own.
		c.epoch = unknownEpoch
	}
	c.index = len(r.conns)
	r.conns = append(r.conns, c)
	behind := r.state.Tick > p.Tick && !c.done.Load() && c.epoch != unknownEpoch
	r.mu.Unlock()
	h.indexIPLocked(c)
	evict = h.addVisitorLocked(c)
	h.conns.Add(1)
	h.metrics.Connections.Inc()
	if behind {
		r.mu.Lock()
		h.scheduleLocked(r)
		r.mu.Unlock()
	}
	return true, evict
}

// drop closes c and forgets it. err is why (nil on shutdown).
func (h *Hub) drop(c *conn, err error) {
	if !c.close() {
		return
	}
	if errors.Is(err, errSlow) {
		h.metrics.SlowDrops.Inc()
	}
	h.mu.Lock()
	h.forgetLocked(c)
	h.releaseIPLocked(c.ip)
	_, held := h.held[c]
	delete(h.held, c)
	h.mu.Unlock()
	if held {
		h.conns.Add(-1)
		h.metrics.Connections.Dec()
	}
	if c.widget {
		h.releaseWidget()
	} else {
		h.releaseStream()
	}
	if r := c.room; r != nil {
		r.mu.Lock()
		if c.widget {
			r.widgets = without(r.widgets, c)
		} else {
			r.conns = without(r.conns, c)
		}
		r.mu.Unlock()
		h.conns.Add(-1)
		h.metrics.Connections.Dec()
	}
}

// without removes c from list (at c.index) and returns the list.
func without(list []*conn, c *conn) []*conn {
	i := c.index
	if i >= len(list) || list[i] != c {
		return list
	}
	last := len(list) - 1
	list[i] = list[last]
	list[i].index = i
	list[last] = nil
	return list[:last]
}

package sse

import "time"

// holdFrame tells a waiting page to stop counting down and hold the rank
// it shows until its next position: the room's ticks stopped coming.
var holdFrame = chunk([]byte("event: hold\ndata: {}\n\n"))

// watchStalls looks four times a tick for rooms whose ticks stopped while
// their pages count down (see Room.stalled), and tells those pages to
// hold: a countdown with no ticks behind it would get ahead of the line.
// A room that stalls costs one write per page, once. It also looks for
// widget viewers that left (peekWidgets), ticks or not.
func (h *Hub) watchStalls() {
	t := h.opt.Clock.NewTicker(max(h.opt.Tick/4, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.Chan():
			now := h.now()
			for _, r := range h.roomList() {
				h.peekWidgets(r, now)
				if !r.stalled(now, h.opt.Tick) {
					continue
				}
				h.log.Warn("sse: room's ticks stopped: its pages hold their ranks", "room", r.name)
				r.mu.Lock()
				conns := append([]*conn(nil), r.conns...)
				r.mu.Unlock()
				for _, c := range conns {
					if c.done.Load() {
						continue
					}
					if err := c.writeFramed(holdFrame); err != nil {
						h.drop(c, err)
					}
				}
			}
		}
	}
}

// heartbeatSlots is how many parts a heartbeat period is cut into: each
// connection is in one (its hbSlot), so the period's writes are spread
// over it instead of bursting every connection at once, which would hold
// a core for as long as a whole crowd's writes take and delay the ticks'
// fan-outs that fall in it.
const heartbeatSlots = 15

// beat writes the heartbeat to the connections of conns in slot step.
func (h *Hub) beat(conns []*conn, step int) {
	for _, c := range conns {
		if int(c.hbSlot) != step {
			continue
		}
		if err := c.write(heartbeatFrame); err != nil {
			h.drop(c, err)
		}
	}
}

// heartbeats sends a beat to every connection once a period, a slot of
// connections at a time; a write that fails finds a peer that has gone.
func (h *Hub) heartbeats() {
	t := time.NewTicker(max(h.opt.Heartbeat/heartbeatSlots, time.Millisecond))
	defer t.Stop()
	for step := 0; ; step = (step + 1) % heartbeatSlots {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		rooms := h.roomList()
		for _, r := range rooms {
			if step == 0 {
				h.resyncQuietWidgets(r)
			}
			h.beat(r.snapshotConns(), step)
		}
		h.beat(h.heldConns(), step)
	}
}

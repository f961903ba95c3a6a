package web

import "time"

// DefaultSSEMaxPerIP is the default of HubOptions.MaxPerIP: room for a
// crowd behind one address (carrier-grade NAT), far above what one person
// opens. Identities cost a proof of work, not a slot.
const DefaultSSEMaxPerIP = 10000

// sweepGoneEvery bounds how often one client network's streams are looked
// at for clients that left, when it is at its cap.
const sweepGoneEvery = 50 * time.Millisecond

// ipSlots are one client network's streams: how many, and when they were
// last swept for clients that left.
type ipSlots struct {
	n     int
	swept time.Time
}

// acquireIP counts a stream against its client network's cap. At the cap,
// it first drops the network's streams whose client has closed them: the
// hub writes nothing to an idle stream until the next tick that moves it
// or the next heartbeat, so a stream closed by its client would otherwise
// hold its slot until a write fails (up to two heartbeats). A slot freed
// by a client comes back at once.
func (h *Hub) acquireIP(ip string) bool {
	if h.takeIP(ip) {
		return true
	}
	if !h.sweepDue(ip) || h.dropGone(ip) == 0 {
		return false
	}
	return h.takeIP(ip)
}

func (h *Hub) takeIP(ip string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.perIP[ip]
	if s == nil {
		s = &ipSlots{}
		h.perIP[ip] = s
	}
	if s.n >= h.opt.MaxPerIP {
		return false
	}
	s.n++
	return true
}

func (h *Hub) releaseIP(ip string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.perIP[ip]; s == nil || s.n <= 1 {
		delete(h.perIP, ip)
	} else {
		s.n--
	}
}

// sweepDue reports whether ip's streams may be swept now (at most once per
// sweepGoneEvery), and marks them swept.
func (h *Hub) sweepDue(ip string) bool {
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.perIP[ip]
	if s == nil || now.Sub(s.swept) < sweepGoneEvery {
		return false
	}
	s.swept = now
	return true
}

// dropGone drops ip's streams whose client has gone, and returns how many.
func (h *Hub) dropGone(ip string) int {
	var mine []*sseConn
	for _, r := range h.roomList() {
		r.mu.Lock()
		for _, list := range [][]*sseConn{r.conns, r.widgets} {
			for _, c := range list {
				if c.ip == ip {
					mine = append(mine, c)
				}
			}
		}
		r.mu.Unlock()
	}
	n := 0
	for _, c := range mine {
		if c.peerGone() {
			h.drop(c, nil)
			n++
		}
	}
	return n
}

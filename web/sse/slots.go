package sse

import (
	"errors"
	"time"
)

// DefaultMaxPerIP is the default of Options.MaxPerIP: room for a
// crowd behind one address (carrier-grade NAT), far above what one person
// opens. Identities cost a proof of work, not a slot.
const DefaultMaxPerIP = 10000

// ErrProcessFull and ErrNetworkFull are why Reserve refuses a stream: the
// process holds as many streams of its kind as it may (Options.MaxStreams,
// Options.MaxWidgets), or the client network as many as Options.MaxPerIP.
var (
	ErrProcessFull = errors.New("sse: the process holds as many streams as it may")
	ErrNetworkFull = errors.New("sse: the client network holds as many streams as it may")
)

// Slot is a stream's place, counted against the process's cap and its
// client network's before the handshake. The stream attached with it
// keeps it until it is dropped; Release gives back one that was not.
type Slot struct {
	h      *Hub
	ip     string // the per-network key: a widget's is apart (widgetIPKey)
	widget bool
	done   bool // attached or released
}

// Reserve takes a buyer's stream slot for client network ip.
func (h *Hub) Reserve(ip string) (*Slot, error) {
	if !h.acquireStream() {
		return nil, ErrProcessFull
	}
	if !h.acquireIP(ip) {
		h.releaseStream()
		return nil, ErrNetworkFull
	}
	return &Slot{h: h, ip: ip}, nil
}

// ReserveWidget takes a widget's stream slot for client network ip,
// counted apart from the buyers' (see widgetIPKey).
func (h *Hub) ReserveWidget(ip string) (*Slot, error) {
	if !h.acquireWidget() {
		return nil, ErrProcessFull
	}
	key := widgetIPKey(ip)
	if !h.acquireIP(key) {
		h.releaseWidget()
		return nil, ErrNetworkFull
	}
	return &Slot{h: h, ip: key, widget: true}, nil
}

// Release gives the slot back unless a stream was attached with it; it
// is safe to defer.
func (s *Slot) Release() {
	if s == nil || s.done {
		return
	}
	s.done = true
	s.h.releaseIP(s.ip)
	if s.widget {
		s.h.releaseWidget()
	} else {
		s.h.releaseStream()
	}
}

// MaxStreamsPerVisitor caps one visitor's live streams in a process, in
// all rooms: a reload or another tab opens one more, and the visitor's
// oldest stream is closed to make room (see attach).
const MaxStreamsPerVisitor = 4

// Bounds of how often one client network's streams are swept for clients
// that left, when it is at its cap: a sweep that freed nothing doubles the
// wait up to sweepGoneMax; one that freed a slot resets it.
const (
	sweepGoneEvery = 50 * time.Millisecond
	sweepGoneMax   = time.Second
)

// ipSlots are one client network's streams: how many are counted (taken
// before the handshake), the attached ones, and when they may next be
// swept for clients that left.
type ipSlots struct {
	n       int
	streams map[*conn]struct{}
	swept   time.Time
	every   time.Duration
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
	mine := h.sweepDue(ip)
	if len(mine) == 0 {
		return false
	}
	freed := h.dropGone(mine)
	h.swept(ip, freed)
	if freed == 0 {
		return false
	}
	return h.takeIP(ip)
}

func (h *Hub) takeIP(ip string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.perIP[ip]
	if s == nil {
		s = &ipSlots{streams: map[*conn]struct{}{}, every: sweepGoneEvery}
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
	h.releaseIPLocked(ip)
}

func (h *Hub) releaseIPLocked(ip string) {
	if s := h.perIP[ip]; s == nil || s.n <= 1 {
		delete(h.perIP, ip)
	} else {
		s.n--
	}
}

// indexIPLocked lists an attached stream under its client network, so
// that a sweep looks at that network's streams only. h.mu is held.
func (h *Hub) indexIPLocked(c *conn) {
	if s := h.perIP[c.ip]; s != nil {
		s.streams[c] = struct{}{}
	}
}

// sweepDue returns ip's attached streams when they may be swept now, and
// marks them swept; nil when a sweep ran less than the network's interval
// ago.
func (h *Hub) sweepDue(ip string) []*conn {
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.perIP[ip]
	if s == nil || now.Sub(s.swept) < s.every {
		return nil
	}
	s.swept = now
	mine := make([]*conn, 0, len(s.streams))
	for c := range s.streams {
		mine = append(mine, c)
	}
	return mine
}

// swept sets ip's sweep interval from what a sweep freed: doubled (up to
// sweepGoneMax) when nothing, the shortest when a slot.
func (h *Hub) swept(ip string, freed int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.perIP[ip]
	if s == nil {
		return
	}
	if freed > 0 {
		s.every = sweepGoneEvery
	} else {
		s.every = min(2*s.every, sweepGoneMax)
	}
}

// dropGone drops the streams of mine whose client has gone, and returns
// how many.
func (h *Hub) dropGone(mine []*conn) int {
	n := 0
	for _, c := range mine {
		if c.peerGone() {
			h.drop(c, nil)
			n++
		}
	}
	return n
}

// acquireStream counts a buyer's stream against the process's cap
// (Options.MaxStreams); false means the process is full.
func (h *Hub) acquireStream() bool {
	if h.buyers.Add(1) > int64(h.opt.MaxStreams) {
		h.buyers.Add(-1)
		return false
	}
	return true
}

func (h *Hub) releaseStream() { h.buyers.Add(-1) }

// Streams returns the number of buyers' stream slots taken (see Reserve).
func (h *Hub) Streams() int64 { return h.buyers.Load() }

// addVisitorLocked lists c among its visitor's streams and returns the
// oldest one past MaxStreamsPerVisitor, for the caller to drop once h.mu
// is released (nil when none). A stream without a visitor is not
// listed. h.mu is held.
func (h *Hub) addVisitorLocked(c *conn) *conn {
	if c.visitor == "" {
		return nil
	}
	list := append(h.perVisitor[c.visitor], c)
	var evict *conn
	if len(list) > MaxStreamsPerVisitor {
		evict = list[0]
		list = append(list[:0:0], list[1:]...)
	}
	h.perVisitor[c.visitor] = list
	return evict
}

// forgetLocked removes an attached stream from the address and visitor
// indexes. h.mu is held.
func (h *Hub) forgetLocked(c *conn) {
	if s := h.perIP[c.ip]; s != nil {
		delete(s.streams, c)
	}
	if c.widget || c.visitor == "" {
		return
	}
	list := h.perVisitor[c.visitor]
	for i, o := range list {
		if o == c {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(h.perVisitor, c.visitor)
	} else {
		h.perVisitor[c.visitor] = list
	}
}

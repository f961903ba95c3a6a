package sse

import (
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"time"

	"waitingroom/server/queue"
)

// handshakeTimeout bounds the blocking write of the SSE response headers
// and first event; every later write is non-blocking.
const handshakeTimeout = 5 * time.Second

// streamHead is the start of every stream's HTTP response, up to its
// own header lines.
const streamHead = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n" +
	"X-Accel-Buffering: no\r\nX-Content-Type-Options: nosniff\r\nTransfer-Encoding: chunked\r\n"

// Subscriber is a buyer's stream as its handler opened it.
type Subscriber struct {
	// Visitor is the buyer's visitor id.
	Visitor string
	// Position is where the buyer stands now: the stream's first event.
	Position queue.Position
	// LastEventID is the id of the last event the client saw (0: none).
	LastEventID int64
	// Cookies are set by the handshake's response.
	Cookies []*http.Cookie
}

// Subscribe answers a buyer's stream on nc, a hijacked connection: the
// response headers and the buyer's position at once (so a reconnect to any
// instance is up to date), then hands the connection to the hub, which
// pushes every tick's position and the ready event. slot becomes the
// stream's. On failure nc is closed and slot is left to its owner.
func (h *Hub) Subscribe(nc net.Conn, r *Room, slot *Slot, sub Subscriber) {
	c := newConn(nc)
	c.visitor, c.ip = sub.Visitor, slot.ip
	p := sub.Position

	b := append([]byte(nil), streamHead...)
	for _, ck := range sub.Cookies {
		b = append(b, "Set-Cookie: "...)
		b = append(b, ck.String()...)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	first := retryField()
	eventID := p.Tick
	if sub.LastEventID >= eventID {
		eventID = 0 // the client has seen this tick: a snapshot, not a repeat
	}
	name := "position"
	switch {
	case p.Status == queue.StatusReady:
		name, eventID = "ready", 0
	case p.SoldOut:
		name = "soldout"
	}
	first = appendEvent(first, eventID, name, p, h.now().UnixMicro())
	b = append(b, chunk(first)...)
	if !handshake(nc, b) {
		return
	}
	h.metrics.Events.Inc()
	if !h.attach(r, c, p) {
		nc.Close()
		return
	}
	slot.done = true
}

// Watch answers a widget's stream on nc, a hijacked connection: the
// response headers and v, the room's view, at once, then hands the
// connection to the hub, which sends the room's view when it changes.
// slot becomes the stream's. On failure nc is closed and slot is left to
// its owner.
func (h *Hub) Watch(nc net.Conn, r *Room, slot *Slot, v View) {
	c := newConn(nc)
	c.ip = slot.ip
	b := append([]byte(streamHead), "\r\n"...)
	first := appendWidgetEvent(retryField(), v)
	b = append(b, chunk(first)...)
	if !handshake(nc, b) {
		return
	}
	if !h.attachWidget(r, c, v) {
		nc.Close()
		return
	}
	slot.done = true
}

// retryField is a stream's first field: a jittered retry spreads the
// reconnects after a restart.
func retryField() []byte {
	return []byte("retry: " + strconv.Itoa(2000+rand.IntN(3000)) + "\n\n")
}

// handshake writes b, the response's head and first event, blocking for
// at most handshakeTimeout. On failure it closes nc.
func handshake(nc net.Conn, b []byte) bool {
	nc.SetWriteDeadline(time.Now().Add(handshakeTimeout))
	if _, err := nc.Write(b); err != nil {
		nc.Close()
		return false
	}
	nc.SetWriteDeadline(time.Time{})
	return true
}

package web

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/web/request"
	"waitingroom/web/response"
)

// handshakeTimeout bounds the blocking write of the SSE response headers
// and first event; every later write is non-blocking.
const handshakeTimeout = 5 * time.Second

// streamSlot takes one of the per-network stream slots of ip (a buyer's,
// or a widget's: widgetIPKey), or answers 429 and reports false.
func (s *Server) streamSlot(w http.ResponseWriter, ip string) bool {
	if s.hub.acquireIP(ip) {
		return true
	}
	s.metrics.Rejected.WithLabelValues("sse_per_ip").Inc()
	// A slot a client frees comes back at once (acquireIP): a short wait.
	w.Header().Set("Retry-After", "2")
	response.WriteError(w, http.StatusTooManyRequests, "too_many_connections", "Too many live connections from your network.")
	return false
}

// events serves GET /r/{room}/events. It enters the visitor if they have no
// ticket yet (idempotently; a crawler never: previewBot; another site's
// request never: streamCrossSite), answers their current position at once
// (so a reconnect to any instance is up to date), then hands the
// connection to the hub, which pushes every tick's position and the ready
// event.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("room")
	if !room.ValidName(name) {
		response.WriteError(w, http.StatusBadRequest, "bad_room", "Room names are 1 to 64 characters of a-z, 0-9 and '-'.")
		return
	}
	if r.Method == http.MethodHead {
		s.headEvents(w, r, name)
		return
	}
	if previewBot(r.UserAgent()) {
		// A crawler following the page's links never takes a place; 204
		// tells an EventSource not to reconnect.
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	// Another site's request (an <img>, an EventSource) may follow a place
	// the visitor already has, never make one nor set a cookie.
	cross := s.streamCrossSite(r)
	if _, has := s.visitorID(r); cross && !has {
		s.refuseCrossStream(w)
		return
	}
	camp := s.campaignOf(r.URL.Query())
	if !s.hub.acquireStream() {
		s.metrics.Rejected.WithLabelValues("sse_process").Inc()
		w.Header().Set("Retry-After", "5")
		response.WriteError(w, http.StatusServiceUnavailable, "too_many_connections", "The waiting room is full on this server. Please try again in a few seconds.")
		return
	}
	ip := s.clientKey(r)
	if !s.streamSlot(w, ip) {
		s.hub.releaseStream()
		return
	}
	attached := false
	defer func() {
		if !attached {
			s.hub.releaseIP(ip)
			s.hub.releaseStream()
		}
	}()
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	id, isNew, err := s.visitorOrNew(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	hr, err := s.hub.room(ctx, name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	// The page enters by POST first: a stream never makes a new place in
	// a room that asks a proof of work (EventSource cannot send one).
	var p queue.Position
	ok := true
	if cross {
		p, err = s.q.Position(ctx, name, id)
		if err == nil && p.Status == queue.StatusNotEntered {
			s.refuseCrossStream(w)
			return
		}
	} else {
		p, ok, err = s.streamEnter(ctx, r, name, id, isNew, camp)
	}
	if !ok {
		response.WriteRateLimited(w)
		return
	}
	if writeScheduleError(w, p, err) {
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}

	nc, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		s.log.Error("sse: hijack", "err", err)
		response.WriteError(w, http.StatusInternalServerError, "internal", "Streaming is not supported on this connection.")
		return
	}
	c := newSSEConn(nc)
	c.visitor, c.ip = id, ip

	var b []byte
	b = append(b, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n"+
		"X-Accel-Buffering: no\r\nX-Content-Type-Options: nosniff\r\nTransfer-Encoding: chunked\r\n"...)
	if isNew {
		b = append(b, "Set-Cookie: "...)
		b = append(b, s.visitorCookie(r, id).String()...)
		b = append(b, "\r\n"...)
	}
	var utm []*http.Cookie
	if !cross {
		utm = utmCookies(r, name, camp)
	}
	for _, ck := range utm {
		b = append(b, "Set-Cookie: "...)
		b = append(b, ck.String()...)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	// A jittered retry spreads reconnects after a restart.
	first := []byte("retry: " + strconv.Itoa(2000+rand.IntN(3000)) + "\n\n")
	eventID := p.Tick
	if last := request.LastEventID(r.Header.Get("Last-Event-ID")); last >= eventID {
		eventID = 0 // the client has seen this tick: a snapshot, not a repeat
	}
	name2 := "position"
	switch {
	case p.Status == queue.StatusReady:
		name2, eventID = "ready", 0
	case p.SoldOut:
		name2 = "soldout"
	}
	first = appendEvent(first, eventID, name2, p, time.Now().UnixMicro())
	b = append(b, chunk(first)...)
	nc.SetWriteDeadline(time.Now().Add(handshakeTimeout))
	if _, err := nc.Write(b); err != nil {
		nc.Close()
		return
	}
	nc.SetWriteDeadline(time.Time{})
	s.metrics.SSEEvents.Inc()
	if !s.hub.attach(hr, c, p) {
		nc.Close()
		return
	}
	attached = true
}

// streamEnter enters a stream's visitor. A connect that makes a place
// takes an enter from the client network's limit, as a POST does; one that
// finds the visitor's place (the page's connect after its POST, a
// reconnect) takes nothing, so a crowd behind one address is charged once a
// buyer. The enter is taken first and given back when the connect made no
// place; with the limit spent, only a visitor who has a place connects.
// ok false: the caller answers 429.
func (s *Server) streamEnter(ctx context.Context, r *http.Request, name, id string, isNew bool, camp queue.Campaign) (p queue.Position, ok bool, err error) {
	took, giveBack := s.enters.take(s.clientKey(r))
	if !took {
		if !isNew {
			p, err = s.q.Position(ctx, name, id)
			if err != nil || p.Status != queue.StatusNotEntered {
				return p, true, err
			}
		}
		return queue.Position{}, s.counted(false), nil
	}
	p, _, err = s.enterProved(ctx, r, name, id, isNew, "", camp)
	if err != nil || !p.Created {
		giveBack()
	}
	return p, true, err
}

// headEvents answers HEAD /r/{room}/events (a link checker, a monitor):
// whether the stream exists, without entering anyone or holding a slot.
func (s *Server) headEvents(w http.ResponseWriter, r *http.Request, name string) {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	if _, err := s.rooms.Room(ctx, name); err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
}

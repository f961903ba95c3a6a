package web

import (
	"context"
	"errors"
	"net/http"

	"waitingroom/server/queue"
	"waitingroom/server/redisconn"
	"waitingroom/server/room"
	"waitingroom/web/request"
	"waitingroom/web/response"
	"waitingroom/web/sse"
)

// refuseNetworkStream answers 429 to a stream whose client network holds
// as many streams as it may (sse.ErrNetworkFull).
func (s *Server) refuseNetworkStream(w http.ResponseWriter) {
	s.metrics.Rejected.WithLabelValues("sse_per_ip").Inc()
	// A slot a client frees comes back at once: a short wait.
	w.Header().Set("Retry-After", "2")
	response.WriteError(w, http.StatusTooManyRequests, "too_many_connections", "Too many live connections from your network.")
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
	slot, err := s.hub.Reserve(s.clientKey(r))
	if errors.Is(err, sse.ErrProcessFull) {
		s.metrics.Rejected.WithLabelValues("sse_process").Inc()
		w.Header().Set("Retry-After", "5")
		response.WriteError(w, http.StatusServiceUnavailable, "too_many_connections", "The waiting room is full on this server. Please try again in a few seconds.")
		return
	}
	if err != nil {
		s.refuseNetworkStream(w)
		return
	}
	defer slot.Release()
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	id, isNew, err := s.visitorOrNew(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	hr, err := s.hub.Room(ctx, name)
	if err != nil {
		s.holdOrFail(w, r, name, slot, err)
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
		s.holdOrFail(w, r, name, slot, err)
		return
	}

	nc, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		s.log.Error("sse: hijack", "err", err)
		response.WriteError(w, http.StatusInternalServerError, "internal", "Streaming is not supported on this connection.")
		return
	}
	var cookies []*http.Cookie
	if isNew {
		cookies = append(cookies, s.visitorCookie(r, id))
	}
	if !cross {
		cookies = append(cookies, utmCookies(r, name, camp)...)
	}
	s.hub.Subscribe(nc, hr, slot, sse.Subscriber{Visitor: id, Position: p,
		LastEventID: request.LastEventID(r.Header.Get("Last-Event-ID")), Cookies: cookies})
}

// holdOrFail answers a stream whose Redis work failed with err: when
// Redis is unreachable the hub holds the stream until Redis answers again
// (see sse.Hub.Hold: the page is told of the outage and comes back as
// soon as it is over); any other error gets its answer.
func (s *Server) holdOrFail(w http.ResponseWriter, r *http.Request, name string, slot *sse.Slot, err error) {
	if !redisconn.Unreachable(err) {
		s.fail(w, r, err)
		return
	}
	nc, _, herr := http.NewResponseController(w).Hijack()
	if herr != nil {
		s.fail(w, r, err)
		return
	}
	s.hub.Hold(nc, name, slot)
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
	// A stream brings no code: in a room whose access takes one it makes
	// a place only with a code the visitor holds (admitWith).
	_, line, identified := request.IdentityOf(r, s.signer, name, s.clock.Now())
	p, _, _, err = s.admitWith(ctx, r, name, "", queue.Credentials{Identity: identified, Line: line}, func(cred queue.Credentials) (queue.Position, string, error) {
		return s.enterProved(ctx, r, name, id, isNew, "", camp, cred)
	})
	if err != nil || !p.Created {
		giveBack()
	}
	return p, true, s.withSignIn(ctx, name, err)
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

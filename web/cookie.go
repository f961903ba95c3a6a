package web

import (
	"net/http"

	"waitingroom/server/visitor"
	"waitingroom/web/request"
)

// visitorID returns the visitor id from a validly signed cookie: the
// identity cookie of the address's room, when it has one (the shop's
// identity makes every device its visitor), else wr_vid. A missing,
// malformed or tampered cookie yields ok == false: the caller treats the
// request as a new visitor.
func (s *Server) visitorID(r *http.Request) (string, bool) {
	if name := r.PathValue("room"); name != "" {
		if id, ok := request.IdentityVisitor(r, s.signer, name, s.clock.Now()); ok {
			return id, true
		}
	}
	return request.VisitorID(r, s.signer)
}

// visitorOrNew returns the visitor of a validly signed cookie, or a fresh
// id (isNew) that the caller sets as the cookie once the enter succeeded.
func (s *Server) visitorOrNew(r *http.Request) (id string, isNew bool, err error) {
	if id, ok := s.visitorID(r); ok {
		return id, false, nil
	}
	id, err = visitor.NewID()
	return id, true, err
}

// enterAllowed takes one enter from the client network's bucket, and counts a
// refusal; the caller answers 429.
func (s *Server) enterAllowed(r *http.Request) bool {
	return s.counted(s.enters.allow(s.clientKey(r)))
}

// pageEnterAllowed is enterAllowed for a page's form: a refusal is
// answered with the room's page of too many joins (429, Retry-After).
func (s *Server) pageEnterAllowed(w http.ResponseWriter, r *http.Request, name string) bool {
	if s.enterAllowed(r) {
		return true
	}
	w.Header().Set("Retry-After", "2")
	s.htmlError(w, r, http.StatusTooManyRequests, s.roomText(r, name).TooManyJoins, name, true)
	return false
}

// takeEnter is enterAllowed that can give the enter back (see
// ipLimiter.take).
func (s *Server) takeEnter(r *http.Request) (ok bool, giveBack func()) {
	ok, giveBack = s.enters.take(s.clientKey(r))
	return s.counted(ok), giveBack
}

// counted counts a refused enter and returns ok.
func (s *Server) counted(ok bool) bool {
	if !ok {
		s.metrics.Rejected.WithLabelValues("enter_rate").Inc()
	}
	return ok
}

// setVisitorCookie issues the signed wr_vid cookie for id.
func (s *Server) setVisitorCookie(w http.ResponseWriter, r *http.Request, id string) {
	request.SetVisitorCookie(w, r, s.signer, id)
}

func (s *Server) visitorCookie(r *http.Request, id string) *http.Cookie {
	return request.VisitorCookie(r, s.signer, id)
}

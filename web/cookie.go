package web

import (
	"net/http"
	"strconv"
	"time"

	"waitingroom/server/visitor"
)

// CookieName is the visitor cookie's name.
const CookieName = "wr_vid"

const cookieMaxAge = 24 * time.Hour

// visitorID returns the visitor id from a validly signed cookie. A missing,
// malformed or tampered cookie yields ok == false: the caller treats the
// request as a new visitor.
func (s *Server) visitorID(r *http.Request) (string, bool) {
	c, err := r.Cookie(CookieName)
	if err != nil {
		return "", false
	}
	return s.signer.Verify(c.Value)
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

// setVisitorCookie issues the signed wr_vid cookie for id: the Set-Cookie
// line of visitorCookie, written by hand (every new visitor's enter sets
// one). A signed id needs no sanitizing.
func (s *Server) setVisitorCookie(w http.ResponseWriter, r *http.Request, id string) {
	var buf [160]byte
	b := append(buf[:0], CookieName+"="...)
	b = s.signer.AppendSign(b, id)
	b = append(b, "; Path=/; Max-Age="...)
	b = strconv.AppendInt(b, int64(cookieMaxAge.Seconds()), 10)
	b = append(b, "; HttpOnly"...)
	if secureRequest(r) {
		b = append(b, "; Secure"...)
	}
	b = append(b, "; SameSite=Lax"...)
	h := w.Header()
	h["Set-Cookie"] = append(h["Set-Cookie"], string(b))
}

// secureRequest reports a request that came over TLS, to this server or to
// a proxy in front of it: the cookie is Secure then.
func secureRequest(r *http.Request) bool {
	return r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https"
}

func (s *Server) visitorCookie(r *http.Request, id string) *http.Cookie {
	return &http.Cookie{
		Name:     CookieName,
		Value:    s.signer.Sign(id),
		Path:     "/",
		MaxAge:   int(cookieMaxAge.Seconds()),
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
		Secure:   secureRequest(r),
	}
}

package web

import (
	"net/http"
	"time"
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

// setVisitorCookie issues the signed wr_vid cookie for id.
func (s *Server) setVisitorCookie(w http.ResponseWriter, r *http.Request, id string) {
	http.SetCookie(w, s.visitorCookie(r, id))
}

func (s *Server) visitorCookie(r *http.Request, id string) *http.Cookie {
	return &http.Cookie{
		Name:     CookieName,
		Value:    s.signer.Sign(id),
		Path:     "/",
		MaxAge:   int(cookieMaxAge.Seconds()),
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
		Secure:   r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https",
	}
}

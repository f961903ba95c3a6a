package request

import (
	"net/http"
	"strconv"
	"time"

	"waitingroom/server/visitor"
)

// CookieName is the visitor cookie's name.
const CookieName = "wr_vid"

// CookieMaxAge is how long the visitor cookie lives.
const CookieMaxAge = 24 * time.Hour

// VisitorID returns the visitor id from a validly signed cookie. A
// missing, malformed or tampered cookie yields ok == false: the caller
// treats the request as a new visitor.
func VisitorID(r *http.Request, s *visitor.Signer) (string, bool) {
	c, err := r.Cookie(CookieName)
	if err != nil {
		return "", false
	}
	return s.Verify(c.Value)
}

// SetVisitorCookie issues the signed visitor cookie for id: the
// Set-Cookie line of VisitorCookie, written by hand, as every new
// visitor's enter sets one. A signed id needs no sanitizing.
func SetVisitorCookie(w http.ResponseWriter, r *http.Request, s *visitor.Signer, id string) {
	var buf [160]byte
	b := append(buf[:0], CookieName+"="...)
	b = s.AppendSign(b, id)
	b = append(b, "; Path=/; Max-Age="...)
	b = strconv.AppendInt(b, int64(CookieMaxAge.Seconds()), 10)
	b = append(b, "; HttpOnly"...)
	if Secure(r) {
		b = append(b, "; Secure"...)
	}
	b = append(b, "; SameSite=Lax"...)
	h := w.Header()
	h["Set-Cookie"] = append(h["Set-Cookie"], string(b))
}

// VisitorCookie is the signed visitor cookie for id.
func VisitorCookie(r *http.Request, s *visitor.Signer, id string) *http.Cookie {
	return &http.Cookie{
		Name:     CookieName,
		Value:    s.Sign(id),
		Path:     "/",
		MaxAge:   int(CookieMaxAge.Seconds()),
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
		Secure:   Secure(r),
	}
}

// Secure reports a request that came over TLS, to this server or to a
// proxy in front of it: its cookies are Secure then.
func Secure(r *http.Request) bool {
	return r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https"
}
